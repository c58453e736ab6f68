// tagged_am_hostile_test.cpp - large active messages' request-to-sends
// (kTagAmRts, tagged_am.cpp) from a job member that do not fit
// (doc/reliability.md): spans naming unmapped memory, the top of the
// address space, a process that does not exist or is not the sender, a
// buffer freed before the read, a read that stops part-way.  Each fails its
// own message alone: not delivered, counted (cma_read_failed), answered by
// Fail (the sender's send completes with LLC_ERR_PEER), and a message sent
// afterwards arrives intact.  A malformed one (a short header, spans that do
// not fit the record, lengths that do not add up or overflow, a handler id
// out of range) is dropped and counted (tag_rejected), as every tagged
// record that does not fit: no error, the pair goes on.
//
// The records are forged by a real second process through libllc's own
// record path (Context::send_am to the internal handler), so they reach
// the receiver through its ring like real ones.
#include "common/cma_probe.hpp"
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "support/cma_copy.hpp"
#include "tagged/tagged.hpp"
#include "transport/transport.hpp"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kHandler = 3;
constexpr size_t kForged = 32 * 1024; // the length a forged request-to-send claims
constexpr size_t kReal = 256 * 1024;  // LLC_CMA_THRESHOLD (256k): a real large message, read where it is
constexpr uint64_t kTopOfAddressSpace = ~uint64_t(0) - 65535;

// The same address in every process of a job (they are forked from the test).
char g_bait[kForged];

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

struct Inbox {
    int n = 0;
    int bad = 0;
    size_t last_len = 0;
    uint64_t seed = 0; // of the next message expected intact
};
void on_msg(llc_context_t *, void *arg, int, const void *, size_t, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    in->n++;
    in->last_len = len;
    if (!check_pattern(data, len, in->seed))
        in->bad++;
}

struct Outcome {
    int status = 1; // 1: not completed yet
};
void on_done(void *arg, int status) { static_cast<Outcome *>(arg)->status = status; }

// A large active message's request-to-send to dest (handler kHandler, no
// caller's header), forged: token sreq (none of the forger's), the spans as
// given, the length claimed; hdr_len != sizeof(AmRtsWire): a short header.
void forge_rts(llc_context_t *ctx, int dest, int32_t pid, const std::vector<llc::RemoteSpan> &spans, uint64_t length,
               int64_t claimed_spans = -1, unsigned handler = kHandler, size_t hdr_len = sizeof(llc::AmRtsWire))
{
    llc::Context &c = llc::context_of(ctx);
    llc::AmRtsWire w{};
    w.sreq = 0x5eed0000ull;
    w.length = length;
    w.pid = pid;
    w.handler = handler;
    w.spans = uint32_t(claimed_spans >= 0 ? uint64_t(claimed_spans) : spans.size());
    llc_iov_t iov{spans.data(), spans.size() * sizeof(llc::RemoteSpan)};
    EXPECT_STREQ(c.transport_to(dest).caps().name, "shm");
    int rc = c.send_am(dest, llc::kTagAmRts, &w, hdr_len, &iov, 1, nullptr, nullptr);
    EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
}

// A real message of len bytes with pattern seed to dest, completed.
void send_real(llc_context_t *ctx, int dest, size_t len, uint64_t seed)
{
    std::vector<char> buf(len);
    fill_pattern(buf.data(), len, seed);
    Outcome out;
    llc_iov_t iov{buf.data(), len};
    int rc = llc_am_send(ctx, dest, kHandler, nullptr, 0, &iov, 1, on_done, &out);
    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
    if (rc == LLC_INPROGRESS) {
        EXPECT_TRUE(progress_until(
            ctx, [&] { return out.status != 1; }, 20));
        EXPECT_EQ(out.status, LLC_OK);
    }
}

int32_t bootstrap_pid(TestProcess &p, int rank)
{
    int32_t pid = 0;
    size_t len = sizeof(pid);
    EXPECT_EQ(TestProcess::get(&p, rank, ("pid-" + std::to_string(rank)).c_str(), &pid, &len), 0);
    return pid;
}

