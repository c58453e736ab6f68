// dc_rdma_test.cpp - DC RDMA, the hybrid's third path: a udp source of large
// messages addressed to the slots of a ring its receiver leased for it
// (udp_ring_landing.hpp; doc/libllc.md, "Hybrid").  The slot and credit
// bookkeeping alone, the policy's DC-class choice, then real processes: the
// switch into ring addressing and back out (with and without datagram loss),
// refusals, unanswered asks, an empty pool, and promotion to tcp, every
// message checked once, in order and intact.
#include "switch_policy.hpp"
#include "test_util.hpp"
#include "udp_ring_landing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <string>
#include <vector>

using namespace llctest;

// ------------------------------------------------------------ bookkeeping

TEST(DcRdmaSlots, DatagramsLandInTheirSlotAndFreeItWhenConsumed)
{
    std::vector<char> ring(4 * 1024);
    llc::UdpRingLanding l(ring.data(), 4, 1024);
    const char a[] = "alpha", b[] = "bravo";
    // rx_next 10: psn 10..13 may land, in slot psn mod 4.
    EXPECT_TRUE(l.fits(13, 1, sizeof(b), 10));
    EXPECT_FALSE(l.fits(13, 2, sizeof(b), 10)) << "the header names another slot than psn mod slots";
    EXPECT_FALSE(l.fits(14, 2, 10, 10)) << "beyond the slots ahead of the next psn to deliver";
    EXPECT_FALSE(l.fits(9, 1, 10, 10)) << "already delivered";
    EXPECT_FALSE(l.fits(12, 0, 1025, 10)) << "more than a slot";
    l.land(13, b, sizeof(b));
    EXPECT_TRUE(l.holds(13));
    EXPECT_FALSE(l.holds(9)) << "same slot, other psn";
    EXPECT_EQ(ring.data() + 1 * 1024, [&] { size_t n; return l.find(13, n); }()) << "slot 1 of the ring";
    EXPECT_EQ(l.sack_bits(10), uint64_t(1) << 2) << "psn 13 = rx_next + 1 + 2";
    l.land(10, a, sizeof(a));
    EXPECT_EQ(l.occupied(), 2u);
    size_t n = 0;
    const char *d = l.find(10, n);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(n, sizeof(a));
    EXPECT_STREQ(d, "alpha");
    l.release(10); // fed: the slot is free (the ack after rx_next = 11 credits it)
    EXPECT_FALSE(l.holds(10));
    EXPECT_EQ(l.occupied(), 1u);
    // psn 14 reuses slot 2 only once rx_next passed 10 (here 11): it fits.
    EXPECT_TRUE(l.fits(14, 2, 10, 11));
    EXPECT_FALSE(l.fits(17, 1, 10, 14)) << "slot 1 still holds psn 13";
    std::vector<uint64_t> drained;
    l.drain([&](uint64_t psn, const char *data, size_t len) {
        drained.push_back(psn);
        EXPECT_EQ(len, sizeof(b));
        EXPECT_STREQ(data, "bravo");
    });
    EXPECT_EQ(drained, std::vector<uint64_t>{13});
    EXPECT_EQ(l.occupied(), 0u);
    EXPECT_EQ(l.sack_bits(10), 0u);
}

TEST(DcRdmaSlots, SenderCreditsAreTheSlots)
{
    llc::RingAddressing plain;
    EXPECT_FALSE(plain.on());
    EXPECT_EQ(plain.window(64), 64u);
    EXPECT_EQ(plain.payload_cap(16384), 16384u);
    llc::RingAddressing ring{16, 4096};
    EXPECT_EQ(ring.window(64), 16u) << "one datagram in flight per slot";
    EXPECT_EQ(ring.window(8), 8u) << "a smaller socket window still rules";
    EXPECT_EQ(ring.payload_cap(16384), 4096u) << "one slot of bytes per datagram";
    EXPECT_EQ(ring.payload_cap(1500), 1500u);
    EXPECT_EQ(ring.slot_of(33), 1u);
    llc::RingAddressing back = llc::RingAddressing::unpack(ring.pack());
    EXPECT_EQ(back.slots, 16u);
    EXPECT_EQ(back.slot_bytes, 4096u);
    EXPECT_TRUE(back.valid());
    EXPECT_FALSE((llc::RingAddressing{16, 3000}).valid());
    EXPECT_FALSE((llc::RingAddressing{0, 4096}).valid());
    EXPECT_FALSE(llc::RingAddressing::unpack(0).valid());
}

