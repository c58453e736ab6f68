// tagged.hpp - tagged point-to-point over the context's record streams:
// eager messages, request-to-send with the receiver pulling the payload
// (process_vm_readv on the same node, clear-to-send + streamed data
// elsewhere), receives offered to their sender (which writes into them),
// synchronous-send acknowledgements, probe, matched probe, cancel.  It is
// libllc's one rendezvous: large active messages to a process of the node
// (Context::send_am, LLC_CMA_THRESHOLD) or to a peer with keyed reads
// (verbs, LLC_VERBS_RNDV_BYTES) take the same records (AmRts, then Fin,
// Fail or Cts + Data; tagged_am.cpp, tagged_am_keyed.cpp).
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
#include "support/byte_buffer.hpp"
#include "tagged/offer_book.hpp"
#include "tagged/request_tokens.hpp"
#include "tagged/tag_matcher.hpp"
#include "transport/transport.hpp"

#include "llc.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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
    // large active messages (tagged_am.cpp):
    kTagAmRts, // AmRtsWire + the caller's AM header + RemoteSpan[spans] (KeyedSpan[spans] with kAmKeyed): read
               // the payload where it is; answered by Fin (read and delivered), Fail (could not be read) or Cts
               // (not permitted, no landing buffer: stream it as Data)
    // the split copy within a node (tagged_split.cpp, doc/libllc-tagged.md "Split copy"):
    kTagSplit,    // SplitWire, receiver -> sender (after an Rts): write the first bytes into my buffer
    kTagPutSplit, // PutSplitWire, sender -> receiver (an offer taken): read the rest from my buffer
    kTagWritten,  // WrittenWire, sender -> receiver: my part is written (or could not be)
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

// A large active message whose payload stays where its sender keeps it.
struct AmRtsWire {
    uint64_t sreq;    // the sender's request token
    uint64_t length;  // the payload's bytes (the spans' lengths add up to it)
    int32_t pid;      // the sender's process
    uint32_t handler; // the caller's handler id (below LLC_AM_MAX_HANDLERS)
    uint32_t hdr_len; // the caller's header bytes, first in the record's payload
    uint32_t spans;   // RemoteSpan entries after them (KeyedSpan with kAmKeyed)
    uint32_t flags;   // kAmKeyed
    uint32_t spare;   // 0
};
static_assert(sizeof(AmRtsWire) == 40, "large active message wire header layout");
// The spans are KeyedSpan (transport.hpp): the receiver reads them with its
// transport's keyed remote read (CapKeyedRead: RDMA READ with the rkey), not CMA.
constexpr uint32_t kAmKeyed = 1;

// The split copy (tagged_split.cpp): the sender writes the message's first
// `split` bytes into the receive buffer while the receiver reads the rest.
// After an Rts the receiver asks for it (Split: its buffer's address); for an
// offer taken the sender announces it (PutSplit: its own buffer's address).
// Either way the sender then reports its part (Written) and the receiver
// answers the send with Fin, Fail or Cts once both parts are known.
struct SplitWire {
    uint64_t sreq;  // the sender's request token (its Rts)
    uint64_t rreq;  // the receiver's request token (for Written)
    uint64_t addr;  // the receive buffer, in the receiver's process
    uint64_t split; // bytes [0, split) of the message, for the sender to write
};
static_assert(sizeof(SplitWire) == 32, "split wire layout");

struct PutSplitWire {
    PutWire put;    // the offered receive's token, the envelope (flags 0)
    uint64_t sreq;  // the sender's request token (for Fin, Fail or Cts)
    uint64_t addr;  // the send buffer, in the sender's process
    uint64_t split; // bytes [split, min(length, capacity)) are the receiver's to read
};
static_assert(sizeof(PutSplitWire) == 56, "split put wire layout");

// How one copy by CMA went: a pull, a push, or one part of a split copy
// (also WrittenWire::result and TreqState::split, so the values are fixed).
// NotPermitted: ptrace rules, a seccomp filter or LLC_CMA=0 (the bytes are
// streamed instead); Failed: the peer named memory or a process we cannot
// reach.
enum class CmaCopy : uint8_t { Pending = 0, Done = 1, NotPermitted = 2, Failed = 3 };
enum class CmaDirection : uint8_t { ReadFromPeer, WriteToPeer };

