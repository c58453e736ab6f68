// ring_pool_test.cpp - the node pool of ring buffers (ring_pool.hpp): the
// segment's lifecycle, leases and returns across processes and threads,
// exhaustion, release on destruction, the private fallback, pages given back
// on return, configuration errors, and in a hybrid job that a source is
// promoted only with a ring for it.
#include "hybrid/ring_pool.hpp"

#include "core/config.hpp"
#include "core/errors.hpp"
#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace llctest;
using llc::RingLease;
using llc::RingPool;

namespace {

std::string unique_job(const char *what)
{
    static int counter = 0;
    return std::string("rings-") + what + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

bool shm_name_exists(const std::string &name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

// Node 0 with `processes` pools (ranks 0..processes-1, rank 0 the leader),
// all in this process: each has its own mapping, as separate processes would.
std::vector<std::unique_ptr<RingPool>> node_of(size_t rings, size_t slots, size_t slot_bytes, int processes,
                                               const std::string &job, bool share = true)
{
    std::vector<std::unique_ptr<RingPool>> v;
    for (int r = 0; r < processes; r++)
        v.push_back(std::make_unique<RingPool>(rings, slots, slot_bytes, 0, r, 0, processes, job, share));
    for (auto &p : v)
        p->attach(); // "after the first fence": the leader has created the segment
    return v;
}

// Pages of [p, p + len) resident (mincore: for a shared-memory mapping, in
// the file's page cache, whoever touched them).
size_t resident_pages(const char *p, size_t len)
{
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> vec((len + page - 1) / page);
    if (mincore(const_cast<char *>(p), len, vec.data()) != 0)
        return SIZE_MAX;
    return size_t(std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return c & 1; }));
}

// Rss (kB) of this process's mapping that starts at addr, from /proc/self/smaps.
long smaps_rss_kb(const void *addr)
{
    std::ifstream in("/proc/self/smaps");
    std::string line;
    char start[32];
    std::snprintf(start, sizeof(start), "%lx-", reinterpret_cast<unsigned long>(addr));
    bool in_it = false;
    while (std::getline(in, line)) {
        if (line.compare(0, std::strlen(start), start) == 0)
            in_it = true;
        else if (in_it && line.compare(0, 4, "Rss:") == 0)
            return std::atol(line.c_str() + 4);
    }
    return -1;
}

bool all_zero(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i])
            return false;
    return true;
}

} // namespace

TEST(RingPool, LeaderCreatesOthersAttachNameRemoved)
{
    std::string job = unique_job("life");
    auto node = node_of(8, 4, 1024, 3, job);
    RingPool &a = *node[0], &b = *node[1], &c = *node[2];
    for (auto &p : node) {
        EXPECT_TRUE(p->shared()) << p->describe();
        EXPECT_EQ(p->rings(), 8u);
        EXPECT_EQ(p->ring_bytes(), 4096u);
    }
    EXPECT_TRUE(a.created_here());
    EXPECT_FALSE(b.created_here());
    EXPECT_EQ(a.name(), "/llc-" + a.name().substr(5, 16) + "-node0-rings");
    EXPECT_TRUE(shm_name_exists(a.name()));
    EXPECT_TRUE(contains(a.describe(), "created by this process")) << a.describe();
    EXPECT_TRUE(contains(b.describe(), "mapped from the node leader")) << b.describe();

    // A ring leased by one process is the same memory in the others' mappings.
    RingLease l = b.try_lease();
    ASSERT_TRUE(l);
    EXPECT_EQ(l.size(), 4096u);
    fill_pattern(l.data(), l.size(), 42);
    EXPECT_TRUE(check_pattern(c.ring_address(l.index()), l.size(), 42));
    EXPECT_EQ(a.in_use(), 1u);
    EXPECT_EQ(b.held(), 1u);
    EXPECT_EQ(a.held(), 0u);

    a.release_name(); // after the second fence
    EXPECT_FALSE(shm_name_exists(a.name()));
    a.release_name(); // idempotent
    RingLease l2 = c.try_lease();
    ASSERT_TRUE(l2) << "the mappings stay valid without the name";
    EXPECT_NE(l2.index(), l.index());
    EXPECT_EQ(b.in_use(), 2u);
    EXPECT_EQ(b.leases(), 1u);
    EXPECT_EQ(c.leases(), 1u);
}

