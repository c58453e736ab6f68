// verbs_engine_test.cpp - the verbs transport's logic (VerbsEngine) over an
// in-memory fake of the device: several engines in this process, each with a
// FakeFabric whose sends land in the target's posted receive buffers (or wait,
// in order, while it has none posted: the adapter's receiver-not-ready
// retry).  Checked: every message arrives once, in order, with its bytes
// (small ones packed, large ones fragmented); credits stall a fast sender and
// never overrun the receiver; never more than the bound posted; completion
// callbacks once each; goodbyes make finalize's quiet test pass; peers are
// evicted under a small cap and traffic goes on; a failed post or a failed
// send completion fails the engine with a message; stray frames are dropped.
// What this does not test: the ibv/mlx5dv calls themselves (verbs_transport.cpp).
#include "errors.hpp"
#include "test_util.hpp"
#include "verbs_engine.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kTag = 0x600d;
constexpr size_t kSlotBytes = 4096;

struct FakeFabric;

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

struct FakeNet {
    std::vector<FakeFabric *> nodes; // by rank
    // slow_dc: DC frames wait in `slow` (in order) until flush_slow(), while
    // RC frames land at once, so RC frames overtake the end of a DC stream.
    bool slow_dc = false;
    std::deque<std::pair<int, Parked>> slow; // (target rank, frame)
    std::map<uint32_t, std::unique_ptr<FakeRc>> rcs;
    uint32_t next_qpn = 1000;
    void flush_slow();
};

struct FakeFabric : llc::VerbsFabric {
    FakeNet &net;
    int rank;
    size_t slots, recv_count;
    std::vector<char> send_mem, recv_mem;
    std::deque<uint32_t> posted;                  // the SRQ, FIFO
    std::deque<llc::VerbsCompletion> recv_done;
    std::vector<std::deque<llc::VerbsCompletion>> send_done;
    std::deque<Parked> parked;                    // arrived while nothing was posted (RNR)
    int fail_posts_after = -1;                    // post_send returns EIO after this many posts
    bool fail_completions = false;                // send completions report an error
    bool rc = true;                               // rc_supported()
    int posts = 0, routes = 0, rc_posts = 0, rc_live = 0;
    size_t max_posted = 0;

