// rma_test.cpp - one-sided put and get (llc_put, llc_get, registered regions
// and their keys) on every path: self (memcpy), the node with process_vm_*
// (CMA), the node without it (LLC_CMA=0: records through the rings), tcp and
// udp between processes of one host.  Every byte is checked, and the bytes
// around each region (guards) are checked untouched, also after accesses
// that must fail: out of range, a deregistered region, forged keys.  A target
// that dies while a get waits for it fails the get with LLC_ERR_PEER.
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "rma/rma.hpp"
#include "rma/rma_wire.hpp"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include <cstring>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr size_t kGuard = 4096;
constexpr char kGuardByte = char(0xa5);

// A region with guard bytes on both sides, registered on ctx.
struct GuardedRegion {
    std::vector<char> mem;
    size_t len;
    llc_region_t *region = nullptr;

    GuardedRegion(llc_context_t *ctx, size_t bytes, unsigned flags = 0)
        : mem(bytes + 2 * kGuard, kGuardByte), len(bytes)
    {
        std::memset(data(), 0, len);
        EXPECT_EQ(llc_mem_register(ctx, data(), len, flags, &region), LLC_OK) << llc_last_error(ctx);
    }
    char *data() { return mem.data() + kGuard; }
    bool guards_intact() const
    {
        for (size_t i = 0; i < kGuard; i++)
            if (mem[i] != kGuardByte || mem[kGuard + len + i] != kGuardByte)
                return false;
        return true;
    }
    std::vector<char> key() const
    {
        std::vector<char> k(LLC_REGION_KEY_BYTES);
        size_t n = 0;
        EXPECT_EQ(llc_region_key(region, k.data(), k.size(), &n), LLC_OK);
        EXPECT_EQ(n, size_t(LLC_REGION_KEY_BYTES));
        return k;
    }
};

// The key rank `from` published under name (after a fence).
std::vector<char> key_of(TestProcess &p, int from, const char *name)
{
    std::vector<char> k(LLC_REGION_KEY_BYTES);
    size_t n = k.size();
    EXPECT_EQ(TestProcess::get(&p, from, name, k.data(), &n), 0);
    EXPECT_EQ(n, k.size());
    return k;
}

void publish_key(TestProcess &p, const char *name, const std::vector<char> &k)
{
    EXPECT_EQ(TestProcess::put(&p, name, k.data(), k.size()), 0);
}

struct Op {
    llc_treq_t req{};
    bool done = false;
    Op()
    {
        req.user = this;
        req.cb = [](llc_treq_t *r) { static_cast<Op *>(r->user)->done = true; };
    }
};

// Wait for an operation started with return code rc; its final status.
int finish(llc_context_t *ctx, Op &op, int rc, double timeout_s = 30)
{
    if (rc < 0)
        return rc;
    if (rc == LLC_OK) {
        EXPECT_FALSE(op.done) << "LLC_OK: the callback is not called";
        return op.req.status;
    }
    EXPECT_EQ(rc, LLC_INPROGRESS);
    if (!progress_until(
            ctx, [&] { return op.done; }, timeout_s))
        return LLC_ERR_TIMEOUT;
    return op.req.status;
}

int put_wait(llc_context_t *ctx, int dest, const void *src, size_t len, const std::vector<char> &key, uint64_t off)
{
    Op op;
    return finish(ctx, op, llc_put(ctx, dest, src, len, key.data(), off, &op.req));
}

int get_wait(llc_context_t *ctx, int dest, void *dst, size_t len, const std::vector<char> &key, uint64_t off)
{
    Op op;
    return finish(ctx, op, llc_get(ctx, dest, dst, len, key.data(), off, &op.req));
}

// Handler 7 counts the "done" messages of done_with_peers; registered
// before the keys' fence, so before any peer can send one.
void count_done_messages(llc_context_t *ctx, int &got)
{
    EXPECT_EQ(llc_am_register(ctx, 7, count_message, &got), LLC_OK);
}

