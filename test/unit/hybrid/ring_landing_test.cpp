// ring_landing_test.cpp - ring landing (the paper's DC RDMA), the hybrid's
// third path: a udp source of large messages addressed to the slots of a ring
// its receiver leased for it (udp_ring_landing.hpp; doc/libllc-hybrid.md).
// The policy's connectionless-class choice, then real processes: the switch
// into ring addressing and back out (with and without datagram loss),
// refusals, unanswered asks, an empty pool, and promotion to tcp, every
// message checked once, in order and intact.  The slot and credit
// bookkeeping alone is in test/unit/transport/udp/udp_ring_landing_test.cpp.
#include "common/numbered_stream.hpp"
#include "hybrid/switch_policy.hpp"
#include "common/test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace llctest;

TEST(RingLandingPolicy, BusySourcesOfLargeMessagesChooseRingLanding)
{
    // 256 small messages per period are worth an RC slot: 51.2 us per
    // period; DC RDMA from a quarter of that (12.8 us: 64 KiB messages save
    // 1.2 us each on RC, so a load of 10.7), kept down to an eighth.
    llc::SwitchPolicy policy(llc::CostModel{}, 256, 4);
    llc::SourceLoad big{1, 20, 65536, false, false};
    llc::SourceLoad small{2, 20, 512, false, false};
    llc::SourceLoad rare{3, 8, 65536, false, false};
    EXPECT_EQ(policy.connectionless_target(big), llc::Channel::RingLanding);
    EXPECT_EQ(policy.connectionless_target(small), llc::Channel::Connectionless) << "the DC channel is cheaper for small messages";
    EXPECT_EQ(policy.connectionless_target(rare), llc::Channel::Connectionless) << "not busy enough to be worth a ring";
    llc::SourceLoad rare_on = rare;
    rare_on.on_ring_landing = true;
    EXPECT_EQ(policy.connectionless_target(rare_on), llc::Channel::RingLanding) << "hysteresis: half the level keeps it";
    rare_on.load = 5;
    EXPECT_EQ(policy.connectionless_target(rare_on), llc::Channel::Connectionless);

    llc::SourceLoad on_connected{4, 20, 65536, true, false};
    llc::SourceLoad leaving{5, 20, 512, false, true};
    auto moves = policy.connectionless_moves({big, small, rare, on_connected, leaving});
    ASSERT_EQ(moves.size(), 2u);
    EXPECT_EQ(moves[0].source, 1);
    EXPECT_EQ(moves[0].want, llc::Channel::RingLanding);
    EXPECT_EQ(moves[1].source, 5);
    EXPECT_EQ(moves[1].want, llc::Channel::Connectionless);
    EXPECT_TRUE(policy.connectionless_moves({big}, {{1, llc::Channel::Connected}}).empty()) << "a source being promoted is left alone";
}

// ------------------------------------------------------------ processes