    FakeFabric(FakeNet &n, int r, size_t send_slots, size_t recv_buffers)
        : net(n), rank(r), slots(send_slots), recv_count(recv_buffers), send_mem(send_slots * kSlotBytes),
          recv_mem(recv_buffers * kSlotBytes), send_done(4)
    {
        if (net.nodes.size() <= size_t(r))
            net.nodes.resize(size_t(r) + 1);
        net.nodes[size_t(r)] = this;
    }
    size_t data_qps() const override { return 2; }
    uint32_t send_queue_depth() const override { return 8; }
    size_t send_slots() const override { return slots; }
    size_t slot_bytes() const override { return kSlotBytes; }
    char *send_slot(uint32_t s) override { return send_mem.data() + size_t(s) * kSlotBytes; }
    const char *recv_buffer(uint32_t id) override { return recv_mem.data() + size_t(id) * kSlotBytes; }
    void *connect(const llc::VerbsAddress &peer) override
    {
        routes++;
        return new int(int(peer.dct_number));
    }
    void disconnect(void *route) override
    {
        routes--;
        delete static_cast<int *>(route);
    }
    // Delivers (or parks) now; the send completes once delivered.
    int post_send(size_t qp, void *route, const llc::VerbsAddress &peer, uint32_t slot, size_t len) override
    {
        EXPECT_LE(len, kSlotBytes);
        EXPECT_EQ(*static_cast<int *>(route), int(peer.dct_number));
        if (fail_posts_after >= 0 && posts >= fail_posts_after)
            return EIO;
        posts++;
        Parked p{rank, qp, slot, std::string(send_slot(slot), len)};
        if (net.slow_dc && qp < 2)
            net.slow.emplace_back(int(peer.dct_number), std::move(p));
        else
            net.nodes.at(peer.dct_number)->arrive(std::move(p));
        return 0;
    }
    bool rc_supported() const override { return rc; }
    uint32_t rc_cq_depth() const override { return 64; }
    void *rc_create(uint32_t *qpn, uint32_t *psn) override
    {
        auto r = std::make_unique<FakeRc>();
        r->owner = rank;
        r->qpn = net.next_qpn++;
        r->psn = (r->qpn * 7919u) & 0xffffffu;
        *qpn = r->qpn;
        *psn = r->psn;
        FakeRc *raw = r.get();
        net.rcs[r->qpn] = std::move(r);
        rc_live++;
        return raw;
    }
    void rc_connect(void *h, const llc::VerbsAddress &peer) override
    {
        FakeRc *r = static_cast<FakeRc *>(h);
        auto it = net.rcs.find(peer.rc_qpn);
        EXPECT_NE(it, net.rcs.end()) << "connect to an RC QP that does not exist";
        if (it != net.rcs.end()) {
            EXPECT_EQ(it->second->psn, peer.psn);
            EXPECT_EQ(it->second->owner, int(peer.dct_number));
        }
        r->target = int(peer.dct_number);
        r->target_qpn = peer.rc_qpn;
    }
    int post_send_rc(void *h, uint32_t slot, size_t len) override
    {
        FakeRc *r = static_cast<FakeRc *>(h);
        EXPECT_GE(r->target, 0) << "send on an RC QP not connected";
        if (r->target < 0)
            return EINVAL;
        rc_posts++;
        net.nodes.at(size_t(r->target))->arrive(Parked{rank, 3, slot, std::string(send_slot(slot), len)});
        return 0;
    }
    void rc_destroy(void *h) override
    {
        rc_live--;
        net.rcs.erase(static_cast<FakeRc *>(h)->qpn);
    }
    void arrive(Parked p)
    {
        parked.push_back(std::move(p));
        drain();
    }
    void drain()
    {
        while (!parked.empty() && !posted.empty()) {
            Parked p = std::move(parked.front());
            parked.pop_front();
            uint32_t id = posted.front();
            posted.pop_front();
            std::memcpy(recv_mem.data() + size_t(id) * kSlotBytes, p.bytes.data(), p.bytes.size());
            llc::VerbsCompletion c;
            c.id = id;
            c.len = uint32_t(p.bytes.size());
            recv_done.push_back(c);
            llc::VerbsCompletion s;
            s.id = p.slot;
            if (net.nodes[size_t(p.src_rank)]->fail_completions) {
                s.ok = false;
                s.status = "transport retry counter exceeded";
            }
            net.nodes[size_t(p.src_rank)]->send_done[p.qp].push_back(s);
        }
    }
    int take(std::deque<llc::VerbsCompletion> &q, llc::VerbsCompletion *out, int max)
    {
        int n = 0;
        while (n < max && !q.empty()) {
            out[n++] = q.front();
            q.pop_front();
        }
        return n;
    }
    int poll_send(size_t qp, llc::VerbsCompletion *out, int max) override { return take(send_done.at(qp), out, max); }
    int poll_recv(llc::VerbsCompletion *out, int max) override { return take(recv_done, out, max); }
    size_t post_recv(const uint32_t *ids, size_t n) override
    {
        for (size_t i = 0; i < n; i++) {
            EXPECT_LT(ids[i], recv_count);
            for (uint32_t p : posted)
                EXPECT_NE(p, ids[i]) << "buffer posted twice";
            posted.push_back(ids[i]);
        }
        max_posted = std::max(max_posted, posted.size());
        drain();
        return n;
    }
};

void FakeNet::flush_slow()
{
    while (!slow.empty()) {
        auto item = std::move(slow.front());
        slow.pop_front();
        nodes.at(size_t(item.first))->arrive(std::move(item.second));
    }
}

struct Delivery {
    int src;
    uint64_t seq;
    std::string hdr, payload;
};