// Tell every other rank we are done with our accesses, and serve theirs
// until each has told us the same (a bootstrap fence would not progress).
void done_with_peers(llc_context_t *ctx, int rank, int size, const int &got)
{
    for (int r = 0; r < size; r++) {
        if (r != rank) {
            EXPECT_GE(llc_am_send(ctx, r, 7, nullptr, 0, nullptr, 0, nullptr, nullptr), 0);
        }
    }
    EXPECT_TRUE(progress_until(ctx, [&] { return got == size - 1; }));
}

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    llc_get_stats(ctx, &s);
    return s;
}

JobOptions shm_job(bool cma)
{
    JobOptions o = job({0, 0});
    if (!cma)
        o.env = {{"LLC_CMA", "0"}};
    return o;
}

enum class Expect { Self, CmaOrRecord, Record, RecordInPlace, CmaRefusedByRank1 };

// Each rank puts to and gets from the next one (itself in a job of one):
// sizes 0, 1, odd ones at the region's end, several MiB; then the whole
// region once more, which the target checks byte for byte.
void round_trip(const JobOptions &o, Expect path, const std::function<void(TestProcess &)> &before_init = {})
{
    LLC_EXPECT_JOB_OK(o, [path, before_init](TestProcess &p) {
        if (before_init)
            before_init(p);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        EXPECT_TRUE(llc_caps(ctx) & LLC_CAP_RMA);
        const size_t kRegion = (5u << 20) + 13;
        GuardedRegion mine(ctx, kRegion);
        publish_key(p, "rma-key", mine.key());
        int peers_done = 0;
        count_done_messages(ctx, peers_done);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int dest = (p.rank + 1) % p.size;
        const std::vector<char> key = key_of(p, dest, "rma-key");
        struct Access {
            uint64_t offset;
            size_t len;
        } accesses[] = {{0, 0},         {kRegion, 0}, {0, 1}, {kRegion - 1, 1}, {kRegion - 4093, 4093},
                        {12345, 65536}, {1, 3u << 20}};
        uint64_t seed = 1000 * uint64_t(p.rank);
        for (const Access &a : accesses) {
            std::vector<char> out(a.len + 1), in(a.len + 1, 'x');
            fill_pattern(out.data(), a.len, ++seed);
            ASSERT_EQ(put_wait(ctx, dest, out.data(), a.len, key, a.offset), LLC_OK)
                << "put at " << a.offset << ": " << llc_last_error(ctx);
            ASSERT_EQ(get_wait(ctx, dest, in.data(), a.len, key, a.offset), LLC_OK)
                << "get at " << a.offset << ": " << llc_last_error(ctx);
            EXPECT_TRUE(check_pattern(in.data(), a.len, seed)) << "round trip of " << a.len << " at " << a.offset;
            EXPECT_EQ(in[a.len], 'x') << "a get writes nothing past its length";
        }
        std::vector<char> whole(kRegion);
        fill_pattern(whole.data(), kRegion, 77 + uint64_t(p.rank));
        ASSERT_EQ(put_wait(ctx, dest, whole.data(), kRegion, key, 0), LLC_OK) << llc_last_error(ctx);
        done_with_peers(ctx, p.rank, p.size, peers_done);
        const int from = (p.rank + p.size - 1) % p.size;
        EXPECT_TRUE(check_pattern(mine.data(), kRegion, 77 + uint64_t(from))) << "the region holds the last put";
        EXPECT_TRUE(mine.guards_intact());
        const llc_stats_t s = stats(ctx);
        const uint64_t ops = 2 * (sizeof(accesses) / sizeof(accesses[0])) + 1;
        EXPECT_EQ(s.rma_puts + s.rma_gets, ops);
        EXPECT_EQ(s.rma_failed, 0u);
        EXPECT_EQ(s.rma_regions, 1u);
        switch (path) {
        case Expect::Self:
            EXPECT_EQ(s.rma_self_ops, ops);
            break;
        case Expect::CmaOrRecord:
            EXPECT_EQ(s.rma_cma_ops + s.rma_record_ops, ops);
            EXPECT_EQ(s.rma_self_ops, 0u);
            std::fprintf(stderr, "rank %d: %llu CMA, %llu record operations\n", p.rank,
                         (unsigned long long)s.rma_cma_ops, (unsigned long long)s.rma_record_ops);
            break;
        case Expect::CmaRefusedByRank1: {
            // Can this process read rank 1's memory?  (The kernel's answer, asked directly.)
            llc::RegionKey k;
            std::memcpy(&k, key.data(), sizeof(k));
            uint64_t word = 0;
            iovec local{&word, sizeof(word)}, remote{reinterpret_cast<void *>(uintptr_t(k.live_addr)), sizeof(word)};
            const bool refused = p.rank == 0 && process_vm_readv(k.pid, &local, 1, &remote, 1, 0) < 0 && errno == EPERM;
            if (p.rank == 0 && !refused) {
                std::fprintf(stderr, "rank 0 may read rank 1's memory here: the fallback is not exercised\n");
            } else if (p.rank == 0) {
                EXPECT_EQ(s.rma_cma_ops, 0u) << "EPERM: the record path";
                EXPECT_EQ(s.rma_record_ops, ops);
            } else {
                EXPECT_EQ(s.rma_cma_ops, ops) << "rank 0's memory stays readable";
            }
            break;
        }
        case Expect::Record:
        case Expect::RecordInPlace:
            EXPECT_EQ(s.rma_record_ops, ops);
            EXPECT_EQ(s.rma_cma_ops, 0u);
            EXPECT_EQ(s.rma_served, ops) << "this rank served the other's records";
            if (path == Expect::RecordInPlace) // tcp: the MiB-sized payloads do not arrive in one read
                EXPECT_GT(s.rma_in_place, 0u) << "payloads read straight into the region or the get's buffer";
            else
                EXPECT_EQ(s.rma_in_place, 0u) << "only tcp reads records into place";
            break;
        }
        EXPECT_EQ(llc_mem_deregister(ctx, mine.region), LLC_OK);
        EXPECT_EQ(stats(ctx).rma_regions, 0u);
        finalize_ok(ctx);
    });
}

