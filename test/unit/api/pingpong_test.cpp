// pingpong_test.cpp - handlers that reply from inside the handler.
#include "common/test_util.hpp"

using namespace llctest;

namespace {

constexpr int kRounds = 500;

struct PingState {
    int expect_next = 0; // this rank receives every other number
    int received = 0;
    size_t payload = 0;
    std::vector<char> buf;
    int completions = 0;
};

void on_done(void *arg, int status)
{
    EXPECT_EQ(status, LLC_OK);
    static_cast<PingState *>(arg)->completions++;
}

void ping_handler(llc_context_t *ctx, void *arg, int src, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *s = static_cast<PingState *>(arg);
    ASSERT_EQ(hdr_len, sizeof(int));
    int n;
    std::memcpy(&n, hdr, sizeof(n));
    EXPECT_EQ(n, s->expect_next) << "ping-pong out of step";
    EXPECT_EQ(len, s->payload);
    EXPECT_TRUE(check_pattern(data, len, uint64_t(n)));
    s->expect_next = n + 2;
    s->received++;
    if (n + 1 < kRounds) {
        int next = n + 1;
        fill_pattern(s->buf.data(), s->payload, uint64_t(next));
        llc_iov_t iov{s->buf.data(), s->payload};
        int rc = llc_am_send(ctx, src, 1, &next, sizeof(next), &iov, 1, on_done, s);
        EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
    }
}

void run_pingpong(JobOptions o, size_t payload)
{
    LLC_EXPECT_JOB_OK(o, [payload](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        PingState s;
        s.payload = payload;
        s.buf.resize(payload);
        ASSERT_EQ(llc_am_register(ctx, 1, ping_handler, &s), LLC_OK);
        int peer = 1 - p.rank;
        if (p.rank == 0) {
            int n = 0;
            fill_pattern(s.buf.data(), payload, 0);
            llc_iov_t iov{s.buf.data(), payload};
            int rc = llc_am_send(ctx, peer, 1, &n, sizeof(n), &iov, 1, on_done, &s);
            ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS);
        }
        // Rank 1 receives the even numbers, rank 0 the odd ones.  Reusing
        // one buffer is safe: a reply proves the previous send was consumed.
        s.expect_next = p.rank == 0 ? 1 : 0;
        int expect = p.rank == 0 ? kRounds / 2 : (kRounds + 1) / 2;
        progress_until(ctx, [&] { return s.received == expect; });
        EXPECT_EQ(s.received, expect);
        finalize_ok(ctx);
    });
}

} // namespace

TEST(PingPong, ShmRepliesFromHandler) { run_pingpong(job({0, 0}), 16); }

TEST(PingPong, TcpRepliesFromHandler)
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    run_pingpong(o, 16);
}

TEST(PingPong, ShmLargePayloadFromHandler) { run_pingpong(job({0, 0}), 200 * 1024); }
