// tcp_evict_test.cpp - the tcp transport under a small connection cap
// (LLC_MAX_CONTEXTS): idle outgoing connections are closed with a Close
// record and opened again on the next send.  Every message must arrive
// once, in order, with its bytes; a connection with unacknowledged data is
// never evicted (the cap overflows instead, counted); a peer that dies
// after its connection was evicted is still reported as failed.
#include "common/checked_messages.hpp"
#include "common/test_util.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kHandler = 4;


constexpr MessageShape kShape{kHandler, mostly_small_size, pair_seed};

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

JobOptions evict_job(int processes, const char *cap, unsigned timeout_s = 180)
{
    std::vector<int> nodes;
    for (int i = 0; i < processes; i++)
        nodes.push_back(i); // one process per node: every pair is on tcp
    JobOptions o = job(nodes, timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_NET", "tcp"}, {"LLC_MAX_CONTEXTS", cap}};
    return o;
}

// Rank 0 (cap 1) talks to `keep` (which answers every message) until its
// only open connection is the one to `keep` (the others were evicted): then
// an exchange neither evicts nor overflows.  Returns whether it got there.
bool exchange_until_evicted(CheckedRun &run, int keep)
{
    for (int attempt = 0; attempt < 200; attempt++) {
        if (!progress_until(run.ctx, [&] { return stats_of(run.ctx).tcp_conns <= 1; }, 60))
            return false;
        llc_stats_t before = stats_of(run.ctx);
        if (send_one(run.ctx, run.out, 0, keep) < 0)
            return false;
        const uint32_t want = run.out.next_seq[size_t(keep)];
        if (!progress_until(run.ctx, [&] { return run.in.next_seq[size_t(keep)] == want; }, 60))
            return false;
        llc_stats_t after = stats_of(run.ctx);
        if (after.tcp_evictions + after.tcp_cap_overflows == before.tcp_evictions + before.tcp_cap_overflows)
            return true;
    }
    return false;
}

constexpr uint32_t kDone = 1; // flag: rank 0's last message to rank 2 (answer_until_done)

// Rank 2 of the limit tests: answer every message from rank 0 until it
// says it is done, wait for the answers' completions, meet rank 0's fence,
// check what came and finalize.  (A fatal failure returns before finalize,
// as the test body's own return would.)
void answer_until_done(TestProcess &p, CheckedRun &run)
{
    uint32_t answered = 0;
    while (run.in.last_flag[0] != kDone) {
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] > answered; }, 60));
        if (::testing::Test::HasFailure())
            break;
        answered = run.in.next_seq[0];
        ASSERT_GE(send_one(run.ctx, run.out, 2, 0), 0);
    }
    EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
    ASSERT_EQ(TestProcess::fence(&p), 0);
    EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
    finalize_ok(run.ctx);
}

struct EvictCase {
    const char *name;
    const char *cap;
    int processes;
    const char *peer_timeout_ms; // >= 1000: StreamAcks are corked (arrive up to 200 ms late)
};

class TcpEvict : public ::testing::TestWithParam<EvictCase> {};