TEST(RingPool, ExhaustionGivesNoLeaseAndAReturnedRingIsReused)
{
    auto node = node_of(4, 2, 4096, 2, unique_job("empty"));
    RingPool &a = *node[0], &b = *node[1];
    std::vector<RingLease> held;
    std::set<uint32_t> indices;
    for (int i = 0; i < 4; i++) {
        held.push_back(i % 2 ? a.try_lease() : b.try_lease());
        ASSERT_TRUE(held.back());
        indices.insert(held.back().index());
    }
    EXPECT_EQ(indices.size(), 4u) << "four different rings";
    RingLease none = a.try_lease();
    EXPECT_FALSE(none);
    EXPECT_EQ(none.data(), nullptr);
    EXPECT_EQ(a.empty(), 1u);
    EXPECT_EQ(b.empty(), 0u);
    EXPECT_EQ(b.in_use(), 4u);
    EXPECT_EQ(b.high_water(), 4u);
    uint32_t back = held[1].index();
    held[1].reset();
    EXPECT_EQ(a.in_use(), 3u);
    RingLease again = b.try_lease();
    ASSERT_TRUE(again);
    EXPECT_EQ(again.index(), back);
    EXPECT_TRUE(all_zero(again.data(), again.size())) << "a returned ring comes back empty (its pages were removed)";
    // Moving a lease moves the ring, not a copy of the right to return it.
    RingLease moved = std::move(again);
    EXPECT_FALSE(again);
    EXPECT_TRUE(moved);
    moved = RingLease();
    EXPECT_EQ(a.in_use(), 3u);
    EXPECT_EQ(a.high_water(), 4u);
}

TEST(RingPool, DestructionReturnsHeldRings)
{
    auto node = node_of(6, 1, 4096, 2, unique_job("dtor"));
    std::vector<RingLease> outliving; // leases that outlive their pool return nothing
    for (int i = 0; i < 3; i++)
        outliving.push_back(node[1]->try_lease());
    RingLease mine = node[0]->try_lease();
    EXPECT_EQ(node[0]->in_use(), 4u);
    node[1].reset(); // the process finalizes
    EXPECT_EQ(node[0]->in_use(), 1u) << "its three rings went back";
    outliving.clear();
    EXPECT_EQ(node[0]->in_use(), 1u) << "and are not returned twice";
    std::vector<RingLease> more;
    for (int i = 0; i < 5; i++)
        more.push_back(node[0]->try_lease());
    EXPECT_TRUE(std::all_of(more.begin(), more.end(), [](const RingLease &l) { return bool(l); }));
    EXPECT_FALSE(node[0]->try_lease()) << "6 rings, 6 leased";
}

TEST(RingPool, PrivateFallback)
{
    auto node = node_of(8, 2, 2048, 3, unique_job("private"), false);
    for (auto &p : node) {
        EXPECT_FALSE(p->shared());
        EXPECT_EQ(p->rings(), 2u) << "8 / 3 processes";
        EXPECT_TRUE(contains(p->describe(), "LLC_NODE_SHARED=0")) << p->describe();
    }
    EXPECT_FALSE(shm_name_exists(node[0]->name()));
    RingLease x = node[0]->try_lease(), y = node[0]->try_lease();
    EXPECT_TRUE(x && y);
    EXPECT_FALSE(node[0]->try_lease());
    EXPECT_TRUE(node[1]->try_lease()) << "the private pools are independent";
    fill_pattern(x.data(), x.size(), 7);
    EXPECT_TRUE(check_pattern(x.data(), x.size(), 7));

    RingPool alone(5, 1, 4096, 0, 0, 0, 1, unique_job("alone"), true);
    alone.attach();
    EXPECT_FALSE(alone.shared());
    EXPECT_EQ(alone.rings(), 5u) << "alone on its node: the whole pool";
    EXPECT_TRUE(contains(alone.describe(), "alone on its node")) << alone.describe();

    RingPool tiny(2, 1, 4096, 0, 1, 0, 3, unique_job("tiny"), false);
    EXPECT_EQ(tiny.rings(), 1u) << "every process gets at least one";

    // A process whose leader created nothing (LLC_NODE_SHARED=0 there).
    RingPool lone(6, 1, 4096, 4, 9, 8, 3, unique_job("missing"), true);
    lone.attach();
    EXPECT_FALSE(lone.shared());
    EXPECT_EQ(lone.rings(), 2u);
    EXPECT_TRUE(contains(lone.describe(), "could not be opened")) << lone.describe();
    EXPECT_TRUE(lone.try_lease());

    // Another geometry than the leader's.
    std::string job = unique_job("mismatch");
    RingPool leader(4, 2, 4096, 0, 0, 0, 2, job, true);
    leader.attach();
    RingPool other(4, 4, 4096, 0, 1, 0, 2, job, true);
    other.attach();
    EXPECT_TRUE(leader.shared());
    EXPECT_FALSE(other.shared());
    EXPECT_TRUE(contains(other.describe(), "LLC_RING_SLOTS")) << other.describe();

    RingPool none;
    EXPECT_FALSE(none.try_lease());
    EXPECT_EQ(none.rings(), 0u);
}

