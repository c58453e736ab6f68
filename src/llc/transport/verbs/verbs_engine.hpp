// verbs_engine.hpp - the logic of the verbs transport, apart from the
// device: per-peer state in a capped PeerTable, send queues packed into
// frames (verbs_frame.hpp), credits (verbs_credits.hpp), the shared receive
// queue's buffers (verbs_recv_pool.hpp), ordered delivery through a stream
// decoder, goodbyes and finalize, RC promotion, and the zero-copy RDMA READ
// rendezvous for large messages through a RegCache (see "rendezvous" in
// verbs_engine.cpp: VerbsRts records in the stream, READs, RndvFin frames;
// later records of the pair are held behind a READ so delivery keeps send
// order).  It talks to the device through
// VerbsFabric (implemented with ibv/mlx5dv calls in verbs_transport.cpp, and
// by an in-memory fake in test/unit/common/verbs_fake_fabric.{hpp,cpp}) and to the rest of
// libllc through VerbsHost (Context in the library).  No ibv type here: it
// is compiled, and tested, with or without libibverbs.
#pragma once

#include "wire/outgoing_message.hpp"
#include "support/peer_table.hpp"
#include "transport/busy_promotion.hpp"
#include "transport/goodbye_book.hpp"
#include "transport/verbs/reg_cache.hpp"
#include "wire/stream_decoder.hpp"
#include "transport/verbs/verbs_address.hpp"
#include "transport/verbs/verbs_credits.hpp"
#include "transport/verbs/verbs_frame.hpp"
#include "transport/verbs/verbs_recv_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

// What the engine needs from libllc.
class VerbsHost {
public:
    virtual ~VerbsHost() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual size_t copy_max() const = 0;
    // The verbs address `rank` published (text form); throws Error if none.
    virtual std::string lookup(int rank) = 0;
    virtual void deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t len) = 0;
    virtual void complete(OutgoingMessage &msg, int status) = 0; // Context::defer_completion
    virtual void report_error(int status, const std::string &message) = 0;
};

struct VerbsCompletion {
    uint64_t id = 0;          // send: the slot; receive: the buffer
    uint32_t len = 0;         // receive: bytes received
    bool ok = true;
    std::string status;       // when !ok: what the device said
};

// One RDMA READ: len bytes from the peer's [remote, remote + len) (rkey)
// into local memory (lkey).  id comes back in the completion.
struct VerbsRead {
    uint64_t id = 0;
    char *local = nullptr;
    uint32_t lkey = 0;
    uint64_t remote = 0;
    uint32_t rkey = 0;
    uint32_t len = 0;
};

// What the engine needs from the device.  Queue pairs are numbered:
// 0 .. data_qps()-1 carry data frames, data_qps() carries credit frames.
class VerbsFabric {
public:
    virtual ~VerbsFabric() = default;
    virtual size_t data_qps() const = 0;
    virtual uint32_t send_queue_depth() const = 0;   // posted sends per queue pair
    virtual size_t send_slots() const = 0;           // registered send buffers
    virtual size_t slot_bytes() const = 0;           // bytes per send slot and per receive buffer
    virtual char *send_slot(uint32_t slot) = 0;
    virtual const char *recv_buffer(uint32_t id) = 0;
    // A route to a peer (address handle); released with disconnect.  Throws Error.
    virtual void *connect(const VerbsAddress &peer) = 0;
    virtual void disconnect(void *route) = 0;
    // 0, or an errno (nothing was posted).
    virtual int post_send(size_t qp, void *route, const VerbsAddress &peer, uint32_t slot, size_t len) = 0;
    // Completions of sends on qp / of receives: count, or -1 when polling failed.
    virtual int poll_send(size_t qp, VerbsCompletion *out, int max) = 0;
    virtual int poll_recv(VerbsCompletion *out, int max) = 0;
    // Posts receive buffers ids[0..n); returns how many were posted (a prefix).
    virtual size_t post_recv(const uint32_t *ids, size_t n) = 0;

