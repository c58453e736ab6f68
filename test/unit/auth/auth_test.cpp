// auth_test.cpp - strangers at a rank's tcp port (doc/reliability.md): random
// bytes, truncated or malformed handshakes, a wrong MAC, a silent
// connection, a process with the wrong job secret; each is closed and
// counted (auth_rejected), never an error, and the job's own pair keeps
// working.  A peer that authenticated and then sends garbage is a fatal
// protocol error that names the right rank.
#include "common/stranger_util.hpp"
#include "common/test_util.hpp"

#include "auth/job_secret.hpp"
#include "support/string_hash.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/udp/udp_transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>
#include <string>
#include <vector>

using namespace llctest;

namespace {

JobOptions auth_job(std::vector<int> nodes, const char *auth_timeout_ms = "30000")
{
    JobOptions o = job(std::move(nodes), 60);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_KVS", "pmi"}, {"LLC_TCP_AUTH_TIMEOUT_MS", auth_timeout_ms}};
    return o;
}

std::string bootstrap_value(TestProcess &p, int rank, const std::string &key)
{
    char buf[1024];
    size_t len = sizeof(buf);
    EXPECT_EQ(TestProcess::get(&p, rank, key.c_str(), buf, &len), 0) << key;
    return std::string(buf, len);
}

std::string test_nonce()
{
    std::string n(llc::kNonceBytes, '\0');
    for (size_t i = 0; i < n.size(); i++)
        n[i] = char(i * 7 + 1);
    return n;
}

// The connector's MAC, computed here with a secret given in hex (the job's,
// read from the bootstrap as a process of the job would; strangers have no
// access to it).
std::string connector_mac(const std::string &secret_hex, const std::string &nonce, int src, int dst,
                          const std::string &addr)
{
    unsigned char key[32];
    for (int i = 0; i < 32; i++)
        key[i] = uint8_t(std::stoi(secret_hex.substr(size_t(2 * i), 2), nullptr, 16));
    llc::MacInput in("llc-tcp-connect-1");
    in.add(nonce.data(), nonce.size()).add_int(src).add_int(dst).add(addr.data(), addr.size());
    unsigned char out[32];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key, 32, reinterpret_cast<const unsigned char *>(in.bytes().data()), in.bytes().size(), out, &len);
    return std::string(reinterpret_cast<char *>(out), 32);
}

void send_hello(int fd, int src, const std::string &nonce, const std::string &mac, const std::string &addr)
{
    std::string aux = nonce + mac + addr;
    llc::WireHeader w = llc::make_wire_header(llc::Kind::Hello, src, 0, 0);
    w.aux_len = uint32_t(aux.size());
    send_all(fd, &w, sizeof(w));
    send_all(fd, aux.data(), aux.size());
}

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

// Checked round trip between ranks 0 and 1 (handler 0, Inbox counts).
struct Inbox {
    int n = 0;
    bool bad = false;
};
void on_msg(llc_context_t *, void *arg, int, const void *, size_t, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    if (!check_pattern(data, len, uint64_t(in->n)))
        in->bad = true;
    in->n++;
}
void send_pattern(llc_context_t *ctx, int dest, int index, size_t len)
{
    std::vector<char> buf(len);
    fill_pattern(buf.data(), len, uint64_t(index));
    llc_iov_t iov{buf.data(), len};
    int done = 0;
    int rc = llc_am_send(ctx, dest, 0, nullptr, 0, &iov, 1, [](void *a, int) { *static_cast<int *>(a) = 1; }, &done);
    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
    if (rc == LLC_INPROGRESS)
        progress_until(ctx, [&] { return done == 1; });
}

} // namespace