// The pool is address space: only leased, written rings take memory, and a
// returned ring's pages leave the shared-memory file (mincore over the
// segment; smaps Rss of the mapping that wrote them).
TEST(RingPool, ReturnedRingsGiveTheirPagesBack)
{
    const size_t rings = 64, slots = 16, slot_bytes = 4096, ring_bytes = slots * slot_bytes;
    auto node = node_of(rings, slots, slot_bytes, 2, unique_job("pages"));
    RingPool &leader = *node[0], &other = *node[1];
    const char *first = leader.ring_address(0);
    const size_t span = rings * ring_bytes, page = size_t(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(resident_pages(first, span), 0u) << "nothing committed before a ring is written";
    const long rss_before = smaps_rss_kb(first - leader.header_bytes());

    std::vector<RingLease> held;
    for (int i = 0; i < 16; i++) {
        held.push_back(other.try_lease());
        ASSERT_TRUE(held.back());
        std::memset(held.back().data(), 0x5a, held.back().size());
    }
    const size_t after_write = resident_pages(first, span);
    EXPECT_EQ(after_write, 16 * ring_bytes / page) << "16 written rings";
    const long rss_writer = smaps_rss_kb(held[0].data() - held[0].index() * ring_bytes - other.header_bytes());
    std::printf("ring pool: %zu rings x %zu KiB = %zu KiB of address space; 16 leased and written: %zu KiB "
                "resident in the segment (writer's Rss of the mapping %ld kB, leader's before %ld kB)\n",
                rings, ring_bytes / 1024, span / 1024, after_write * page / 1024, rss_writer, rss_before);
    EXPECT_GE(rss_writer, long(16 * ring_bytes / 1024));

    held.resize(4); // twelve go back
    const size_t after_return = resident_pages(first, span);
    EXPECT_EQ(after_return, 4 * ring_bytes / page) << "the returned rings' pages left the segment";
    const long rss_after = smaps_rss_kb(held[0].data() - held[0].index() * ring_bytes - other.header_bytes());
    std::printf("ring pool: 12 returned: %zu KiB resident (writer's Rss %ld kB)\n", after_return * page / 1024,
                rss_after);
    EXPECT_LT(rss_after, rss_writer);
    held.clear();
    EXPECT_EQ(resident_pages(first, span), 0u);

    // The private pool gives its pages back too (MADV_DONTNEED).
    RingPool priv(4, slots, slot_bytes, 0, 0, 0, 1, unique_job("pages-private"), true);
    RingLease p = priv.try_lease();
    ASSERT_TRUE(p);
    std::memset(p.data(), 1, p.size());
    const char *at = p.data();
    EXPECT_EQ(resident_pages(at, ring_bytes), ring_bytes / page);
    p.reset();
    EXPECT_EQ(resident_pages(at, ring_bytes), 0u);
}

constexpr size_t kRings = 6, kSlots = 2, kSlotBytes = 1024;

// Four processes of a node, three threads each, lease, fill, check and
// return rings of a pool smaller than the number of threads: no ring is
// ever held twice (a holder's pattern is intact when it gives the ring
// back, and a leased ring is found empty), the node never has more leased
// than it has rings, and every ring is back at the end.
TEST(RingPool, ProcessesAndThreadsRaceWithoutSharingARing)
{
    JobOptions o = job({0, 0, 0, 0}, 120);
    const std::string pool_job = unique_job("race");
    LLC_EXPECT_JOB_OK(o, [&pool_job](TestProcess &p) {
        llc_init_params_t prm = p.params();
        auto fence = [&] { ASSERT_EQ(prm.boot.fence(prm.boot.arg), 0); };
        RingPool pool(kRings, kSlots, kSlotBytes, 0, p.rank, 0, p.size, pool_job, true);
        fence(); // the leader has created the segment
        pool.attach();
        ASSERT_TRUE(pool.shared()) << pool.describe();
        fence();
        pool.release_name();
        std::atomic<uint64_t> leased{0}, refused{0}, bad{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; t++) {
            threads.emplace_back([&, t] {
                for (uint64_t i = 0; i < 3000; i++) {
                    RingLease l = pool.try_lease();
                    if (!l) {
                        refused++;
                        std::this_thread::yield();
                        continue;
                    }
                    leased++;
                    if (pool.in_use() > kRings)
                        bad++;
                    if (!all_zero(l.data(), l.size()))
                        bad++; // someone else wrote it while we hold it, or it came back dirty
                    uint64_t seed = (uint64_t(p.rank) << 40) | (uint64_t(t) << 32) | i;
                    fill_pattern(l.data(), l.size(), seed);
                    if (i % 8 == 0)
                        std::this_thread::yield();
                    if (!check_pattern(l.data(), l.size(), seed))
                        bad++;
                }
            });
        }
        for (auto &th : threads)
            th.join();
        EXPECT_EQ(bad.load(), 0u) << "rank " << p.rank;
        EXPECT_EQ(pool.leases(), leased.load());
        EXPECT_EQ(pool.empty(), refused.load());
        EXPECT_EQ(pool.held(), 0u);
        uint64_t all_leased = job_sum(p, "leased", leased.load());
        uint64_t all_refused = job_sum(p, "refused", refused.load());
        EXPECT_GT(all_leased, 1000u);
        EXPECT_LE(pool.high_water(), kRings);
        if (p.rank == 0) {
            std::printf("ring race: %llu leases, %llu refusals for an empty pool (12 threads, %zu rings), most in "
                        "use %zu\n",
                        (unsigned long long)all_leased, (unsigned long long)all_refused, kRings,
                        pool.high_water());
        }
        fence();
        EXPECT_EQ(pool.in_use(), 0u) << "every ring is back";
        fence(); // everyone has looked before rank 1 leases them all again
        // All six can be leased again, each once.
        if (p.rank == 1) {
            std::set<uint32_t> seen;
            std::vector<RingLease> all;
            for (size_t i = 0; i < kRings; i++) {
                all.push_back(pool.try_lease());
                ASSERT_TRUE(all.back());
                seen.insert(all.back().index());
            }
            EXPECT_EQ(seen.size(), kRings);
            EXPECT_FALSE(pool.try_lease());
        }
        fence();
    });
}

namespace {
class RingEnv {
public:
    RingEnv() { clear(); }
    ~RingEnv() { clear(); }
    static void clear()
    {
        for (const char *n : {"LLC_RING_POOL", "LLC_RING_SLOTS", "LLC_RING_SLOT_BYTES"})
            unsetenv(n);
    }
};

std::string config_error()
{
    try {
        llc::Config::from_environment();
    } catch (const llc::Error &e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST(RingPool, ConfigDefaultsAndValidation)
{
    RingEnv env;
    llc::Config d = llc::Config::from_environment();
    EXPECT_EQ(d.ring_pool, 1024u);
    EXPECT_EQ(d.ring_slots, 16u);
    EXPECT_EQ(d.ring_slot_bytes, 4096u);

    setenv("LLC_RING_POOL", "0", 1);
    setenv("LLC_RING_SLOTS", "8", 1);
    setenv("LLC_RING_SLOT_BYTES", "16k", 1);
    llc::Config c = llc::Config::from_environment();
    EXPECT_EQ(c.ring_pool, 0u);
    EXPECT_EQ(c.ring_slots, 8u);
    EXPECT_EQ(c.ring_slot_bytes, 16384u);
    RingEnv::clear();

    setenv("LLC_RING_SLOT_BYTES", "3000", 1);
    std::string e = config_error();
    EXPECT_TRUE(contains(e, "LLC_RING_SLOT_BYTES") && contains(e, "power of two")) << e;
    setenv("LLC_RING_SLOT_BYTES", "512", 1);
    e = config_error();
    EXPECT_TRUE(contains(e, "LLC_RING_SLOT_BYTES") && contains(e, "[1024,")) << e;
    RingEnv::clear();

    setenv("LLC_RING_SLOTS", "0", 1);
    EXPECT_TRUE(contains(config_error(), "LLC_RING_SLOTS"));
    RingEnv::clear();
    setenv("LLC_RING_POOL", "-1", 1);
    EXPECT_TRUE(contains(config_error(), "LLC_RING_POOL"));
    setenv("LLC_RING_POOL", "many", 1);
    EXPECT_TRUE(contains(config_error(), "LLC_RING_POOL"));
    setenv("LLC_RING_POOL", "1m", 1);
    setenv("LLC_RING_SLOTS", "4096", 1);
    setenv("LLC_RING_SLOT_BYTES", "4k", 1);
    e = config_error();
    EXPECT_TRUE(contains(e, "64 GiB")) << e;
}

// ------------------------------------------------------------ in a hybrid job

// Node 0 holds ranks 0 and 1, node 1 ranks 2 and 3; ranks 2 and 3 stream
// hard to rank 0.  The node has RC slots for both sources but one ring
// (LLC_RING_POOL=1): only one source is asked to move to tcp, the other is
// refused for lack of a ring (counted) and stays on udp; its stream is read
// into the ring; every message arrives in order and intact.
TEST(RingPool, HybridPromotesOnlyWithARing)
{
    JobOptions o = job({0, 0, 1, 1}, 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},     {"LLC_NET", "hybrid"},           {"LLC_HYBRID_DRIVER", "receiver"},
             {"LLC_HYBRID_PERIOD_MS", "50"},    {"LLC_HYBRID_PROMOTE_MSGS", "20"}, {"LLC_MAX_RC_PER_NODE", "2"},
             {"LLC_RING_POOL", "1"},            {"LLC_NODE_SHARED", "1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        const int dest = p.rank >= 2 ? 0 : -1;
        llc_stats_t st{};
        uint64_t most = 0;
        for (int round = 0; round < 10 && !::testing::Test::HasFailure(); round++) {
            double end = now_s() + 0.4;
            while (now_s() < end && !::testing::Test::HasFailure()) {
                if (dest >= 0 && run.s.room())
                    run.s.send(dest);
                ASSERT_TRUE(run.progress());
            }
            llc_get_stats(run.ctx, &st);
            most = std::max(most, job_sum(p, ("tcp" + std::to_string(round)).c_str(), st.rc_active));
            EXPECT_LE(st.ring_pool_in_use, 1u);
            EXPECT_LE(st.ring_pool_held, 1u);
        }
        ASSERT_TRUE(run.drain());
        llc_get_stats(run.ctx, &st);
        EXPECT_EQ(most, 1u) << "two busy sources, RC slots for both, one ring";
        EXPECT_EQ(st.ring_pool_rings, 1u) << "rank " << p.rank;
        EXPECT_LE(st.ring_pool_high_water, 1u);
        if (p.rank == 0) {
            EXPECT_GE(st.ring_pool_empty, 1u) << "the second source was refused for lack of a ring";
            EXPECT_GE(st.ring_leases, 1u);
            EXPECT_GT(st.ring_bytes_landed, 0u) << "the promoted source's stream was read into its ring";
            EXPECT_LE(st.rc_sources, 1u) << "the refused source's slot was given back";
            std::printf("ring pool e2e: rank 0 leased %llu, refused %llu, %llu tcp bytes landed in the ring\n",
                        (unsigned long long)st.ring_leases, (unsigned long long)st.ring_pool_empty,
                        (unsigned long long)st.ring_bytes_landed);
        } else {
            EXPECT_EQ(st.ring_pool_held, 0u);
            EXPECT_EQ(st.ring_bytes_landed, 0u);
        }
        run.finish();
    });
}

namespace {
JobOptions ring_job(std::vector<int> nodes, const char *rings)
{
    JobOptions o = job(std::move(nodes), 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},     {"LLC_NET", "hybrid"},           {"LLC_HYBRID_DRIVER", "receiver"},
             {"LLC_HYBRID_PERIOD_MS", "50"},    {"LLC_HYBRID_PROMOTE_MSGS", "20"}, {"LLC_MAX_RC_PER_NODE", "2"},
             {"LLC_RING_POOL", rings},          {"LLC_NODE_SHARED", "1"},         {"LLC_FINALIZE_TIMEOUT_MS", "3000"}};
    return o;
}
} // namespace

// One ring, ranks 2 then 3 streaming to rank 0: rank 2 is promoted with the
// ring, goes quiet, is demoted, and its ring (returned once its Switch marker
// has drained its tcp stream) lets rank 3 be promoted.
TEST(RingPool, HybridDemotedSourceHandsItsRingOn)
{
    LLC_EXPECT_JOB_OK(ring_job({0, 0, 1, 1}, "1"), [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        llc_stats_t st{};
        bool first_on_tcp = false, second_on_tcp = false;
        for (int round = 0; round < 25 && !::testing::Test::HasFailure(); round++) {
            // rank 2 streams until it has been on tcp, then rank 3
            const bool my_turn = p.rank == (first_on_tcp ? 3 : 2);
            double end = now_s() + 0.4;
            while (now_s() < end && !::testing::Test::HasFailure()) {
                if (my_turn && run.s.room())
                    run.s.send(0);
                ASSERT_TRUE(run.progress());
            }
            llc_get_stats(run.ctx, &st);
            EXPECT_LE(st.ring_pool_in_use, 1u);
            const std::string r = std::to_string(round);
            first_on_tcp |= job_sum(p, ("a" + r).c_str(), p.rank == 2 ? st.rc_active : 0) > 0;
            second_on_tcp |= job_sum(p, ("b" + r).c_str(), p.rank == 3 ? st.rc_active : 0) > 0;
            if (second_on_tcp)
                break;
        }
        ASSERT_TRUE(run.drain());
        llc_get_stats(run.ctx, &st);
        EXPECT_TRUE(first_on_tcp);
        EXPECT_TRUE(second_on_tcp) << "rank 3 should have had rank 2's ring";
        if (p.rank == 0) {
            EXPECT_GE(st.ring_leases, 2u);
            EXPECT_EQ(st.ring_pool_high_water, 1u);
        }
        if (p.rank == 2) {
            EXPECT_GE(st.rc_demotions, 1u);
        }
        run.finish();
    });
}

// Rank 1 streams to rank 0 until it is on tcp with a ring, then exits
// without finalizing: rank 0's tcp connection from it breaks and the ring
// goes back to the pool.
TEST(RingPool, HybridFailedSourceReturnsItsRing)
{
    LLC_EXPECT_JOB_OK(ring_job({0, 1}, "4"), [](TestProcess &p) {
        StreamRun run(p);
        ASSERT_TRUE(run.started());
        llc_stats_t st{};
        bool held = false;
        for (int round = 0; round < 25 && !held && !::testing::Test::HasFailure(); round++) {
            double end = now_s() + 0.3;
            while (now_s() < end && !::testing::Test::HasFailure()) {
                if (p.rank == 1 && run.s.room())
                    run.s.send(0);
                ASSERT_TRUE(run.progress());
            }
            llc_get_stats(run.ctx, &st);
            const std::string r = std::to_string(round);
            held = job_sum(p, ("held" + r).c_str(), p.rank == 0 ? st.ring_pool_held : 0) == 1 &&
                   job_sum(p, ("tcp" + r).c_str(), p.rank == 1 ? st.rc_active : 0) == 1;
        }
        ASSERT_TRUE(held) << "rank 1 should be on tcp with a ring";
        if (p.rank == 1) {
            // Keep streaming, so that its connection is in use when it dies.
            for (int k = 0; k < 32 && run.s.room(); k++)
                run.s.send(0);
            llc_progress(run.ctx, nullptr);
            p.depart();
            std::fflush(stdout);
            _exit(::testing::Test::HasFailure() ? 1 : 0);
        }
        EXPECT_EQ(st.ring_pool_in_use, 1u);
        const double end = now_s() + 20;
        while (now_s() < end) {
            llc_progress(run.ctx, nullptr); // reports the dead peer (not checked here)
            llc_get_stats(run.ctx, &st);
            if (st.ring_pool_held == 0)
                break;
        }
        EXPECT_EQ(st.ring_pool_held, 0u) << "the dead source's ring is back";
        EXPECT_EQ(st.ring_pool_in_use, 0u);
        EXPECT_EQ(run.c.bad, 0u);
        llc_finalize(run.ctx); // reports the failure again; must not hang
    });
}