    // RC queue pairs, created on demand for busy peers (none when
    // rc_supported() is false).  Their sends complete on queue pair number
    // data_qps() + 1 (poll_send), at most rc_cq_depth() in flight in all.
    virtual bool rc_supported() const { return false; }
    virtual uint32_t rc_cq_depth() const { return 0; }
    // An RC QP in INIT receiving through the shared receive queue; *qpn and
    // *psn: its number and first packet sequence number.  Throws Error.
    virtual void *rc_create(uint32_t *qpn, uint32_t *psn)
    {
        (void)qpn;
        (void)psn;
        return nullptr;
    }
    // To RTR and RTS towards `peer` (its address with rc_qpn and psn set).  Throws Error.
    virtual void rc_connect(void *rc, const VerbsAddress &peer)
    {
        (void)rc;
        (void)peer;
    }
    virtual int post_send_rc(void *rc, uint32_t slot, size_t len)
    {
        (void)rc;
        (void)slot;
        (void)len;
        return 38; // ENOSYS
    }
    virtual void rc_destroy(void *rc) { (void)rc; }

    // Zero-copy rendezvous (VerbsEngineParams::rndv_bytes): who registers
    // memory for the RegCache (nullptr: no rendezvous), and RDMA READs, on a
    // DC initiator (qp < data_qps(), to the peer's DCT as post_send) or on
    // an RC QP (its sends' queue pair, data_qps() + 1).  Completions come
    // through poll_send of that queue pair, with the read's id.  0 or an
    // errno (nothing posted).
    virtual Registrar *registrar() { return nullptr; }
    virtual int post_read(size_t qp, void *route, const VerbsAddress &peer, const VerbsRead &r)
    {
        (void)qp;
        (void)route;
        (void)peer;
        (void)r;
        return 38; // ENOSYS
    }
    virtual int post_read_rc(void *rc, const VerbsRead &r)
    {
        (void)rc;
        (void)r;
        return 38; // ENOSYS
    }
};

struct VerbsEngineParams {
    size_t recv_buffers = 2 * 2048; // in the receive region
    size_t recv_post_bound = 2048;  // the shared receive queue's depth
    uint32_t credits_per_peer = 64;
    uint32_t credit_batch = 16;
    size_t max_peers = 1024;        // LLC_MAX_CONTEXTS
    uint32_t job_tag = 0;
    // RC promotion: a destination that got at least rc_promote_frames of the
    // last rc_window_frames data frames this process sent is asked for an RC
    // queue pair; at most rc_max RC QPs (both directions) per process, kept
    // for reuse.  rc_max 0: never.
    size_t rc_max = 0;
    uint32_t rc_promote_frames = 256;
    uint32_t rc_window_frames = 1024;
    // Zero-copy rendezvous: an active message whose payload is at least
    // rndv_bytes (0: never) is not copied into send slots; its payload is
    // registered through the RegCache (at most reg_cache_max registrations
    // kept), announced in a VerbsRts record in the pair's stream, read by
    // the receiver with RDMA READs of at most rndv_chunk bytes each into a
    // registered landing buffer, and the send completes on the receiver's
    // RndvFin.  Payloads of more than rndv_max_segments spans go by copy.
    // Idle landing buffers are kept (registered) up to landing_keep_bytes.
    size_t rndv_bytes = 0;
    size_t rndv_chunk = size_t(1) << 30;
    size_t rndv_max_segments = 16;
    size_t reg_cache_max = RegCache::kDefaultMaxEntries;
    size_t landing_keep_bytes = size_t(64) << 20;
};

// Rendezvous counters (VerbsEngine::rndv_stats()).
struct VerbsRndvStats {
    uint64_t sends = 0;          // messages sent by rendezvous (RTS queued)
    uint64_t sends_completed = 0; // of those, completed on a RndvFin that said it was read
    uint64_t send_errors = 0;    // completed with an error: the read failed, or the engine failed (dead peer)
    uint64_t reg_fallbacks = 0;  // at or above the threshold, sent by copy: registering the payload failed
    uint64_t iov_fallbacks = 0;  // at or above the threshold, sent by copy: more than rndv_max_segments spans
    uint64_t recvs = 0;          // messages received by rendezvous (delivered)
    uint64_t reads = 0;          // RDMA READ work requests posted
    uint64_t bytes_read = 0;     // payload bytes read
    uint64_t read_failures = 0;  // READ completions with an error
    uint64_t held_records = 0;   // records copied and held behind a rendezvous still being read (ordering)
    uint64_t stray_fins = 0;     // RndvFin frames naming no rendezvous of ours
    uint64_t landing_allocs = 0; // landing buffers allocated (the others were reused)
};

class VerbsEngine {
public:
    // Posts the first receive buffers.  host and fabric must outlive the engine.
    VerbsEngine(VerbsHost &host, VerbsFabric &fabric, const VerbsEngineParams &params);
    ~VerbsEngine();
    VerbsEngine(const VerbsEngine &) = delete;
    VerbsEngine &operator=(const VerbsEngine &) = delete;