// Rank 0 attacks rank 1's port in every way a stranger can, then the pair
// exchanges checked messages both ways.
TEST(TcpAuth, StrangersAreRejectedCountedAndHarmless)
{
    LLC_EXPECT_JOB_OK(auth_job({0, 1}, "700"), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_msg, &in), LLC_OK);
        if (p.rank == 1) {
            // Progress while rank 0 attacks; its first message says how many attacks.
            progress_until(ctx, [&] { return in.n >= 1; }, 40);
            EXPECT_FALSE(in.bad);
            EXPECT_TRUE(progress_until(ctx, [&] { return stats(ctx).auth_rejected >= 9; }, 10));
            EXPECT_EQ(stats(ctx).auth_rejected, 9u);
            for (int i = 0; i < 20; i++)
                send_pattern(ctx, 0, i, size_t(1) << (i % 18));
            progress_until(ctx, [&] { return in.n == 2; });
            EXPECT_FALSE(in.bad);
            finalize_ok(ctx);
            return;
        }
        const std::string addr = bootstrap_value(p, 1, "llc-tcp-1");
        std::mt19937_64 rng(42);
        // 1-3: random bytes, 1 B, 40 B (a record header's size), 20 kB
        for (size_t len : {size_t(1), size_t(40), size_t(20000)}) {
            std::string junk(len, '\0');
            for (auto &ch : junk)
                ch = char(rng());
            int fd = raw_connect(addr);
            send_all(fd, junk.data(), junk.size());
            EXPECT_TRUE(closed_by_peer(fd)) << len << " random bytes";
            ::close(fd);
        }
        // 4: a truncated hello record, then close
        {
            llc::WireHeader w = llc::make_wire_header(llc::Kind::Hello, 0, 0, 0);
            int fd = raw_connect(addr);
            send_all(fd, &w, 10);
            ::close(fd);
        }
        const std::string me = "127.0.0.1:1";
        // 5: a well-formed hello claiming rank 0 with a wrong MAC
        {
            int fd = raw_connect(addr);
            send_hello(fd, 0, test_nonce(), std::string(32, 'm'), me);
            EXPECT_TRUE(closed_by_peer(fd));
            ::close(fd);
        }
        // 6: a hello header announcing 16 MiB of aux (no allocation, rejected)
        {
            llc::WireHeader w = llc::make_wire_header(llc::Kind::Hello, 0, 0, 0);
            w.aux_len = 1u << 24;
            int fd = raw_connect(addr);
            send_all(fd, &w, sizeof(w));
            EXPECT_TRUE(closed_by_peer(fd));
            ::close(fd);
        }
        // 7: silent: closed after LLC_TCP_AUTH_TIMEOUT_MS (700 ms)
        {
            int fd = raw_connect(addr);
            double start = now_s();
            EXPECT_TRUE(closed_by_peer(fd));
            EXPECT_GT(now_s() - start, 0.5);
            ::close(fd);
        }
        // 8: the MAC of another job's secret
        {
            int fd = raw_connect(addr);
            send_hello(fd, 0, test_nonce(), connector_mac(std::string(64, 'a'), test_nonce(), 0, 1, me), me);
            EXPECT_TRUE(closed_by_peer(fd));
            ::close(fd);
        }
        // 9: a valid record header, but a message where the hello must be
        {
            llc::WireHeader w = llc::make_wire_header(llc::Kind::Am, 0, 0, 0);
            w.payload_len = 8;
            int fd = raw_connect(addr);
            send_all(fd, &w, sizeof(w));
            send_all(fd, "12345678", 8);
            EXPECT_TRUE(closed_by_peer(fd));
            ::close(fd);
        }
        send_pattern(ctx, 1, 0, 1000);
        progress_until(ctx, [&] { return in.n == 20; });
        EXPECT_FALSE(in.bad);
        EXPECT_EQ(stats(ctx).auth_rejected, 0u);
        send_pattern(ctx, 1, 1, 10);
        finalize_ok(ctx);
    });
}

// Rank 2 got the wrong secret: rank 1 rejects its connection (counted), rank
// 2 learns it from the closed connection, and ranks 0 and 1 carry on.
TEST(TcpAuth, WrongSecretIsRejected)
{
    LLC_EXPECT_JOB_OK(auth_job({0, 1, 2}), [](TestProcess &p) {
        if (p.rank == 2)
            p.override_key(0, "llc-secret-tcp", std::string(64, '5'));
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_msg, &in), LLC_OK);
        if (p.rank == 2) {
            ASSERT_EQ(llc_am_send(ctx, 1, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            int rc = LLC_OK;
            double end = now_s() + 10;
            while (rc == LLC_OK && now_s() < end)
                rc = llc_progress(ctx, nullptr);
            EXPECT_EQ(rc, LLC_ERR_PEER);
            EXPECT_TRUE(contains(llc_last_error(ctx), "closed the connection before proving that it belongs to this job"))
                << llc_last_error(ctx);
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0);
        }
        if (p.rank == 1) {
            EXPECT_TRUE(progress_until(ctx, [&] { return stats(ctx).auth_rejected == 1; }, 20));
            send_pattern(ctx, 0, 0, 100000);
            progress_until(ctx, [&] { return in.n == 1; });
        } else {
            progress_until(ctx, [&] { return in.n == 1; });
            send_pattern(ctx, 1, 0, 5000);
        }
        EXPECT_FALSE(in.bad);
        finalize_ok(ctx);
    });
}

