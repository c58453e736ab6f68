// verbs_fake_fabric.hpp - an in-memory fake of the verbs device for the
// VerbsEngine tests (verbs_engine_test.cpp, verbs_rndv_test.cpp): several
// engines in this process, each with a FakeFabric whose sends land in the
// target's posted receive buffers (or wait, in order, while it has none
// posted: the adapter's receiver-not-ready retry), RC queue pairs, RDMA READ
// emulated with real memory copies between the engines, and a FakeRegistrar
// whose registrations are the only thing a READ may touch: a READ whose rkey
// is not live, names another process's region, or reaches outside the
// registered range fails, as does one whose local lkey does not cover the
// landing range.  The fake checks what the engine asks of it (gtest
// expectations): routes match their peer, a receive buffer is never posted
// twice, RC QPs are connected to QPs that exist before use, and each host
// receives every source's messages strictly in order.
//
// Knobs a test turns: FakeNet::slow_dc (DC frames wait until flush_slow, so
// RC frames overtake them), FakeNet::hold_reads (READs wait until
// run_reads), FakeNet::revoke (a node's registrations vanish),
// FakeFabric::dead (sends and READs to it fail), fail_posts_after,
// fail_completions, rc (rc_supported) and registrar_.fail.
#pragma once

#include "transport/verbs/verbs_engine.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llctest::verbs_fake {

constexpr size_t kSlotBytes = 4096;

struct FakeFabric;

// A frame on its way: the bytes of src_rank's send slot `slot`, posted on
// its queue pair `qp` (whose send completes once it is received).
struct Parked {
    int src_rank;
    size_t qp;
    uint32_t slot;
    std::string bytes;
};

struct FakeRc {
    int owner;
    uint32_t qpn, psn;
    int target = -1;         // rank of the connected peer
    uint32_t target_qpn = 0; // its RC QP
};

// A registration: process `node`, [start, start + len), key (lkey = rkey).
struct Region {
    int node;
    uintptr_t start;
    size_t len;
};

struct PendingRead {
    int reader;
    size_t qp;
    int target;
    llc::VerbsRead r;
};

struct FakeNet {
    std::vector<FakeFabric *> nodes; // by rank
    // slow_dc: DC frames wait in `slow` (in order) until flush_slow(), while
    // RC frames land at once, so RC frames overtake the end of a DC stream.
    bool slow_dc = false;
    std::deque<std::pair<int, Parked>> slow; // (target rank, frame)
    std::map<uint32_t, Region> regions;      // live registrations by key
    uint32_t next_key = 0x100;
    bool hold_reads = false; // READs wait in `reads` until run_reads()
    std::deque<PendingRead> reads;
    std::map<uint32_t, std::unique_ptr<FakeRc>> rcs;
    uint32_t next_qpn = 1000;

    void flush_slow();
    // Each READ: checked against the live registrations, then a real copy.
    void run_reads();
    bool covers(uint32_t key, int node, uint64_t addr, uint64_t len) const;
    // Every registration of `node` stops being valid (as if deregistered
    // behind the cache's back): READs of it fail.
    void revoke(int node);
};

struct FakeRegistrar : llc::Registrar {
    FakeNet &net;
    int node;
    int registrations = 0, deregistrations = 0;
    bool fail = false; // every registration fails (ENOMEM)
    FakeRegistrar(FakeNet &n, int r) : net(n), node(r) {}
    llc::RegResult register_region(void *addr, size_t len) override;
    void deregister_region(const llc::Registration &reg) override;
};

struct FakeFabric : llc::VerbsFabric {
    FakeNet &net;
    int rank;
    size_t slots, recv_count;
    std::vector<char> send_mem, recv_mem;
    std::deque<uint32_t> posted; // the SRQ, FIFO
    std::deque<llc::VerbsCompletion> recv_done;
    std::vector<std::deque<llc::VerbsCompletion>> send_done;
    std::deque<Parked> parked; // arrived while nothing was posted (RNR)
    FakeRegistrar registrar_;
    int fail_posts_after = -1;     // post_send returns EIO after this many posts
    bool fail_completions = false; // send completions report an error
    bool dead = false;             // sends and READs to it fail (retry exceeded); it receives nothing
    bool rc = true;                // rc_supported()
    int posts = 0, routes = 0, rc_posts = 0, rc_live = 0, reads_posted = 0, rc_reads = 0;
    uint64_t slot_bytes_sent = 0; // bytes posted from send slots (the copy path)
    size_t max_posted = 0;