// Rounds of two kinds, alternating: all-to-all (every rank sends kPerRound
// messages to each other rank: many more destinations than the cap at
// once, so connections overflow it and are trimmed once acknowledged) and
// rotating (one destination per round: the previous connections are idle
// by then and are evicted when the new one opens).  Each rank checks that it
// got every message of the round before going on, then that its open
// connections come back under the cap once everything it sent is read.
TEST_P(TcpEvict, AllToAllRoundsKeepOrderAndStayUnderTheCap)
{
    const EvictCase &c = GetParam();
    constexpr int kRounds = 12, kPerRound = 5;
    const size_t cap = size_t(std::stoul(c.cap));
    JobOptions o = evict_job(c.processes, c.cap);
    o.env.push_back({"LLC_TCP_PEER_TIMEOUT_MS", c.peer_timeout_ms});
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        const int n = p.size;
        ASSERT_EQ(TestProcess::fence(&p), 0);

        std::vector<uint32_t> due(size_t(n), 0);
        unsigned long long expected = 0;
        uint64_t most_open = 0;
        for (int r = 0; r < kRounds; r++) {
            std::vector<int> dsts, srcs;
            if (r % 2 == 0) {
                for (int k = 1; k < n; k++) {
                    dsts.push_back((p.rank + k) % n);
                    srcs.push_back((p.rank - k + n) % n);
                }
            } else {
                const int offset = 1 + (r / 2) % (n - 1);
                dsts.push_back((p.rank + offset) % n);
                srcs.push_back((p.rank - offset + n) % n);
            }
            for (int k = 0; k < kPerRound; k++)
                for (int d : dsts) {
                    int rc = send_one(run.ctx, run.out, p.rank, d);
                    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS)
                        << "round " << r << ": " << llc_last_error(run.ctx);
                    llc_stats_t st = stats_of(run.ctx);
                    most_open = std::max(most_open, st.tcp_conns);
                    // Above the cap only by connections opened when none was idle, each counted.
                    ASSERT_LE(st.tcp_conns, cap + st.tcp_cap_overflows) << "round " << r;
                }
            for (int s : srcs) {
                due[size_t(s)] += kPerRound;
                expected += kPerRound;
            }
            ASSERT_TRUE(progress_until(
                run.ctx,
                [&] {
                    for (int s : srcs)
                        if (run.in.next_seq[size_t(s)] < due[size_t(s)])
                            return false;
                    return true;
                },
                60))
                << "round " << r << ": " << run.in.first_problem;
            // Everything we sent is read once its receivers progress (they
            // do, waiting for their own messages): then idle connections go.
            ASSERT_TRUE(progress_until(run.ctx, [&] { return stats_of(run.ctx).tcp_conns <= cap; }, 60))
                << "round " << r << ": " << stats_of(run.ctx).tcp_conns << " open connections with a cap of " << cap;
        }
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        EXPECT_EQ(run.in.received, expected);
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(run.out.callback_errors, 0u);

        llc_stats_t st = stats_of(run.ctx);
        // n - 1 destinations, at most `cap` open at the end of each round.
        EXPECT_GE(st.tcp_evictions, uint64_t(n - 1) - cap);
        // The memory walk follows the evictions: one map entry per open
        // connection, the per-connection objects of the evicted ones gone.
        {
            int count = llc_mem_report(run.ctx, nullptr, 0);
            ASSERT_GT(count, 0);
            std::vector<llc_mem_entry_t> entries(static_cast<size_t>(count));
            ASSERT_EQ(llc_mem_report(run.ctx, entries.data(), count), count);
            st = stats_of(run.ctx);
            for (const llc_mem_entry_t &e : entries)
                if (std::string(e.name) == "tcp_rank_table") {
                    EXPECT_EQ(e.items, st.tcp_conns);
                    EXPECT_LE(e.items, cap);
                }
        }
        EXPECT_GT(most_open, 0u);
        std::fprintf(stderr,
                     "rank %d: cap %zu: evictions %llu overflows %llu closes received %llu most open %llu open now "
                     "%llu\n",
                     p.rank, cap, (unsigned long long)st.tcp_evictions, (unsigned long long)st.tcp_cap_overflows,
                     (unsigned long long)st.tcp_closes_received, (unsigned long long)most_open,
                     (unsigned long long)st.tcp_conns);
        finalize_ok(run.ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpEvict,
                         ::testing::Values(EvictCase{"Cap2Of6", "2", 6, "10000"},
                                           EvictCase{"Cap1Of5PromptAcks", "1", 5, "999"}),
                         [](const ::testing::TestParamInfo<EvictCase> &info) { return std::string(info.param.name); });

// Cap 1.  Rank 1 does not call llc_progress for a while, so rank 0's
// messages to it stay unacknowledged: when rank 0 then talks to rank 2, the
// connection to rank 1 must not be evicted; the cap overflows (counted) and
// is restored once rank 1 has read everything.
TEST(TcpEvictLimits, ConnectionWithUnreadDataIsNotEvicted)
{
    LLC_EXPECT_JOB_OK(evict_job(3, "1", 90), [](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            for (int k = 0; k < 6; k++) // seq 5 is a large one
                ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
            EXPECT_EQ(stats_of(run.ctx).tcp_conns, 1u);
            ASSERT_GE(send_one(run.ctx, run.out, 0, 2), 0); // rank 1 has read nothing yet
            llc_stats_t st = stats_of(run.ctx);
            EXPECT_EQ(st.tcp_evictions, 0u);
            EXPECT_EQ(st.tcp_cap_overflows, 1u);
            EXPECT_EQ(st.tcp_conns, 2u);
            EXPECT_TRUE(
                progress_until(run.ctx, [&] { return run.in.next_seq[1] == 1 && run.in.next_seq[2] == 1; }, 60));
            EXPECT_TRUE(progress_until(run.ctx, [&] { return stats_of(run.ctx).tcp_conns <= 1; }, 30));
            EXPECT_GE(stats_of(run.ctx).tcp_evictions, 1u);
            EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
            // Talk to both again: reconnects, order kept.
            for (int k = 0; k < 4; k++) {
                ASSERT_GE(send_one(run.ctx, run.out, 0, 1 + k % 2), 0);
                EXPECT_TRUE(progress_until(
                    run.ctx, [&] { return run.in.next_seq[size_t(1 + k % 2)] == uint32_t(2 + k / 2); }, 60));
            }
        } else {
            if (p.rank == 1)
                usleep(1500000); // silent: rank 0's data waits in our socket
            const uint32_t first = p.rank == 1 ? 6 : 1;
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == first; }, 60));
            ASSERT_GE(send_one(run.ctx, run.out, p.rank, 0), 0);
            for (uint32_t k = 1; k <= 2; k++) {
                EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == first + k; }, 60));
                ASSERT_GE(send_one(run.ctx, run.out, p.rank, 0), 0);
            }
        }
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        finalize_ok(run.ctx);
    });
}

