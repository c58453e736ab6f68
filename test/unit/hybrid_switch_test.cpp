// hybrid_switch_test.cpp - the receiver-driven hybrid (LLC_HYBRID_DRIVER=
// receiver): receivers count per source and ask the senders to switch with
// SwitchRequest records; the senders run the drain/Switch handshakes.  Every
// message is checked exactly once and in order while paths change under
// datagram loss, a sender that cannot comply refuses without anyone waiting,
// and finalize completes with switches in flight.
#include "test_util.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kDataHandler = 7;

struct DataHeader {
    uint32_t src;
    uint32_t index; // per (src, dst) pair, from 0
    uint64_t len;
};

// Mostly small messages; every 16th one spans several datagrams.
size_t data_size(uint32_t index)
{
    return index % 16 == 3 ? 20000 + size_t(mix64(index) % 50000) : size_t(mix64(index) % 256);
}

uint64_t data_seed(int src, int dst, uint32_t index)
{
    return mix64((uint64_t(src) << 44) ^ (uint64_t(dst) << 24) ^ index ^ 0x5eedull);
}

// Checks that messages from each source arrive exactly once, in order, intact.
struct Checker {
    int me = 0;
    std::vector<uint32_t> next; // per source: the index expected next
    uint64_t bad = 0;
};

void on_data(llc_context_t *, void *arg, int src, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *c = static_cast<Checker *>(arg);
    DataHeader h{};
    if (hdr_len == sizeof(h))
        std::memcpy(&h, hdr, sizeof(h));
    bool ok = hdr_len == sizeof(h) && int(h.src) == src && h.index == c->next[src] && len == h.len &&
              len == data_size(h.index) && check_pattern(data, len, data_seed(src, c->me, h.index));
    if (!ok) {
        c->bad++;
        ADD_FAILURE() << "rank " << c->me << ": from " << src << " got index " << h.index << " (" << len
                      << " bytes), expected index " << c->next[src];
    }
    c->next[src] = h.index + 1;
}

// Numbered, patterned sends; buffers live until the library is done with them.
struct Streamer {
    llc_context_t *ctx;
    int me;
    std::vector<uint32_t> sent; // per destination
    struct Buffer {
        std::vector<char> bytes;
        bool done = false;
    };
    std::list<Buffer> inflight;

    void send(int dest)
    {
        uint32_t index = sent[dest]++;
        size_t len = data_size(index);
        inflight.emplace_back();
        Buffer &b = inflight.back();
        b.bytes.resize(len);
        fill_pattern(b.bytes.data(), len, data_seed(me, dest, index));
        DataHeader h{uint32_t(me), index, len};
        llc_iov_t iov{b.bytes.data(), len};
        int rc = llc_am_send(ctx, dest, kDataHandler, &h, sizeof(h), &iov, 1,
                             [](void *arg, int status) {
                                 EXPECT_EQ(status, LLC_OK);
                                 static_cast<Buffer *>(arg)->done = true;
                             },
                             &b);
        ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc) << ": " << llc_last_error(ctx);
        if (rc == LLC_OK)
            b.done = true;
    }
    void reap()
    {
        while (!inflight.empty() && inflight.front().done)
            inflight.pop_front();
    }
    bool room() const { return inflight.size() < 64; }
};

JobOptions receiver_driven_job(std::vector<int> nodes, const char *period_ms, const char *promote_msgs,
                               const char *rc_per_node)
{
    JobOptions o = job(std::move(nodes), 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},        {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", "receiver"},    {"LLC_HYBRID_PERIOD_MS", period_ms},
             {"LLC_HYBRID_PROMOTE_MSGS", promote_msgs}, {"LLC_MAX_RC_PER_NODE", rc_per_node},
             {"LLC_UDP_RTO_US", "3000"},           {"LLC_UDP_DROP_PERMILLE", "20"}};
    return o;
}

// After llc_finalize (which delivers everything sent): every process
// publishes how many messages it sent to each peer through the test
// bootstrap; each receiver checks it got exactly that many from each source.
void check_counts_after_finalize(TestProcess &p, const Streamer &s, const Checker &c)
{
    ASSERT_EQ(TestProcess::put(&p, "sent", s.sent.data(), s.sent.size() * sizeof(uint32_t)), 0);
    ASSERT_EQ(TestProcess::fence(&p), 0);
    for (int src = 0; src < p.size; src++) {
        if (src == p.rank)
            continue;
        std::vector<uint32_t> theirs(size_t(p.size), 0);
        size_t len = theirs.size() * sizeof(uint32_t);
        ASSERT_EQ(TestProcess::get(&p, src, "sent", theirs.data(), &len), 0);
        EXPECT_EQ(c.next[src], theirs[p.rank]) << "rank " << p.rank << " from " << src;
    }
    EXPECT_EQ(c.bad, 0u);
}

