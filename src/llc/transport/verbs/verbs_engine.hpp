// verbs_engine.hpp - the logic of the verbs transport, apart from the
// device: per-peer state in a capped PeerTable, send queues packed into
// frames (verbs_frame.hpp), credits (verbs_credits.hpp), the shared receive
// queue's buffers (verbs_recv_pool.hpp), ordered delivery through a stream
// decoder, goodbyes and finalize, RC promotion, and keyed remote reads for
// the tagged layer's large messages (Transport::expose / read_keyed,
// CapKeyedRead; see "keyed reads" in verbs_keyed_read.cpp): payload pieces
// pinned through a RegCache, RDMA READs into registered landing buffers.
// The protocol around them (AmRts, Fin, Fail, Cts + Data, the order of
// later records) is the tagged layer's (tagged_am.cpp).  It talks to the
// device through
// VerbsFabric (implemented with ibv/mlx5dv calls in verbs_transport.cpp, and
// by an in-memory fake in test/unit/common/verbs_fake_fabric.{hpp,cpp}) and to the rest of
// libllc through VerbsHost (Context in the library).  No ibv type here: it
// is compiled, and tested, with or without libibverbs.
#pragma once

#include "wire/outgoing_message.hpp"
#include "support/peer_table.hpp"
#include "transport/busy_promotion.hpp"
#include "transport/transport.hpp"
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

    // Keyed reads (VerbsEngineParams::keyed_reads): who registers memory
    // for the RegCache (nullptr: no keyed reads), and RDMA READs, on a
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
    // Keyed reads (CapKeyedRead; the tagged layer decides which messages
    // take them, LLC_VERBS_RNDV_BYTES): payload pieces are pinned through
    // the RegCache (at most reg_cache_max registrations kept), read by the
    // receiver with RDMA READs of at most read_chunk bytes each into a
    // registered landing buffer.  Payloads of more than max_spans pieces are
    // not exposed (sent another way).  Idle landing buffers are kept
    // (registered) up to landing_keep_bytes.
    bool keyed_reads = false;
    size_t read_chunk = size_t(1) << 30;
    size_t max_spans = 16;
    size_t reg_cache_max = RegCache::kDefaultMaxEntries;
    size_t landing_keep_bytes = size_t(64) << 20;
};

// Keyed-read counters (VerbsEngine::keyed_stats()).
struct VerbsKeyedStats {
    uint64_t exposed = 0;         // payloads exposed (expose() succeeded)
    uint64_t expose_failures = 0; // expose() refused: registration failed, or more than max_spans pieces
    uint64_t reads_started = 0;   // read_keyed() calls that started
    uint64_t reads_completed = 0; // of those, every byte read
    uint64_t read_errors = 0;     // of those, ended with an error (a READ failed, the engine failed)
    uint64_t reads = 0;           // RDMA READ work requests posted
    uint64_t bytes_read = 0;      // payload bytes read
    uint64_t landing_allocs = 0;  // landing buffers allocated (the others were reused)
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
    // Keyed reads (CapKeyedRead): whether they are on; expose the pieces
    // iov[0..iovcnt) (pinned until the Exposure is destroyed, which must
    // happen before the engine goes) or nullptr (why: what failed); start
    // reading spans of src into a landing buffer (see Transport::read_keyed).
    bool keyed_reads() const { return reg_cache_ != nullptr; }
    std::unique_ptr<Exposure> expose(const llc_iov_t *iov, int iovcnt, std::string *why);
    bool read_keyed(int src, const KeyedSpan *spans, size_t n, uint64_t len, KeyedReadDone done, std::string *why);
    // Counters; the registration cache (nullptr when keyed reads are off);
    // reads not finished yet; landing buffers.
    const VerbsKeyedStats &keyed_stats() const { return keyed_; }
    const RegCache *reg_cache() const { return reg_cache_.get(); }
    size_t keyed_reads_pending() const { return keyed_reads_.size(); }
    size_t landing_buffers() const { return landing_all_.size(); }
    // Writes the keyed-read and registration-cache counters into the
    // verbs_rndv_* and reg_cache_* fields of an llc_stats_t.
    void export_stats(llc_stats_t &st) const;
    uint64_t landing_bytes() const { return landing_bytes_; }

private:
    static constexpr uint64_t kKeyedReadBit = uint64_t(1) << 63; // completion ids of RDMA READs (sends: the slot)
    // A keyed read, receiver side: the sender's spans, the landing buffer
    // (registered through the cache), its READs, and whom to tell.
    struct KeyedRead {
        int rank = -1;
        std::vector<KeyedSpan> spans;
        uint64_t len = 0;
        char *buf = nullptr; // landing buffer (capacity cap)
        size_t cap = 0;
        RegHandle pin;
        size_t next_span = 0; // the next READ to post: span and offset in it
        uint64_t next_off = 0;
        uint64_t dest_off = 0; // where it lands in buf
        uint32_t reads_in_flight = 0;
        bool queued = false; // in read_queue_ (READs left to post)
        std::string error;   // a READ failed: no more are posted, done hears it
        KeyedReadDone done;
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
        // Keyed reads from it not finished (they use `route` and `rc_rx_qp`).
        uint32_t keyed_reads = 0;
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
    void post_reads(Peer &p, KeyedRead &r);
    void flush_reads();
    void on_read_done(uint64_t id, const VerbsCompletion &wc);
    void finish_read(KeyedRead *r);
    void fail_reads();
    bool finish_ready_reads();
    char *landing_get(size_t len, size_t *cap);
    void landing_put(char *buf, size_t cap);
    std::string describe(int rank) const;

    VerbsHost &host_;
    VerbsFabric &fabric_;
    VerbsEngineParams params_;
    BusyPromotion rc_promotion_; // rc_promote_frames: which peers get an RC queue pair
    // Before everything that holds a RegHandle (keyed_reads_): destroyed after them.
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
    // Keyed reads.
    std::unordered_map<KeyedRead *, std::unique_ptr<KeyedRead>> keyed_reads_;
    struct ReadRef {
        KeyedRead *r;
        uint32_t len;
    };
    std::unordered_map<uint64_t, ReadRef> reads_; // READs in flight by id
    uint64_t next_read_id_ = 0;
    std::deque<KeyedRead *> read_queue_; // keyed reads with READs left to post
    std::deque<KeyedRead *> ready_;      // keyed reads to finish (nothing in flight) at the next progress()
    VerbsKeyedStats keyed_;
};

} // namespace llc
