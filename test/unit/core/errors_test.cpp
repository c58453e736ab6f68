// errors_test.cpp - bad arguments, unregistered handlers, dying peers and
// unreachable peers give clear errors within bounded time.
#include "common/test_util.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

using namespace llctest;

namespace {

int g_cb_calls = 0;
void count_cb(void *, int) { g_cb_calls++; }

struct Counter {
    int n = 0;
};
void count_handler(llc_context_t *, void *arg, int, const void *, size_t, const void *, size_t)
{
    static_cast<Counter *>(arg)->n++;
}

// Progress until llc_progress returns an error; returns it (or LLC_OK on timeout).
int progress_until_error(llc_context_t *ctx, double timeout_s)
{
    double end = now_s() + timeout_s;
    while (now_s() < end) {
        int rc = llc_progress(ctx, nullptr);
        if (rc != LLC_OK)
            return rc;
    }
    return LLC_OK;
}

// First contact both ways between ranks 0 and 1 (handler 1 counts into c),
// so that what a test does next is all that is in flight.
void meet_the_other(TestProcess &p, llc_context_t *ctx, Counter &c)
{
    ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &c), LLC_OK);
    EXPECT_EQ(llc_am_send(ctx, 1 - p.rank, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
    progress_until(ctx, [&] { return c.n == 1; });
}

JobOptions tcp_job(std::vector<int> nodes, unsigned timeout_s = 60)
{
    JobOptions o = job(std::move(nodes), timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    return o;
}

} // namespace

TEST(Errors, InvalidArgumentsToSendAndRegister)
{
    LLC_EXPECT_JOB_OK(job({0, 1}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        char hdr[8] = {};
        EXPECT_EQ(llc_am_send(ctx, 2, 0, hdr, 8, nullptr, 0, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_TRUE(contains(llc_last_error(ctx), "valid ranks are 0..1")) << llc_last_error(ctx);
        EXPECT_EQ(llc_am_send(ctx, -1, 0, hdr, 8, nullptr, 0, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_EQ(llc_am_send(ctx, 0, LLC_AM_MAX_HANDLERS, hdr, 8, nullptr, 0, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_TRUE(contains(llc_last_error(ctx), "handler id 64")) << llc_last_error(ctx);
        EXPECT_EQ(llc_am_send(ctx, 0, 0, hdr, LLC_AM_HDR_MAX + 1, nullptr, 0, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_EQ(llc_am_send(ctx, 0, 0, nullptr, 8, nullptr, 0, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_EQ(llc_am_send(ctx, 0, 0, hdr, 8, nullptr, 1, count_cb, nullptr), LLC_ERR_INVALID);
        llc_iov_t bad{nullptr, 5};
        EXPECT_EQ(llc_am_send(ctx, 0, 0, hdr, 8, &bad, 1, count_cb, nullptr), LLC_ERR_INVALID);
        EXPECT_EQ(llc_am_register(ctx, LLC_AM_MAX_HANDLERS, count_handler, nullptr), LLC_ERR_INVALID);
        for (int i = 0; i < 10; i++)
            EXPECT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        EXPECT_EQ(g_cb_calls, 0) << "callback called for a rejected send";
        llc_stats_t st;
        llc_get_stats(ctx, &st);
        EXPECT_EQ(st.msgs_sent, 0u);
        finalize_ok(ctx);
    });
}

class UnregisteredHandler : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(UnregisteredHandler, IsAClearErrorAndTheStreamContinues)
{
    LLC_EXPECT_JOB_OK(tcp_job(GetParam()), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Counter c;
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &c), LLC_OK);
        if (p.rank == 1) {
            std::vector<char> big(300 * 1024, 'x');
            llc_iov_t iov{big.data(), big.size()};
            int rc = llc_am_send(ctx, 0, 9, nullptr, 0, &iov, 1, nullptr, nullptr); // nobody registered 9
            EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS);
            EXPECT_EQ(llc_am_send(ctx, 0, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            // Keep the buffer alive until rank 0 has everything.
            EXPECT_EQ(llc_am_send(ctx, 1, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            progress_until(ctx, [&] { return c.n == 1; });
            double end = now_s() + 1;
            while (now_s() < end)
                EXPECT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        } else {
            int rc = progress_until_error(ctx, 20);
            EXPECT_EQ(rc, LLC_ERR_INVALID);
            EXPECT_TRUE(contains(llc_last_error(ctx), "handler id 9")) << llc_last_error(ctx);
            EXPECT_TRUE(contains(llc_last_error(ctx), "rank 1")) << llc_last_error(ctx);
            progress_until(ctx, [&] { return c.n == 1; });
        }
        finalize_ok(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(ShmAndTcp, UnregisteredHandler, ::testing::Values(std::vector<int>{0, 0}, std::vector<int>{0, 1}));

// Rank 1 dies without llc_finalize; rank 0 must see LLC_ERR_PEER naming it.
class PeerDeath : public ::testing::TestWithParam<bool> {};

TEST_P(PeerDeath, TcpPeerExitWithoutFinalizeIsReported)
{
    bool victim_sends_first = GetParam(); // true: detected on the accepted connection; false: on ours
    LLC_EXPECT_JOB_OK(tcp_job({0, 1}, 30), [victim_sends_first](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Counter c;
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &c), LLC_OK);
        if (p.rank == 1) {
            if (victim_sends_first) {
                EXPECT_EQ(llc_am_send(ctx, 0, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
                progress_until(ctx, [&] { return c.n == 1; }); // rank 0's reply: it has our connection
            } else {
                progress_until(ctx, [&] { return c.n == 1; });
            }
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize: no goodbye
        }
        if (victim_sends_first)
            progress_until(ctx, [&] { return c.n == 1; });
        EXPECT_EQ(llc_am_send(ctx, 1, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        double start = now_s();
        int rc = progress_until_error(ctx, 10);
        EXPECT_EQ(rc, LLC_ERR_PEER);
        EXPECT_LT(now_s() - start, 10);
        EXPECT_TRUE(contains(llc_last_error(ctx), "rank 1 (host 127.0.0.1:")) << llc_last_error(ctx);
        EXPECT_TRUE(contains(llc_last_error(ctx), "closed the connection unexpectedly")) << llc_last_error(ctx);
        // Sending more to the dead rank fails (possibly after one more write reveals it).
        int send_rc = LLC_OK;
        for (int i = 0; i < 50 && send_rc >= 0; i++) {
            send_rc = llc_am_send(ctx, 1, 1, nullptr, 0, nullptr, 0, nullptr, nullptr);
            llc_progress(ctx, nullptr);
        }
        EXPECT_EQ(send_rc, LLC_ERR_PEER);
        // Finalize must not hang with a dead peer.
        llc_finalize(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(BothDirections, PeerDeath, ::testing::Bool());

TEST(Errors, ConnectToUnresponsivePeerTimesOut)
{
    JobOptions o = tcp_job({0, 1}, 30);
    o.env.push_back({"LLC_CONNECT_TIMEOUT_MS", "500"});
    o.env.push_back({"LLC_KVS", "pmi"}); // the black-hole address is injected as the peer's bootstrap key
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        // A listener whose accept queue is full drops SYNs: connect() hangs.
        int hole = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(bind(hole, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
        ASSERT_EQ(listen(hole, 0), 0);
        socklen_t len = sizeof(sa);
        getsockname(hole, reinterpret_cast<sockaddr *>(&sa), &len);
        std::vector<int> fillers;
        for (int i = 0; i < 4; i++) {
            int f = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            connect(f, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
            fillers.push_back(f);
        }
        usleep(100000);
        p.override_key(1 - p.rank, "llc-tcp-" + std::to_string(1 - p.rank),
                       "127.0.0.1:" + std::to_string(ntohs(sa.sin_port)));
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        g_cb_calls = 0;
        std::vector<char> big(1 << 20);
        llc_iov_t iov{big.data(), big.size()};
        EXPECT_EQ(llc_am_send(ctx, 1 - p.rank, 1, nullptr, 0, &iov, 1, count_cb, nullptr), LLC_INPROGRESS);
        double start = now_s();
        int rc = progress_until_error(ctx, 10);
        EXPECT_EQ(rc, LLC_ERR_TIMEOUT);
        EXPECT_LT(now_s() - start, 5);
        EXPECT_TRUE(contains(llc_last_error(ctx), "timed out")) << llc_last_error(ctx);
        llc_progress(ctx, nullptr);
        EXPECT_EQ(g_cb_calls, 1) << "the pending send's callback must report the failure";
        EXPECT_EQ(llc_am_send(ctx, 1 - p.rank, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_ERR_TIMEOUT);
        finalize_ok(ctx);
    });
}

TEST(Errors, ProgressAndFinalizeInsideHandlerAreRefused)
{
    LLC_EXPECT_JOB_OK(job({0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        static int results[2];
        ASSERT_EQ(llc_am_register(ctx, 2,
                                  [](llc_context_t *c, void *, int, const void *, size_t, const void *, size_t) {
                                      results[0] = llc_progress(c, nullptr);
                                      results[1] = llc_finalize(c);
                                  },
                                  nullptr),
                  LLC_OK);
        ASSERT_EQ(llc_am_send(ctx, 0, 2, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        EXPECT_EQ(results[0], LLC_ERR_STATE);
        EXPECT_EQ(results[1], LLC_ERR_STATE);
        finalize_ok(ctx);
    });
}

// Rank 1 is gone (no llc_finalize) in the middle of a 16 MiB message, as
// sender or as receiver: rank 0 must get LLC_ERR_PEER naming it within a few
// seconds on every transport (doc/reliability.md, "Peers that die"); shm
// (ring and single copy) and a udp receiver once waited forever.
struct MidTransferCase {
    const char *name;
    std::vector<int> nodes;
    std::vector<std::pair<std::string, std::string>> env;
    bool victim_sends;
};

void PrintTo(const MidTransferCase &c, std::ostream *os) { *os << c.name; }

class MidTransferDeath : public ::testing::TestWithParam<MidTransferCase> {};

TEST_P(MidTransferDeath, SurvivorGetsAnErrorNamingTheDeadRank)
{
    const MidTransferCase &tc = GetParam();
    JobOptions o = job(tc.nodes, 60);
    o.env = tc.env;
    o.env.push_back({"LLC_TCP_ADDR", "127.0.0.1"});
    const bool victim_sends = tc.victim_sends;
    bool over_udp = false;
    for (const auto &kv : tc.env)
        over_udp = over_udp || (kv.first == "LLC_NET" && kv.second == "udp");
    LLC_EXPECT_JOB_OK(o, [victim_sends, over_udp](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Counter c;
        meet_the_other(p, ctx, c); // what follows is the big message alone
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
        std::vector<char> big(16 << 20, 'x');
        llc_iov_t iov{big.data(), big.size()};
        int status = LLC_OK;
        auto done = [](void *arg, int st) { *static_cast<int *>(arg) = st == LLC_OK ? 1 : st; };
        if (p.rank == 1) {
            usleep(100 * 1000); // rank 0 is done with the first contact
            if (victim_sends) {
                llc_stats_t before, after;
                llc_get_stats(ctx, &before);
                int rc = llc_am_send(ctx, 0, 1, nullptr, 0, &iov, 1, done, &status);
                EXPECT_TRUE(rc == LLC_INPROGRESS || rc == LLC_OK) << rc; // tcp: may fit the socket buffers
                // a part of it, at most 20 rings / windows; over udp only the
                // loop below: with acknowledgements flowing, 20 calls carried
                // all 16 MiB once (the survivor then waits for nothing and
                // rightly reports nothing; CI under ASan saw it whole)
                for (int i = 0; !over_udp && i < 20; i++)
                    llc_progress(ctx, nullptr);
                // over udp, a part of it must have left before the death, or
                // rank 0 is owed nothing and has nothing to notice (under a
                // sanitizer and load 20 calls may not get that far)
                for (double t0 = now_s(); over_udp && now_s() - t0 < 5.0;) {
                    llc_get_stats(ctx, &after);
                    if (after.udp_packets_sent >= before.udp_packets_sent + 8)
                        break;
                    llc_progress(ctx, nullptr);
                }
                if (over_udp) {
                    EXPECT_GE(after.udp_packets_sent, before.udp_packets_sent + 8)
                        << "the victim did not get 8 datagrams of its message out in 5 s";
                }
            } else {
                usleep(200 * 1000); // never reads rank 0's message
            }
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        if (!victim_sends) {
            int rc = llc_am_send(ctx, 1, 1, nullptr, 0, &iov, 1, done, &status);
            EXPECT_TRUE(rc == LLC_INPROGRESS || rc == LLC_OK) << rc;
        }
        llc_stats_t st0;
        llc_get_stats(ctx, &st0);
        double start = now_s();
        int rc = progress_until_error(ctx, 20);
        double took = now_s() - start;
        llc_stats_t st;
        llc_get_stats(ctx, &st);
        // what arrived from the victim, for a failure to say why nothing was noticed
        EXPECT_EQ(rc, LLC_ERR_PEER) << "no error after " << took << " s; meanwhile: received "
                                    << st.bytes_received - st0.bytes_received << " bytes in "
                                    << st.msgs_received - st0.msgs_received << " messages, udp acks sent "
                                    << st.udp_acks_sent - st0.udp_acks_sent << ", duplicates "
                                    << st.udp_duplicates - st0.udp_duplicates << ", strangers dropped "
                                    << st.udp_auth_dropped - st0.udp_auth_dropped << ", stream restarts "
                                    << st.udp_peer_restarts - st0.udp_peer_restarts << "; last error: \""
                                    << llc_last_error(ctx) << "\"";
        EXPECT_LT(took, 5.0); // rank 1 dies 0.1-0.3 s in; the detection itself takes 50-200 ms
        EXPECT_TRUE(contains(llc_last_error(ctx), "rank 1")) << llc_last_error(ctx);
        // (over tcp the 16 MiB may all have reached rank 0's socket before the
        // death: delivered, and the connection's end without goodbye is the error)
        llc_finalize(ctx); // must not hang
    });
}

INSTANTIATE_TEST_SUITE_P(
    Transports, MidTransferDeath,
    ::testing::Values(MidTransferCase{"ShmRingVictimSends", {0, 0}, {{"LLC_CMA", "0"}}, true},
                      MidTransferCase{"ShmRingVictimReceives", {0, 0}, {{"LLC_CMA", "0"}}, false},
                      MidTransferCase{"ShmCmaVictimReceives", {0, 0}, {}, false},
                      MidTransferCase{"TcpVictimSends", {0, 1}, {{"LLC_NET", "tcp"}}, true},
                      MidTransferCase{"TcpVictimReceives", {0, 1}, {{"LLC_NET", "tcp"}}, false},
                      MidTransferCase{"UdpVictimSends", {0, 1}, {{"LLC_NET", "udp"}}, true},
                      MidTransferCase{"UdpVictimReceives", {0, 1}, {{"LLC_NET", "udp"}}, false}),
    [](const ::testing::TestParamInfo<MidTransferCase> &info) { return std::string(info.param.name); });

// A rank that dies while the survivor owes it nothing and receives nothing
// from it: the survivor only waits (a receive it posted, a reply above the
// transport).  No transport has data outstanding to it and no message from
// it is half read: tcp sees the connection's end, udp probes peers silent
// for LLC_UDP_IDLE_PROBE_MS and the dead one answers with ICMP.
class SilentDeath : public ::testing::TestWithParam<const char *> {};

TEST_P(SilentDeath, AWaitingSurvivorGetsAnErrorNamingTheDeadRank)
{
    JobOptions o = job({0, 1}, 60);
    o.env = {{"LLC_NET", GetParam()}, {"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_UDP_IDLE_PROBE_MS", "300"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Counter c;
        meet_the_other(p, ctx, c);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
        if (p.rank == 1) {
            // rank 0's acknowledgements of our message come and are read
            for (double t0 = now_s(); now_s() - t0 < 0.3;)
                llc_progress(ctx, nullptr);
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        double start = now_s();
        int rc = progress_until_error(ctx, 20);
        double took = now_s() - start;
        EXPECT_EQ(rc, LLC_ERR_PEER) << "no error after " << took << " s; last error: \"" << llc_last_error(ctx) << "\"";
        EXPECT_LT(took, 5.0); // rank 1 dies 0.3 s in; udp probes it 0.3-0.4 s after its last datagram
        EXPECT_TRUE(contains(llc_last_error(ctx), "rank 1")) << llc_last_error(ctx);
        llc_finalize(ctx); // must not hang
    });
}

INSTANTIATE_TEST_SUITE_P(Transports, SilentDeath, ::testing::Values("udp", "tcp", "hybrid"),
                         [](const ::testing::TestParamInfo<const char *> &info) { return std::string(info.param); });
