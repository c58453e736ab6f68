// cma_test.cpp - large active messages to a process of the node, read where
// they are by the tagged layer's rendezvous (process_vm_readv), and the
// fallbacks: LLC_CMA=0, a kernel that refuses (streamed, in order).
#include "common/test_util.hpp"

#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llctest;

namespace {

constexpr int kMessages = 12;
constexpr size_t kSize = 1u << 20;

// Whether this kernel lets a child read its parent's memory (ptrace rules).
bool cma_works_here()
{
    static char secret[16] = "cma-probe";
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        char buf[16] = {};
        iovec local{buf, sizeof(buf)}, remote{secret, sizeof(secret)};
        _exit(process_vm_readv(parent, &local, 1, &remote, 1, 0) == ssize_t(sizeof(buf)) ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Recv {
    int n = 0;
};

void on_big(llc_context_t *, void *arg, int src, const void *hdr, size_t, const void *data, size_t len)
{
    auto *r = static_cast<Recv *>(arg);
    int idx;
    std::memcpy(&idx, hdr, sizeof(idx));
    EXPECT_EQ(idx, r->n);
    EXPECT_EQ(len, kSize);
    EXPECT_TRUE(check_pattern(data, len, uint64_t(src * 1000 + idx)));
    r->n++;
}

void completion(void *arg, int status)
{
    EXPECT_EQ(status, LLC_OK);
    ++*static_cast<int *>(arg);
}

// Rank 0 sends kMessages 1 MiB messages (split in 3 segments) to rank 1.
void run_cma_job(JobOptions o, std::function<void(const llc_stats_t &)> check_sender)
{
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Recv r;
        ASSERT_EQ(llc_am_register(ctx, 4, on_big, &r), LLC_OK);
        if (p.rank == 0) {
            std::vector<std::vector<char>> bufs(kMessages, std::vector<char>(kSize));
            int done = 0, inprogress = 0;
            for (int i = 0; i < kMessages; i++) {
                fill_pattern(bufs[i].data(), kSize, uint64_t(i));
                llc_iov_t iov[3] = {{bufs[i].data(), 100}, {bufs[i].data() + 100, 500000},
                                    {bufs[i].data() + 500100, kSize - 500100}};
                int rc = llc_am_send(ctx, 1, 4, &i, sizeof(i), iov, 3, completion, &done);
                ASSERT_TRUE(rc == LLC_INPROGRESS || rc == LLC_OK);
                inprogress += rc == LLC_INPROGRESS;
            }
            progress_until(ctx, [&] { return done == inprogress; });
            llc_stats_t st;
            llc_get_stats(ctx, &st);
            check_sender(st);
        } else {
            progress_until(ctx, [&] { return r.n == kMessages; });
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(Cma, LargeMessagesUseSingleCopy)
{
    if (!cma_works_here())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    run_cma_job(job({0, 0}), [](const llc_stats_t &st) { EXPECT_EQ(st.cma_msgs, uint64_t(kMessages)); });
}

TEST(Cma, DisabledByEnvironmentStreamsThroughRing)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA", "0"}};
    run_cma_job(o, [](const llc_stats_t &st) { EXPECT_EQ(st.cma_msgs, 0u); });
}

TEST(Cma, RefusedByKernelFallsBackToStreaming)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA_SIMULATE_EPERM", "1"}};
    run_cma_job(o, [](const llc_stats_t &st) { EXPECT_EQ(st.cma_msgs, 0u); });
}

TEST(Cma, ThresholdIsConfigurable)
{
    if (!cma_works_here())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA_THRESHOLD", "2m"}};
    run_cma_job(o, [](const llc_stats_t &st) { EXPECT_EQ(st.cma_msgs, 0u); });
}

namespace {

struct Ordered {
    int n = 0;
    int bad = 0;
};

void on_any(llc_context_t *, void *arg, int src, const void *hdr, size_t, const void *data, size_t len)
{
    auto *r = static_cast<Ordered *>(arg);
    int idx;
    std::memcpy(&idx, hdr, sizeof(idx));
    const size_t want = idx % 3 == 0 ? kSize : size_t(64 + idx);
    if (idx != r->n || len != want || !check_pattern(data, len, uint64_t(src * 1000 + idx)))
        r->bad++;
    r->n++;
}

} // namespace

// A kernel that refuses every read: large messages (every third) are
// streamed after a clear-to-send, and the small ones sent after each (eager,
// inline into the ring) are held by the receiver until it has run the large
// one: the handler sees all of them in the order sent.
TEST(Cma, RefusedByKernelKeepsTheOrderOfLaterMessages)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA_SIMULATE_EPERM", "1"}};
    constexpr int kCount = 30;
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Ordered r;
        ASSERT_EQ(llc_am_register(ctx, 5, on_any, &r), LLC_OK);
        if (p.rank == 0) {
            std::vector<std::vector<char>> bufs(kCount);
            int done = 0, inprogress = 0;
            for (int i = 0; i < kCount; i++) {
                bufs[i].resize(i % 3 == 0 ? kSize : size_t(64 + i));
                fill_pattern(bufs[i].data(), bufs[i].size(), uint64_t(i));
                llc_iov_t iov{bufs[i].data(), bufs[i].size()};
                int rc = llc_am_send(ctx, 1, 5, &i, sizeof(i), &iov, 1, completion, &done);
                ASSERT_TRUE(rc == LLC_INPROGRESS || rc == LLC_OK);
                inprogress += rc == LLC_INPROGRESS;
            }
            EXPECT_TRUE(progress_until(ctx, [&] { return done == inprogress; }));
            llc_stats_t st;
            llc_get_stats(ctx, &st);
            EXPECT_EQ(st.cma_msgs, 0u);
        } else {
            EXPECT_TRUE(progress_until(ctx, [&] { return r.n == kCount; }));
            EXPECT_EQ(r.bad, 0);
        }
        finalize_ok(ctx);
    });
}

