// hybrid_cap_test.cpp - the hybrid's per-peer state (Context::routes_ on the
// sender side, Context::sources_ on the receiver side) under a small
// LLC_MAX_CONTEXTS: with rotating peers the tables stay within the cap
// (entries settled on udp, quiet and not busy are evicted to make room);
// entries on tcp or switching are never dropped (the cap overflows, counted,
// and is trimmed back once they may go); no message is lost or reordered
// and the RC slots taken are all given back.
#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace llctest;

namespace {

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

JobOptions hybrid_cap_job(int processes, const char *cap, const char *driver, const char *period_ms,
                          const char *promote_msgs)
{
    std::vector<int> nodes;
    for (int i = 0; i < processes; i++)
        nodes.push_back(i); // one process per node: every pair is remote
    JobOptions o = job(nodes, 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", driver},
             {"LLC_MAX_CONTEXTS", cap},
             {"LLC_UDP_EVICT_IDLE_MS", "0"},
             {"LLC_HYBRID_PERIOD_MS", period_ms},
             {"LLC_HYBRID_PROMOTE_MSGS", promote_msgs},
             {"LLC_MAX_RC_PER_NODE", "1"},
             {"LLC_UDP_RTO_US", "3000"},
             {"LLC_UDP_DROP_PERMILLE", "20"}};
    return o;
}

void print_cap_stats(const TestProcess &p, const llc_stats_t &st, uint64_t most_routes, uint64_t most_sources)
{
    if (!getenv("LLC_TEST_VERBOSE"))
        return;
    std::fprintf(stderr,
                 "rank %d: routes %llu (most %llu) sources %llu (most %llu) evictions %llu overflows %llu "
                 "promotions %llu demotions %llu requests sent %llu\n",
                 p.rank, (unsigned long long)st.hybrid_routes, (unsigned long long)most_routes,
                 (unsigned long long)st.hybrid_sources, (unsigned long long)most_sources,
                 (unsigned long long)st.hybrid_evictions, (unsigned long long)st.hybrid_cap_overflows,
                 (unsigned long long)st.rc_promotions, (unsigned long long)st.rc_demotions,
                 (unsigned long long)st.rc_requests_sent);
}

// llc_mem_report's hybrid_routes items: the routes, the sources and the node's RC slot page.
uint64_t hybrid_items(llc_context_t *ctx) { return mem_items(ctx, "hybrid_routes"); }

} // namespace

// Round r: every rank sends 8 messages to rank + 1 + r mod (n-1) and waits
// for the 8 of rank - 1 - r mod (n-1): each process sends to and hears from
// all 6 others in turn, 3 times over, faster than their history decays
// (200 ms periods).  Nobody is ever promoted, so every route and source may
// go: both tables stay within the cap of 2 at every round, without a single
// overflow, and make room by evicting.
class HybridTableCap : public ::testing::TestWithParam<const char *> {};

TEST_P(HybridTableCap, RotatingPeersStayWithinTheCap)
{
    const bool receiver = std::string(GetParam()) == "receiver";
    constexpr uint64_t cap = 2;
    JobOptions o = hybrid_cap_job(7, "2", GetParam(), "200", "1000000");
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int n = p.size;
        std::vector<uint32_t> due(size_t(n), 0);
        uint64_t most_routes = 0, most_sources = 0, most_items = 0;
        for (int r = 0; r < 3 * (n - 1) && !::testing::Test::HasFailure(); r++) {
            const int offset = 1 + r % (n - 1);
            const int dst = (p.rank + offset) % n, src = (p.rank - offset + n) % n;
            for (int k = 0; k < 8; k++)
                run.s.send(dst);
            due[size_t(src)] += 8;
            auto got_round = [&] {
                run.s.reap();
                return run.c.next[size_t(src)] >= due[size_t(src)];
            };
            ASSERT_TRUE(progress_until(run.ctx, got_round, 60))
                << "round " << r << ": " << run.c.next[size_t(src)] << " of " << due[size_t(src)] << " from rank "
                << src;
            llc_stats_t st = stats_of(run.ctx);
            most_routes = std::max(most_routes, st.hybrid_routes);
            most_sources = std::max(most_sources, st.hybrid_sources);
            EXPECT_LE(st.hybrid_routes, cap) << "round " << r;
            EXPECT_LE(st.hybrid_sources, cap) << "round " << r;
            // llc_mem_report's hybrid_routes items: the routes, the sources and the node's RC slot page
            most_items = std::max(most_items, hybrid_items(run.ctx));
        }
        EXPECT_EQ(run.c.bad, 0u);
        ASSERT_TRUE(run.drain());
        llc_stats_t st = stats_of(run.ctx);
        print_cap_stats(p, st, most_routes, most_sources);
        EXPECT_EQ(st.hybrid_cap_overflows, 0u) << "nothing was on tcp, switching or busy";
        EXPECT_GT(st.hybrid_evictions, 0u) << "6 peers rotating through 2 entries";
        EXPECT_EQ(most_routes, cap) << "sends to 6 destinations in turn fill the table";
        EXPECT_LE(most_items, 2 * cap + 1);
        if (receiver) {
            EXPECT_EQ(most_sources, cap);
        } else {
            EXPECT_EQ(most_sources, 0u) << "the sender driver keeps no receive history";
        }
        EXPECT_EQ(st.rc_promotions, 0u);
        run.finish();
    });
}