struct WrittenWire {
    uint64_t rreq;   // the receiver's request token
    uint32_t result; // CmaCopy of the sender's write
    uint32_t spare;
};
static_assert(sizeof(WrittenWire) == 16, "written wire layout");

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

    // Large active messages (tagged_am.cpp).  Whether one of len bytes to
    // dest goes by rendezvous: a peer on this node that has not refused to
    // read us, CMA on, at least LLC_CMA_THRESHOLD; or a peer whose transport
    // has keyed reads (CapKeyedRead: verbs), at least LLC_VERBS_RNDV_BYTES.
    bool am_by_rendezvous(int dest, size_t len) const;
    // Send it so: LLC_INPROGRESS, cb runs once the receiver has read it (or
    // it was streamed), with LLC_ERR_PEER when it could not be read.
    int send_am(int dest, unsigned handler, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                llc_completion_t cb, void *cb_arg);
    // The transports reported dest failed: every request that waits for
    // it completes with LLC_ERR_PEER (large active messages waiting for an
    // answer, sends waiting for a reply, receives waiting for its data or
    // its offered write, posted receives for it or for any source), and a
    // receive posted for it later fails at the call (tagged_peer_failure.cpp).
    void peer_failed(int dest);

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
    // Large active messages waiting for an answer or for their streamed
    // data (each holds a request token), and those being read by keyed
    // reads (no token).
    size_t am_in_flight() const { return am_sends_.size() + am_recvs_.size(); }
    size_t am_keyed_reads() const { return am_keyed_.size(); }

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
    static void on_am_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                          size_t data_len);
    static void on_split(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_put_split(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *,
                             size_t data_len);
    static void on_written(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_send_done(void *req, int status); // a transport finished with a send's buffer

    // Large active messages (tagged_am.cpp): a send and its iov (the
    // caller's buffers, kept until the answer), a receive being streamed
    // after all (its handler, header and buffer).  Both are requests of
    // their own (req.user: the object).
    struct AmSend {
        llc_treq_t req{};
        Tagged *owner = nullptr;
        std::vector<llc_iov_t> iov;
        std::vector<char> record; // the AmRts's payload (the caller's header, the spans)
        llc_completion_t cb = nullptr;
        void *cb_arg = nullptr;
        bool streamed = false;
        std::unique_ptr<Exposure> exposure; // keyed spans: the transport's pins, released with the send
    };
    // A large active message being read by a keyed read (tagged_am_keyed.cpp).
    struct AmKeyedRecv {
        AmRtsWire w{};
        std::vector<char> hdr;
    };
    struct AmRecv {
        llc_treq_t req{};
        Tagged *owner = nullptr;
        unsigned handler = 0;
        std::vector<char> hdr;
        std::vector<char> buf;
    };
    void arrived_am(int src, const AmRtsWire &w, const char *data, size_t data_len);
    // Point-to-point requests that wait for dest, which failed (tagged_peer_failure.cpp).
    void fail_requests_for(int dest);
    // A receive for src_rank, which failed earlier: throws Error(LLC_ERR_PEER).
    void refuse_receive_from_failed(int src_rank) const;
    // Keyed spans (tagged_am_keyed.cpp): expose the payload and put the
    // record together (false: it could not be exposed, send it another way);
    // read it with the transport, and its outcome.
    bool expose_am(int dest, AmSend &s, AmRtsWire &w);
    void arrived_am_keyed(int src, const AmRtsWire &w, const char *data, size_t data_len);
    void keyed_read_done(int src, uint64_t id, const KeyedReadResult &res, bool started);
    void answer(int dest, unsigned id, uint64_t sreq, uint64_t rreq);
    void uncount_answer(TreqState &r);
    void receive_am_streamed(int src, const AmRtsWire &w, const char *user_hdr);
    AmSend *am_send_of(TreqState &r);
    void stream_am(int dest, TreqState &r, AmSend &s, uint64_t rreq);
    static void on_am_send_done(llc_treq_t *req);
    static void on_am_recv_done(llc_treq_t *req);

    // Offers (Morimoto et al.).  Whether receive r (about to be posted, larger
    // than LLC_TAG_EAGER_BYTES: recv tests that first) may be offered to
    // src_rank; then offer it (it is posted and holds a token).
    bool may_offer(const TreqState &r, int src_rank);
    void offer(TreqState &r, int src_rank);
    // A send that matched offer o: write it there.
    int send_offered(int dest, uint32_t source, uint64_t tag, const void *buf, size_t len, const Offer &o,
                     llc_treq_t *req);

    // The split copy (tagged_split.cpp).  Whether n bytes between us and
    // peer are split (at least LLC_TAG_SPLIT_BYTES into an offer,
    // LLC_TAG_SPLIT_RTS_BYTES after a request-to-send unless the node is
    // oversubscribed, a peer of this node that has not refused a part); the
    // sender's share of them.
    bool split_wanted(int peer, size_t n, bool after_rts) const;
    size_t split_point(size_t n) const;
    // Receiver, rendezvous: receive r (n bytes of a message from src, sreq
    // its token) asks for the split and reads its part.
    void start_split_pull(TreqState &r, int src, uint64_t sreq, int32_t pid, uint64_t addr, size_t n);
    // Sender, offer taken: announce the split, write our part.
    int send_offered_split(int dest, const PutWire &put, const void *buf, size_t n, const Offer &o, llc_treq_t *req);
    // Receiver: both parts known (its own in r.split, the sender's theirs).
    void conclude_split(TreqState &r, int src, CmaCopy theirs);
    // Sender: our part could not be written: the send fails now.
    void split_write_failed(TreqState &r, int dest, uint64_t addr, size_t n);
    void forget_split_recv(TreqState &r);
    void split_peer_failed(int src);

    void arrived(int src, const TagWire &w, const void *data, size_t data_len, bool rndv);
    // A receive matched message u (its envelope, eager data or rendezvous
    // address): place the bytes or start pulling them.  True when complete.
    // (Inline: the common eager case makes no call with eight arguments.)
    bool deliver(TreqState &r, const TagEnvelope &env, uint32_t flags, uint64_t sreq, const char *data, bool rndv,
                 int32_t pid, uint64_t addr)
    {
        if (rndv)
            return deliver_rendezvous(r, env, sreq, pid, addr);
        deliver_eager(r, env, flags, sreq, data);
        return true;
    }
    void deliver_eager(TreqState &r, const TagEnvelope &env, uint32_t flags, uint64_t sreq, const char *data);
    bool deliver_rendezvous(TreqState &r, const TagEnvelope &env, uint64_t sreq, int32_t pid, uint64_t addr);
    // The receive's results for env (truncated to its capacity): the bytes to place.
    size_t place_results(TreqState &r, const TagEnvelope &env);
    // n bytes between `local` and addr in process pid, one way; on Failed,
    // *errno_out (when given) says why.
    CmaCopy copy_by_cma(CmaDirection dir, int32_t pid, uint64_t addr, void *local, size_t n,
                        int *errno_out = nullptr) const;
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
    // The same with the reason built out of line (for the hot paths' checks).
    template <class MakeWhy> [[gnu::cold, gnu::noinline]] void reject_with(int src, MakeWhy &&why)
    {
        reject(src, why());
    }
    // After offers_ changed for peer: the inline fast path (llc_fast.h) to
    // it stays closed while it holds offers (a send must look at them first).
    void offers_changed(int peer);
    template <class T> bool header_ok(const void *hdr, size_t hdr_len, int src, const char *what, T &out);
    void set_results(llc_treq_t *req, const TagEnvelope &env, size_t received);
    static void finish(TreqState &r, int status, bool call_back);
    static void send_event_done(TreqState &r, int status);

    Context &ctx_;
    // This process, named in offers and requests-to-send (getpid() is a
    // system call each time, a microsecond on a virtual machine).
    const int32_t pid_;
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
    std::unordered_set<int> failed_peers_; // ranks the transports reported failed
    std::unordered_map<llc_treq_t *, std::unique_ptr<AmSend>> am_sends_;
    std::unordered_map<llc_treq_t *, std::unique_ptr<AmRecv>> am_recvs_;
    std::unordered_set<int> am_streamed_to_;             // peers that may not read us: large messages streamed
    std::unordered_map<uint64_t, AmKeyedRecv> am_keyed_; // keyed reads in progress, by id
    uint64_t next_keyed_id_ = 1;
    // Its keyed reads' callbacks run only while it lives (they hold a weak_ptr).
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    RejectLog am_keyed_rejects_{"large active messages whose keyed spans could not be read were",
                                "verbs_rndv_send_errors"};
    std::vector<TreqState *> split_recvs_;  // receives waiting for the sender's part (Written); kept
                                            // unordered, its storage reused (no allocation per message)
    std::unordered_set<int> split_refused_; // peers where a part was not permitted: no more splits
    ByteBuffer am_buffer_;                  // where a large active message is read
    bool am_reading_ = false;               // am_buffer_ is in use (a handler runs)
    RejectLog am_read_rejects_{
        "large active messages whose spans named memory or a process that could not be read were", "cma_read_failed"};
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