    // LLC_OK (copied, or payload <= copy_max owned) or LLC_INPROGRESS
    // (callback when copied).  Throws Error once the engine has failed.
    int send(int dest, std::unique_ptr<OutgoingMessage> msg);
    bool progress();
    bool has_pending_sends() const;
    std::string pending_report() const;
    void say_goodbye();
    bool incoming_quiet() const;

    bool failed() const { return failed_; }
    size_t peer_count() const { return peers_.size(); }
    uint64_t peer_evictions() const { return peers_.evictions(); }
    uint64_t stray_frames() const { return stray_frames_; }
    uint64_t credit_stalls() const { return credit_stalls_; }
    size_t rc_count() const { return rc_count_; }                // RC QPs held (both directions)
    uint64_t rc_promotions() const { return rc_promotions_; }    // our RC QPs connected (sender side)
    uint64_t rc_refusals() const { return rc_refusals_; }        // our requests refused
    uint64_t rc_frames_held() const { return rc_frames_held_; }  // RC frames that overtook the DC stream
    const RecvBufferPool &pool() const { return pool_; }
    // Rendezvous: counters; the registration cache (nullptr when the
    // rendezvous is off); sends waiting for their RndvFin; landing buffers.
    const VerbsRndvStats &rndv_stats() const { return rndv_; }
    const RegCache *reg_cache() const { return reg_cache_.get(); }
    size_t rndv_sends_pending() const { return rndv_tx_.size(); }
    size_t landing_buffers() const { return landing_all_.size(); }
    // Writes the rendezvous and registration-cache counters into the
    // verbs_rndv_* and reg_cache_* fields of an llc_stats_t.
    void export_stats(llc_stats_t &st) const;
    uint64_t landing_bytes() const { return landing_bytes_; }

private:
    // A message read by rendezvous, receiver side: the sender's segments,
    // the landing buffer (registered through the cache) and its READs.
    struct RndvRecv {
        uint32_t id = 0;
        WireHeader wire{};
        std::vector<uint64_t> hdr; // the AM header, 8-byte aligned as the decoder's
        std::vector<VerbsRtsSegment> segs;
        char *buf = nullptr; // landing buffer (capacity landing_cap)
        size_t cap = 0;
        RegHandle pin;
        size_t next_seg = 0;      // the next READ to post: segment and offset in it
        uint64_t next_off = 0;
        uint64_t dest_off = 0;    // where it lands in buf
        uint32_t reads_in_flight = 0;
        bool queued = false;      // in read_queue_ (READs left to post)
        bool done = false;        // every byte read
    };
    // A record of the pair's stream not delivered yet because a rendezvous
    // before it is still being read: a copied Am record, a Goodbye, or the
    // rendezvous itself.  Delivered in stream order.
    struct Held {
        WireHeader wire{};
        std::vector<uint64_t> hdr; // 8-byte aligned as the decoder's
        std::string payload;
        std::unique_ptr<RndvRecv> rndv;
    };
    // Sender side: the message, kept until the receiver's RndvFin, and the
    // pins on its payload.
    struct RndvSend {
        int dest = -1;
        std::unique_ptr<OutgoingMessage> msg;
        std::vector<RegHandle> pins;
    };
    struct Peer {
        int rank = -1;
        bool have_address = false;
        VerbsAddress addr;
        void *route = nullptr; // fabric.connect()
        SendCredits tx_credits;
        RecvCredits rx_credits;
        std::deque<std::unique_ptr<OutgoingMessage>> queue;
        std::unique_ptr<StreamDecoder> decoder;
        uint32_t credits_to_send = 0; // taken from rx_credits, not yet posted
        uint32_t in_flight = 0;       // posted sends not yet completed (they use `route`)
        bool feeding = false; // its decoder is running (a handler may send): not evictable
        // RC, sender side: our QP to it (Requested: waiting for the answer;
        // Up: connected; once the LastOnDc frame is out, data goes on RC).
        enum class Rc : uint8_t { None, Requested, Up, Refused };
        Rc rc = Rc::None;
        void *rc_qp = nullptr;
        bool dc_closed = false;
        uint32_t rc_in_flight = 0;
        uint32_t window_frames = 0; // data frames to it in the current window
        // RC, receiver side: the QP it sends to us on, and its RC frames
        // that arrived before its LastOnDc frame (stream bytes, in order).
        void *rc_rx_qp = nullptr;
        bool dc_done = false;
        std::deque<std::string> held;
        // Rendezvous: records waiting behind a rendezvous being read (in
        // order), frames whose credits wait for them to be delivered, and
        // our rendezvous sends to it not finished yet.
        std::deque<Held> inbox;
        uint32_t deferred_credits = 0;
        uint32_t rndv_tx = 0;
    };
    struct Control {
        int rank;
        VerbsFrameType type;
        uint32_t qpn, psn;
    };