namespace {

// Large messages of the size each phase chooses (the shape has no sizes:
// the receiver checks the header's length, the bytes and the order).
uint64_t big_seed(uint32_t src, uint32_t dst, uint32_t index)
{
    return mix64((uint64_t(src) << 40) ^ (uint64_t(dst) << 20) ^ index ^ 0xdcull);
}
constexpr MessageShape kBigShape{9, nullptr, big_seed};

// rc_per_node "0" (the default here): no RC slot, so large busy sources stay
// on the DC class (the ring pool is there all the same: DC RDMA needs no slot).
JobOptions ring_landing_job(std::vector<int> nodes, const char *drop_permille, const char *promote_msgs = "256",
                       const char *rc_per_node = "0", const char *period_ms = "20")
{
    return hybrid_receiver_job(std::move(nodes), 120, period_ms, promote_msgs,
                               {{"LLC_MAX_RC_PER_NODE", rc_per_node},
                                {"LLC_UDP_RTO_US", "3000"},
                                {"LLC_UDP_DROP_PERMILLE", drop_permille}});
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

// One process of a DC RDMA job: a numbered stream of kBigShape messages
// (at most 16 in flight), its senders (rank != 0) sending to rank 0.
struct RingRun : StreamRun {
    explicit RingRun(TestProcess &proc) : StreamRun(proc, kBigShape) { s.window = 16; }

    // Runs for `seconds`: the senders send messages of `len` bytes to rank 0
    // while there is room (pace_s > 0: one every pace_s at most), everyone
    // progresses.
    void phase(double seconds, size_t len, double pace_s)
    {
        double end = now_s() + seconds, next = 0;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (p.rank != 0 && len && s.room() && now_s() >= next) {
                s.send(0, len);
                next = now_s() + pace_s;
            }
            if (!progress())
                return;
        }
    }

    // Rounds of phase (round_s each) until done(stats) holds at every
    // process at the end of a round (a bootstrap fence per round), at most
    // max_rounds: conditions, not wall-clock budgets, so that a slow or
    // loaded machine only takes more rounds.  Then the stats are in st
    // (printed with LLC_TEST_VERBOSE).
    template <class Done>
    bool rounds_until(const std::string &tag, size_t len, double pace_s, Done done, int max_rounds = 60,
                      double round_s = 0.25)
    {
        for (int r = 0; r < max_rounds && !::testing::Test::HasFailure(); r++) {
            phase(round_s, len, pace_s);
            if (job_sum(p, (tag + std::to_string(r)).c_str(), done(stats()) ? 1 : 0) == uint64_t(p.size)) {
                st = stats();
                verbose(p, tag.c_str(), st);
                return true;
            }
        }
        return false;
    }

    // Quiet rounds (nobody sends) until rank 0 holds no ring and has none in use.
    bool quiet_until_the_ring_is_back()
    {
        return rounds_until("quiet", 0, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.ring_pool_held == 0 && st.ring_pool_in_use == 0);
        });
    }

    llc_stats_t stats() const
    {
        llc_stats_t now{};
        llc_get_stats(ctx, &now);
        return now;
    }

    llc_stats_t st{}; // after the last rounds_until that succeeded
};

} // namespace

// Rank 1 streams 48 KiB messages to rank 0 (no RC slot here): rank 0
// leases a ring and rank 1 ring-addresses its datagrams; then small messages
// only: the mean size falls, rank 0 asks it back to plain udp and the ring
// goes back to the pool.  Parameter: datagram loss in permille.
class RingLandingSwitch : public ::testing::TestWithParam<const char *> {};

TEST_P(RingLandingSwitch, LargeMessagesLandInARingThenSmallOnesLeaveIt)
{
    // LLC_HYBRID_PROMOTE_MSGS=64: busy (worth a ring) from a load of 2.7 of
    // these messages, so that the source still is under 10 % loss, where the
    // stream slows to a few messages per period.
    LLC_EXPECT_JOB_OK(ring_landing_job({0, 1}, GetParam(), "64"), [&](TestProcess &p) {
        RingRun run(p);
        ASSERT_TRUE(run.started());
        const llc_stats_t &st = run.st;
        ASSERT_TRUE(run.rounds_until("large", 48 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 1 && st.dc_rdma_bytes_landed > 20u * 48 * 1024);
        })) << "rank 1 never ring-addressed its stream to rank 0";
        if (p.rank == 0) {
            EXPECT_GE(st.dc_rdma_requests_sent, 1u);
            EXPECT_GE(st.dc_rdma_switches, 1u);
            EXPECT_EQ(st.ring_pool_held, 1u);
            EXPECT_EQ(st.rc_requests_sent, 0u) << "no RC slot here";
            EXPECT_GT(run.c.next[1], 20u);
        } else {
            EXPECT_GE(st.dc_rdma_requests_accepted, 1u);
            EXPECT_GT(st.dc_rdma_packets_sent, 20u * 12);
            EXPECT_EQ(st.rc_promotions, 0u);
        }
        ASSERT_TRUE(run.rounds_until("small", 200, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 0 && st.dc_rdma_exits >= 1 && st.ring_pool_held == 0);
        })) << "rank 1 never went back to plain udp";
        if (p.rank == 0) {
            EXPECT_EQ(st.ring_pool_in_use, 0u) << "the ring went back";
        }
        ASSERT_TRUE(run.drain());
        run.finish();
    });
}