void print_stats(const TestProcess &p, const llc_stats_t &st)
{
    if (!getenv("LLC_TEST_VERBOSE"))
        return;
    fprintf(stderr,
            "rank %d: tcp %llu udp %llu promotions %llu demotions %llu active %llu requests sent %llu "
            "received %llu refused %llu drops %llu\n",
            p.rank, (unsigned long long)st.tcp_msgs, (unsigned long long)st.udp_msgs,
            (unsigned long long)st.rc_promotions, (unsigned long long)st.rc_demotions,
            (unsigned long long)st.rc_active, (unsigned long long)st.rc_requests_sent,
            (unsigned long long)st.rc_requests_received, (unsigned long long)st.rc_requests_refused,
            (unsigned long long)st.udp_injected_drops);
}

// Every rank streams to every other; the busiest source of each receiver
// rotates every 60 ms (each sender's favourite destination rotates, a
// permutation).  With one tcp slot per process, 10 ms periods and 2 %
// datagram loss, receivers ask for promotions and demotions many times
// (about 30 each way per process in 2 s on an idle machine; the bounds
// leave room for a loaded one).
TEST(HybridReceiverDriven, RotatingBusiestSourceSwitchesBothWaysWithoutLossOrReordering)
{
    JobOptions o = receiver_driven_job({0, 1, 2, 3}, "10", "20", "1");
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        llc_stats_t st{};
        uint64_t max_active = 0;
        double start = now_s(), end = start + 3.0;
        unsigned k = 0;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (s.room()) {
                int phase = int((now_s() - start) / 0.06);
                int favourite = (p.rank + 1 + phase % (p.size - 1)) % p.size;
                int other = (p.rank + 1 + int(k % unsigned(p.size - 1))) % p.size;
                s.send(k++ % 8 != 0 ? favourite : other);
            }
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            s.reap();
            llc_get_stats(ctx, &st);
            max_active = std::max(max_active, st.rc_active);
        }
        ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
        llc_get_stats(ctx, &st);
        print_stats(p, st);
        for (int d = 0; d < p.size; d++)
            EXPECT_TRUE(d == p.rank || s.sent[d] > 100) << "rank " << p.rank << " to " << d;
        EXPECT_GE(st.rc_promotions, 3u) << "rank " << p.rank;
        EXPECT_GE(st.rc_demotions, 2u) << "rank " << p.rank;
        EXPECT_GT(st.tcp_msgs, 0u);
        EXPECT_GT(st.udp_msgs, 0u);
        EXPECT_LE(max_active, 1u) << "send-side cap";
        EXPECT_GE(st.rc_requests_sent, 3u) << "rank " << p.rank << " as a receiver asked";
        EXPECT_GE(st.rc_requests_received, 3u);
        // Receiver-driven: a sender only promotes when asked.
        EXPECT_LE(st.rc_promotions, st.rc_requests_received);
        finalize_ok(ctx);
        check_counts_after_finalize(p, s, c);
    });
}

// Rank 0 streams equally hard to ranks 1 and 2 and may hold one outgoing
// tcp slot: both receivers ask for tcp, one is refused (not twice as busy as
// the holder), keeps receiving on udp without waiting, and asks again later.
TEST(HybridReceiverDriven, SenderAtItsCapRefusesAndTheReceiverDoesNotWait)
{
    JobOptions o = receiver_driven_job({0, 1, 2}, "10", "20", "1");
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        llc_stats_t st{};
        uint64_t max_active = 0;
        double end = now_s() + 1.0;
        unsigned k = 0;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (p.rank == 0 && s.room())
                s.send(1 + int(k++ % 2)); // the others only receive

            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            s.reap();
            llc_get_stats(ctx, &st);
            max_active = std::max(max_active, st.rc_active);
        }
        ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
        llc_get_stats(ctx, &st);
        print_stats(p, st);
        if (p.rank == 0) {
            EXPECT_LE(max_active, 1u);
            EXPECT_GE(st.rc_promotions, 1u);
            EXPECT_GE(st.rc_requests_received, 3u); // both asked, the refused one again
            EXPECT_GE(st.rc_requests_refused, 2u);
            EXPECT_GT(st.udp_msgs, st.msgs_sent / 4) << "the refused destination stayed on udp";
        } else {
            EXPECT_GE(st.rc_requests_sent, 1u);
            EXPECT_EQ(st.rc_requests_received, 0u);
            EXPECT_GT(c.next[0], 1000u);
        }
        finalize_ok(ctx);
        check_counts_after_finalize(p, s, c);
    });
}

