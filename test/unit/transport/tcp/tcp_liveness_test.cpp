// tcp_liveness_test.cpp - LLC_TCP_PEER_TIMEOUT_MS: a tcp peer that is alive
// but stopped (its kernel still acknowledges TCP) is reported with
// LLC_ERR_PEER in bounded time; receivers that are slow, that compute after
// reading, or that reach finalize late are not; finalize works while stream
// acknowledgements flow in all directions (tcp and hybrid).
#include "common/test_util.hpp"
#include "common/traffic.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

using namespace llctest;

namespace {

JobOptions tcp_job(std::vector<int> nodes, const char *peer_timeout_ms, unsigned timeout_s = 60)
{
    JobOptions o = job(std::move(nodes), timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_TCP_PEER_TIMEOUT_MS", peer_timeout_ms}};
    return o;
}

// State letter of /proc/<pid>/stat ('T': stopped), or 0.
char process_state(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line))
        return 0;
    size_t paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

// The largest value of /proc/sys/net/ipv4/<name> (tcp_rmem, tcp_wmem: "min
// default max"), or `fallback` when it cannot be read.
size_t tcp_buffer_max(const char *name, size_t fallback)
{
    std::ifstream f(std::string("/proc/sys/net/ipv4/") + name);
    size_t lo = 0, def = 0, hi = 0;
    return (f >> lo >> def >> hi) ? hi : fallback;
}

// A message that the kernel cannot absorb whole while the receiver is
// stopped: more than twice what its receive buffer and our send buffer may
// grow to (loopback autotuning grows them to 32 MiB + 4 MiB on Debian's
// defaults, so a fixed 4 MiB was sometimes written at once).
size_t more_than_socket_buffers()
{
    size_t sum = tcp_buffer_max("tcp_rmem", 6u << 20) + tcp_buffer_max("tcp_wmem", 4u << 20);
    return std::max<size_t>(size_t(4) << 20, 2 * sum);
}

struct Inbox {
    int n = 0;
    size_t bytes = 0;
    uint64_t word = 0; // first 8 bytes of the last header
    bool bad = false;
};
void on_msg(llc_context_t *, void *arg, int, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    if (hdr_len >= sizeof(uint64_t))
        std::memcpy(&in->word, hdr, sizeof(uint64_t));
    if (len > 0 && !check_pattern(data, len, uint64_t(in->n)))
        in->bad = true;
    in->n++;
    in->bytes += len;
}

// Send message number `index` (payload pattern seeded by it) and wait until
// the library no longer needs the buffer.
void send_checked(llc_context_t *ctx, int dest, int index, size_t len)
{
    std::vector<char> buf(len);
    fill_pattern(buf.data(), len, uint64_t(index));
    llc_iov_t iov{buf.data(), len};
    int done = 0;
    int rc = llc_am_send(ctx, dest, 0, nullptr, 0, &iov, 1,
                         [](void *arg, int status) {
                             EXPECT_EQ(status, LLC_OK);
                             *static_cast<int *>(arg) = 1;
                         },
                         &done);
    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
    if (rc == LLC_INPROGRESS)
        progress_until(ctx, [&] { return done == 1; });
}

} // namespace

// Rank 1 stops itself (SIGSTOP) after connecting; rank 0 then sends it a
// small message (fits in the socket buffers: only the stream
// acknowledgements can tell) or more than the socket buffers hold (size 0
// here: more_than_socket_buffers(); the send stays in progress).  Rank 0 must get
// LLC_ERR_PEER after about LLC_TCP_PEER_TIMEOUT_MS, not hang.  Timeouts of
// 700 ms (acknowledgements sent at once) and 1000 ms (sent with MSG_MORE).
struct StoppedCase {
    size_t size;
    unsigned timeout_ms;
};
class TcpStoppedPeer : public ::testing::TestWithParam<StoppedCase> {};

