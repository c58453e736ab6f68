// tagged_am_buffer_test.cpp - where large active messages are read
// (tagged_am.cpp): a stream of them, each read by CMA into the receiver's
// buffer of large active messages, reuses that buffer instead of making one
// per message, so a steady stream of 2 MiB accumulates (as MPIDIG sends for
// one-sided operations) touches no new memory on the receiver: a page fault
// per 4 KiB of a fresh buffer costs 10-15 us on some virtual machines.
#include "common/cma_probe.hpp"
#include "common/test_util.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <malloc.h>

#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kHandler = 4;
constexpr size_t kLen = size_t(2) << 20;

long minor_faults()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

struct Inbox {
    int n = 0;
    int bad = 0;
    uint64_t seed = 0;
    int warm = 0, last = 0;
    long faults_after_warm = 0, faults_at_last = 0;
};
void on_msg(llc_context_t *, void *arg, int, const void *, size_t, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    // (the first byte of each 4 KiB and the last: the whole check would
    // dominate the test's time under the sanitizers)
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t at = 0; at < len; at += 4096)
        if (p[at] != (unsigned char)(in->seed + at / 4096) || p[len - 1] != (unsigned char)in->seed)
            in->bad++;
    in->n++;
    // (here, not around progress calls: one call may deliver them all)
    if (in->n == in->warm)
        in->faults_after_warm = minor_faults();
    if (in->n == in->last)
        in->faults_at_last = minor_faults();
    in->seed++;
}

void on_done(void *arg, int status) { *static_cast<int *>(arg) = status; }

} // namespace

// Rank 1 sends rank 0 40 active messages of 2 MiB, one at a time, each
// read where rank 1 keeps it.  After the first 10, the rest cost rank 0
// fewer minor page faults than one fresh 2 MiB buffer would (512 pages):
// without the kept buffer they cost 512 each (15,000 in all).  Rank 0's
// allocator gives freed memory back at once (as glibc's does once a
// program's other allocations leave the top of its heap free, MPICH's in
// large_acc_flush_local: 400,000 faults in 20 of its 500 iterations).
TEST(TaggedAmBuffer, SteadyLargeActiveMessagesTouchNoNewMemory)
{
    if (!cma_permitted())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kWarm = 10, kSteady = 30;
        if (p.rank == 0) {
            mallopt(M_MMAP_THRESHOLD, 128 * 1024); // (fixed: no longer adapted)
            mallopt(M_TRIM_THRESHOLD, 128 * 1024);
        }
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        in.warm = kWarm;
        in.last = kWarm + kSteady;
        ASSERT_EQ(llc_am_register(ctx, kHandler, on_msg, &in), LLC_OK);
        if (p.rank == 1) {
            std::vector<unsigned char> buf(kLen);
            for (int i = 0; i < kWarm + kSteady; i++) {
                for (size_t at = 0; at < kLen; at += 4096)
                    buf[at] = (unsigned char)(uint64_t(i) + at / 4096);
                buf[kLen - 1] = (unsigned char)i;
                int status = 1;
                llc_iov_t iov{buf.data(), kLen};
                int rc = llc_am_send(ctx, 0, kHandler, nullptr, 0, &iov, 1, on_done, &status);
                ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
                if (rc == LLC_INPROGRESS) {
                    ASSERT_TRUE(progress_until(
                        ctx, [&] { return status != 1; }, 30));
                }
                ASSERT_TRUE(rc == LLC_OK || status == LLC_OK) << llc_strerror(status);
            }
        } else {
            ASSERT_TRUE(progress_until(
                ctx, [&] { return in.n == kWarm + kSteady; }, 60));
            const long faults = in.faults_at_last - in.faults_after_warm;
            EXPECT_EQ(in.bad, 0);
            EXPECT_LT(faults, long(kLen / 4096)) << "minor page faults on the receiver in " << kSteady
                                                 << " large active messages of " << kLen << " bytes";
        }
        TestProcess::fence(&p);
        finalize_ok(ctx);
    });
}