// Cap 1.  Rank 0 talks to rank 1, then to rank 2 until its connection to
// rank 1 has been evicted (closed cleanly: rank 1 reports nothing).  Rank 1
// then exits without llc_finalize; rank 0's next send to it connects again,
// which fails: LLC_ERR_PEER naming rank 1, in bounded time.
TEST(TcpEvictLimits, PeerDyingAfterEvictionIsReported)
{
    LLC_EXPECT_JOB_OK(evict_job(3, "1", 120), [](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 1) {
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == 3; }, 60));
            EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
            // Our acknowledgements of them are written (corked, the kernel
            // sends them within 200 ms even while we wait in the fence).
            ASSERT_EQ(TestProcess::fence(&p), 0); // rank 0 has evicted us
            // Its Close waits in our socket: a clean end, not a failure.
            EXPECT_TRUE(progress_until(run.ctx, [&] { return stats_of(run.ctx).tcp_closes_received == 1; }, 30));
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize: the listener closes
        }
        if (p.rank == 2) {
            answer_until_done(p, run);
            return;
        }
        for (int k = 0; k < 3; k++)
            ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
        // Exchange with rank 2 until the one open connection is to rank 2.
        ASSERT_TRUE(exchange_until_evicted(run, 2));
        uint32_t replies = run.out.next_seq[2];
        ASSERT_GE(send_one(run.ctx, run.out, 0, 2, kDone), 0);
        replies++;
        ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[2] == replies; }, 60));
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        ASSERT_EQ(TestProcess::fence(&p), 0); // rank 1 exits after this
        usleep(300000);
        int err = send_one(run.ctx, run.out, 0, 1);
        double end = now_s() + 20;
        while (err >= LLC_OK && now_s() < end)
            err = llc_progress(run.ctx, nullptr);
        ASSERT_EQ(err, LLC_ERR_PEER) << llc_last_error(run.ctx);
        const std::string reason = llc_last_error(run.ctx);
        EXPECT_NE(reason.find("rank 1"), std::string::npos) << reason;
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_finalize(run.ctx); // reports the failure again; must not hang
    });
}

// Cap 1.  Rank 0's connection to rank 1 is evicted; then rank 0 enters
// llc_finalize, and a message from rank 1 arriving during it is answered
// from the handler: the answer needs a new connection, which must carry a
// Goodbye too (else rank 1 would wait for it), and both finalize cleanly.
TEST(TcpEvictLimits, HandlerSendDuringFinalizeReconnectsWithGoodbye)
{
    LLC_EXPECT_JOB_OK(evict_job(3, "1", 120), [](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 1) {
            // Our connection to rank 0 is open before it finalizes (so it
            // waits for our Goodbye); rank 0 answers ours with its second.
            ASSERT_GE(send_one(run.ctx, run.out, 1, 0), 0);
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == 2; }, 60));
            ASSERT_EQ(TestProcess::fence(&p), 0); // rank 0 has evicted its connection to us
            EXPECT_TRUE(progress_until(run.ctx, [&] { return stats_of(run.ctx).tcp_closes_received == 1; }, 30));
            usleep(300000); // rank 0 is in llc_finalize by now (if not, the answer comes all the same)
            ASSERT_GE(send_one(run.ctx, run.out, 1, 0, kPing), 0);
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == 3; }, 60)); // the answer
            EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
            finalize_ok(run.ctx);
            return;
        }
        if (p.rank == 2) {
            answer_until_done(p, run);
            return;
        }
        ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
        ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[1] == 1; }, 60));
        ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0); // rank 1 knows we have its message
        ASSERT_TRUE(exchange_until_evicted(run, 2));
        ASSERT_GE(send_one(run.ctx, run.out, 0, 2, kDone), 0);
        const uint32_t replies = run.out.next_seq[2];
        ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[2] == replies; }, 60));
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        ASSERT_EQ(TestProcess::fence(&p), 0);
        run.in.replies = &run.out; // answer rank 1's ping from the handler, inside llc_finalize
        finalize_ok(run.ctx);
        EXPECT_EQ(run.in.next_seq[1], 2u); // its first message and the ping
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
    });
}

} // namespace