TEST_P(TcpStoppedPeer, IsReportedAfterTheTimeout)
{
    const size_t size = GetParam().size ? GetParam().size : more_than_socket_buffers();
    const unsigned timeout_ms = GetParam().timeout_ms;
    JobOptions o = tcp_job({0, 1}, std::to_string(timeout_ms).c_str(), 40);
    o.env.push_back({"LLC_FINALIZE_TIMEOUT_MS", "3000"});
    LLC_EXPECT_JOB_OK(o, [size, timeout_ms](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_msg, &in), LLC_OK);
        if (p.rank == 1) {
            uint64_t pid = uint64_t(getpid());
            ASSERT_EQ(llc_am_send(ctx, 0, 0, &pid, sizeof(pid), nullptr, 0, nullptr, nullptr), LLC_OK);
            progress_until(ctx, [&] { return in.n == 1; }); // rank 0 is connected to us
            // The answer carries the acknowledgement of rank 0's message
            // (held acknowledgements ride on the next record out), so rank 0
            // has nothing unacknowledged when it starts the clock below; a
            // stop before the held acknowledgement is written would make
            // rank 0's timeout run from that earlier message.
            ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            p.depart();
            raise(SIGSTOP); // rank 0 continues us when it is done
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        progress_until(ctx, [&] { return in.n == 1; });
        pid_t peer = pid_t(in.word);
        struct Continue { // whatever happens below, rank 1 is not left stopped
            pid_t pid;
            ~Continue() { kill(pid, SIGCONT); }
        } cont{peer};
        ASSERT_EQ(llc_am_send(ctx, 1, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        progress_until(ctx, [&] { return in.n == 2; }); // rank 1's answer: our message is acknowledged
        double wait_end = now_s() + 10;
        while (process_state(peer) != 'T' && now_s() < wait_end) {
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            usleep(1000);
        }
        ASSERT_EQ(process_state(peer), 'T') << "rank 1 did not stop";
        // The acknowledgement of the message above is in; wait for it to be read.
        double settle = now_s() + 0.2;
        while (now_s() < settle)
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);

        static int cb_calls = 0, cb_status = 0;
        std::vector<char> buf(size, 's');
        llc_iov_t iov{buf.data(), buf.size()};
        double start = now_s();
        int rc = llc_am_send(ctx, 1, 0, nullptr, 0, &iov, 1,
                             [](void *, int status) {
                                 cb_calls++;
                                 cb_status = status;
                             },
                             nullptr);
        EXPECT_EQ(rc, size > (1u << 20) ? LLC_INPROGRESS : LLC_OK);
        int err = LLC_OK;
        while (err == LLC_OK && now_s() - start < 15)
            err = llc_progress(ctx, nullptr);
        double took = now_s() - start;
        std::string msg = llc_last_error(ctx);
        EXPECT_EQ(err, LLC_ERR_PEER) << msg;
        EXPECT_GT(took, 0.7 * timeout_ms / 1000) << msg;
        EXPECT_LT(took, timeout_ms / 1000.0 + 4.0) << msg;
        EXPECT_TRUE(contains(msg.c_str(), "rank 1 (host 127.0.0.1:")) << msg;
        EXPECT_TRUE(contains(msg.c_str(), "LLC_TCP_PEER_TIMEOUT_MS=" + std::to_string(timeout_ms))) << msg;
        EXPECT_TRUE(contains(msg.c_str(), "stopped or died")) << msg;
        fprintf(stderr, "stopped peer (%zu bytes) reported after %.2f s: %s\n", size, took, msg.c_str());
        llc_progress(ctx, nullptr);
        if (rc == LLC_INPROGRESS) {
            EXPECT_EQ(cb_calls, 1);
            EXPECT_EQ(cb_status, LLC_ERR_PEER);
        }
        EXPECT_EQ(llc_am_send(ctx, 1, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_ERR_PEER);
        kill(peer, SIGCONT); // it exits at once (without finalize): nothing is left behind
        double fin = now_s();
        llc_finalize(ctx); // must not hang (it may report the failed peer)
        EXPECT_LT(now_s() - fin, 5.0);
    });
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpStoppedPeer,
                         ::testing::Values(StoppedCase{100, 700}, StoppedCase{0, 700},
                                           StoppedCase{100, 1000}),
                         [](const ::testing::TestParamInfo<StoppedCase> &info) {
                             return std::string(info.param.size ? "SmallMessage" : "BeyondSocketBuffers") + "_" +
                                    std::to_string(info.param.timeout_ms) + "ms";
                         });

// The receivers below are parameterized by LLC_TCP_PEER_TIMEOUT_MS: 400 ms
// (acknowledgements written at once) and 1000 ms (written with MSG_MORE and
// sent by the kernel within 200 ms).
class TcpLiveness : public ::testing::TestWithParam<unsigned> {};

// Runs body(p, ctx, in) on both processes of a TcpLiveness job (with the
// case's LLC_TCP_PEER_TIMEOUT_MS) once llc_init has worked and `in` is
// registered for handler 0.
template <class Body> void run_liveness(unsigned timeout_ms, Body body)
{
    JobOptions o = tcp_job({0, 1}, std::to_string(timeout_ms).c_str());
    LLC_EXPECT_JOB_OK(o, [&body](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_msg, &in), LLC_OK);
        body(p, ctx, in);
    });
}

static std::string timeout_name(const ::testing::TestParamInfo<unsigned> &info) { return std::to_string(info.param) + "ms"; }