// Forge a variant of a packed key.
std::vector<char> forged(const std::vector<char> &key, void (*change)(llc::RegionKey &))
{
    llc::RegionKey k;
    std::memcpy(&k, key.data(), sizeof(k));
    change(k);
    std::vector<char> out(sizeof(k));
    std::memcpy(out.data(), &k, sizeof(k));
    return out;
}

// Rank 0 accesses rank 1's (or its own) region in every wrong way; each
// fails with its status and the target's memory, guards included, is as it
// was.  Then the target deregisters the region and the old key fails too.
void bad_accesses(const JobOptions &o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const size_t kRegion = 8192;
        GuardedRegion mine(ctx, kRegion);
        fill_pattern(mine.data(), kRegion, 500 + uint64_t(p.rank));
        GuardedRegion read_only(ctx, 64, LLC_REGION_REMOTE_READ);
        publish_key(p, "rma-key", mine.key());
        int peers_done = 0;
        count_done_messages(ctx, peers_done);
        publish_key(p, "rma-ro", read_only.key());
        ASSERT_EQ(TestProcess::fence(&p), 0);
        const int target = p.size - 1;
        int deregistered = 0;
        EXPECT_EQ(llc_am_register(ctx, 9, count_message, &deregistered), LLC_OK);
        if (p.rank == 0) {
            const std::vector<char> key = key_of(p, target, "rma-key");
            std::vector<char> out(kRegion + 64, 'o'), in(kRegion + 64, 'i');
            // out of range, by the key's length (found at the origin)
            EXPECT_EQ(put_wait(ctx, target, out.data(), 2, key, kRegion - 1), LLC_ERR_RANGE);
            const std::string msg = llc_last_error(ctx);
            EXPECT_TRUE(contains(msg, "rank " + std::to_string(target)) && contains(msg, "offset 8191")) << msg;
            EXPECT_EQ(get_wait(ctx, target, in.data(), 1, key, kRegion + 1), LLC_ERR_RANGE);
            EXPECT_EQ(get_wait(ctx, target, in.data(), 1, key, ~uint64_t(0)), LLC_ERR_RANGE) << "no wrap";
            // a key that claims a longer region: the target's own length decides
            auto longer = forged(key, [](llc::RegionKey &k) { k.length += 4096; });
            EXPECT_EQ(put_wait(ctx, target, out.data(), 64, longer, kRegion - 32), LLC_ERR_RANGE)
                << llc_last_error(ctx);
            const std::string longer_msg = llc_last_error(ctx);
            EXPECT_TRUE(contains(longer_msg, "offset 8160") && contains(longer_msg, "region of 8192 bytes"))
                << longer_msg;
            EXPECT_EQ(get_wait(ctx, target, in.data(), 64, longer, kRegion), LLC_ERR_RANGE) << llc_last_error(ctx);
            // forged keys: another slot, another generation, another nonce (another job)
            for (auto change :
                 {+[](llc::RegionKey &k) { k.region ^= 5; }, +[](llc::RegionKey &k) { k.region += uint64_t(1) << 32; },
                  +[](llc::RegionKey &k) { k.nonce ^= 0x100; }, +[](llc::RegionKey &k) { k.region = 0; }}) {
                auto bad = forged(key, change);
                EXPECT_EQ(put_wait(ctx, target, out.data(), 16, bad, 0), LLC_ERR_KEY) << llc_last_error(ctx);
                EXPECT_EQ(get_wait(ctx, target, in.data(), 16, bad, 0), LLC_ERR_KEY) << llc_last_error(ctx);
            }
            // not a key at all, or another rank's
            std::vector<char> junk(LLC_REGION_KEY_BYTES, 'j');
            EXPECT_EQ(put_wait(ctx, target, out.data(), 1, junk, 0), LLC_ERR_KEY);
            if (target != 0) {
                EXPECT_EQ(put_wait(ctx, 0, out.data(), 1, key, 0), LLC_ERR_KEY) << "rank 1's key names nothing at 0";
            }
            // a read-only region refuses a put, serves a get
            const std::vector<char> ro = key_of(p, target, "rma-ro");
            EXPECT_EQ(put_wait(ctx, target, out.data(), 8, ro, 0), LLC_ERR_KEY) << llc_last_error(ctx);
            EXPECT_EQ(get_wait(ctx, target, in.data(), 8, ro, 0), LLC_OK) << llc_last_error(ctx);
            // bad arguments
            Op op;
            EXPECT_EQ(llc_put(ctx, 5, out.data(), 1, key.data(), 0, &op.req), LLC_ERR_INVALID);
            EXPECT_EQ(llc_put(ctx, target, nullptr, 1, key.data(), 0, &op.req), LLC_ERR_INVALID);
            EXPECT_EQ(llc_put(ctx, target, out.data(), 1, nullptr, 0, &op.req), LLC_ERR_INVALID);
            EXPECT_EQ(llc_get(ctx, target, in.data(), 1, key.data(), 0, nullptr), LLC_ERR_INVALID);
            // a good one still works
            EXPECT_EQ(get_wait(ctx, target, in.data(), kRegion, key, 0), LLC_OK) << llc_last_error(ctx);
            EXPECT_TRUE(check_pattern(in.data(), kRegion, 500 + uint64_t(target)));
            // the target deregisters: the key is stale
            if (target != 0) {
                EXPECT_EQ(llc_am_send(ctx, target, 9, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
                ASSERT_TRUE(progress_until(ctx, [&] { return deregistered == 1; }));
            } else {
                EXPECT_EQ(llc_mem_deregister(ctx, mine.region), LLC_OK);
                EXPECT_EQ(llc_mem_deregister(ctx, mine.region), LLC_ERR_INVALID) << "twice";
                mine.region = nullptr;
            }
            EXPECT_EQ(put_wait(ctx, target, out.data(), 16, key, 0), LLC_ERR_KEY) << llc_last_error(ctx);
            EXPECT_EQ(get_wait(ctx, target, in.data(), 16, key, 0), LLC_ERR_KEY) << llc_last_error(ctx);
            // 3 out of range, 2 longer, 8 forged, junk, (another rank's,) read-only, 2 stale
            EXPECT_EQ(stats(ctx).rma_failed, target != 0 ? 18u : 17u);
        } else {
            // serve until told to deregister, then say so
            ASSERT_TRUE(progress_until(ctx, [&] { return deregistered == 1; }));
            EXPECT_EQ(llc_mem_deregister(ctx, mine.region), LLC_OK);
            mine.region = nullptr;
            EXPECT_EQ(llc_am_send(ctx, 0, 9, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        }
        done_with_peers(ctx, p.rank, p.size, peers_done);
        if (p.rank == target) {
            EXPECT_TRUE(check_pattern(mine.data(), kRegion, 500 + uint64_t(p.rank))) << "nothing was written";
            EXPECT_TRUE(mine.guards_intact());
            EXPECT_TRUE(read_only.guards_intact());
            std::vector<char> zeros(64, 0);
            EXPECT_EQ(std::memcmp(read_only.data(), zeros.data(), 64), 0) << "the read-only region is untouched";
        }
        EXPECT_EQ(stats(ctx).rma_rejected, 0u);
        finalize_ok(ctx);
    });
}

// Rank 0 starts many puts at once to distinct slices of rank 1's region,
// then waits for all; a get of the whole region checks them.
void many_in_flight(const JobOptions &o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        constexpr int kOps = 256;
        constexpr size_t kSlice = 3000;
        GuardedRegion mine(ctx, kOps * kSlice);
        publish_key(p, "rma-key", mine.key());
        int peers_done = 0;
        count_done_messages(ctx, peers_done);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            const std::vector<char> key = key_of(p, 1, "rma-key");
            std::vector<char> out(kOps * kSlice);
            fill_pattern(out.data(), out.size(), 4242);
            std::vector<Op> ops(kOps);
            int inprogress = 0;
            for (int i = 0; i < kOps; i++) {
                int rc = llc_put(ctx, 1, out.data() + i * kSlice, kSlice, key.data(), uint64_t(i) * kSlice,
                                 &ops[size_t(i)].req);
                ASSERT_GE(rc, 0) << llc_last_error(ctx);
                if (rc == LLC_OK)
                    ops[size_t(i)].done = true;
                else
                    inprogress++;
            }
            ASSERT_TRUE(progress_until(ctx, [&] {
                for (const Op &op : ops)
                    if (!op.done)
                        return false;
                return true;
            }));
            for (const Op &op : ops)
                EXPECT_EQ(op.req.status, LLC_OK);
            std::vector<char> in(out.size());
            ASSERT_EQ(get_wait(ctx, 1, in.data(), in.size(), key, 0), LLC_OK) << llc_last_error(ctx);
            EXPECT_EQ(std::memcmp(in.data(), out.data(), out.size()), 0);
            std::fprintf(stderr, "%d of %d puts were in flight at once\n", inprogress, kOps);
        }
        done_with_peers(ctx, p.rank, p.size, peers_done);
        if (p.rank == 1) {
            EXPECT_TRUE(check_pattern(mine.data(), mine.len, 4242));
            EXPECT_TRUE(mine.guards_intact());
        }
        finalize_ok(ctx);
    });
}

