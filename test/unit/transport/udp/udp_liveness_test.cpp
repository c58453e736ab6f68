// udp_liveness_test.cpp - LLC_UDP_PEER_TIMEOUT_MS and computing peers
// (udp_transport.hpp, "Computing peers"): a rank that computes away from the
// library for several timeouts, before it receives or in the middle of a
// message it sends, is alive (its alive socket answers) and is not
// reported; a rank whose threads are all stopped still is; the alive socket
// answers no stranger.  Over udp and over the hybrid (udp until promoted).
#include "common/job_secret_util.hpp"
#include "common/liveness_util.hpp"
#include "common/stranger_util.hpp"
#include "common/test_util.hpp"
#include "common/traffic.hpp"

#include "support/string_hash.hpp"
#include "transport/udp/udp_transport.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using namespace llctest;

namespace {

constexpr unsigned kTimeoutMs = 1000;

JobOptions liveness_job(const std::string &net, unsigned timeout_s = 60)
{
    JobOptions o = job({0, 1}, timeout_s);
    o.env = {{"LLC_NET", net},
             {"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_UDP_PEER_TIMEOUT_MS", std::to_string(kTimeoutMs)},
             {"LLC_FINALIZE_TIMEOUT_MS", "5000"}};
    return o;
}

// Sends keep their buffers until their callbacks.
struct Sends {
    std::vector<std::vector<char>> bufs;
    int done = 0;
    void start(llc_context_t *ctx, int dest, int index, size_t len)
    {
        bufs.emplace_back(len);
        fill_pattern(bufs.back().data(), len, uint64_t(index));
        llc_iov_t iov{bufs.back().data(), len};
        int rc = llc_am_send(
            ctx, dest, 0, nullptr, 0, &iov, 1,
            [](void *arg, int status) {
                EXPECT_EQ(status, LLC_OK);
                ++*static_cast<int *>(arg);
            },
            &done);
        ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
        if (rc == LLC_OK)
            done++;
    }
};

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

// An AliveProbe from src to dst as a process of the job would make it.
llc::UdpHeader udp_probe_header(TestProcess &p, int src, int dst)
{
    llc::UdpHeader h{};
    h.magic = llc::kUdpMagic;
    h.type = uint8_t(llc::UdpType::AliveProbe);
    h.src = src;
    h.dst = dst;
    h.job_tag = llc::fnv1a32(p.job_id);
    h.psn = 1;
    h.token = udp_pair_token(p, src, dst);
    return h;
}

class UdpLiveness : public ::testing::TestWithParam<const char *> {};

std::string net_name(const ::testing::TestParamInfo<const char *> &info) { return info.param; }

} // namespace

// Rank 0 sends rank 1 64 messages of 8 KiB and one of 1 MiB, then waits in
// llc_progress for its answer; rank 1 computes (no llc_progress) for four
// timeouts before it receives them.  Rank 0 probes rank 1's alive socket,
// which answers; nobody is reported and every byte arrives.  (Before the
// alive sockets, rank 0 failed rank 1 after one timeout.)
TEST_P(UdpLiveness, ReceiverComputingBeforeReadingIsNotReported)
{
    LLC_EXPECT_JOB_OK(liveness_job(GetParam()), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_inbox_msg, &in), LLC_OK);
        constexpr int kSmall = 64;
        constexpr size_t kSmallSize = 8 * 1024, kLargeSize = 1u << 20;
        if (p.rank == 0) {
            const double start = now_s();
            Sends s;
            for (int i = 0; i < kSmall; i++)
                s.start(ctx, 1, i, kSmallSize);
            s.start(ctx, 1, kSmall, kLargeSize);
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == 1 && s.done == kSmall + 1; }, 40))
                << llc_last_error(ctx);
            EXPECT_GT(now_s() - start, 4.0 * kTimeoutMs / 1000) << "rank 1 computed that long";
            const llc_stats_t st = stats(ctx);
            EXPECT_GE(st.udp_alive_probes, 2u);
            EXPECT_GE(st.udp_alive_heard, 2u) << "rank 1's alive socket answered while it computed";
            std::printf("rank 0: alive probes %llu, answers heard %llu\n", (unsigned long long)st.udp_alive_probes,
                        (unsigned long long)st.udp_alive_heard);
        } else {
            usleep(4 * kTimeoutMs * 1000); // "compute" before receiving
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == kSmall + 1; }, 40))
                << llc_last_error(ctx);
            EXPECT_EQ(in.bytes, kSmall * kSmallSize + kLargeSize);
            EXPECT_FALSE(in.bad);
            EXPECT_GE(stats(ctx).udp_alive_answered, 2u);
            ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        }
        finalize_ok(ctx);
    });
}