// Rank 1 calls llc_progress only every timeout/5, for 5 timeouts and more,
// while rank 0 sends it a 64 KiB message every 20 ms: rank 0 has data
// outstanding all the time, but every progress call of rank 1 reads and
// acknowledges, so there is no false alarm; every byte arrives.
TEST_P(TcpLiveness, SlowButProgressingReceiverIsNotReported)
{
    const unsigned timeout_ms = GetParam();
    run_liveness(timeout_ms, [timeout_ms](TestProcess &p, llc_context_t *ctx, Inbox &in) {
        const int kCount = int(timeout_ms * 5 / 20);
        constexpr size_t kSize = 64 * 1024;
        if (p.rank == 0) {
            double start = now_s();
            for (int i = 0; i < kCount && !::testing::Test::HasFailure(); i++) {
                send_checked(ctx, 1, i, kSize);
                double next = now_s() + 0.02;
                while (now_s() < next)
                    ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            }
            progress_until(ctx, [&] { return in.n == 1; }); // rank 1 got everything
            EXPECT_GT(now_s() - start, 5.0 * timeout_ms / 1000);
        } else {
            double start = now_s();
            while (in.n < kCount && now_s() - start < 40) {
                ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
                usleep(timeout_ms * 1000 / 5);
            }
            EXPECT_EQ(in.n, kCount);
            EXPECT_EQ(in.bytes, kCount * kSize);
            EXPECT_FALSE(in.bad);
            ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        }
        finalize_ok(ctx);
    });
}

// Two rounds: rank 0 sends rank 1 `per_round` messages (send_round(round))
// and waits in llc_progress for its reply; rank 1 computes (no llc_progress)
// for 4 timeouts before it reads them (compute_first) or after, then
// replies.  Nobody is reported, every byte arrives, rank 0 waited for the
// computing.
template <class SendRound> void two_rounds_with_a_computing_receiver(TestProcess &p, llc_context_t *ctx, Inbox &in,
                                                                     unsigned timeout_ms, int per_round,
                                                                     bool compute_first, SendRound send_round)
{
    for (int round = 0; round < 2 && !::testing::Test::HasFailure(); round++) {
        if (p.rank == 0) {
            const double start = now_s();
            send_round(round);
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == round + 1; }, 60))
                << llc_last_error(ctx);
            EXPECT_GT(now_s() - start, 4.0 * timeout_ms / 1000);
        } else {
            if (compute_first)
                usleep(4 * timeout_ms * 1000); // "compute" before reading
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == (round + 1) * per_round; }, 60))
                << llc_last_error(ctx);
            EXPECT_FALSE(in.bad);
            if (!compute_first)
                usleep(4 * timeout_ms * 1000); // "compute" after reading
            ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        }
    }
    finalize_ok(ctx);
}

// Rank 1 reads two messages that arrive back to back, then computes before
// replying.  It acknowledged what it read before leaving llc_progress, so
// rank 0 has nothing outstanding: no false alarm.  (With acknowledgements
// sent only now and then, the second message would be unacknowledged and
// rank 0 would report rank 1 dead.)
TEST_P(TcpLiveness, ReceiverComputingAfterReadingIsNotReported)
{
    const unsigned timeout_ms = GetParam();
    run_liveness(timeout_ms, [timeout_ms](TestProcess &p, llc_context_t *ctx, Inbox &in) {
        two_rounds_with_a_computing_receiver(p, ctx, in, timeout_ms, 2, false, [&](int round) {
            send_checked(ctx, 1, 2 * round, 100);
            send_checked(ctx, 1, 2 * round + 1, 1u << 20);
        });
    });
}

// Rank 1 computes before it reads what rank 0 sends meanwhile: 16 MiB of
// 8 KiB messages, more than the sockets hold, so rank 0's sends wait on a
// full receive buffer all that time.  In round 0 rank 1 has not even
// accepted the connection yet; in round 1 it has.  Rank 1's alive
// acknowledgements (written by its own thread while it computes) keep rank
// 0 from reporting it, and the kernel does not give up on the zero window
// either; every message arrives, in order, intact.
TEST_P(TcpLiveness, ReceiverComputingBeforeReadingIsNotReported)
{
    const unsigned timeout_ms = GetParam();
    run_liveness(timeout_ms, [timeout_ms](TestProcess &p, llc_context_t *ctx, Inbox &in) {
        constexpr int kCount = 2048;
        constexpr size_t kSize = 8 * 1024;
        two_rounds_with_a_computing_receiver(p, ctx, in, timeout_ms, kCount, true, [&](int round) {
            for (int i = 0; i < kCount && !::testing::Test::HasFailure(); i++)
                send_checked(ctx, 1, round * kCount + i, kSize);
        });
        if (p.rank == 1) {
            EXPECT_EQ(in.bytes, 2 * kCount * kSize);
        }
    });
}