struct FakeHost : llc::VerbsHost {
    int me, n;
    std::vector<Delivery> got;
    std::vector<std::string> errors;
    int callbacks = 0;
    FakeHost(int r, int size) : me(r), n(size) {}
    int rank() const override { return me; }
    int size() const override { return n; }
    size_t copy_max() const override { return 1024; }
    std::string lookup(int r) override
    {
        llc::VerbsAddress a;
        a.port = 1;
        a.mtu = 5;
        a.dct_number = uint32_t(r); // the fake routes by it
        a.lid = uint16_t(r + 1);
        return llc::verbs_address_text(a);
    }
    void deliver(int src, const llc::WireHeader &w, const void *hdr, const void *data, size_t len) override
    {
        got.push_back({src, w.seq, std::string(static_cast<const char *>(hdr), w.hdr_len),
                       std::string(data ? static_cast<const char *>(data) : "", len)});
    }
    void complete(llc::OutgoingMessage &m, int) override
    {
        if (m.owes_callback) {
            m.owes_callback = false;
            callbacks++;
        }
    }
    void report_error(int, const std::string &message) override { errors.push_back(message); }
};

struct Node {
    std::unique_ptr<FakeFabric> fabric;
    std::unique_ptr<FakeHost> host;
    std::unique_ptr<llc::VerbsEngine> engine;
    std::vector<uint64_t> next_seq;
};

struct Job {
    FakeNet net;
    std::vector<Node> nodes;
    llc::VerbsEngineParams params;
    std::deque<std::string> payloads; // kept until the end: sends may reference them

    Job(int n, size_t recv_buffers, size_t bound, uint32_t credits, size_t send_slots = 64, size_t max_peers = 64,
        uint32_t batch = 0, const std::function<void(Job &)> &before_start = {})
    {
        params.recv_buffers = recv_buffers;
        params.recv_post_bound = bound;
        params.credits_per_peer = credits;
        params.credit_batch = batch ? batch : std::max<uint32_t>(1, credits / 4);
        params.max_peers = max_peers;
        params.job_tag = kTag;
        nodes.resize(size_t(n));
        for (int r = 0; r < n; r++) {
            Node &nd = nodes[size_t(r)];
            nd.fabric = std::make_unique<FakeFabric>(net, r, send_slots, recv_buffers);
            nd.host = std::make_unique<FakeHost>(r, n);
            nd.next_seq.assign(size_t(n), 0);
        }
        if (before_start)
            before_start(*this);
        for (Node &nd : nodes) // after every fabric exists (posting may deliver)
            nd.engine = std::make_unique<llc::VerbsEngine>(*nd.host, *nd.fabric, params);
    }
    int send(int src, int dest, const std::string &hdr, size_t bytes)
    {
        payloads.emplace_back(bytes, '\0');
        std::string &p = payloads.back();
        for (size_t i = 0; i < bytes; i++)
            p[i] = char((i * 131 + size_t(src) * 7 + nodes[size_t(src)].next_seq[size_t(dest)]) & 0xff);
        llc_iov_t iov{p.data(), p.size()};
        auto m = llc::OutgoingMessage::make_am(src, 1, nodes[size_t(src)].next_seq[size_t(dest)]++, hdr.data(),
                                               hdr.size(), &iov, bytes ? 1 : 0, nullptr, nullptr);
        return nodes[size_t(src)].engine->send(dest, std::move(m));
    }
    void progress_all(int rounds = 1)
    {
        for (int i = 0; i < rounds; i++)
            for (Node &nd : nodes) {
                nd.engine->progress();
                ASSERT_LE(nd.engine->pool().posted(), params.recv_post_bound);
            }
        net.flush_slow();
    }
    bool idle() const
    {
        if (!net.slow.empty())
            return false;
        for (const Node &nd : nodes)
            if (nd.engine->has_pending_sends())
                return false;
        return true;
    }
    void run_until_idle(int max_rounds = 100000)
    {
        for (int i = 0; i < max_rounds && !idle(); i++)
            progress_all();
        progress_all(3); // credit returns, last completions
    }
};