// With credits as the sender keeps them (at most `slots` unacknowledged
// datagrams, a slot back with each cumulative ack) and datagrams arriving in
// any order, every datagram fits a free slot and delivery in psn order
// frees them: the invariant the receiver's checks rely on.
TEST(DcRdmaSlots, CreditedSenderNeverFindsItsSlotTaken)
{
    const size_t slots = 8;
    std::vector<char> ring(slots * 1024);
    llc::UdpRingLanding l(ring.data(), slots, 1024);
    llc::RingAddressing addr{uint32_t(slots), 1024};
    uint64_t next_psn = 0, acked = 0, rx_next = 0;
    std::vector<uint64_t> in_flight;
    uint64_t rng = 12345, delivered = 0;
    for (int step = 0; step < 20000; step++) {
        rng = llctest::mix64(rng);
        if (next_psn - acked < addr.window(64) && rng % 3 != 0) {
            in_flight.push_back(next_psn++);
            continue;
        }
        if (in_flight.empty()) {
            acked = rx_next; // an ack reaches the sender
            continue;
        }
        size_t i = size_t(rng >> 8) % in_flight.size(); // any order
        uint64_t psn = in_flight[i];
        in_flight.erase(in_flight.begin() + long(i));
        char byte = char(psn);
        ASSERT_TRUE(l.fits(psn, addr.slot_of(psn), 1, rx_next)) << "psn " << psn << " rx_next " << rx_next;
        l.land(psn, &byte, 1);
        size_t n;
        while (const char *d = l.find(rx_next, n)) {
            ASSERT_EQ(*d, char(rx_next));
            l.release(rx_next++);
            delivered++;
        }
        if (rng % 5 == 0)
            acked = rx_next;
    }
    EXPECT_GT(delivered, 5000u);
}

TEST(DcRdmaPolicy, BusySourcesOfLargeMessagesChooseDcRdma)
{
    // 256 small messages per period are worth an RC slot: 51.2 us per
    // period; DC RDMA from a quarter of that (12.8 us: 64 KiB messages save
    // 1.2 us each on RC, so a load of 10.7), kept down to an eighth.
    llc::SwitchPolicy policy(llc::CostModel{}, 256, 4);
    llc::SourceLoad big{1, 20, 65536, false, false};
    llc::SourceLoad small{2, 20, 512, false, false};
    llc::SourceLoad rare{3, 8, 65536, false, false};
    EXPECT_EQ(policy.dc_target(big), llc::Channel::DcRdma);
    EXPECT_EQ(policy.dc_target(small), llc::Channel::DcChannel) << "the DC channel is cheaper for small messages";
    EXPECT_EQ(policy.dc_target(rare), llc::Channel::DcChannel) << "not busy enough to be worth a ring";
    llc::SourceLoad rare_on = rare;
    rare_on.on_dc_rdma = true;
    EXPECT_EQ(policy.dc_target(rare_on), llc::Channel::DcRdma) << "hysteresis: half the level keeps it";
    rare_on.load = 5;
    EXPECT_EQ(policy.dc_target(rare_on), llc::Channel::DcChannel);

    llc::SourceLoad on_rc{4, 20, 65536, true, false};
    llc::SourceLoad leaving{5, 20, 512, false, true};
    auto moves = policy.dc_moves({big, small, rare, on_rc, leaving});
    ASSERT_EQ(moves.size(), 2u);
    EXPECT_EQ(moves[0].source, 1);
    EXPECT_EQ(moves[0].want, llc::Channel::DcRdma);
    EXPECT_EQ(moves[1].source, 5);
    EXPECT_EQ(moves[1].want, llc::Channel::DcChannel);
    EXPECT_TRUE(policy.dc_moves({big}, {{1, llc::Channel::RcRdma}}).empty()) << "a source being promoted is left alone";
}

// ------------------------------------------------------------ processes

