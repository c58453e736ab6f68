// tcp_bidi_test.cpp - LLC_NET=tcp: one connection per pair carries both
// directions (tcp_transport.hpp).  A ping-pong uses one connection (the
// acceptor adopts it for its answers); both sides sending at once (the
// connects cross) or in turns, small and large messages, lose and reorder
// nothing; a peer dying is reported on an adopted connection and on the
// connector's side of one; under a cap that can evict (LLC_MAX_CONTEXTS <
// size - 1) nothing is adopted and eviction works as before; with
// LLC_TCP_BIDI=0 (on by default) each direction has its own connection.
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

size_t small_of(uint32_t, uint32_t) { return 8; }

constexpr MessageShape kShape{kHandler, mostly_small_size, pair_seed};
constexpr MessageShape kSmall{kHandler, small_of, pair_seed};

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

JobOptions bidi_job(int processes, unsigned timeout_s = 120, const char *peer_timeout_ms = "10000")
{
    std::vector<int> nodes;
    for (int i = 0; i < processes; i++)
        nodes.push_back(i); // one process per node: every pair is on tcp
    JobOptions o = job(nodes, timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_NET", "tcp"}, {"LLC_TCP_BIDI", "1"},
             {"LLC_TCP_PEER_TIMEOUT_MS", peer_timeout_ms}};
    return o;
}

// Rank 0 sends message k, rank 1 answers it once it is in, for k from
// `first`, `rounds` times (message numbers count per ordered pair from 0).
void ping_pong(CheckedRun &run, int rank, uint32_t first, uint32_t rounds)
{
    for (uint32_t k = first; k < first + rounds; k++) {
        if (rank == 0) {
            ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[1] == k + 1; }, 60));
        } else {
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == k + 1; }, 60));
            ASSERT_GE(send_one(run.ctx, run.out, 1, 0), 0);
        }
    }
}