std::string expected_payload(int src, uint64_t seq, size_t bytes)
{
    std::string p(bytes, '\0');
    for (size_t i = 0; i < bytes; i++)
        p[i] = char((i * 131 + size_t(src) * 7 + seq) & 0xff);
    return p;
}

} // namespace

TEST(VerbsEngine, MessagesArriveInOrderWithTheirBytes)
{
    Job job(2, 16, 8, 4);
    std::vector<size_t> sizes;
    for (int i = 0; i < 400; i++)
        sizes.push_back(size_t(i * 997 % 20000) * (i % 3 == 0 ? 0 : 1)); // 0 .. 20 KB, many small
    int inprogress = 0;
    for (size_t i = 0; i < sizes.size(); i++) {
        if (job.send(0, 1, "h" + std::to_string(i), sizes[i]) == LLC_INPROGRESS)
            inprogress++;
        job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[1].host->got;
    ASSERT_EQ(got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(got[i].src, 0);
        EXPECT_EQ(got[i].seq, i);
        EXPECT_EQ(got[i].hdr, "h" + std::to_string(i));
        EXPECT_TRUE(got[i].payload == expected_payload(0, i, sizes[i])) << "message " << i;
    }
    EXPECT_GT(inprogress, 0);
    EXPECT_EQ(job.nodes[0].host->callbacks, inprogress); // once each
    EXPECT_GT(job.nodes[0].engine->credit_stalls(), 0u); // 4 credits: the sender had to wait
    EXPECT_TRUE(job.nodes[0].host->errors.empty());
    EXPECT_TRUE(job.nodes[1].host->errors.empty());
    EXPECT_LE(job.nodes[1].fabric->max_posted, 8u);
    EXPECT_FALSE(job.nodes[0].engine->has_pending_sends());
}

// Three senders into one receiver with fewer buffers than their credits: the
// receive queue runs dry (frames wait, as with RNR retries), nothing is lost.
TEST(VerbsEngine, ManySendersIntoFewBuffers)
{
    Job job(4, 6, 3, 8);
    for (int round = 0; round < 200; round++) {
        for (int src = 1; src < 4; src++)
            job.send(src, 0, "x", size_t(round % 7) * 1500);
        job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[0].host->got;
    ASSERT_EQ(got.size(), 600u);
    std::map<int, uint64_t> next;
    for (const Delivery &d : got) {
        EXPECT_EQ(d.seq, next[d.src]++) << "from " << d.src;
        EXPECT_TRUE(d.payload == expected_payload(d.src, d.seq, d.payload.size()));
    }
    EXPECT_LE(job.nodes[0].fabric->max_posted, 3u);
    EXPECT_TRUE(job.nodes[0].host->errors.empty());
}

TEST(VerbsEngine, GoodbyesMakeTheReceiverQuiet)
{
    Job job(3, 16, 8, 4);
    job.send(0, 2, "a", 100);
    job.send(1, 2, "b", 9000);
    job.run_until_idle();
    EXPECT_FALSE(job.nodes[2].engine->incoming_quiet()); // heard from 0 and 1, no goodbye yet
    EXPECT_TRUE(job.nodes[0].engine->incoming_quiet());  // heard from nobody
    job.nodes[0].engine->say_goodbye();
    job.run_until_idle();
    EXPECT_FALSE(job.nodes[2].engine->incoming_quiet()); // 1 has not said goodbye
    job.nodes[1].engine->say_goodbye();
    job.nodes[2].engine->say_goodbye(); // sent nothing: no goodbye to send
    job.run_until_idle();
    EXPECT_TRUE(job.nodes[2].engine->incoming_quiet());
    EXPECT_EQ(job.nodes[2].host->got.size(), 2u);
    for (Node &nd : job.nodes)
        EXPECT_FALSE(nd.engine->has_pending_sends());
}

// A cap of 2 peers: a sender talking to 5 destinations in turn keeps at most
// 2 (plus any that may not go yet), evicts idle ones, and every message
// still arrives in order; address handles are released with their peers.
TEST(VerbsEngine, PeersAreEvictedUnderTheCap)
{
    Job job(6, 16, 8, 4, 64, 2);
    for (int round = 0; round < 20; round++) {
        for (int dest = 1; dest < 6; dest++) {
            job.send(0, dest, "m", 300);
            job.run_until_idle();
        }
    }
    EXPECT_GT(job.nodes[0].engine->peer_evictions(), 0u);
    EXPECT_LE(job.nodes[0].engine->peer_count(), 3u);
    EXPECT_EQ(job.nodes[0].fabric->routes, int(job.nodes[0].engine->peer_count())); // evicted peers released theirs
    for (int dest = 1; dest < 6; dest++) {
        const auto &got = job.nodes[size_t(dest)].host->got;
        ASSERT_EQ(got.size(), 20u);
        for (size_t i = 0; i < got.size(); i++)
            EXPECT_EQ(got[i].seq, i);
    }
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
}

// Credits below the batch come back once the receiver's receive side is
// idle: without that, one message to each of several destinations would
// leave each with an unreturned credit, and no peer could ever be evicted.
TEST(VerbsEngine, LeftoverCreditsComeBackWhenTheReceiverIdles)
{
    Job job(6, 16, 8, 8, 64, 2, 4); // batch 4, one frame per destination
    for (int round = 0; round < 3; round++)
        for (int dest = 1; dest < 6; dest++) {
            job.send(0, dest, "m", 10);
            job.run_until_idle();
        }
    EXPECT_GT(job.nodes[0].engine->peer_evictions(), 0u);
    EXPECT_LE(job.nodes[0].engine->peer_count(), 3u);
    EXPECT_EQ(job.nodes[0].engine->pending_report(), "0 sends in flight"); // every credit back
}

// RC promotion: a destination that gets most of the frames is asked for an
// RC queue pair; the receiver creates and connects its end, the sender
// connects, closes the DC stream with a LastOnDc frame and sends the rest on
// RC.  The fake lets RC frames overtake the slow DC lane: the receiver holds
// them until LastOnDc, so every message still arrives once, in order.
TEST(VerbsEngine, BusyDestinationMovesToRcInOrder)
{
    Job job(2, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
        j.net.slow_dc = true;
    });
    std::vector<size_t> sizes;
    for (int i = 0; i < 300; i++)
        sizes.push_back(size_t(i * 389 % 9000));
    for (size_t i = 0; i < sizes.size(); i++) {
        job.send(0, 1, "r" + std::to_string(i), sizes[i]);
        if (i % 10 == 9) // bursts: data is queued when the RC answer comes
            job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[1].host->got;
    ASSERT_EQ(got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(got[i].seq, i);
        EXPECT_EQ(got[i].hdr, "r" + std::to_string(i));
        EXPECT_TRUE(got[i].payload == expected_payload(0, i, sizes[i])) << "message " << i;
    }
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 1u);
    EXPECT_EQ(job.nodes[1].engine->rc_count(), 1u);
    EXPECT_GT(job.nodes[0].fabric->rc_posts, 0);
    EXPECT_GT(job.nodes[1].engine->rc_frames_held(), 0u); // the overtaking did happen
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
    // Finalize over RC: goodbyes ride the RC stream.
    job.nodes[0].engine->say_goodbye();
    job.nodes[1].engine->say_goodbye();
    job.run_until_idle();
    EXPECT_TRUE(job.nodes[1].engine->incoming_quiet());
    EXPECT_TRUE(job.nodes[0].engine->incoming_quiet());
    // The RC QPs go with the engines.
    job.nodes[0].engine.reset();
    job.nodes[1].engine.reset();
    EXPECT_EQ(job.nodes[0].fabric->rc_live, 0);
    EXPECT_EQ(job.nodes[1].fabric->rc_live, 0);
}

// A receiver that cannot (no RC on its device) refuses; the sender stays on
// DC, asks once, and nothing is lost.
TEST(VerbsEngine, RefusedRcStaysOnDc)
{
    Job job(2, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
        j.nodes[1].fabric->rc = false;
    });
    for (int i = 0; i < 200; i++) {
        job.send(0, 1, "s", size_t(i % 5) * 1000);
        job.progress_all();
    }
    job.run_until_idle();
    ASSERT_EQ(job.nodes[1].host->got.size(), 200u);
    for (size_t i = 0; i < 200; i++)
        EXPECT_EQ(job.nodes[1].host->got[i].seq, i);
    EXPECT_EQ(job.nodes[0].engine->rc_refusals(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 0u);
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 0u);
    EXPECT_EQ(job.nodes[0].fabric->rc_live, 0);
    EXPECT_EQ(job.nodes[0].fabric->rc_posts, 0);
}