// Rank 1 registers, hands out its key, greets rank 0 and stops serving:
// with get_first, rank 0's get is sent while rank 1 still lives but no longer
// calls llc_progress, and rank 1 then exits; else rank 0 gets only once rank
// 1 is gone.  Either way the get ends with LLC_ERR_PEER (at completion, or
// at the call once the failure is known), never hangs, and so do later ones.
void target_dies(const JobOptions &o, bool get_first)
{
    LLC_EXPECT_JOB_OK(o, [get_first](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        GuardedRegion mine(ctx, 1 << 20);
        publish_key(p, "rma-key", mine.key());
        int peers_done = 0;
        count_done_messages(ctx, peers_done);
        int got = 0;
        EXPECT_EQ(llc_am_register(ctx, 1, count_message, &got), LLC_OK);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 1) {
            greet_then_depart(p, ctx, 0, got);            // rank 0 knows us (a connection, a stream), then silence
            usleep(get_first ? 1000000 : 0);              // rank 0's get waits meanwhile
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        const std::vector<char> key = key_of(p, 1, "rma-key");
        EXPECT_EQ(llc_am_send(ctx, 1, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        progress_until(ctx, [&] { return got == 1; });
        p.depart();
        double until = now_s() + (get_first ? 0.5 : 2.0); // rank 1 has stopped serving (or is gone)
        while (now_s() < until)
            llc_progress(ctx, nullptr);
        std::vector<char> in(1 << 20);
        Op op;
        const double start = now_s();
        int rc = llc_get(ctx, 1, in.data(), in.size(), key.data(), 0, &op.req);
        int status = rc;
        if (rc == LLC_INPROGRESS) {
            while (!op.done && now_s() - start < 30)
                llc_progress(ctx, nullptr); // errors expected: the peer is gone
            status = op.done ? op.req.status : LLC_ERR_TIMEOUT;
        }
        EXPECT_EQ(status, LLC_ERR_PEER) << llc_last_error(ctx);
        std::fprintf(stderr, "get from a dead target: %s at %s after %.2f s (%s)\n", llc_strerror(status),
                     rc == LLC_INPROGRESS ? "completion" : "the call", now_s() - start, llc_last_error(ctx));
        if (get_first) {
            EXPECT_EQ(rc, LLC_INPROGRESS) << "the get was outstanding when the target died";
        }
        // later ones fail at once
        Op again;
        EXPECT_EQ(llc_get(ctx, 1, in.data(), 16, key.data(), 0, &again.req), LLC_ERR_PEER) << llc_last_error(ctx);
        llc_finalize(ctx); // the dead peer makes it report an error; it must not hang
    });
}

// Records a job member could send that fit nothing: replies naming no
// operation, or an operation of ours with another target, the wrong kind or
// the wrong length; a Put whose payload differs from its header; headers of
// the wrong size.  Each is dropped and counted (rma_rejected) and touches
// nothing: the region keeps its bytes, the real get completes with the real
// data.
void hostile_records(const JobOptions &o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const size_t kRegion = 4096;
        GuardedRegion mine(ctx, kRegion);
        fill_pattern(mine.data(), kRegion, 900 + uint64_t(p.rank));
        publish_key(p, "rma-key", mine.key());
        int peers_done = 0;
        count_done_messages(ctx, peers_done);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 1) {
            usleep(500000); // rank 0's get waits for us meanwhile
            done_with_peers(ctx, p.rank, p.size, peers_done);
            EXPECT_EQ(stats(ctx).rma_rejected, 0u);
            finalize_ok(ctx);
            return;
        }
        llc::Context &c = llc::context_of(ctx);
        auto forge = [&](unsigned id, const void *hdr, size_t hdr_len, const void *data, size_t len) {
            llc_iov_t iov{data, len};
            int rc = c.send_am(0, id, hdr, hdr_len, &iov, len ? 1 : 0, nullptr, nullptr);
            EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
        };
        const std::vector<char> theirs = key_of(p, 1, "rma-key");
        const std::vector<char> own = mine.key();
        llc::RegionKey k;
        std::memcpy(&k, own.data(), sizeof(k));
        std::vector<char> in(64, 'i');
        Op get;
        ASSERT_EQ(llc_get(ctx, 1, in.data(), in.size(), theirs.data(), 100, &get.req), LLC_INPROGRESS);
        const uint64_t token = llc::rma_state_of(&get.req).token;
        ASSERT_NE(token, 0u);
        std::vector<char> junk(64, 'j');
        llc::RmaReply reply{token, LLC_OK, 0, 0};
        forge(llc::kRmaAck, &reply, sizeof(reply), nullptr, 0);           // an Ack for a get, from rank 0
        forge(llc::kRmaGetReply, &reply, sizeof(reply), junk.data(), 64); // from rank 0, not rank 1
        reply.status = LLC_ERR_RANGE;
        forge(llc::kRmaNack, &reply, sizeof(reply), nullptr, 0);         // from rank 0, not rank 1
        llc::RmaReply nobody{token + (uint64_t(1) << 32), LLC_OK, 0, 0}; // another generation
        forge(llc::kRmaAck, &nobody, sizeof(nobody), nullptr, 0);
        forge(llc::kRmaGetReply, &nobody, 8, junk.data(), 64); // a short header
        llc::RmaAccess put{12345, k.region, k.nonce, 0, 100};
        forge(llc::kRmaPut, &put, sizeof(put), junk.data(), 64);     // 100 declared, 64 carried
        forge(llc::kRmaPut, &put, sizeof(put) - 8, junk.data(), 64); // a short header
        struct {
            llc::RmaAccess access;
            uint64_t extra;
        } longer{put, 0};
        forge(llc::kRmaGet, &longer, sizeof(longer), nullptr, 0); // a long header
        ASSERT_TRUE(progress_until(
            ctx, [&] { return stats(ctx).rma_rejected >= 8; }, 10));
        EXPECT_FALSE(get.done) << "none of them completed the get";
        ASSERT_TRUE(progress_until(ctx, [&] { return get.done; }));
        EXPECT_EQ(get.req.status, LLC_OK) << llc_last_error(ctx);
        std::vector<char> expect(kRegion);
        fill_pattern(expect.data(), kRegion, 901);
        EXPECT_EQ(std::memcmp(in.data(), expect.data() + 100, in.size()), 0) << "the real reply's bytes";
        EXPECT_TRUE(check_pattern(mine.data(), kRegion, 900)) << "our region is untouched";
        EXPECT_TRUE(mine.guards_intact());
        done_with_peers(ctx, p.rank, p.size, peers_done);
        EXPECT_EQ(stats(ctx).rma_rejected, 8u);
        EXPECT_EQ(c.rma().ops_in_flight(), 0u);
        finalize_ok(ctx);
    });
}

} // namespace