INSTANTIATE_TEST_SUITE_P(Hybrid, HybridTableCap, ::testing::Values("receiver", "sender"),
                         [](const ::testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

// Cap 2 with 3 remote peers each, and switches: every rank streams to every
// other, its favourite destination rotating every 60 ms, with 10 ms periods
// and one RC slot per node, under 2 % datagram loss.  Routes and sources
// that are on tcp, switching, asked to switch or busy are kept whatever the
// cap (overflows, counted); the others make room.  Every message arrives
// once and in order; once the traffic stops, every tcp peer is demoted, the
// tables come back under the cap, and the RC slots in use are exactly those
// of the peers still on tcp (none): no slot leaked.
TEST(HybridTableCapSwitching, TcpAndSwitchingPeersOverflowTheCapAndComeBackUnderIt)
{
    constexpr uint64_t cap = 2;
    JobOptions o = hybrid_cap_job(4, "2", "receiver", "10", "20");
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        llc_stats_t st{};
        uint64_t most_routes = 0, most_sources = 0;
        double start = now_s(), end = start + 2.5;
        unsigned k = 0;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (run.s.room())
                run.s.send(rotating_destination(p.rank, p.size, now_s() - start, 0.06, k++, 8));
            ASSERT_TRUE(run.progress());
            llc_get_stats(run.ctx, &st);
            most_routes = std::max(most_routes, st.hybrid_routes);
            most_sources = std::max(most_sources, st.hybrid_sources);
            // above the cap only by entries that could not go, each counted
            ASSERT_LE(st.hybrid_routes + st.hybrid_sources, 2 * cap + st.hybrid_cap_overflows);
        }
        ASSERT_TRUE(run.drain());
        // Quiet: receivers ask their tcp sources to leave, quiet udp entries
        // go.  (A sender promoted just before the traffic stopped, whose
        // receiver saw nothing on tcp, stays there: the receiver driver does
        // not demote what it does not see; hence no failure on a timeout.)
        auto settled = [&] {
            llc_stats_t q = stats_of(run.ctx);
            return q.hybrid_routes <= cap && q.hybrid_sources <= cap && q.rc_active == 0 && q.rc_sources == 0 &&
                   q.rc_promotions == q.rc_demotions; // no demotion in flight either
        };
        for (double until = now_s() + 5; !settled() && now_s() < until;)
            ASSERT_EQ(llc_progress(run.ctx, nullptr), LLC_OK) << llc_last_error(run.ctx);
        st = stats_of(run.ctx);
        EXPECT_LE(st.hybrid_routes, std::max(cap, st.rc_active)) << "rank " << p.rank;
        EXPECT_LE(st.hybrid_sources, std::max(cap, st.rc_sources)) << "rank " << p.rank;
        st = stats_of(run.ctx);
        print_cap_stats(p, st, most_routes, most_sources);
        EXPECT_EQ(run.c.bad, 0u);
        EXPECT_GE(st.rc_promotions, 1u) << "rank " << p.rank;
        // (a switch may still be in flight after a timeout above: started ones count in rc_active)
        EXPECT_LE(st.rc_promotions, st.rc_demotions + st.rc_active + 1);
        // one process per node: the node's counts are this process's
        EXPECT_EQ(st.rc_out_slots_in_use, st.rc_active) << "outgoing RC slots leaked";
        EXPECT_EQ(st.rc_in_slots_in_use, st.rc_sources) << "incoming RC slots leaked";
        EXPECT_GT(st.hybrid_evictions, 0u);
        EXPECT_GE(most_routes, cap);
        run.finish();
    });
}