// Very short periods and a low threshold keep switches going; each process
// calls llc_finalize as soon as one of its own switches is in flight
// (promoting: sends held while udp drains; demoting: waiting for the
// SwitchAck), or after 3 s.  Finalize completes the switches, delivers
// everything, and requests that reach a finalizing process are refused.
// At least two of the four must have finalized mid-switch.
TEST(HybridReceiverDriven, FinalizeCompletesWhileSwitchesAreInFlight)
{
    JobOptions o = receiver_driven_job({0, 1, 2, 3}, "2", "4", "1");
    o.env.push_back({"LLC_FINALIZE_TIMEOUT_MS", "60000"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        llc_stats_t st{};
        double start = now_s(), end = start + 3;
        int in_flight = 0;
        unsigned k = 0;
        while (!in_flight && now_s() < end && !::testing::Test::HasFailure()) {
            if (s.room()) {
                int phase = int((now_s() - start) / 0.02);
                int favourite = (p.rank + 1 + phase % (p.size - 1)) % p.size;
                int other = (p.rank + 1 + int(k % unsigned(p.size - 1))) % p.size;
                s.send(k++ % 4 != 0 ? favourite : other);
            }
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            s.reap();
            llc_get_stats(ctx, &st);
            // rc_active moves when a switch starts, the promotion/demotion
            // counters when it ends: they disagree while one is in flight.
            in_flight = st.rc_active != st.rc_promotions - st.rc_demotions;
        }
        print_stats(p, st);
        finalize_ok(ctx); // sends still in flight too: finalize flushes them
        check_counts_after_finalize(p, s, c);
        ASSERT_EQ(TestProcess::put(&p, "in_flight", &in_flight, sizeof(in_flight)), 0);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        int mid_switch = 0;
        for (int r = 0; r < p.size; r++) {
            int f = 0;
            size_t len = sizeof(f);
            ASSERT_EQ(TestProcess::get(&p, r, "in_flight", &f, &len), 0);
            mid_switch += f;
        }
        EXPECT_GE(mid_switch, 2) << "processes that called llc_finalize with a switch in flight";
    });
}

// Three senders stream equally hard to rank 0, whose node may hold one tcp
// source.  After the streaming phase all processes stop at a barrier and
// read their counters together: with the receiver driver at most one
// sender is on tcp to rank 0 (two if an eviction is caught half-way: the
// demoted and the promoted sender act on their requests independently);
// with the sender driver each sender promoted itself, so three are.
class HotReceiver : public ::testing::TestWithParam<const char *> {};

TEST_P(HotReceiver, IncomingTcpSourcesAndTheCap)
{
    const bool receiver = std::string(GetParam()) == "receiver";
    JobOptions o = receiver_driven_job({0, 1, 2, 3}, "50", "20", "1");
    for (auto &e : o.env)
        if (e.first == "LLC_HYBRID_DRIVER")
            e.second = GetParam();
    LLC_EXPECT_JOB_OK(o, [receiver](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        double end = now_s() + 1.5;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (p.rank != 0 && s.room())
                s.send(0);
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            s.reap();
        }
        ASSERT_EQ(TestProcess::fence(&p), 0); // nobody progresses between the fence and the reads
        llc_stats_t st{};
        llc_get_stats(ctx, &st);
        print_stats(p, st);
        uint64_t on_tcp = st.rc_active;
        ASSERT_EQ(TestProcess::put(&p, "on_tcp", &on_tcp, sizeof(on_tcp)), 0);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        uint64_t total = 0;
        for (int r = 0; r < p.size; r++) {
            uint64_t v = 0;
            size_t len = sizeof(v);
            ASSERT_EQ(TestProcess::get(&p, r, "on_tcp", &v, &len), 0);
            total += v;
        }
        if (receiver) {
            EXPECT_GE(total, 1u);
            EXPECT_LE(total, 2u) << "rank 0 may hold one tcp source";
            if (p.rank == 0) {
                EXPECT_GE(st.rc_requests_sent, 1u);
            }
        } else {
            EXPECT_EQ(total, 3u) << "each sender promotes on its own";
        }
        ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
        finalize_ok(ctx);
        check_counts_after_finalize(p, s, c);
    });
}

