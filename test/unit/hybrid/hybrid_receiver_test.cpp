// hybrid_receiver_test.cpp - the receiver-driven hybrid's bookkeeping of
// where its sources send: the node's ring pool as part of its cap (when
// rings, not RC slots, are the limit, a much busier source still displaces
// a quieter one: doc/libllc-hybrid.md, "Ring pool", *Rings in the policy's cap*),
// and a source that goes quiet right after accepting a move to tcp.
#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

using namespace llctest;

// Node 0 holds ranks 0 and 1, node 1 ranks 2 and 3.  Rank 0's node has two
// RC slots but one ring.  Rank 2 (A) streams to rank 0 at about one
// message per millisecond from the start and is moved to tcp, taking the
// ring.  After 1.5 s rank 3 (B) streams as fast as it can: B saves far more
// than twice what A does, so A is asked back to udp, and once A's marker
// has returned the ring B is moved to tcp.  Without the rings in the cap
// the policy saw a free slot, promoted B without displacing A, and every
// period the lease failed: B never moved.  Every message arrives once, in
// order, intact.
TEST(RingCap, ABusierSourceDisplacesAQuieterOneWhenRingsAreTheLimit)
{
    JobOptions o = hybrid_receiver_job({0, 0, 1, 1}, 120, "50", "20",
                                       {{"LLC_MAX_RC_PER_NODE", "2"}, {"LLC_RING_POOL", "1"}, {"LLC_NODE_SHARED", "1"}});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const double start = now_s();
        const double b_starts = start + 1.5, end = start + 6.0;
        double next_a = start;
        llc_stats_t st{};
        bool b_on_tcp = false;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            const double t = now_s();
            if (p.rank == 2 && t >= next_a && run.s.room()) {
                run.s.send(0);
                next_a = std::max(next_a + 0.001, t - 0.01);
            }
            if (p.rank == 3 && t >= b_starts && run.s.room())
                run.s.send(0);
            ASSERT_TRUE(run.progress());
            if (p.rank == 3 && !b_on_tcp) {
                llc_get_stats(run.ctx, &st);
                b_on_tcp = st.rc_active > 0;
            }
        }
        ASSERT_TRUE(run.drain(60));
        llc_get_stats(run.ctx, &st);
        if (p.rank == 2) {
            EXPECT_GE(st.rc_promotions, 1u) << "A was moved to tcp while it was the only busy source";
            EXPECT_GE(st.rc_demotions, 1u) << "A was asked back to udp to make room for B";
        } else if (p.rank == 3) {
            EXPECT_TRUE(b_on_tcp) << "B never moved to tcp: the ring A held was never freed for it";
        } else if (p.rank == 0) {
            EXPECT_GE(st.ring_pool_empty, 1u) << "B's promotion waited at least one period for A's ring";
            EXPECT_LE(st.ring_pool_high_water, 1u);
        }
        if (p.rank == 0 || p.rank >= 2)
            std::printf("rank %d: promotions %llu demotions %llu ring_pool_empty %llu leases %llu\n", p.rank,
                        (unsigned long long)st.rc_promotions, (unsigned long long)st.rc_demotions,
                        (unsigned long long)st.ring_pool_empty, (unsigned long long)st.ring_leases);
        // Rank 0 drains at once (it sends nothing) while A and B may still
        // wait for its acknowledgement of their last messages: it must go
        // on progressing at the barrier.
        ASSERT_TRUE(run.fence());
        run.finish();
    });
}

// Rank 1 (node 1) sends one burst to rank 0 and then only progresses.  The
// receiver asks it onto tcp; the source accepts and switches, but sends
// nothing more, so no tcp message tells the receiver it moved.  The
// accepted answer does: the receiver counts it on tcp, and once its load
// has decayed asks it back to udp, so the source's RC slot and connection
// are not held by a quiet peer.  (Before, the receiver took the silence
// for a refusal after 3 periods and never asked it back: the source stayed
// on tcp for good.  LLC_HYBRID_PROMOTE_MSGS=200 makes the burst of 300
// worth a promotion, but its decayed load is below the promotion level by
// the time that patience ends, so the receiver does not ask it onto tcp
// again, which would have hidden the bug.)
TEST(HybridReceiverDriven, AQuietSourceThatAcceptedTcpIsAskedBack)
{
    LLC_EXPECT_JOB_OK(hybrid_receiver_job({0, 1}, 90, "50", "200"), [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        llc_stats_t st{};
        if (p.rank == 1) {
            for (int i = 0; i < 300; i++) {
                while (!run.s.room())
                    ASSERT_TRUE(run.progress());
                run.s.send(0);
            }
            ASSERT_TRUE(run.drain(30));
        } else {
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.c.next[1] == 300; }, 30));
        }
        // On a loaded machine the burst can outlast a period, and the
        // promotion then carries its tail over tcp: count from here.
        llc_stats_t after_burst{};
        llc_get_stats(run.ctx, &after_burst);
        // Both only progress for 3 s (60 periods): the source is moved to
        // tcp, and asked back once its load has decayed (7 periods and the
        // hysteresis); the receiver must progress for the source's Switch
        // marker to be acknowledged.
        const double end = now_s() + 3.0;
        progress_until(run.ctx, [&] { return now_s() >= end; }, 10);
        llc_get_stats(run.ctx, &st);
        if (p.rank == 1) {
            EXPECT_GE(st.rc_promotions, 1u) << "the burst of 300 messages never got this source asked onto tcp";
            EXPECT_GE(st.rc_demotions, 1u) << "the source stayed on tcp: its receiver lost track of it";
            EXPECT_EQ(st.rc_active, 0u);
            EXPECT_EQ(st.tcp_msgs, after_burst.tcp_msgs) << "nothing was sent after the burst";
        } else {
            EXPECT_GE(st.rc_requests_sent, 2u) << "the receiver never asked the source back to udp";
            EXPECT_EQ(st.rc_sources, 0u);
        }
        std::printf("quiet source: rank %d promotions %llu demotions %llu asks sent %llu received %llu refused %llu udp %llu tcp %llu\n", p.rank, (unsigned long long)st.rc_promotions, (unsigned long long)st.rc_demotions, (unsigned long long)st.rc_requests_sent, (unsigned long long)st.rc_requests_received, (unsigned long long)st.rc_requests_refused, (unsigned long long)st.udp_msgs, (unsigned long long)st.tcp_msgs);
        ASSERT_TRUE(run.fence());
        run.finish();
    });
}