TEST(Rma, RoundTripSelf) { round_trip(job({0}), Expect::Self); }
TEST(Rma, RoundTripShm) { round_trip(shm_job(true), Expect::CmaOrRecord); }
TEST(Rma, RoundTripShmWithoutCma) { round_trip(shm_job(false), Expect::Record); }
TEST(Rma, RoundTripTcp) { round_trip(tcp_pair_job(), Expect::RecordInPlace); }
TEST(Rma, RoundTripUdp) { round_trip(udp_pair_job(), Expect::Record); }
TEST(Rma, RoundTripUdpWithLoss)
{
    JobOptions o = udp_pair_job();
    o.env.push_back({"LLC_UDP_DROP_PERMILLE", "30"});
    round_trip(o, Expect::Record);
}
TEST(Rma, RoundTripThreeRanksShmAndTcp)
{
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    round_trip(o, Expect::CmaOrRecord);
}

TEST(Rma, BadAccessesSelf) { bad_accesses(job({0})); }
TEST(Rma, BadAccessesShm) { bad_accesses(shm_job(true)); }
TEST(Rma, BadAccessesShmWithoutCma) { bad_accesses(shm_job(false)); }
TEST(Rma, BadAccessesTcp) { bad_accesses(tcp_pair_job()); }
TEST(Rma, BadAccessesUdp) { bad_accesses(udp_pair_job()); }