// The cap: with rc_max 1, only the first busy destination gets RC.
TEST(VerbsEngine, RcCapIsRespected)
{
    Job job(3, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 1;
        j.params.rc_promote_frames = 4;
        j.params.rc_window_frames = 16;
    });
    for (int i = 0; i < 200; i++) {
        job.send(0, 1 + i % 2, "c", 2000);
        job.progress_all();
    }
    job.run_until_idle();
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 1u);
    EXPECT_EQ(job.nodes[1].host->got.size() + job.nodes[2].host->got.size(), 200u);
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
}

TEST(VerbsEngine, FailedPostFailsTheEngineWithAMessage)
{
    Job job(2, 16, 8, 4);
    job.nodes[0].fabric->fail_posts_after = 0;
    try {
        job.send(0, 1, "h", 10);
        ADD_FAILURE() << "a failed post did not throw";
    } catch (const llc::Error &e) {
        EXPECT_TRUE(llctest::contains(e.what(), "posting a send to rank 1")) << e.what();
    }
    EXPECT_TRUE(job.nodes[0].engine->failed());
    ASSERT_FALSE(job.nodes[0].host->errors.empty());
    EXPECT_THROW(job.send(0, 1, "h", 10), llc::Error);
    EXPECT_FALSE(job.nodes[0].engine->has_pending_sends()); // finalize does not wait for a failed engine
}