// Rank 0 pings, rank 1 answers each ping when it has it: one connection
// (rank 0's), which rank 1 adopts for its answers.
TEST(TcpBidi, PingPongUsesOneConnection)
{
    LLC_EXPECT_JOB_OK(bidi_job(2), [](TestProcess &p) {
        CheckedRun run(p, kSmall);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int peer = 1 - p.rank;
        constexpr uint32_t kRounds = 200;
        ASSERT_NO_FATAL_FAILURE(ping_pong(run, p.rank, 0, kRounds));
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        EXPECT_EQ(run.in.next_seq[size_t(peer)], kRounds);
        llc_stats_t st = stats_of(run.ctx);
        if (p.rank == 0) {
            EXPECT_EQ(st.tcp_conns, 1u);   // it connected
            EXPECT_EQ(st.tcp_adopted, 0u);
        } else {
            EXPECT_EQ(st.tcp_conns, 0u);   // it never connected:
            EXPECT_EQ(st.tcp_adopted, 1u); // it answered on rank 0's connection
        }
        // The memory walk: one connection's two halves on each side.
        int count = llc_mem_report(run.ctx, nullptr, 0);
        ASSERT_GT(count, 0);
        std::vector<llc_mem_entry_t> entries(static_cast<size_t>(count));
        ASSERT_EQ(llc_mem_report(run.ctx, entries.data(), count), count);
        for (const llc_mem_entry_t &e : entries) {
            if (std::string(e.name) == "tcp_conn_state") {
                EXPECT_EQ(e.items, 2u);
            }
            if (std::string(e.name) == "tcp_rank_table") {
                EXPECT_EQ(e.items, 1u);
            }
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

// LLC_TCP_BIDI=0: each direction has its own connection, nothing is adopted.
TEST(TcpBidi, OffEachDirectionHasItsOwnConnection)
{
    JobOptions o = bidi_job(2);
    for (auto &kv : o.env)
        if (kv.first == "LLC_TCP_BIDI")
            kv.second = "0";
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        CheckedRun run(p, kSmall);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        constexpr uint32_t kRounds = 200;
        ASSERT_NO_FATAL_FAILURE(ping_pong(run, p.rank, 0, kRounds));
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        EXPECT_EQ(run.in.next_seq[size_t(1 - p.rank)], kRounds);
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_EQ(st.tcp_conns, 1u); // each connected to the other
        EXPECT_EQ(st.tcp_adopted, 0u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

// Held acknowledgements (tcp_transport.hpp): rank 1 reads rank 0's message
// and then computes for 4 peer timeouts without calling into libllc.  Its
// acknowledgement, held for its next record on the connection, is written
// by the flusher thread, so rank 0, waiting for the answer all that time,
// does not report rank 1 as stopped.
TEST(TcpBidi, HeldAcknowledgementIsWrittenWhileTheReceiverComputes)
{
    constexpr unsigned kTimeoutMs = 300;
    LLC_EXPECT_JOB_OK(bidi_job(2, 120, "300"), [](TestProcess &p) {
        CheckedRun run(p, kSmall);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        ASSERT_NO_FATAL_FAILURE(ping_pong(run, p.rank, 0, 20)); // one connection, used both ways
        if (p.rank == 0) {
            ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[1] == 21; }, 60));
        } else {
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == 21; }, 60));
            usleep(4 * kTimeoutMs * 1000); // "compute"
            ASSERT_GE(send_one(run.ctx, run.out, 1, 0), 0);
        }
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(run.out.callback_errors, 0u);
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_EQ(st.tcp_conns + st.tcp_adopted, 1u); // still the one connection
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

// Both send first, at once (the connects cross, as in MPI_Init's first
// exchange), then ping-pong: rank 1, the higher, moves its sends onto rank
// 0's connection once its own is idle, and closes its own.  Every message
// arrives once, in order; at the end each side has one connection to the
// other, rank 0's.
TEST(TcpBidi, CrossedConnectsEndOnTheLowerRanksConnection)
{
    LLC_EXPECT_JOB_OK(bidi_job(2), [](TestProcess &p) {
        CheckedRun run(p, kSmall);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int peer = 1 - p.rank;
        ASSERT_GE(send_one(run.ctx, run.out, p.rank, peer), 0);
        ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[size_t(peer)] == 1; }, 60));
        ASSERT_EQ(TestProcess::fence(&p), 0); // both have connected by now: two connections
        llc_stats_t before = stats_of(run.ctx);
        EXPECT_EQ(before.tcp_conns, 1u);
        EXPECT_EQ(before.tcp_adopted, 0u);
        // Rank 1 moves within a few of its lazy acknowledgement reads (one a
        // millisecond at most); 3000 round trips are far more than that.
        constexpr uint32_t kRounds = 3000;
        ASSERT_NO_FATAL_FAILURE(ping_pong(run, p.rank, 1, kRounds));
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(run.out.callback_errors, 0u);
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        EXPECT_EQ(run.in.next_seq[size_t(peer)], kRounds + 1);
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_EQ(st.tcp_evictions, 0u); // the move is not an eviction for the cap
        if (p.rank == 0) {
            EXPECT_EQ(st.tcp_conns, 1u);
            EXPECT_EQ(st.tcp_adopted, 0u);
            EXPECT_EQ(st.tcp_closes_received, 1u); // rank 1's connection, closed by it
        } else {
            EXPECT_EQ(st.tcp_conns, 0u);   // its own is closed
            EXPECT_EQ(st.tcp_adopted, 1u); // it sends on rank 0's
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

struct BidiCase {
    const char *name;
    int processes;
    const char *peer_timeout_ms; // < 1000: StreamAcks written at once (not corked)
};

class TcpBidiTraffic : public ::testing::TestWithParam<BidiCase> {};

// Every rank sends to every other at once from the start (the connects
// cross: two connections per pair, each direction on its own), then in
// turns (rank r answers what it got; the lower rank starts), then at once
// again over the connections in place; small and large messages.  Every
// message arrives once, in order, with its bytes, and no process has more
// than one connection per peer it sends to.
TEST_P(TcpBidiTraffic, SimultaneousAndAlternatingKeepOrder)
{
    const BidiCase &c = GetParam();
    LLC_EXPECT_JOB_OK(bidi_job(c.processes, 180, c.peer_timeout_ms), [&](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        const int n = p.size;
        ASSERT_EQ(TestProcess::fence(&p), 0);
        std::vector<uint32_t> due(size_t(n), 0);
        auto all_at_once = [&](int per_peer) {
            for (int k = 0; k < per_peer; k++)
                for (int d = 0; d < n; d++)
                    if (d != p.rank) {
                        int rc = send_one(run.ctx, run.out, p.rank, d);
                        ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(run.ctx);
                    }
            for (int s = 0; s < n; s++)
                if (s != p.rank)
                    due[size_t(s)] += uint32_t(per_peer);
            ASSERT_TRUE(progress_until(
                run.ctx,
                [&] {
                    for (int s = 0; s < n; s++)
                        if (run.in.next_seq[size_t(s)] < due[size_t(s)])
                            return false;
                    return true;
                },
                90))
                << run.in.first_problem;
        };
        all_at_once(20);
        // In turns: with each peer, the lower rank sends, the higher answers.
        for (int k = 0; k < 30; k++)
            for (int d = 0; d < n; d++) {
                if (d == p.rank)
                    continue;
                if (p.rank < d) {
                    ASSERT_GE(send_one(run.ctx, run.out, p.rank, d), 0);
                    due[size_t(d)]++;
                    ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[size_t(d)] >= due[size_t(d)]; }, 60))
                        << run.in.first_problem;
                } else {
                    due[size_t(d)]++;
                    ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[size_t(d)] >= due[size_t(d)]; }, 60))
                        << run.in.first_problem;
                    ASSERT_GE(send_one(run.ctx, run.out, p.rank, d), 0);
                }
            }
        all_at_once(20);
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 60));
        EXPECT_EQ(run.out.callback_errors, 0u);
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_stats_t st = stats_of(run.ctx);
        // One connection per peer sent to: our own or an adopted one.
        EXPECT_EQ(st.tcp_conns + st.tcp_adopted, uint64_t(n - 1));
        EXPECT_EQ(st.tcp_evictions, 0u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpBidiTraffic,
                         ::testing::Values(BidiCase{"TwoProcesses", 2, "10000"},
                                           BidiCase{"ThreeProcessesPromptAcks", 3, "999"}),
                         [](const ::testing::TestParamInfo<BidiCase> &info) { return std::string(info.param.name); });

