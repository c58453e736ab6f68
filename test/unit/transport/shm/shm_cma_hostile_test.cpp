// shm_cma_hostile_test.cpp - single-copy (CMA) request-to-sends of the shm
// transport (CmaRts) from a job member that do not fit
// (doc/reliability.md): descriptors naming unmapped memory, the top of the
// address space, a process that does not exist or is not the sender, a
// buffer freed before the read, a read that stops part-way.  Each fails its
// own message alone: not delivered, counted (cma_read_failed), the sender's
// send completes with LLC_ERR_PEER, and a message sent afterwards arrives
// intact.  A malformed descriptor (truncated, a segment count that does not
// fit the record, lengths that do not add up or overflow, more segments
// than a record may carry) is a protocol error naming the sender; the other
// processes of the node carry on.
//
// The records are forged by a real second process with libllc's own shm
// send path (Context::transport_to), so they reach the receiver through
// its ring like real ones.
#include "common/test_util.hpp"

#include "wire/am_protocol.hpp"
#include "core/context.hpp"
#include "wire/outgoing_message.hpp"
#include "transport/transport.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kHandler = 3;
constexpr size_t kForged = 32 * 1024;  // above LLC_COPY_MAX (16k): the forged send completes by callback
constexpr size_t kReal = 256 * 1024;   // above LLC_CMA_THRESHOLD (64k): a real single-copy send
constexpr uint64_t kTopOfAddressSpace = ~uint64_t(0) - 65535;

// The same address in every process of a job (they are forked from the test).
char g_bait[kForged];

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