// Rank 0 starts a 4 MiB message (more than the udp window: the rest waits
// for acknowledgements) and computes for four timeouts before it progresses
// again; rank 1 waits for the message in llc_progress, holding its first
// part.  Rank 1 probes rank 0's alive socket and does not report it.
TEST_P(UdpLiveness, SenderComputingMidMessageIsNotReported)
{
    LLC_EXPECT_JOB_OK(liveness_job(GetParam()), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_inbox_msg, &in), LLC_OK);
        constexpr size_t kSize = 4u << 20;
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            Sends s;
            s.start(ctx, 1, 0, kSize);
            for (int i = 0; i < 20; i++) // the first datagrams go out
                ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            usleep(4 * kTimeoutMs * 1000); // "compute" in the middle of the message
            EXPECT_TRUE(progress_until(
                ctx, [&] { return s.done == 1 && in.n == 1; }, 40))
                << llc_last_error(ctx);
            EXPECT_GE(stats(ctx).udp_alive_answered, 2u);
        } else {
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == 1; }, 40))
                << llc_last_error(ctx);
            EXPECT_EQ(in.bytes, kSize);
            EXPECT_FALSE(in.bad);
            EXPECT_GE(stats(ctx).udp_alive_heard, 2u) << "rank 0's alive socket answered while it computed";
            ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        }
        finalize_ok(ctx);
    });
}