    FakeFabric(FakeNet &n, int r, size_t send_slots, size_t recv_buffers);
    size_t data_qps() const override { return 2; }
    uint32_t send_queue_depth() const override { return 8; }
    size_t send_slots() const override { return slots; }
    size_t slot_bytes() const override { return kSlotBytes; }
    char *send_slot(uint32_t s) override { return send_mem.data() + size_t(s) * kSlotBytes; }
    const char *recv_buffer(uint32_t id) override { return recv_mem.data() + size_t(id) * kSlotBytes; }
    void *connect(const llc::VerbsAddress &peer) override;
    void disconnect(void *route) override;
    // Delivers (or parks, or holds while slow_dc) now; the send completes
    // once delivered.
    int post_send(size_t qp, void *route, const llc::VerbsAddress &peer, uint32_t slot, size_t len) override;
    bool rc_supported() const override { return rc; }
    uint32_t rc_cq_depth() const override { return 64; }
    void *rc_create(uint32_t *qpn, uint32_t *psn) override;
    void rc_connect(void *h, const llc::VerbsAddress &peer) override;
    int post_send_rc(void *h, uint32_t slot, size_t len) override;
    void rc_destroy(void *h) override;
    llc::Registrar *registrar() override { return &registrar_; }
    int post_read(size_t qp, void *route, const llc::VerbsAddress &peer, const llc::VerbsRead &r) override;
    int post_read_rc(void *h, const llc::VerbsRead &r) override;
    int poll_send(size_t qp, llc::VerbsCompletion *out, int max) override;
    int poll_recv(llc::VerbsCompletion *out, int max) override;
    size_t post_recv(const uint32_t *ids, size_t n) override;

    // A frame from this node to `target`: arrives there, or (target dead)
    // its send completes with an error.
    void deliver_or_fail(int target, Parked p);
    // A frame reaches this node: into a posted buffer, or parked until one is.
    void arrive(Parked p);
    void drain();
};

struct Delivery {
    int src;
    uint64_t seq;
    std::string hdr, payload;
};

struct FakeHost : llc::VerbsHost {
    int me, n;
    std::vector<Delivery> got;
    std::vector<std::string> errors;
    std::vector<int> statuses;     // of the completions owed a callback, in order
    std::vector<uint64_t> next_seq; // the next seq expected from each source
    FakeHost(int r, int size) : me(r), n(size), next_seq(size_t(size), 0) {}
    int rank() const override { return me; }
    int size() const override { return n; }
    size_t copy_max() const override { return 1024; }
    std::string lookup(int r) override;
    // As Context::deliver: strictly in order per source.
    void deliver(int src, const llc::WireHeader &w, const void *hdr, const void *data, size_t len) override;
    void complete(llc::OutgoingMessage &m, int status) override;
    void report_error(int, const std::string &message) override { errors.push_back(message); }
    int callbacks() const { return int(statuses.size()); } // completion callbacks, any status
    int callbacks(int status) const;                        // of them, those with `status`
};

// A page-aligned buffer the test owns (distinct buffers: distinct pages).
struct Buf {
    char *p = nullptr;
    size_t n = 0;
    explicit Buf(size_t bytes);
    ~Buf();
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
};

// Byte i of message `seq` from `src`.  Not periodic in 256, nor in any power
// of two up to 2^24: a READ at the wrong offset shows.
char pattern(int src, uint64_t seq, size_t i);
std::string expected_payload(int src, uint64_t seq, size_t bytes);

struct Node {
    std::unique_ptr<FakeFabric> fabric;
    std::unique_ptr<FakeHost> host;
    std::unique_ptr<llc::VerbsEngine> engine;
    std::vector<uint64_t> next_seq; // the seq of the next message to each destination
};

// n engines over one FakeNet.  The constructor makes the fabrics and hosts;
// a test's Job derived from it may then adjust `params` and the fakes before
// start() makes the engines.
struct FakeJob {
    FakeNet net;
    std::vector<Node> nodes;
    llc::VerbsEngineParams params;
    std::deque<std::unique_ptr<Buf>> payloads; // kept until the end: sends reference them

    FakeJob(int n, const llc::VerbsEngineParams &p, size_t send_slots = 64);
    FakeJob(const FakeJob &) = delete;
    FakeJob &operator=(const FakeJob &) = delete;
    void start(); // after every fabric exists (posting may deliver)

    // Sends the bytes of `buf` (filled with the message's pattern), split
    // into `spans` iovs.
    int send_buf(int src, int dest, Buf &buf, size_t bytes, int spans = 1, const std::string &hdr = "h");
    int send(int src, int dest, size_t bytes, int spans = 1, const std::string &hdr = "h");
    int send(int src, int dest, const std::string &hdr, size_t bytes) { return send(src, dest, bytes, 1, hdr); }
    // Rounds of progress on every engine (READs run unless held; the
    // receive queue bound holds), then the slow DC frames land.
    void progress_all(int rounds = 1);
    bool idle() const;
    void run_until_idle(int max_rounds = 100000);
    llc::VerbsEngine &engine(int r) { return *nodes[size_t(r)].engine; }
    FakeHost &host(int r) { return *nodes[size_t(r)].host; }
    FakeFabric &fabric(int r) { return *nodes[size_t(r)].fabric; }
};

} // namespace llctest::verbs_fake