bool cma_across_processes()
{
    static char probe[8] = "probe";
    char buf[8] = {};
    iovec local{buf, sizeof(buf)}, remote{probe, sizeof(probe)};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(sizeof(buf));
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

std::string descriptor(int32_t pid, std::vector<llc::CmaSegment> segs, int64_t claimed_segments = -1)
{
    llc::CmaDescriptor d{pid, uint32_t(claimed_segments >= 0 ? uint64_t(claimed_segments) : segs.size())};
    std::string aux(reinterpret_cast<const char *>(&d), sizeof(d));
    aux.append(reinterpret_cast<const char *>(segs.data()), segs.size() * sizeof(llc::CmaSegment));
    return aux;
}

// A CmaRts record to dest with this aux, claiming payload_len bytes, in the
// stream's order, through the shm transport (its payload is never streamed).
void forge_rts(llc_context_t *ctx, int dest, const std::string &aux, uint64_t payload_len, Outcome *out)
{
    llc::Context &c = llc::context_of(ctx);
    llc_iov_t iov{g_bait, size_t(payload_len)}; // only its length counts: an Rts does not carry its payload
    auto am = llc::OutgoingMessage::make_am(c.rank(), kHandler, c.take_send_seq_for_tests(dest), nullptr, 0, &iov, 1,
                                            nullptr, nullptr);
    auto rts = llc::OutgoingMessage::make_rts(*am, llc::Kind::CmaRts, aux.data(), aux.size());
    rts->cb = on_done;
    rts->cb_arg = out;
    llc::Transport &shm = c.transport_to(dest);
    EXPECT_STREQ(shm.caps().name, "shm");
    int rc = shm.send(dest, std::move(rts));
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
        EXPECT_TRUE(progress_until(ctx, [&] { return out.status != 1; }, 20));
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

// Rank 1 sends rank 0 six single-copy messages whose memory cannot be read
// (one a real send whose buffer it unmaps before rank 0 reads it); rank 2
// holds the bait that one of them names.  Rank 0 counts each, delivers none;
// rank 1 learns each failed; then a real message from each arrives intact.
TEST(ShmCmaHostile, UnreadableDescriptorsFailOnlyTheirMessage)
{
    if (!cma_across_processes())
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
            // 1: a real single-copy send whose buffer is unmapped before rank 0
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
            const std::string cases[] = {
                descriptor(me, {{0x1000, kForged}}),                                      // 2: not mapped
                descriptor(me, {{kTopOfAddressSpace, kForged}}),                          // 3: beyond the address space
                descriptor(0x3ffffff0, {{uint64_t(uintptr_t(mine.data())), kForged}}),    // 4: no such process
                descriptor(other, {{uint64_t(uintptr_t(g_bait)), kForged}}),              // 5: readable, but not the sender's
                descriptor(me, {{uint64_t(uintptr_t(mine.data())), half}, {0x1000, half}}), // 6: stops part-way
            };
            EXPECT_TRUE(progress_until(ctx, [&] { return freed.status != 1; }, 10));
            EXPECT_EQ(freed.status, LLC_ERR_PEER) << "a send whose buffer was gone";
            for (const std::string &aux : cases) {
                Outcome out;
                forge_rts(ctx, 0, aux, kForged, &out);
                EXPECT_TRUE(progress_until(ctx, [&] { return out.status != 1; }, 10));
                EXPECT_EQ(out.status, LLC_ERR_PEER);
            }
        }
        if (p.rank == 0) {
            EXPECT_TRUE(progress_until(ctx, [&] { return stats(ctx).cma_read_failed >= uint64_t(kFailures); }, 20));
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
                EXPECT_EQ(stats(ctx).cma_msgs, cma_before + 1) << "sent with one copy";
            }
            if (p.rank == 0) {
                in.seed = uint64_t(from);
                int before = in.n;
                EXPECT_TRUE(progress_until(ctx, [&] { return in.n == before + 1; }, 20)) << llc_last_error(ctx);
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
    int64_t claimed_segments; // -1: the real count
    std::vector<llc::CmaSegment> segs;
    uint64_t payload_len;
    const char *says; // in the error
    size_t empty_segments = 0; // > 0: this many empty segments instead of segs
};

class ShmCmaMalformed : public ::testing::TestWithParam<Malformed> {};

// Rank 1 sends rank 0 one malformed CmaRts: rank 0's progress fails with a
// protocol error naming rank 1 (that pair is broken), nothing is delivered
// or counted as a failed read, and rank 2's message afterwards arrives intact.
TEST_P(ShmCmaMalformed, IsAProtocolErrorNamingTheSender)
{
    if (!cma_across_processes())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    const Malformed m = GetParam();
    LLC_EXPECT_JOB_OK(job({0, 0, 0}), [&](TestProcess &p) {
        fill_pattern(g_bait, sizeof(g_bait), 5);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, kHandler, on_msg, &in), LLC_OK);
        if (p.rank == 1) {
            Outcome out;
            std::vector<llc::CmaSegment> segs = m.segs;
            if (m.empty_segments) // more than a record may hold: made here, not at start-up
                segs.assign(m.empty_segments, llc::CmaSegment{uint64_t(uintptr_t(g_bait)), 0});
            std::string aux = std::string(m.name) == "Truncated" ? std::string(4, '\0')
                                                                  : descriptor(int32_t(getpid()), segs, m.claimed_segments);
            forge_rts(ctx, 0, aux, m.payload_len, &out);
            for (int i = 0; i < 100; i++)
                llc_progress(ctx, nullptr);
        }
        if (p.rank == 0) {
            int rc = LLC_OK;
            const double end = now_s() + 20;
            while ((rc = llc_progress(ctx, nullptr)) == LLC_OK && now_s() < end) {
            }
            EXPECT_EQ(rc, LLC_ERR_PEER);
            const std::string msg = llc_last_error(ctx);
            EXPECT_TRUE(contains(msg, "protocol error")) << msg;
            EXPECT_TRUE(contains(msg, "rank 1")) << msg;
            EXPECT_TRUE(contains(msg, m.says)) << msg;
            EXPECT_EQ(in.n, 0);
            EXPECT_EQ(stats(ctx).cma_read_failed, 0u);
        }
        TestProcess::fence(&p);
        if (p.rank == 1) {
            // its ring to rank 0 is broken: it leaves without finalize
            p.depart();
            syscall(SYS_exit_group, 0);
        }
        if (p.rank == 2)
            send_real(ctx, 0, kReal, 2);
        if (p.rank == 0) {
            in.seed = 2;
            EXPECT_TRUE(progress_until(ctx, [&] { return in.n == 1; }, 20)) << llc_last_error(ctx);
            EXPECT_EQ(in.last_len, kReal);
            EXPECT_EQ(in.bad, 0);
        }
        TestProcess::fence(&p);
        llc_finalize(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(
    Shm, ShmCmaMalformed,
    ::testing::Values(
        Malformed{"Truncated", -1, {}, kForged, "short CMA descriptor"},
        Malformed{"SegmentCountDoesNotFit", 5, {{uint64_t(uintptr_t(g_bait)), kForged}}, kForged, "bad CMA descriptor"},
        Malformed{"LengthsDoNotAddUp", -1, {{uint64_t(uintptr_t(g_bait)), 1000}}, kForged, "length mismatch"},
        Malformed{"AddressPlusLengthOverflows", -1, {{~uint64_t(0) - 100, kForged}}, kForged, "overflows"},
        Malformed{"TotalLengthOverflows",
                  -1,
                  {{uint64_t(uintptr_t(g_bait)), ~uint64_t(0)}, {uint64_t(uintptr_t(g_bait)), kForged + 1}},
                  kForged,
                  "overflows"},
        // more segments than a record's control data may hold (16 MiB)
        Malformed{"TooManySegments", -1, {}, 0, "control data too long",
                  llc::kMaxAuxBytes / sizeof(llc::CmaSegment)}),
    [](const ::testing::TestParamInfo<Malformed> &info) { return std::string(info.param.name); });