    Peer &peer_for(int rank);
    void resolve(Peer &p);
    bool evictable(const Peer &p) const;
    bool pump(Peer &p);
    bool post_frame(Peer &p, size_t qp, uint32_t slot, size_t len);
    bool poll_send();
    bool poll_recv();
    void on_frame(uint32_t buffer, const char *data, size_t len);
    void on_record(Peer &p, const IncomingRecord &rec);
    void repost();
    void return_credits(bool flush);
    void flush_control();
    void consider_rc(Peer &p);
    void on_rc_frame(Peer &p, const VerbsFrame &f);
    void feed(Peer &p, const char *data, size_t len);
    void fail(int status, const std::string &message);
    int send_rndv(Peer &p, std::unique_ptr<OutgoingMessage> &msg);
    void on_rts(Peer &p, const IncomingRecord &rec);
    void post_reads(Peer &p, RndvRecv &r);
    void flush_reads();
    void on_read_done(uint64_t id, const VerbsCompletion &wc);
    void drain_inbox(Peer &p);
    void credit_back(Peer &p, uint32_t frames);
    void on_fin(Peer &p, const VerbsFrame &f);
    void finish_send(uint32_t id, int status);
    char *landing_get(size_t len, size_t *cap);
    void landing_put(char *buf, size_t cap);
    void release_landing(RndvRecv &r);
    std::string describe(int rank) const;

    VerbsHost &host_;
    VerbsFabric &fabric_;
    VerbsEngineParams params_;
    BusyPromotion rc_promotion_; // rc_promote_frames: which peers get an RC queue pair
    // Before everything that holds a RegHandle (peers_, rndv_tx_): destroyed after them.
    std::unique_ptr<RegCache> reg_cache_;
    std::map<char *, size_t> landing_all_;       // every landing buffer -> capacity
    std::multimap<size_t, char *> landing_idle_; // capacity -> idle buffer (registered, reusable)
    uint64_t landing_bytes_ = 0, landing_idle_bytes_ = 0;
    RecvBufferPool pool_;
    std::vector<uint32_t> free_slots_;
    std::vector<int32_t> slot_owner_;   // rank a slot's frame was sent to (-1: free)
    std::vector<uint32_t> qp_in_flight_; // per queue pair
    PeerTable<std::unique_ptr<Peer>> peers_;
    std::vector<int> credit_pending_;   // ranks with credits_to_send > 0
    std::deque<Control> control_pending_; // RC handshake frames not yet posted
    std::vector<uint8_t> slot_rc_;      // the slot's frame went on an RC QP
    size_t rc_count_ = 0;
    uint32_t window_total_ = 0;
    uint64_t rc_promotions_ = 0, rc_refusals_ = 0, rc_frames_held_ = 0;
    // Per rank: data sent to it (it gets a Goodbye), a data frame heard from
    // it (its Goodbye is waited for), the Goodbyes queued and received.  Kept
    // by rank, so that a Peer evicted meanwhile is still said goodbye to and
    // waited for.
    GoodbyeBook book_;
    bool owed_any_ = false;             // some peer owes credits below the batch (flushed when idle)
    bool failed_ = false;
    std::string failure_;
    bool goodbye_said_ = false;
    uint64_t stray_frames_ = 0;
    uint64_t credit_stalls_ = 0;
    // Rendezvous state.
    std::unordered_map<uint32_t, RndvSend> rndv_tx_;
    uint32_t next_rndv_id_ = 1;
    struct ReadRef {
        int rank;
        RndvRecv *r;
        uint32_t len;
    };
    std::unordered_map<uint64_t, ReadRef> reads_; // READs in flight by id
    uint64_t next_read_id_ = 0;
    std::deque<std::pair<int, RndvRecv *>> read_queue_; // rendezvous with READs left to post
    VerbsRndvStats rndv_;
};

} // namespace llc