void put_pid(TestProcess &p)
{
    int32_t pid = int32_t(getpid());
    EXPECT_EQ(TestProcess::put(&p, ("pid-" + std::to_string(p.rank)).c_str(), &pid, sizeof(pid)), 0);
}

} // namespace

// Rank 1 sends rank 0 six large active messages whose memory cannot be
// read (one a real send whose buffer it unmaps before rank 0 reads it);
// rank 2 holds the bait that one of them names.  Rank 0 counts each,
// delivers none and answers each with Fail (rank 1's real send fails, the
// forged ones name no request of its: dropped there); then a real message
// from each arrives intact.
TEST(TaggedAmHostile, UnreadableSpansFailOnlyTheirMessage)
{
    if (!cma_permitted())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    LLC_EXPECT_JOB_OK(job({0, 0, 0}), [](TestProcess &p) {
        fill_pattern(g_bait, sizeof(g_bait), 99);
        put_pid(p);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, kHandler, on_msg, &in), LLC_OK);
        const int kFailures = 6;
        Outcome freed;
        void *gone = MAP_FAILED;
        if (p.rank == 1) {
            // 1: a real large send whose buffer is unmapped before rank 0
            // (in the fence below, not progressing) reads it
            gone = mmap(nullptr, kReal, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(gone, MAP_FAILED);
            std::memset(gone, 7, kReal);
            llc_iov_t iov{gone, kReal};
            ASSERT_EQ(llc_am_send(ctx, 0, kHandler, nullptr, 0, &iov, 1, on_done, &freed), LLC_INPROGRESS);
            munmap(gone, kReal);
        }
        TestProcess::fence(&p);
        if (p.rank == 1) {
            const int32_t me = int32_t(getpid()), other = bootstrap_pid(p, 2);
            std::vector<char> mine(kForged, 'm');
            const uint64_t half = kForged / 2;
            const uint64_t at = uint64_t(uintptr_t(mine.data()));
            struct Case {
                int32_t pid;
                std::vector<llc::RemoteSpan> spans;
            };
            const Case cases[] = {
                {me, {{0x1000, kForged}}},                         // 2: not mapped
                {me, {{kTopOfAddressSpace, kForged}}},             // 3: beyond the address space
                {0x3ffffff0, {{at, kForged}}},                     // 4: no such process
                {other, {{uint64_t(uintptr_t(g_bait)), kForged}}}, // 5: readable, but not the sender's
                {me, {{at, half}, {0x1000, half}}},                // 6: stops part-way
            };
            EXPECT_TRUE(progress_until(
                ctx, [&] { return freed.status != 1; }, 10));
            EXPECT_EQ(freed.status, LLC_ERR_PEER) << "a send whose buffer was gone";
            for (const Case &c : cases) {
                uint64_t rejected = stats(ctx).tag_rejected;
                forge_rts(ctx, 0, c.pid, c.spans, kForged);
                // rank 0's Fail names no request of ours: dropped, counted
                EXPECT_TRUE(progress_until(
                    ctx, [&] { return stats(ctx).tag_rejected == rejected + 1; }, 10));
            }
        }
        if (p.rank == 0) {
            EXPECT_TRUE(progress_until(
                ctx, [&] { return stats(ctx).cma_read_failed >= uint64_t(kFailures); }, 20));
            for (int i = 0; i < 50; i++)
                EXPECT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            EXPECT_EQ(stats(ctx).cma_read_failed, uint64_t(kFailures));
            EXPECT_EQ(in.n, 0) << "a message whose memory could not be read was delivered";
        }
        TestProcess::fence(&p);
        // Then a real message from each of 1 and 2 to 0, one at a time, checked.
        for (int from : {1, 2}) {
            if (p.rank == from) {
                uint64_t cma_before = stats(ctx).cma_msgs;
                send_real(ctx, 0, kReal, uint64_t(from));
                EXPECT_EQ(stats(ctx).cma_msgs, cma_before + 1) << "read where it was";
            }
            if (p.rank == 0) {
                in.seed = uint64_t(from);
                int before = in.n;
                EXPECT_TRUE(progress_until(
                    ctx, [&] { return in.n == before + 1; }, 20))
                    << llc_last_error(ctx);
                EXPECT_EQ(in.last_len, kReal);
                EXPECT_EQ(in.bad, 0);
            }
            TestProcess::fence(&p);
        }
        if (p.rank == 0)
            EXPECT_EQ(stats(ctx).cma_read_failed, uint64_t(kFailures));
        else
            EXPECT_EQ(stats(ctx).cma_read_failed, 0u);
        finalize_ok(ctx);
    });
}