namespace {

constexpr unsigned kBigHandler = 9;

struct BigHeader {
    uint32_t src;
    uint32_t index;
    uint64_t len;
};

uint64_t big_seed(int src, int dst, uint32_t index) { return mix64((uint64_t(src) << 40) ^ (uint64_t(dst) << 20) ^ index ^ 0xdcull); }

struct Checker {
    int me;
    std::vector<uint32_t> next;
    uint64_t bad = 0;
    Checker(int rank, int size) : me(rank), next(size_t(size), 0) {}
};

void on_big(llc_context_t *, void *arg, int src, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *c = static_cast<Checker *>(arg);
    BigHeader h{};
    if (hdr_len == sizeof(h))
        std::memcpy(&h, hdr, sizeof(h));
    bool ok = hdr_len == sizeof(h) && int(h.src) == src && h.index == c->next[src] && len == h.len &&
              check_pattern(data, len, big_seed(src, c->me, h.index));
    if (!ok) {
        c->bad++;
        ADD_FAILURE() << "rank " << c->me << ": from " << src << " got index " << h.index << " (" << len
                      << " bytes), expected index " << c->next[src];
    }
    c->next[src] = h.index + 1;
}

// Numbered, patterned sends of a chosen size; buffers live until sent.
struct Sender {
    llc_context_t *ctx;
    int me;
    std::vector<uint32_t> sent;
    struct Buffer {
        std::vector<char> bytes;
        bool done = false;
    };
    std::list<Buffer> inflight;
    Sender(llc_context_t *c, int rank, int size) : ctx(c), me(rank), sent(size_t(size), 0) {}
    bool room() const { return inflight.size() < 16; }
    void send(int dest, size_t len)
    {
        uint32_t index = sent[dest]++;
        inflight.emplace_back();
        Buffer &b = inflight.back();
        b.bytes.resize(len);
        fill_pattern(b.bytes.data(), len, big_seed(me, dest, index));
        BigHeader h{uint32_t(me), index, len};
        llc_iov_t iov{b.bytes.data(), len};
        int rc = llc_am_send(
            ctx, dest, kBigHandler, &h, sizeof(h), &iov, 1,
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
};

// rc_per_node "0" (the default here): no RC slot, so large busy sources stay
// on the DC class (the ring pool is there all the same: DC RDMA needs no slot).
JobOptions dc_rdma_job(std::vector<int> nodes, const char *drop_permille, const char *promote_msgs = "256",
                       const char *rc_per_node = "0")
{
    JobOptions o = job(std::move(nodes), 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},         {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", "receiver"},     {"LLC_HYBRID_PERIOD_MS", "20"},
             {"LLC_HYBRID_PROMOTE_MSGS", promote_msgs}, {"LLC_MAX_RC_PER_NODE", rc_per_node},
             {"LLC_UDP_RTO_US", "3000"},           {"LLC_UDP_DROP_PERMILLE", drop_permille}};
    return o;
}

void verbose(const TestProcess &p, const char *when, const llc_stats_t &st)
{
    if (!getenv("LLC_TEST_VERBOSE"))
        return;
    fprintf(stderr,
            "rank %d %s: dc_rdma asks %llu switches %llu exits %llu sources %llu landed %llu accepted %llu "
            "packets %llu | rings held %llu in use %llu leases %llu empty %llu | asks refused %llu unanswered %llu "
            "| promotions %llu tcp ring bytes %llu drops %llu retransmits %llu received %llu\n",
            p.rank, when, (unsigned long long)st.dc_rdma_requests_sent, (unsigned long long)st.dc_rdma_switches,
            (unsigned long long)st.dc_rdma_exits, (unsigned long long)st.dc_rdma_sources,
            (unsigned long long)st.dc_rdma_bytes_landed, (unsigned long long)st.dc_rdma_requests_accepted,
            (unsigned long long)st.dc_rdma_packets_sent, (unsigned long long)st.ring_pool_held,
            (unsigned long long)st.ring_pool_in_use, (unsigned long long)st.ring_leases,
            (unsigned long long)st.ring_pool_empty, (unsigned long long)st.rc_asks_refused,
            (unsigned long long)st.rc_asks_unanswered, (unsigned long long)st.rc_promotions,
            (unsigned long long)st.ring_bytes_landed, (unsigned long long)st.udp_injected_drops,
            (unsigned long long)st.udp_retransmits, (unsigned long long)st.msgs_received);
}

// Runs for `seconds`: the senders (rank != 0) send messages of `len` bytes
// to rank 0 while there is room (pace_s > 0: one every pace_s at most),
// everyone progresses.
void run_phase(llc_context_t *ctx, TestProcess &p, Sender &s, double seconds, size_t len, double pace_s = 0)
{
    double end = now_s() + seconds, next = 0;
    while (now_s() < end && !::testing::Test::HasFailure()) {
        if (p.rank != 0 && len && s.room() && now_s() >= next) {
            s.send(0, len);
            next = now_s() + pace_s;
        }
        ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
        s.reap();
    }
}

// Rounds of run_phase (round_s each) until done(stats) holds at every
// process at the end of a round (a bootstrap fence per round), at most
// max_rounds: conditions, not wall-clock budgets, so that a slow or loaded
// machine only takes more rounds.
template <class Done>
bool rounds_until(llc_context_t *ctx, TestProcess &p, Sender &s, const std::string &tag, size_t len, double pace_s,
                  Done done, int max_rounds = 60, double round_s = 0.25)
{
    for (int r = 0; r < max_rounds && !::testing::Test::HasFailure(); r++) {
        run_phase(ctx, p, s, round_s, len, pace_s);
        llc_stats_t st{};
        llc_get_stats(ctx, &st);
        if (job_sum(p, (tag + std::to_string(r)).c_str(), done(st) ? 1 : 0) == uint64_t(p.size))
            return true;
    }
    return false;
}

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

// After llc_finalize: each receiver got exactly what each sender sent.
void check_counts(TestProcess &p, const Sender &s, const Checker &c)
{
    ASSERT_EQ(TestProcess::put(&p, "dcsent", s.sent.data(), s.sent.size() * sizeof(uint32_t)), 0);
    ASSERT_EQ(TestProcess::fence(&p), 0);
    for (int src = 0; src < p.size; src++) {
        if (src == p.rank)
            continue;
        std::vector<uint32_t> theirs(size_t(p.size), 0);
        size_t len = theirs.size() * sizeof(uint32_t);
        ASSERT_EQ(TestProcess::get(&p, src, "dcsent", theirs.data(), &len), 0);
        EXPECT_EQ(c.next[src], theirs[p.rank]) << "rank " << p.rank << " from " << src;
    }
    EXPECT_EQ(c.bad, 0u);
}

// The senders' last messages, then llc_finalize and the counts.
void finish(llc_context_t *ctx, TestProcess &p, Sender &s, Checker &c)
{
    ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
    finalize_ok(ctx);
    check_counts(p, s, c);
}

} // namespace

// Rank 1 streams 48 KiB messages to rank 0 (no RC slot here): rank 0
// leases a ring and rank 1 ring-addresses its datagrams; then small messages
// only: the mean size falls, rank 0 asks it back to plain udp and the ring
// goes back to the pool.  Parameter: datagram loss in permille.
class DcRdmaSwitch : public ::testing::TestWithParam<const char *> {};

TEST_P(DcRdmaSwitch, LargeMessagesLandInARingThenSmallOnesLeaveIt)
{
    // LLC_HYBRID_PROMOTE_MSGS=64: busy (worth a ring) from a load of 2.7 of
    // these messages, so that the source still is under 10 % loss, where the
    // stream slows to a few messages per period.
    LLC_EXPECT_JOB_OK(dc_rdma_job({0, 1}, GetParam(), "64"), [&](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c(p.rank, p.size);
        ASSERT_EQ(llc_am_register(ctx, kBigHandler, on_big, &c), LLC_OK);
        Sender s(ctx, p.rank, p.size);
        ASSERT_TRUE(rounds_until(ctx, p, s, "large", 48 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 1 && st.dc_rdma_bytes_landed > 20u * 48 * 1024);
        })) << "rank 1 never ring-addressed its stream to rank 0";
        llc_stats_t st = stats_of(ctx);
        verbose(p, "large", st);
        if (p.rank == 0) {
            EXPECT_GE(st.dc_rdma_requests_sent, 1u);
            EXPECT_GE(st.dc_rdma_switches, 1u);
            EXPECT_EQ(st.ring_pool_held, 1u);
            EXPECT_EQ(st.rc_requests_sent, 0u) << "no RC slot here";
            EXPECT_GT(c.next[1], 20u);
        } else {
            EXPECT_GE(st.dc_rdma_requests_accepted, 1u);
            EXPECT_GT(st.dc_rdma_packets_sent, 20u * 12);
            EXPECT_EQ(st.rc_promotions, 0u);
        }
        ASSERT_TRUE(rounds_until(ctx, p, s, "small", 200, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 0 && st.dc_rdma_exits >= 1 && st.ring_pool_held == 0);
        })) << "rank 1 never went back to plain udp";
        st = stats_of(ctx);
        verbose(p, "small", st);
        if (p.rank == 0) {
            EXPECT_EQ(st.ring_pool_in_use, 0u) << "the ring went back";
        }
        finish(ctx, p, s, c);
    });
}