INSTANTIATE_TEST_SUITE_P(Loss, RingLandingSwitch, ::testing::Values("0", "20", "100"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                             return std::string("drop") + i.param + "permille";
                         });

// The sender has DC RDMA turned off (LLC_HYBRID_DC_RDMA=0) and refuses: the
// receiver asked with a ring leased, and the refusal gives it back.
TEST(RingLanding, RefusalReturnsTheRing)
{
    LLC_EXPECT_JOB_OK(ring_landing_job({0, 1}, "0"), [](TestProcess &p) {
        if (p.rank == 1)
            setenv("LLC_HYBRID_DC_RDMA", "0", 1);
        RingRun run(p);
        ASSERT_TRUE(run.started());
        const llc_stats_t &st = run.st;
        ASSERT_TRUE(run.rounds_until("refused", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank == 0 ? st.dc_rdma_requests_sent >= 2 && st.rc_asks_refused >= 1 : st.rc_requests_refused >= 1;
        })) << "asked, refused, asked again";
        if (p.rank == 0) {
            EXPECT_EQ(st.dc_rdma_switches, 0u);
            EXPECT_EQ(st.dc_rdma_bytes_landed, 0u);
            EXPECT_GE(st.ring_leases, 1u);
        } else {
            EXPECT_EQ(st.dc_rdma_packets_sent, 0u);
        }
        // Quiet now: nothing is asked any more, and no ring stays leased.
        ASSERT_TRUE(run.quiet_until_the_ring_is_back()) << "the ring went back";
        ASSERT_TRUE(run.drain());
        run.finish();
    });
}

// Every switch datagram is lost: each ring ask is resent, given up, and its
// ring returned after the policy's patience; the data is unaffected.
TEST(RingLanding, UnansweredAskReturnsTheRing)
{
    JobOptions o = ring_landing_job({0, 1}, "1000");
    o.env.push_back({"LLC_UDP_DROP_ONLY", "switch"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        RingRun run(p);
        ASSERT_TRUE(run.started());
        const llc_stats_t &st = run.st;
        ASSERT_TRUE(run.rounds_until("unanswered", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_requests_sent >= 2 && st.ring_leases >= 2 && st.rc_ask_resends >= 1);
        })) << "expired, asked again with a new ring";
        if (p.rank == 0)
            EXPECT_EQ(st.dc_rdma_switches, 0u);
        else
            EXPECT_EQ(st.dc_rdma_packets_sent, 0u);
        // Quiet: the history decays, nothing is asked, the last ring expires.
        ASSERT_TRUE(run.quiet_until_the_ring_is_back()) << "the ring went back";
        ASSERT_TRUE(run.drain());
        run.finish();
    });
}