// A connection that authenticated and then sends garbage: a fatal protocol
// error at rank 1 that names rank 0 (from the Hello), not the garbage.
TEST(TcpAuth, GarbageAfterAuthenticationNamesTheRank)
{
    JobOptions o = auth_job({0, 1});
    o.env.push_back({"LLC_FINALIZE_TIMEOUT_MS", "1000"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 1) {
            int rc = LLC_OK;
            double end = now_s() + 20;
            while (rc == LLC_OK && now_s() < end)
                rc = llc_progress(ctx, nullptr);
            EXPECT_EQ(rc, LLC_ERR_PEER);
            std::string e = llc_last_error(ctx);
            EXPECT_TRUE(contains(e, "protocol error in stream from rank 0: bad magic number")) << e;
            EXPECT_EQ(stats(ctx).auth_rejected, 0u);
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0);
        }
        const std::string addr = bootstrap_value(p, 1, "llc-tcp-1");
        const std::string secret = bootstrap_value(p, 0, "llc-secret-tcp");
        const std::string me = "127.0.0.1:1";
        int fd = raw_connect(addr);
        send_hello(fd, 0, test_nonce(), connector_mac(secret, test_nonce(), 0, 1, me), me);
        // rank 1's proof comes back first
        llc::TcpAuthProof pr{};
        ASSERT_TRUE(recv_all(fd, &pr, sizeof(pr)));
        EXPECT_EQ(pr.magic, llc::kTcpAuthMagic);
        EXPECT_EQ(pr.rank, 1);
        std::string junk(40, '\0');
        int32_t big = 1593794095;
        std::memcpy(&junk[8], &big, 4); // a garbage "src" that must not be named
        send_all(fd, junk.data(), junk.size());
        EXPECT_TRUE(closed_by_peer(fd));
        ::close(fd);
        p.depart();
        std::fflush(stderr);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    });
}

// udp (LLC_NET=udp): random datagrams, datagrams of another job, and
// well-formed datagrams of this job without the pair token are dropped and
// counted (udp_auth_dropped), never an error; the pair keeps exchanging.
TEST(UdpAuth, StrangersDatagramsAreDroppedAndCounted)
{
    JobOptions o = auth_job({0, 1});
    o.env.push_back({"LLC_NET", "udp"});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, 0, on_msg, &in), LLC_OK);
        const int kRandom = 50, kForged = 20, kOtherJob = 10;
        if (p.rank == 1) {
            progress_until(ctx, [&] { return in.n >= 1; }, 40);
            EXPECT_TRUE(progress_until(
                ctx, [&] { return stats(ctx).udp_auth_dropped >= uint64_t(kRandom + kForged + kOtherJob); }, 10));
            EXPECT_EQ(stats(ctx).udp_auth_dropped, uint64_t(kRandom + kForged + kOtherJob));
            for (int i = 0; i < 20; i++)
                send_pattern(ctx, 0, i, size_t(1) << (i % 18));
            progress_until(ctx, [&] { return in.n == 2; });
            EXPECT_FALSE(in.bad);
            finalize_ok(ctx);
            return;
        }
        sockaddr_in sa = sockaddr_of(bootstrap_value(p, 1, "llc-udp-1"));
        int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
        ASSERT_GE(fd, 0);
        auto send_dgram = [&](const void *d, size_t n) {
            EXPECT_EQ(::sendto(fd, d, n, 0, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), ssize_t(n));
        };
        std::mt19937_64 rng(7);
        for (int i = 0; i < kRandom; i++) {
            std::string junk(1 + rng() % 20000, '\0');
            for (auto &ch : junk)
                ch = char(rng());
            send_dgram(junk.data(), junk.size());
        }
        // Well-formed data datagrams of this job (magic, job tag, ranks; the
        // payload a valid record) but with a guessed token: dropped before
        // any state, so the real stream from rank 0 is not disturbed.
        for (int i = 0; i < kForged + kOtherJob; i++) {
            llc::UdpHeader h{};
            h.magic = 0x55434c4c;
            h.type = 1; // Data
            h.src = 0;
            h.dst = 1;
            h.job_tag = i < kForged ? llc::fnv1a32(p.job_id) : llc::fnv1a32(p.job_id) + 1;
            h.src_inc = 1;
            h.psn = uint64_t(i);
            h.token = rng();
            llc::WireHeader w = llc::make_wire_header(llc::Kind::Am, 0, 0, 0);
            h.len = sizeof(w);
            std::string d(reinterpret_cast<char *>(&h), sizeof(h));
            d.append(reinterpret_cast<char *>(&w), sizeof(w));
            send_dgram(d.data(), d.size());
        }
        ::close(fd);
        usleep(100000);
        send_pattern(ctx, 1, 0, 1000);
        progress_until(ctx, [&] { return in.n == 20; });
        EXPECT_FALSE(in.bad);
        EXPECT_EQ(stats(ctx).udp_auth_dropped, 0u);
        send_pattern(ctx, 1, 1, 10);
        finalize_ok(ctx);
    });
}