// Both ranks start 16 MiB of 8 KiB messages to each other (one connection
// carries both directions), then leave the library before their sends are
// done: rank 0 computes 1 timeout, rank 1 four.  While rank 1 computes,
// rank 0 reads what rank 1 wrote and waits for rank 1 to read its bytes;
// rank 1's thread must answer for it although rank 1's own record on the
// connection may be half written.  Everything arrives; nobody is reported.
TEST_P(TcpLiveness, BothSendingThenComputingAreNotReported)
{
    const unsigned timeout_ms = GetParam();
    run_liveness(timeout_ms, [timeout_ms](TestProcess &p, llc_context_t *ctx, Inbox &in) {
        constexpr int kCount = 2048;
        constexpr size_t kSize = 8 * 1024;
        std::vector<std::vector<char>> bufs(kCount);
        int done = 0;
        auto on_done = [](void *arg, int status) {
            EXPECT_EQ(status, LLC_OK);
            ++*static_cast<int *>(arg);
        };
        for (int i = 0; i < kCount; i++) {
            bufs[size_t(i)].resize(kSize);
            fill_pattern(bufs[size_t(i)].data(), kSize, uint64_t(i));
            llc_iov_t iov{bufs[size_t(i)].data(), kSize};
            const int rc = llc_am_send(ctx, 1 - p.rank, 0, nullptr, 0, &iov, 1, on_done, &done);
            ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
            if (rc == LLC_OK)
                done++;
        }
        usleep((p.rank == 0 ? 1 : 4) * timeout_ms * 1000); // "compute", sends in progress
        EXPECT_TRUE(progress_until(
            ctx, [&] { return in.n == kCount && done == kCount; }, 60))
            << llc_last_error(ctx) << " (" << in.n << " received, " << done << " sent)";
        EXPECT_EQ(in.bytes, size_t(kCount) * kSize);
        EXPECT_FALSE(in.bad);
        finalize_ok(ctx);
    });
}

// Rank 1 reaches llc_finalize 4 timeouts after rank 0, without calling
// llc_progress in between: rank 0's Goodbye waits unread all that time,
// which is not a failure (finalize has its own bound).
TEST_P(TcpLiveness, LateFinalizeIsNotReported)
{
    const unsigned timeout_ms = GetParam();
    run_liveness(timeout_ms, [timeout_ms](TestProcess &p, llc_context_t *ctx, Inbox &in) {
        send_checked(ctx, 1 - p.rank, 0, 1000);
        progress_until(ctx, [&] { return in.n == 1; });
        if (p.rank == 1)
            usleep(4 * timeout_ms * 1000);
        double start = now_s();
        finalize_ok(ctx);
        if (p.rank == 0) {
            EXPECT_GT(now_s() - start, 3.0 * timeout_ms / 1000);
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpLiveness, ::testing::Values(400u, 1000u), timeout_name);

// Checked all-to-all traffic, finalize right after: acknowledgements flow in
// every direction, including for the Goodbye records.  (A short peer timeout:
// 200 ms, stretched under a sanitizer, whose slowed all-to-all leaves a
// process unread for longer.)
TEST(TcpAcks, AllToAllAndFinalizeWithAcknowledgementsInFlight)
{
    JobOptions o = tcp_job({0, 1, 2, 3}, scaled_ms(200).c_str());
    TrafficPlan plan;
    plan.msgs_per_pair = 40;
    plan.max_size = 1u << 20;
    plan.sends = [](int, int) { return true; };
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_stats_t st{};
        run_traffic(p, plan, &st);
        EXPECT_GT(st.tcp_msgs, 0u);
    });
}

// The same with LLC_NET=hybrid: busy destinations move to tcp and back
// (Switch records) many times.
TEST(TcpAcks, HybridSwitchingWithAShortTimeout)
{
    JobOptions o = tcp_job({0, 1, 2, 3}, scaled_ms(200).c_str(), 90);
    // the sender-driven policy promotes every busy sender within a few
    // periods; with the receiver driver a rank may end its 40 messages per
    // pair before any receiver asked it to switch
    o.env.insert(o.env.end(), {{"LLC_NET", "hybrid"},
                               {"LLC_HYBRID_DRIVER", "sender"},
                               {"LLC_HYBRID_PERIOD_MS", "3"},
                               {"LLC_HYBRID_PROMOTE_MSGS", "2"},
                               {"LLC_MAX_RC_PER_NODE", "1"},
                               {"LLC_UDP_RTO_US", "3000"}});
    TrafficPlan plan;
    plan.msgs_per_pair = 40;
    plan.max_size = 512 * 1024;
    plan.sends = [](int, int) { return true; };
    plan.timeout_s = 80;
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_stats_t st{};
        run_traffic(p, plan, &st);
        EXPECT_GT(st.rc_promotions, 0u) << "rank " << p.rank;
        EXPECT_GT(st.tcp_msgs, 0u);
    });
}
