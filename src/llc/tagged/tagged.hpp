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
#include "tagged/offer_book.hpp"
#include "tagged/request_tokens.hpp"
#include "tagged/tag_matcher.hpp"

#include "llc.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

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
    // offers, the receive posted first (doc/libllc-tagged.md, "Offers"):
    kTagOffer,   // OfferWire, receiver -> sender: write the next message that matches into this buffer
    kTagPut,     // PutWire [+ payload], sender -> receiver: the message for an offered receive
    kTagDecline, // TagReply (rreq), sender -> receiver: the offer is refused (a message crossed it, or revoked)
    kTagRevoke,  // TagReply (rreq), receiver -> sender: the offered receive is cancelled, give the offer back
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

// An offer: the receive (token rreq) matches (tag, ignore, source label);
// `seen` is the number of records the receiver had received from the sender
// when it posted the receive (Context::records_received_from).  The sender
// takes the offer only when it has sent exactly that many (nothing of its
// was in flight, so nothing could have matched the receive on the way);
// else it declines it.
struct OfferWire {
    uint64_t rreq;
    uint64_t tag;
    uint64_t ignore;
    uint64_t capacity;
    uint64_t addr; // the buffer, in process pid (same node: written with process_vm_writev)
    uint64_t seen;
    int32_t source;
    int32_t pid;
};
static_assert(sizeof(OfferWire) == 56, "offer wire layout");

// The message for an offered receive: its envelope, and its payload
// (min(length, capacity) bytes) unless it was written already.
struct PutWire {
    uint64_t rreq;
    uint64_t tag;
    uint64_t length;
    uint32_t source;
    uint32_t flags; // kPutWritten, kPutFailed
};
static_assert(sizeof(PutWire) == 32, "put wire layout");
constexpr uint32_t kPutWritten = 1; // the payload is in the buffer already (process_vm_writev)
constexpr uint32_t kPutFailed = 2;  // the buffer could not be written: the receive fails (LLC_ERR_PEER)

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
    // src_rank: the job rank that sends as `source` (>= 0), so that the
    // receive may be offered to it; -1 when unknown (never offered).
    int recv(int source, int src_rank, uint64_t tag, uint64_t ignore, void *buf, size_t len, llc_treq_t *req);
    bool probe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info);
    llc_tmsg_t *mprobe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info);
    int mrecv(llc_tmsg_t *msg, void *buf, size_t len, llc_treq_t *req);
    enum class Cancel : uint8_t { Done, NotCancelled, Pending };
    // Pending: an offered receive; its sender is asked to give the offer
    // back, and the receive completes later, cancelled or with a message.
    Cancel cancel(llc_treq_t *req);
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
    // The same for the payload of a Put: the offered receive's buffer.
    char *put_destination(int src, const void *hdr, size_t hdr_len, uint64_t len);

    const TagMatcher &matcher() const { return matcher_; }
    // What it holds for the memory accounting (mem/mem_accounting.hpp).
    void account(MemRegistry &r) const { matcher_.account(r); }
    const RequestTokens &tokens() const { return tokens_; }
    const OfferBook &offers() const { return offers_; }

private:
    static void on_eager(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                         size_t data_len);
    static void on_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_cts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_data(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                        size_t data_len);
    static void on_fin(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_fail(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_offer(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_put(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t data_len);
    static void on_decline(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *,
                           size_t);
    static void on_revoke(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *,
                          size_t);
    static void on_send_done(void *req, int status); // a transport finished with a send's buffer

    // Offers (Morimoto et al.).  Whether receive r (about to be posted) may be
    // offered to src_rank; then offer it (it is posted and holds a token).
    bool may_offer(const TreqState &r, int src_rank);
    void offer(TreqState &r, int src_rank);
    // A send that matched offer o: write it there.
    int send_offered(int dest, uint32_t source, uint64_t tag, const void *buf, size_t len, const Offer &o,
                     llc_treq_t *req);
    enum class Push : uint8_t { Done, NotPermitted, Failed };
    Push push_by_cma(const void *buf, size_t n, int32_t pid, uint64_t addr);

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
    // After offers_ changed for peer: the inline fast path (llc_fast.h) to
    // it stays closed while it holds offers (a send must look at them first).
    void offers_changed(int peer);
    template <class T> bool header_ok(const void *hdr, size_t hdr_len, int src, const char *what, T &out);
    void set_results(llc_treq_t *req, const TagEnvelope &env, size_t received);
    static void finish(TreqState &r, int status, bool call_back);
    static void send_event_done(TreqState &r, int status);

    Context &ctx_;
    TagMatcher matcher_;
    RequestTokens tokens_; // requests awaiting a record from a peer
    OfferBook offers_;     // receives our peers offered us
    // Receiver: offers refused in a row by a sender, and eligible receives
    // still to post without an offer before trying again (a sender whose
    // messages keep crossing our offers, as in a tight ping-pong, costs a
    // refusal each; this backs off up to kMaxOfferSkip receives).
    struct OfferStreak {
        uint32_t declined = 0;
        uint32_t skip = 0;
    };
    static constexpr uint32_t kMaxOfferSkip = 256;
    std::unordered_map<int, OfferStreak> offer_streaks_;
    RejectLog rejects_{"tagged protocol records (an unknown or stale request token, a record out of place) were",
                       "tag_rejected"};
};

// A record's header, checked for size (else dropped and counted).
template <class T> bool Tagged::header_ok(const void *hdr, size_t hdr_len, int src, const char *what, T &out)
{
    if (hdr_len != sizeof(T)) {
        reject(src, std::string("a tagged ") + what + " record with " + std::to_string(hdr_len) +
                        " header bytes (not " + std::to_string(sizeof(T)) + ")");
        return false;
    }
    std::memcpy(&out, hdr, sizeof(T));
    return true;
}

} // namespace llc