namespace {

struct AfterDeath {
    std::vector<int> seen; // indexes, in the order the handler ran them
    int bad = 0;
};

void on_after_death(llc_context_t *, void *arg, int src, const void *hdr, size_t, const void *data, size_t len)
{
    auto *r = static_cast<AfterDeath *>(arg);
    int idx;
    std::memcpy(&idx, hdr, sizeof(idx));
    if (len != size_t(64 + idx) || !check_pattern(data, len, uint64_t(src * 1000 + idx)))
        r->bad++;
    r->seen.push_back(idx);
}

} // namespace

// The kernel refuses the read, the receiver asks for the large message to be
// streamed and holds the sender's later (small, whole) messages back; the
// sender dies before it streams.  Its death is reported, the large message
// never runs, and the held messages are not kept forever: they run, in the
// order sent, once the large message has failed.
TEST(Cma, SenderThatDiesBeforeStreamingReleasesItsLaterMessages)
{
    JobOptions o = job({0, 0}, 60);
    o.env = {{"LLC_CMA_SIMULATE_EPERM", "1"}};
    constexpr int kSmall = 3; // after the large one
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        AfterDeath r;
        ASSERT_EQ(llc_am_register(ctx, 5, on_after_death, &r), LLC_OK);
        if (p.rank == 0) {
            std::vector<char> big(kSize);
            int idx = 0, done = 0;
            llc_iov_t iov{big.data(), big.size()};
            ASSERT_EQ(llc_am_send(ctx, 1, 5, &idx, sizeof(idx), &iov, 1, completion, &done), LLC_INPROGRESS);
            std::vector<std::vector<char>> small(kSmall + 1);
            for (idx = 1; idx <= kSmall; idx++) {
                small[idx].resize(size_t(64 + idx));
                fill_pattern(small[idx].data(), small[idx].size(), uint64_t(idx));
                llc_iov_t s{small[idx].data(), small[idx].size()};
                ASSERT_EQ(llc_am_send(ctx, 1, 5, &idx, sizeof(idx), &s, 1, completion, &done), LLC_OK);
            }
            // no progress: the clear-to-send is never read, the payload never streamed
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0);
        }
        int rc = LLC_OK;
        const double end = now_s() + 20;
        while ((rc = llc_progress(ctx, nullptr)) == LLC_OK && now_s() < end) {
        }
        ASSERT_EQ(rc, LLC_ERR_PEER) << "the sender's death was not reported";
        EXPECT_TRUE(progress_until(
            ctx, [&] { return r.seen.size() == size_t(kSmall); }, 5))
            << r.seen.size() << " of the " << kSmall << " held messages ran";
        EXPECT_EQ(r.seen, (std::vector<int>{1, 2, 3}));
        EXPECT_EQ(r.bad, 0);
        llc_finalize(ctx); // may report the dead peer again; it must return
    });
}