// Both send in turns only: rank 0 first, so rank 1 adopts; then many
// messages both ways at once on that one connection (its records and
// acknowledgements interleave, large ones included).
TEST(TcpBidi, OneConnectionCarriesBothWaysAtOnce)
{
    LLC_EXPECT_JOB_OK(bidi_job(2, 180, "999"), [](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int peer = 1 - p.rank;
        if (p.rank == 0) {
            ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[1] >= 1; }, 60));
        } else {
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == 1; }, 60));
            ASSERT_GE(send_one(run.ctx, run.out, 1, 0), 0);
        }
        constexpr uint32_t kMany = 300;
        for (uint32_t k = 0; k < kMany; k++) {
            ASSERT_GE(send_one(run.ctx, run.out, p.rank, peer), 0) << llc_last_error(run.ctx);
            if (k % 16 == 0)
                llc_progress(run.ctx, nullptr);
        }
        ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[size_t(peer)] == kMany + 1; }, 90))
            << run.in.first_problem;
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 60));
        EXPECT_EQ(run.out.callback_errors, 0u);
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_EQ(st.tcp_conns, p.rank == 0 ? 1u : 0u);
        EXPECT_EQ(st.tcp_adopted, p.rank == 0 ? 0u : 1u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

// A peer that dies is reported on a connection used both ways: `dies` is
// the connector (rank 0: the adopter, rank 1, sees it) or the adopter
// (rank 1: the connector, rank 0, sees it).
class TcpBidiDeath : public ::testing::TestWithParam<int> {};

TEST_P(TcpBidiDeath, PeerDeathIsReported)
{
    const int dies = GetParam();
    LLC_EXPECT_JOB_OK(bidi_job(2, 120), [dies](TestProcess &p) {
        CheckedRun run(p, kSmall);
        ASSERT_TRUE(run.started());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        for (uint32_t k = 0; k < 3; k++) {
            if (p.rank == 0) {
                ASSERT_GE(send_one(run.ctx, run.out, 0, 1), 0);
                ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[1] == k + 1; }, 60));
            } else {
                ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] == k + 1; }, 60));
                ASSERT_GE(send_one(run.ctx, run.out, 1, 0), 0);
            }
        }
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 30));
        EXPECT_EQ(stats_of(run.ctx).tcp_adopted, p.rank == 1 ? 1u : 0u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == dies) {
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize: the sockets close
        }
        usleep(300000);
        const int peer = 1 - p.rank;
        int err = send_one(run.ctx, run.out, p.rank, peer);
        double end = now_s() + 20;
        while (err >= LLC_OK && now_s() < end)
            err = llc_progress(run.ctx, nullptr);
        ASSERT_EQ(err, LLC_ERR_PEER) << llc_last_error(run.ctx);
        const std::string reason = llc_last_error(run.ctx);
        EXPECT_NE(reason.find("rank " + std::to_string(peer)), std::string::npos) << reason;
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_finalize(run.ctx); // reports the failure again; must not hang
    });
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpBidiDeath, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int> &info) {
                             return std::string(info.param == 0 ? "ConnectorDies" : "AdopterDies");
                         });

// A cap that can evict (LLC_MAX_CONTEXTS=1 of 3 processes): nothing is
// adopted, each direction has its own connection, idle ones are evicted,
// and traffic both ways keeps its order.
TEST(TcpBidi, NoAdoptionUnderACapThatEvicts)
{
    JobOptions o = bidi_job(3, 180);
    o.env.push_back({"LLC_MAX_CONTEXTS", "1"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        CheckedRun run(p, kShape);
        ASSERT_TRUE(run.started());
        const int n = p.size;
        ASSERT_EQ(TestProcess::fence(&p), 0);
        std::vector<uint32_t> due(size_t(n), 0);
        // Rotating partners, both directions of each pair in turns and at once.
        for (int round = 0; round < 8; round++) {
            const int offset = 1 + round % (n - 1);
            const int to = (p.rank + offset) % n, from = (p.rank - offset + n) % n;
            for (int k = 0; k < 6; k++)
                ASSERT_GE(send_one(run.ctx, run.out, p.rank, to), 0) << llc_last_error(run.ctx);
            due[size_t(from)] += 6;
            ASSERT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[size_t(from)] == due[size_t(from)]; }, 60))
                << run.in.first_problem;
        }
        EXPECT_TRUE(progress_until(run.ctx, [&] { return run.out.callbacks == run.out.callbacks_owed; }, 60));
        EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
        llc_stats_t st = stats_of(run.ctx);
        EXPECT_EQ(st.tcp_adopted, 0u);
        EXPECT_GE(st.tcp_evictions + st.tcp_cap_overflows, 1u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(run.ctx);
    });
}

} // namespace