// Rank 1 stops itself (SIGSTOP: its alive thread stops too) after an
// exchange; rank 0 then sends it a message.  Rank 0 must get LLC_ERR_PEER
// after about LLC_UDP_PEER_TIMEOUT_MS, not hang and not wait forever on
// probes.
TEST_P(UdpLiveness, StoppedPeerIsStillReported)
{
    JobOptions o = liveness_job(GetParam(), 40);
    o.env.push_back({"LLC_FINALIZE_TIMEOUT_MS", "3000"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_inbox_msg, &in), LLC_OK);
        if (p.rank == 1) {
            uint64_t pid = uint64_t(getpid());
            ASSERT_EQ(llc_am_send(ctx, 0, 0, &pid, sizeof(pid), nullptr, 0, nullptr, nullptr), LLC_OK);
            progress_until(ctx, [&] { return in.n == 1; });
            // a little longer: our acknowledgement of rank 0's message goes out
            const double settle = now_s() + 0.3;
            while (now_s() < settle)
                llc_progress(ctx, nullptr);
            p.depart();
            raise(SIGSTOP); // rank 0 continues us when it is done
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        progress_until(ctx, [&] { return in.n == 1; });
        const pid_t peer = pid_t(in.word);
        struct Continue { // whatever happens below, rank 1 is not left stopped
            pid_t pid;
            ~Continue() { kill(pid, SIGCONT); }
        } cont{peer};
        ASSERT_EQ(llc_am_send(ctx, 1, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        const double wait_end = now_s() + 10;
        while (process_state(peer) != 'T' && now_s() < wait_end) {
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            usleep(1000);
        }
        ASSERT_EQ(process_state(peer), 'T') << "rank 1 did not stop";
        const double start = now_s();
        std::vector<char> buf(100, 's');
        llc_iov_t iov{buf.data(), buf.size()};
        ASSERT_EQ(llc_am_send(ctx, 1, 0, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK);
        int err = LLC_OK;
        while (err == LLC_OK && now_s() - start < 15)
            err = llc_progress(ctx, nullptr);
        const double took = now_s() - start;
        const std::string msg = llc_last_error(ctx);
        EXPECT_EQ(err, LLC_ERR_PEER) << msg;
        EXPECT_GT(took, 0.9 * kTimeoutMs / 1000) << msg;
        EXPECT_LT(took, kTimeoutMs / 1000.0 + 4.0) << msg;
        EXPECT_TRUE(contains(msg.c_str(), "LLC_UDP_PEER_TIMEOUT_MS")) << msg;
        EXPECT_TRUE(contains(msg.c_str(), "alive socket did not answer")) << msg;
        EXPECT_GE(stats(ctx).udp_alive_probes, 1u);
        EXPECT_EQ(stats(ctx).udp_alive_heard, 0u);
        std::fprintf(stderr, "stopped peer reported after %.2f s: %s\n", took, msg.c_str());
        kill(peer, SIGCONT); // it exits at once (without finalize)
        const double fin = now_s();
        llc_finalize(ctx); // must not hang (it may report the failed peer)
        EXPECT_LT(now_s() - fin, 5.0);
    });
}

// Datagrams from strangers at rank 1's alive socket: random bytes, a probe
// of another job, a probe with a wrong pair token, an oversized probe.
// None is answered, each is counted in udp_auth_dropped; a true probe
// (the pair token made from the job secret) is answered.
TEST_P(UdpLiveness, AliveSocketAnswersNoStranger)
{
    JobOptions o = liveness_job(GetParam(), 40);
    o.env.push_back({"LLC_KVS", "pmi"}); // the addresses under bootstrap keys
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            // rank 1's published udp address: "ip:port,alive_port"
            const std::string addr = bootstrap_value(p, 1, "llc-udp-1");
            const size_t comma = addr.find(',');
            ASSERT_NE(comma, std::string::npos) << addr;
            sockaddr_in to = sockaddr_of(addr.substr(0, comma));
            to.sin_port = htons(uint16_t(std::stoi(addr.substr(comma + 1))));
            int s = ::socket(AF_INET, SOCK_DGRAM, 0);
            ASSERT_GE(s, 0);
            timeval tv{0, 300000};
            ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            auto send_probe = [&](const void *d, size_t n) {
                ASSERT_EQ(::sendto(s, d, n, 0, reinterpret_cast<const sockaddr *>(&to), sizeof(to)), ssize_t(n));
            };
            auto answered = [&] {
                char b[256];
                return ::recv(s, b, sizeof(b), 0) > 0;
            };
            char junk[64];
            for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = char(i * 37 + 11);
            send_probe(junk, sizeof(junk));
            EXPECT_FALSE(answered()) << "random bytes";
            llc::UdpHeader h = udp_probe_header(p, 0, 1);
            llc::UdpHeader other = h;
            other.job_tag ^= 1;
            send_probe(&other, sizeof(other));
            EXPECT_FALSE(answered()) << "another job's probe";
            llc::UdpHeader forged = h;
            forged.token ^= 0x5a;
            send_probe(&forged, sizeof(forged));
            EXPECT_FALSE(answered()) << "a wrong pair token";
            char big[sizeof(h) + 8] = {0};
            std::memcpy(big, &h, sizeof(h));
            send_probe(big, sizeof(big));
            EXPECT_FALSE(answered()) << "a probe with bytes after it";
            send_probe(&h, sizeof(h));
            EXPECT_TRUE(answered()) << "the job's own probe";
            ::close(s);
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 1) {
            const llc_stats_t st = stats(ctx);
            EXPECT_EQ(st.udp_alive_answered, 1u);
            EXPECT_GE(st.udp_auth_dropped, 4u);
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Net, UdpLiveness, ::testing::Values("udp", "hybrid"), net_name);