TEST(Rma, ManyPutsInFlightShmWithoutCma) { many_in_flight(shm_job(false)); }
TEST(Rma, ManyPutsInFlightTcp) { many_in_flight(tcp_pair_job()); }
TEST(Rma, ManyPutsInFlightUdp) { many_in_flight(udp_pair_job()); }

TEST(Rma, TargetDiesDuringGetShmWithoutCma) { target_dies(shm_job(false), true); }
TEST(Rma, TargetDiesDuringGetTcp) { target_dies(tcp_pair_job(), true); }
TEST(Rma, TargetDiesDuringGetUdp)
{
    // the Get datagram is never acknowledged (rank 1 no longer reads its
    // socket): udp's peer timeout fails rank 1
    JobOptions o = udp_pair_job();
    o.env.push_back({"LLC_UDP_PEER_TIMEOUT_MS", "2000"});
    target_dies(o, true);
}
TEST(Rma, TargetDeadBeforeGetShm) { target_dies(shm_job(true), false); }
TEST(Rma, TargetDeadBeforeGetTcp) { target_dies(tcp_pair_job(), false); }

TEST(Rma, HostileRecordsAreDroppedShmWithoutCma) { hostile_records(shm_job(false)); }
TEST(Rma, HostileRecordsAreDroppedTcp) { hostile_records(tcp_pair_job()); }