TEST(VerbsEngine, FailedSendCompletionFailsTheEngine)
{
    Job job(2, 16, 8, 4);
    job.nodes[0].fabric->fail_completions = true;
    job.send(0, 1, "h", 10);
    job.progress_all(3);
    EXPECT_TRUE(job.nodes[0].engine->failed());
    ASSERT_FALSE(job.nodes[0].host->errors.empty());
    EXPECT_TRUE(llctest::contains(job.nodes[0].host->errors[0], "retry counter exceeded")) << job.nodes[0].host->errors[0];
}

TEST(VerbsEngine, StrayFramesAreDropped)
{
    Job job(2, 16, 8, 4);
    llc::VerbsFrame f{};
    f.job_tag = kTag + 1; // another job
    f.type = uint8_t(llc::VerbsFrameType::Data);
    f.src = 0;
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(reinterpret_cast<const char *>(&f), sizeof(f))});
    f.job_tag = kTag;
    f.src = 7; // no such rank
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(reinterpret_cast<const char *>(&f), sizeof(f))});
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(5, 'x')}); // too short
    job.nodes[0].fabric->send_done.assign(3, {}); // drop the send completions the fake made for these
    job.nodes[1].engine->progress();
    EXPECT_EQ(job.nodes[1].engine->stray_frames(), 3u);
    EXPECT_TRUE(job.nodes[1].host->got.empty());
    EXPECT_TRUE(job.nodes[1].host->errors.empty());
    EXPECT_EQ(job.nodes[1].engine->pool().consumed(), 0u); // their buffers were released
}