struct Malformed {
    const char *name;
    int64_t claimed_spans; // -1: the real count
    std::vector<llc::RemoteSpan> spans;
    uint64_t length;
    unsigned handler = kHandler;
    size_t hdr_len = sizeof(llc::AmRtsWire);
};

class TaggedAmMalformed : public ::testing::TestWithParam<Malformed> {};

// Rank 1 sends rank 0 one malformed request-to-send: rank 0 drops and counts
// it (tag_rejected), delivers nothing, reads nothing, reports no error; a
// real large message from rank 1 afterwards arrives intact.
TEST_P(TaggedAmMalformed, IsDroppedAndCounted)
{
    if (!cma_permitted())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    const Malformed m = GetParam();
    LLC_EXPECT_JOB_OK(job({0, 0}), [&](TestProcess &p) {
        fill_pattern(g_bait, sizeof(g_bait), 5);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, kHandler, on_msg, &in), LLC_OK);
        if (p.rank == 1)
            forge_rts(ctx, 0, int32_t(getpid()), m.spans, m.length, m.claimed_spans, m.handler, m.hdr_len);
        if (p.rank == 0) {
            EXPECT_TRUE(progress_until(
                ctx, [&] { return stats(ctx).tag_rejected == 1; }, 20))
                << llc_last_error(ctx);
            for (int i = 0; i < 50; i++)
                EXPECT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
            EXPECT_EQ(in.n, 0);
            EXPECT_EQ(stats(ctx).cma_read_failed, 0u);
        }
        TestProcess::fence(&p);
        if (p.rank == 1)
            send_real(ctx, 0, kReal, 2);
        if (p.rank == 0) {
            in.seed = 2;
            EXPECT_TRUE(progress_until(
                ctx, [&] { return in.n == 1; }, 20))
                << llc_last_error(ctx);
            EXPECT_EQ(in.last_len, kReal);
            EXPECT_EQ(in.bad, 0);
        }
        TestProcess::fence(&p);
        finalize_ok(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(
    Shm, TaggedAmMalformed,
    ::testing::Values(
        Malformed{"ShortHeader", -1, {{uint64_t(uintptr_t(g_bait)), kForged}}, kForged, kHandler, 16},
        Malformed{"SpanCountDoesNotFit", 5, {{uint64_t(uintptr_t(g_bait)), kForged}}, kForged},
        Malformed{"LengthsDoNotAddUp", -1, {{uint64_t(uintptr_t(g_bait)), 1000}}, kForged},
        Malformed{"AddressPlusLengthOverflows", -1, {{~uint64_t(0) - 100, kForged}}, kForged},
        Malformed{"TotalLengthOverflows",
                  -1,
                  {{uint64_t(uintptr_t(g_bait)), ~uint64_t(0)}, {uint64_t(uintptr_t(g_bait)), kForged + 1}},
                  kForged},
        Malformed{"HandlerOutOfRange", -1, {{uint64_t(uintptr_t(g_bait)), kForged}}, kForged, LLC_AM_MAX_HANDLERS}),
    [](const ::testing::TestParamInfo<Malformed> &info) { return std::string(info.param.name); });