INSTANTIATE_TEST_SUITE_P(Loss, DcRdmaSwitch, ::testing::Values("0", "20", "100"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                             return std::string("drop") + i.param + "permille";
                         });

// The sender has DC RDMA turned off (LLC_HYBRID_DC_RDMA=0) and refuses: the
// receiver asked with a ring leased, and the refusal gives it back.
TEST(DcRdma, RefusalReturnsTheRing)
{
    LLC_EXPECT_JOB_OK(dc_rdma_job({0, 1}, "0"), [](TestProcess &p) {
        if (p.rank == 1)
            setenv("LLC_HYBRID_DC_RDMA", "0", 1);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c(p.rank, p.size);
        ASSERT_EQ(llc_am_register(ctx, kBigHandler, on_big, &c), LLC_OK);
        Sender s(ctx, p.rank, p.size);
        ASSERT_TRUE(rounds_until(ctx, p, s, "refused", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank == 0 ? st.dc_rdma_requests_sent >= 2 && st.rc_asks_refused >= 1 : st.rc_requests_refused >= 1;
        })) << "asked, refused, asked again";
        llc_stats_t st = stats_of(ctx);
        verbose(p, "refused", st);
        if (p.rank == 0) {
            EXPECT_EQ(st.dc_rdma_switches, 0u);
            EXPECT_EQ(st.dc_rdma_bytes_landed, 0u);
            EXPECT_GE(st.ring_leases, 1u);
        } else {
            EXPECT_EQ(st.dc_rdma_packets_sent, 0u);
        }
        // Quiet now: nothing is asked any more, and no ring stays leased.
        ASSERT_TRUE(rounds_until(ctx, p, s, "quiet", 0, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.ring_pool_held == 0 && st.ring_pool_in_use == 0);
        })) << "the ring went back";
        finish(ctx, p, s, c);
    });
}

