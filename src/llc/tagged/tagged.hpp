// tagged.hpp - tagged point-to-point over the context's record streams:
// eager messages, request-to-send with the receiver pulling the payload
// (process_vm_readv on the same node, clear-to-send + streamed data
// elsewhere), synchronous-send acknowledgements, probe, matched probe, cancel.
//
// Records travel as active messages to handler ids above the public range
// (kTagHandler*), so they share the per-pair order of every other record.
//
// A request is named on the wire by a token (request_tokens.hpp), never by
// its address, and only while it awaits a record from the peer
// (TreqState::awaiting).  A record from a peer is checked before it touches
// a request: a token that names no request of ours (forged, stale,
// repeated), a record that does not fit the state of the request it names
// (a clear-to-send for a synchronous eager send, data of the wrong length,
// from another rank), or a header of the wrong size is dropped, counted
// (tag_rejected in llc_get_stats) and reported in at most one warning line
// a minute: never an error, never a crash (doc/reliability.md).
#pragma once

#include "wire/am_protocol.hpp"
#include "auth/job_secret.hpp"
#include "tagged/request_tokens.hpp"
#include "tagged/tag_matcher.hpp"

#include "llc.h"

#include <cstdint>

namespace llc {

class Context;

// Handler ids of the tagged protocol, after the LLC_AM_MAX_HANDLERS public ones.
enum TagHandler : unsigned {
    kTagEager = LLC_AM_MAX_HANDLERS, // TagWire + payload
    kTagRts,                         // TagWire (rendezvous fields set)
    kTagCts,                         // TagReply: the receiver is ready, stream the payload
    kTagData,                        // TagReply + payload
    kTagFin,                         // TagReply: the message was received (sync eager, pulled rendezvous)
    kTagFail,                        // TagReply: the receiver could not read the payload (process_vm_readv
                                     // failed): the send completes with LLC_ERR_PEER
    kTagHandlerEnd
};
static_assert(kTagHandlerEnd <= kHandlerSlots, "tagged handler ids fit the handler table");

struct TagWire {
    uint64_t tag;
    uint32_t source;
    uint32_t flags;  // kWireSync
    uint64_t length;
    uint64_t sreq;   // the sender's request token (sync or rendezvous), else 0
    int32_t pid;     // rendezvous: the sender's process
    uint32_t spare;
    uint64_t addr;   // rendezvous: the sender's buffer
};
static_assert(sizeof(TagWire) == 48, "tagged wire header layout");
constexpr uint32_t kWireSync = 1;

struct TagReply {
    uint64_t sreq; // the sender's request token (Cts, Fin, Fail), else 0
    uint64_t rreq; // the receiver's request token (Cts, Data), else 0
};

class Tagged {
public:
    explicit Tagged(Context &ctx);
    Tagged(const Tagged &) = delete;
    Tagged &operator=(const Tagged &) = delete;

    int send(int dest, uint32_t source, uint64_t tag, const void *buf, size_t len, unsigned flags, llc_treq_t *req);
    int recv(int source, uint64_t tag, uint64_t ignore, void *buf, size_t len, llc_treq_t *req);
    bool probe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info);
    llc_tmsg_t *mprobe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info);
    int mrecv(llc_tmsg_t *msg, void *buf, size_t len, llc_treq_t *req);
    bool cancel(llc_treq_t *req);
    // A small eager message that came without a TagWire (Context::deliver_tagged_chunk).
    void arrived_eager(int src, uint64_t tag, uint32_t source, const char *data, size_t len)
    {
        TagWire w{};
        w.tag = tag;
        w.source = source;
        w.length = len;
        arrived(src, w, data, len, false);
    }

    // Where a rendezvous Data record's payload from src (its TagReply in
    // hdr) may be received in place: the buffer of the receive it names,
    // when that receive waits for exactly len bytes of data from src and
    // keeps all of them; else nullptr (the payload is gathered and copied).
    char *data_destination(int src, const void *hdr, size_t hdr_len, uint64_t len);

    const TagMatcher &matcher() const { return matcher_; }
    const RequestTokens &tokens() const { return tokens_; }

private:
    static void on_eager(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                         size_t data_len);
    static void on_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_cts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_data(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                        size_t data_len);
    static void on_fin(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_fail(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_send_done(void *req, int status); // a transport finished with a send's buffer

    void arrived(int src, const TagWire &w, const void *data, size_t data_len, bool rndv);
    // A receive matched message u (its envelope, eager data or rendezvous
    // address): place the bytes or start pulling them.  True when complete.
    bool deliver(TreqState &r, const TagEnvelope &env, uint32_t flags, uint64_t sreq, const char *data, bool rndv,
                 int32_t pid, uint64_t addr);
    enum class Pull : uint8_t { Done, NotPermitted, Failed };
    // Failed: errno_out says why (the sender's address or process is wrong).
    Pull pull_by_cma(TreqState &r, size_t n, int32_t pid, uint64_t addr, int &errno_out);
    void send_reply(int dest, unsigned id, uint64_t sreq, uint64_t rreq);
    // The request token names now, if it awaits one of `accepted` (a mask
    // of 1 << TreqState::Await) from src; else nullptr, the record counted
    // and dropped (reject).
    TreqState *awaiting_request(int src, uint64_t token, unsigned accepted, const char *what);
    // The same without a word: nullptr for anything else.
    TreqState *request_awaiting(int src, uint64_t token, unsigned accepted);
    void await(TreqState &r, TreqState::Await what);
    void stop_awaiting(TreqState &r);
    void reject(int src, const std::string &why);
    template <class T> bool header_ok(const void *hdr, size_t hdr_len, int src, const char *what, T &out);
    void set_results(llc_treq_t *req, const TagEnvelope &env, size_t received);
    static void finish(TreqState &r, int status, bool call_back);
    static void send_event_done(TreqState &r, int status);

    Context &ctx_;
    TagMatcher matcher_;
    RequestTokens tokens_; // requests awaiting a record from a peer
    RejectLog rejects_{"tagged protocol records (an unknown or stale request token, a record out of place) were",
                       "tag_rejected"};
};

} // namespace llc