INSTANTIATE_TEST_SUITE_P(HybridReceiverDriven, HotReceiver, ::testing::Values("receiver", "sender"),
                         [](const ::testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

uint64_t hybrid_items(llc_context_t *ctx)
{
    std::vector<llc_mem_entry_t> rows(size_t(llc_mem_report(ctx, nullptr, 0)));
    llc_mem_report(ctx, rows.data(), int(rows.size()));
    for (const llc_mem_entry_t &r : rows)
        if (std::string(r.name) == "hybrid_routes")
            return r.items;
    ADD_FAILURE() << "no hybrid_routes row";
    return 0;
}

// Receive state exists only for sources heard from recently: a receiver has
// one entry per sender while they send (counted with the hybrid's routes in
// llc_mem_report), none once their 8 periods of history are all quiet.
TEST(HybridReceiverDriven, ReceiverForgetsQuietSources)
{
    JobOptions o = receiver_driven_job({0, 1, 2}, "100", "1000000", "1"); // never promoted
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        EXPECT_EQ(hybrid_items(ctx), 0u);
        if (p.rank != 0) {
            for (int i = 0; i < 20; i++)
                s.send(0);
            ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 30));
            // rank 0 forgets us; our own route to it is forgotten too (score decays to 0)
            ASSERT_TRUE(progress_until(ctx, [&] { return hybrid_items(ctx) == 0; }, 30));
        } else {
            uint64_t most = 0;
            ASSERT_TRUE(progress_until(ctx, [&] {
                most = std::max(most, hybrid_items(ctx));
                return c.next[1] == 20 && c.next[2] == 20;
            }, 30));
            most = std::max(most, hybrid_items(ctx));
            EXPECT_EQ(most, 2u); // one Source per sender
            double t0 = now_s();
            ASSERT_TRUE(progress_until(ctx, [&] { return hybrid_items(ctx) == 0; }, 30));
            EXPECT_GE(now_s() - t0, 0.5) << "forgotten before 8 periods of 100 ms went by";
        }
        llc_stats_t st{};
        llc_get_stats(ctx, &st);
        EXPECT_EQ(st.rc_requests_sent, 0u);
        finalize_ok(ctx);
        check_counts_after_finalize(p, s, c);
    });
}

// The sender-driven policy is still there: no requests, still switches.
TEST(HybridReceiverDriven, SenderDriverSendsNoRequests)
{
    JobOptions o = receiver_driven_job({0, 1}, "10", "20", "1");
    for (auto &e : o.env)
        if (e.first == "LLC_HYBRID_DRIVER")
            e.second = "sender";
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c;
        c.me = p.rank;
        c.next.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, kDataHandler, on_data, &c), LLC_OK);
        Streamer s{ctx, p.rank, std::vector<uint32_t>(size_t(p.size), 0), {}};
        double end = now_s() + 0.5;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (s.room())
                s.send(1 - p.rank);
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            s.reap();
        }
        ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
        llc_stats_t st{};
        llc_get_stats(ctx, &st);
        print_stats(p, st);
        EXPECT_GE(st.rc_promotions, 1u);
        EXPECT_EQ(st.rc_requests_sent, 0u);
        EXPECT_EQ(st.rc_requests_received, 0u);
        finalize_ok(ctx);
        check_counts_after_finalize(p, s, c);
    });
}

TEST(HybridReceiverDriven, BadDriverValueIsRejected)
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_NET", "hybrid"}, {"LLC_HYBRID_DRIVER", "both"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_init_params_t params = p.params();
        llc_context_t *ctx = nullptr;
        EXPECT_EQ(llc_init(&params, &ctx), LLC_ERR_INVALID);
        EXPECT_NE(std::string(llc_last_error(nullptr)).find("LLC_HYBRID_DRIVER"), std::string::npos)
            << llc_last_error(nullptr);
    });
}

} // namespace