// Every switch datagram is lost: each ring ask is resent, given up, and its
// ring returned after the policy's patience; the data is unaffected.
TEST(DcRdma, UnansweredAskReturnsTheRing)
{
    JobOptions o = dc_rdma_job({0, 1}, "1000");
    o.env.push_back({"LLC_UDP_DROP_ONLY", "switch"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c(p.rank, p.size);
        ASSERT_EQ(llc_am_register(ctx, kBigHandler, on_big, &c), LLC_OK);
        Sender s(ctx, p.rank, p.size);
        ASSERT_TRUE(rounds_until(ctx, p, s, "unanswered", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_requests_sent >= 2 && st.ring_leases >= 2 && st.rc_ask_resends >= 1);
        })) << "expired, asked again with a new ring";
        llc_stats_t st = stats_of(ctx);
        verbose(p, "unanswered", st);
        if (p.rank == 0) {
            EXPECT_EQ(st.dc_rdma_switches, 0u);
        } else {
            EXPECT_EQ(st.dc_rdma_packets_sent, 0u);
        }
        // Quiet: the history decays, nothing is asked, the last ring expires.
        ASSERT_TRUE(rounds_until(ctx, p, s, "quiet", 0, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.ring_pool_held == 0 && st.ring_pool_in_use == 0);
        })) << "the ring went back";
        finish(ctx, p, s, c);
    });
}