// One ring in rank 0's node pool and two sources of large messages: one at
// a time is ring-addressed, the other is not asked (ring_pool_empty), both
// streams arrive intact.
TEST(RingLanding, NoFreeRingNoAsk)
{
    JobOptions o = ring_landing_job({0, 1, 2}, "10");
    o.env.push_back({"LLC_RING_POOL", "1"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        RingRun run(p);
        ASSERT_TRUE(run.started());
        const llc_stats_t &st = run.st;
        uint64_t most = 0;
        ASSERT_TRUE(run.rounds_until("onering", 32 * 1024, 0, [&](const llc_stats_t &st) {
            most = std::max(most, st.dc_rdma_sources);
            return p.rank != 0 || (st.dc_rdma_switches >= 1 && st.ring_pool_empty >= 5 && run.c.next[1] > 20 &&
                                   run.c.next[2] > 20);
        }));
        if (p.rank == 0) {
            // (<=: under a sanitizer a source can switch in and leave again
            // between two samples; dc_rdma_switches >= 1 above says one did.)
            EXPECT_LE(most, 1u) << "never two sources on one ring";
            EXPECT_LE(st.ring_pool_high_water, 1u);
            // (A source whose rate dips may leave and hand the ring on.)
            EXPECT_LE(st.dc_rdma_requests_sent, st.ring_leases);
        }
        ASSERT_TRUE(run.drain());
        finalize_ok(run.ctx); // (before the fence: the senders need rank 0's progress to finish)
        EXPECT_GE(job_sum(p, "acc", st.dc_rdma_requests_accepted), 1u);
        check_counts_after_finalize(p, run.s, run.c);
    });
}

// A paced source of large messages goes to DC RDMA; when it speeds up, RC is
// worth its slot: promoted to tcp, it stops ring addressing when it accepts,
// and its ring becomes the landing zone of its tcp stream.  Slowed down, it
// is demoted to plain udp (its ring goes back with its tcp stream drained),
// and paced again it returns to DC RDMA with a new ring.
TEST(RingLanding, PromotionFromRingLandingToConnectedAndBack)
{
    LLC_EXPECT_JOB_OK(ring_landing_job({0, 1}, "20", "60", "4", "50"), [](TestProcess &p) {
        RingRun run(p);
        ASSERT_TRUE(run.started());
        const llc_stats_t &st = run.st;
        // About three 32 KiB messages per 50 ms period: a load near 6 (DC RDMA
        // from 2.5, RC from 10 at this size with LLC_HYBRID_PROMOTE_MSGS=60).
        ASSERT_TRUE(run.rounds_until("paced", 32 * 1024, 0.0167, [&](const llc_stats_t &st) {
            return p.rank != 0 || st.dc_rdma_sources == 1;
        })) << "ring-addressed while paced";
        EXPECT_EQ(job_sum(p, "tcp0", p.rank == 1 ? st.rc_promotions : 0), 0u) << "not on tcp while paced";
        ASSERT_TRUE(run.rounds_until("fast", 32 * 1024, 0, [&](const llc_stats_t &st) {
            return p.rank == 0 ? st.dc_rdma_exits >= 1 && st.ring_bytes_landed > 0 : st.rc_promotions == 1;
        })) << "promoted to tcp";
        if (p.rank == 0) {
            EXPECT_GE(st.dc_rdma_switches, 1u);
            EXPECT_EQ(st.dc_rdma_sources, 0u);
            EXPECT_GT(st.dc_rdma_bytes_landed, 0u);
            EXPECT_EQ(st.ring_pool_held, 1u) << "the same ring takes the tcp stream";
            EXPECT_GE(st.rc_requests_sent, 1u);
        }
        // One message per period: a load near 2, below RC's demotion level (2.5).
        ASSERT_TRUE(run.rounds_until("slow", 32 * 1024, 0.05, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.rc_sources == 0 && st.dc_rdma_sources == 0 && st.ring_pool_held == 0);
        })) << "demoted to plain udp, its ring back";
        EXPECT_EQ(job_sum(p, "demoted", p.rank == 1 ? st.rc_active : 0), 0u);
        ASSERT_TRUE(run.rounds_until("again", 32 * 1024, 0.0167, [&](const llc_stats_t &st) {
            return p.rank != 0 || (st.dc_rdma_sources == 1 && st.dc_rdma_switches >= 2);
        })) << "back to DC RDMA";
        if (p.rank == 0) {
            EXPECT_EQ(st.ring_pool_held, 1u);
            EXPECT_GE(st.ring_leases, 2u);
        }
        ASSERT_TRUE(run.drain());
        run.finish();
    });
}