// The kernel refusing cross-memory attach (simulated): the node's puts and
// gets take the record path.
TEST(Rma, RoundTripShmWhenCmaIsRefused)
{
    JobOptions o = shm_job(true);
    o.env = {{"LLC_CMA_SIMULATE_EPERM", "1"}};
    round_trip(o, Expect::Record);
}

// The kernel refusing cross-memory attach for real: rank 1 is not dumpable
// and rank 0 gives up CAP_SYS_PTRACE, so rank 0's process_vm_* on rank 1
// fail with EPERM and its puts and gets fall back to records; rank 1's on
// rank 0 still go by CMA.
TEST(Rma, RoundTripShmFallsBackOnEperm)
{
    round_trip(shm_job(true), Expect::CmaRefusedByRank1, [](TestProcess &p) {
        if (p.rank == 1) {
            ASSERT_EQ(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
            return;
        }
        __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        ASSERT_EQ(syscall(SYS_capget, &hdr, data), 0);
        data[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
        ASSERT_EQ(syscall(SYS_capset, &hdr, data), 0);
    });
}

TEST(Rma, KeysAndRegionsAreChecked)
{
    const int nodes[] = {0};
    llc_init_params_t params = solo_params(nodes, "rma-solo");
    llc_context_t *ctx = nullptr;
    ASSERT_EQ(llc_init(&params, &ctx), LLC_OK);
    char buf[32];
    llc_region_t *r = nullptr;
    EXPECT_EQ(llc_mem_register(ctx, nullptr, 8, 0, &r), LLC_ERR_INVALID);
    EXPECT_EQ(llc_mem_register(ctx, buf, sizeof(buf), 0x80, &r), LLC_ERR_INVALID);
    EXPECT_EQ(llc_mem_register(ctx, buf, sizeof(buf), 0, nullptr), LLC_ERR_INVALID);
    ASSERT_EQ(llc_mem_register(ctx, buf, sizeof(buf), 0, &r), LLC_OK);
    char small[LLC_REGION_KEY_BYTES - 1];
    EXPECT_EQ(llc_region_key(r, small, sizeof(small), nullptr), LLC_ERR_INVALID);
    std::vector<char> key(LLC_REGION_KEY_BYTES);
    EXPECT_EQ(llc_region_key(r, key.data(), key.size(), nullptr), LLC_OK);
    // a slot is reused after deregistration, with a new generation: the old key names nothing
    ASSERT_EQ(llc_mem_deregister(ctx, r), LLC_OK);
    llc_region_t *again = nullptr;
    ASSERT_EQ(llc_mem_register(ctx, buf, sizeof(buf), 0, &again), LLC_OK);
    std::vector<char> key2(LLC_REGION_KEY_BYTES);
    EXPECT_EQ(llc_region_key(again, key2.data(), key2.size(), nullptr), LLC_OK);
    llc::RegionKey k1, k2;
    std::memcpy(&k1, key.data(), sizeof(k1));
    std::memcpy(&k2, key2.data(), sizeof(k2));
    EXPECT_EQ(uint32_t(k1.region), uint32_t(k2.region)) << "the same slot";
    EXPECT_NE(k1.region, k2.region) << "another generation";
    Op op;
    EXPECT_EQ(llc_put(ctx, 0, "abc", 3, key.data(), 0, &op.req), LLC_ERR_KEY);
    EXPECT_EQ(op.req.status, LLC_ERR_KEY);
    EXPECT_EQ(llc_put(ctx, 0, "abc", 3, key2.data(), 0, &op.req), LLC_OK);
    EXPECT_EQ(std::memcmp(buf, "abc", 3), 0);
    EXPECT_EQ(std::string(llc_strerror(LLC_ERR_RANGE)), "outside the target region");
    EXPECT_NE(std::string(llc_strerror(LLC_ERR_KEY)), "unknown status code");
    EXPECT_EQ(llc_mem_deregister(ctx, again), LLC_OK);
    EXPECT_EQ(llc_finalize(ctx), LLC_OK);
}