// One ring in rank 0's node pool and two sources of large messages: one at
// a time is ring-addressed, the other is not asked (ring_pool_empty), both
// streams arrive intact.
TEST(DcRdma, NoFreeRingNoAsk)
{
    JobOptions o = dc_rdma_job({0, 1, 2}, "10");
    o.env.push_back({"LLC_RING_POOL", "1"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c(p.rank, p.size);
        ASSERT_EQ(llc_am_register(ctx, kBigHandler, on_big, &c), LLC_OK);
        Sender s(ctx, p.rank, p.size);
        uint64_t most = 0;
        ASSERT_TRUE(rounds_until(ctx, p, s, "onering", 32 * 1024, 0, [&](const llc_stats_t &st) {
            most = std::max(most, st.dc_rdma_sources);
            return p.rank != 0 || (st.dc_rdma_switches >= 1 && st.ring_pool_empty >= 5 && c.next[1] > 20 &&
                                   c.next[2] > 20);
        }));
        llc_stats_t st = stats_of(ctx);
        verbose(p, "one ring", st);
        if (p.rank == 0) {
            EXPECT_EQ(most, 1u) << "never two sources on one ring";
            EXPECT_LE(st.ring_pool_high_water, 1u);
            // (A source whose rate dips may leave and hand the ring on.)
            EXPECT_LE(st.dc_rdma_requests_sent, st.ring_leases);
        }
        ASSERT_TRUE(progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, 60));
        finalize_ok(ctx); // (before the fence: the senders need rank 0's progress to finish)
        EXPECT_GE(job_sum(p, "acc", st.dc_rdma_requests_accepted), 1u);
        check_counts(p, s, c);
    });
}

// A paced source of large messages goes to DC RDMA; when it speeds up, RC is
// worth its slot: promoted to tcp, it stops ring addressing when it accepts,
// and its ring becomes the landing zone of its tcp stream.  Slowed down, it
// is demoted to plain udp (its ring goes back with its tcp stream drained),
// and paced again it returns to DC RDMA with a new ring.
TEST(DcRdma, PromotionFromDcRdmaToRcRdmaAndBack)
{
    JobOptions o = dc_rdma_job({0, 1}, "20", "60", "4");
    o.env.push_back({"LLC_HYBRID_PERIOD_MS", "50"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Checker c(p.rank, p.size);
        ASSERT_EQ(llc_am_register(ctx, kBigHandler, on_big, &c), LLC_OK);
        Sender s(ctx, p.rank, p.size);
        // About three 32 KiB messages per 50 ms period: a load near 6 (DC RDMA
        // from 2.5, RC from 10 at this size with LLC_HYBRID_PROMOTE_MSGS=60).
        ASSERT_TRUE(rounds_until(ctx, p, s, "paced", 32 * 1024, 0.0167, [&](const llc_stats_t &st) {
            return p.rank != 0 || st.dc_rdma_sources == 1;
        })) << "ring-addressed while paced";
        llc_stats_t st = stats_of(ctx);
        verbose(p, "paced", st);
        EXPECT_EQ(job_sum(p, "tcp0", p.rank == 1 ? st.rc_promotions : 0), 0u) << "not on tcp while paced";
        ASSERT_TRUE(rounds_until(ctx, p, s, "fast", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank == 0 ? st.dc_rdma_exits >= 1 && st.ring_bytes_landed > 0 : st.rc_promotions == 1;
        })) << "promoted to tcp";
        st = stats_of(ctx);
        verbose(p, "fast", st);
        if (p.rank == 0) {
            EXPECT_GE(st.dc_rdma_switches, 1u);
            EXPECT_EQ(st.dc_rdma_sources, 0u);
            EXPECT_GT(st.dc_rdma_bytes_landed, 0u);
            EXPECT_EQ(st.ring_pool_held, 1u) << "the same ring takes the tcp stream";
            EXPECT_GE(st.rc_requests_sent, 1u);
        }
        // One message per period: a load near 2, below RC's demotion level (2.5).
        ASSERT_TRUE(rounds_until(ctx, p, s, "slow", 32 * 1024, 0.05, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.rc_sources == 0 && st.dc_rdma_sources == 0 && st.ring_pool_held == 0);
        })) << "demoted to plain udp, its ring back";
        st = stats_of(ctx);
        verbose(p, "slow", st);
        EXPECT_EQ(job_sum(p, "demoted", p.rank == 1 ? st.rc_active : 0), 0u);
        ASSERT_TRUE(rounds_until(ctx, p, s, "again", 32 * 1024, 0.0167, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 1 && st.dc_rdma_switches >= 2);
        })) << "back to DC RDMA";
        st = stats_of(ctx);
        verbose(p, "again", st);
        if (p.rank == 0) {
            EXPECT_EQ(st.ring_pool_held, 1u);
            EXPECT_GE(st.ring_leases, 2u);
        }
        finish(ctx, p, s, c);
    });
}
