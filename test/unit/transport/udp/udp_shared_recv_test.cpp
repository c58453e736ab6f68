// udp_shared_recv_test.cpp - one udp socket per node shared by its processes
// (LLC_UDP_SHARED_RECV=1, udp_node_socket.hpp): datagrams read by a process
// of the node other than their destination are handed over to it, with loss
// and reordering too, and nothing is lost, duplicated or reordered; a
// process that has left is answered for by its node (Gone), so its peers
// learn it at once, as from ICMP with a socket per process.
#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace llctest;

namespace {

JobOptions shared_job(std::vector<int> nodes, const char *shared = "1", unsigned timeout_s = 90)
{
    JobOptions o = job(std::move(nodes), timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_NET", "udp"},
             {"LLC_UDP_RTO_US", "3000"},
             {"LLC_UDP_SHARED_RECV", shared}};
    return o;
}

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

} // namespace

// Rank 0 (node 0) streams to rank 1 (node 1) while rank 1 does not call
// llc_progress for 0.5 s and its node neighbour rank 2 does: rank 2 reads
// rank 0's datagrams from the node's socket and hands them over, and rank 1
// then gets every message once, in order, intact.  With
// LLC_UDP_SHARED_RECV=0 nothing is handed over (each process reads its own
// socket).
class SharedRecvHandover : public ::testing::TestWithParam<const char *> {};

TEST_P(SharedRecvHandover, NeighbourReadsAndHandsOver)
{
    const bool shared = std::string(GetParam()) == "1";
    JobOptions o = shared_job({0, 1, 1}, GetParam());
    LLC_EXPECT_JOB_OK(o, [shared](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        constexpr uint32_t kMessages = 48;
        if (p.rank == 0) {
            while (run.s.sent[1] < kMessages) {
                if (run.s.room())
                    run.s.send(1);
                EXPECT_TRUE(run.progress());
            }
        } else if (p.rank == 1) {
            usleep(500000); // not reading: rank 2 does
        } else {
            double end = now_s() + 0.5;
            while (now_s() < end)
                EXPECT_EQ(llc_progress(run.ctx, nullptr), LLC_OK) << llc_last_error(run.ctx);
        }
        if (p.rank == 1) {
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.c.next[0] >= kMessages; }, 30));
        }
        EXPECT_TRUE(run.drain(30));
        llc_stats_t st = stats_of(run.ctx);
        if (p.rank == 2) {
            if (shared) {
                EXPECT_GT(st.udp_handed_over, 0u) << "rank 2 should have read rank 1's datagrams";
            } else {
                EXPECT_EQ(st.udp_handed_over, 0u);
            }
        }
        if (!shared) {
            EXPECT_EQ(st.udp_handover_drops, 0u);
        }
        // (shared: rank 1's 32 buffers may fill while it sleeps; those
        // datagrams are dropped and resent, and the checks below see them all)
        run.finish();
    });
}

INSTANTIATE_TEST_SUITE_P(SharedRecv, SharedRecvHandover, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                             return std::string(info.param[0] == '1' ? "Shared" : "PerProcess");
                         });

// Two nodes of three processes, every process streams to every process of
// the other node for 1.5 s, with 3 % of the datagrams dropped and 3 %
// delayed behind the next: every message arrives exactly once, in order,
// intact, and the nodes' processes did hand datagrams over.
TEST(SharedRecv, AllPairsWithLossAndReorderingLoseNothing)
{
    JobOptions o = shared_job({0, 0, 0, 1, 1, 1});
    o.env.push_back({"LLC_UDP_DROP_PERMILLE", "30"});
    o.env.push_back({"LLC_UDP_REORDER", "30"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int first_remote = p.rank < 3 ? 3 : 0;
        int next = 0;
        double end = now_s() + 1.5;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (run.s.room())
                run.s.send(first_remote + (next++ % 3));
            EXPECT_TRUE(run.progress());
        }
        EXPECT_TRUE(run.drain());
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_GT(st.udp_retransmits, 0u) << "the loss injection should have cost retransmissions";
        EXPECT_EQ(st.udp_handover_drops, 0u) << "nobody left";
        finalize_ok(run.ctx); // delivers the rest (no test fence before it: a blocked process would not resend)
        uint64_t handed = job_sum(p, "handed", st.udp_handed_over);
        EXPECT_GT(handed, 0u);
        check_counts_after_finalize(p, run.s, run.c);
        if (p.rank == 0)
            std::fprintf(stderr, "shared udp sockets, 6 processes on 2 nodes: %llu datagrams handed over\n",
                         (unsigned long long)handed);
    });
}

// Rank 1 (node 1, which it shares with rank 2) exits without llc_finalize.
// Rank 0's next send to it must fail with LLC_ERR_PEER at once, not after
// LLC_UDP_PEER_TIMEOUT_MS: rank 2 reads the datagram from the node's socket,
// finds rank 1's hand-over socket closed and answers Gone in its place.
TEST(SharedRecv, ProcessThatLeftIsReportedAtOnce)
{
    JobOptions o = shared_job({0, 1, 1}, "1", 30);
    o.env.push_back({"LLC_UDP_PEER_TIMEOUT_MS", "20000"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int got = 0;
        ASSERT_EQ(llc_am_register(ctx, 1, count_message, &got), LLC_OK);
        if (p.rank == 1) {
            greet_then_depart(p, ctx, 0, got);
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize: its sockets close
        }
        if (p.rank == 2) {
            double end = now_s() + 2.5; // reads the node's socket meanwhile
            while (now_s() < end)
                EXPECT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            EXPECT_GT(stats_of(ctx).udp_handover_drops, 0u) << "rank 0's datagram for rank 1 was not refused here";
            finalize_ok(ctx);
            return;
        }
        progress_until(ctx, [&] { return got == 1; });
        EXPECT_EQ(llc_am_send(ctx, 1, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK); // rank 1 waits for it
        usleep(500000); // rank 1 has gone by now
        SendToGonePeer r = send_big_until_error(ctx, 1);
        EXPECT_EQ(r.err, LLC_ERR_PEER);
        EXPECT_LT(r.took, 1.0);
        EXPECT_TRUE(contains(llc_last_error(ctx), "has left")) << llc_last_error(ctx);
        EXPECT_EQ(r.callbacks, 1);
        EXPECT_EQ(r.status, LLC_ERR_PEER);
        double fin = now_s();
        llc_finalize(ctx); // must not hang
        EXPECT_LT(now_s() - fin, 5.0);
    });
}
