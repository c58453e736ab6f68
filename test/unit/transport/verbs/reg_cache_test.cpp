// reg_cache_test.cpp - RegCache (the registration cache, reg_cache.hpp)
// against a fake Registrar that records every call: hits, misses, page
// alignment, merging, the bound and LRU order, pinned entries, invalidate,
// max_entries 0, failures, the tree's memory; and a randomized run against a
// reference model.  No RDMA device is involved (VerbsRegistrar is only
// compiled here, see the last test).
#include "core/config.hpp"
#include "core/errors.hpp"
#include "transport/verbs/reg_cache.hpp"
#ifdef LLC_HAVE_VERBS
#include "transport/verbs/verbs_registrar.hpp"
#endif

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

using llc::RegCache;
using llc::RegHandle;

namespace {

constexpr uintptr_t kPage = 4096;
constexpr uintptr_t kBase = uintptr_t(0x7f12'3450'0000); // a typical mmap address (page-aligned)

const void *at(uintptr_t addr) { return reinterpret_cast<const void *>(addr); }
const void *page(uintptr_t n) { return at(kBase + n * kPage); }

// Records calls and the registrations alive now.  Ids are never reused, so a
// registration deregistered too early is seen as missing.
class FakeRegistrar : public llc::Registrar {
public:
    struct Live {
        uintptr_t start;
        size_t len;
        uint64_t born; // the value of `clock` when registered
    };
    std::map<uint64_t, Live> live; // by id
    std::vector<std::pair<uintptr_t, size_t>> registered; // every successful call, in order
    std::vector<uint64_t> deregistered;                    // ids, in order
    uint64_t calls = 0;
    uint64_t clock = 0; // set by the test (operation number)
    // Returns an errno to refuse a registration, 0 to accept it.
    std::function<int(uintptr_t, size_t)> refuse;
    size_t page_size = kPage;

    llc::RegResult register_region(void *addr, size_t len) override
    {
        uintptr_t a = reinterpret_cast<uintptr_t>(addr);
        EXPECT_EQ(a % page_size, 0u) << "unaligned start";
        EXPECT_EQ(len % page_size, 0u) << "unaligned length";
        EXPECT_GT(len, 0u);
        calls++;
        llc::RegResult r;
        if (int err = refuse ? refuse(a, len) : 0) {
            r.error = err;
            r.message = "fake refused";
            return r;
        }
        uint64_t id = next_id_++;
        live[id] = Live{a, len, clock};
        registered.emplace_back(a, len);
        r.reg.handle = reinterpret_cast<void *>(uintptr_t(id));
        r.reg.lkey = uint32_t(id);
        r.reg.rkey = uint32_t(id + 1000000);
        return r;
    }
    void deregister_region(const llc::Registration &reg) override
    {
        uint64_t id = uint64_t(reinterpret_cast<uintptr_t>(reg.handle));
        EXPECT_EQ(live.count(id), 1u) << "deregistering registration " << id << " that is not live";
        live.erase(id);
        deregistered.push_back(id);
    }
    static uint64_t id_of(const RegHandle &h) { return uint64_t(reinterpret_cast<uintptr_t>(h.registration().handle)); }
    uint64_t bytes() const
    {
        uint64_t b = 0;
        for (auto &kv : live)
            b += kv.second.len;
        return b;
    }

private:
    uint64_t next_id_ = 1;
};

// The cache's entries are exactly the fake's live registrations.
void expect_same_entries(const RegCache &c, const FakeRegistrar &f)
{
    std::map<uint64_t, std::pair<uintptr_t, size_t>> entries;
    c.for_each_entry([&](uintptr_t start, size_t len, const llc::Registration &reg, uint32_t, bool) {
        entries[uint64_t(reinterpret_cast<uintptr_t>(reg.handle))] = {start, len};
    });
    ASSERT_EQ(entries.size(), f.live.size());
    for (auto &kv : f.live) {
        auto it = entries.find(kv.first);
        ASSERT_NE(it, entries.end()) << "registration " << kv.first << " is live but not in the cache";
        EXPECT_EQ(it->second.first, kv.second.start);
        EXPECT_EQ(it->second.second, kv.second.len);
    }
    EXPECT_EQ(c.size(), f.live.size());
    EXPECT_EQ(c.stats().registered_bytes, f.bytes());
}

} // namespace

TEST(RegCache, TreeShape)
{
    FakeRegistrar f;
    RegCache c4k(f);
    EXPECT_EQ(c4k.levels(), 9u); // 48-bit addresses, 4 KiB pages: 36 bits / 4
    EXPECT_EQ(c4k.page_size(), 4096u);
    EXPECT_EQ(c4k.max_entries(), 65536u);
    RegCache c64k(f, 100, 16);
    EXPECT_EQ(c64k.levels(), 8u);
    EXPECT_THROW(RegCache(f, 1, 9), std::invalid_argument);
}

TEST(RegCache, HitOnCoveredSubRange)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    uint32_t lkey;
    {
        RegHandle h = c.acquire(page(0), 8 * kPage);
        ASSERT_TRUE(h.ok()) << c.last_error();
        EXPECT_EQ(h.start(), kBase);
        EXPECT_EQ(h.length(), 8 * kPage);
        lkey = h.lkey();
        EXPECT_EQ(h.rkey(), lkey + 1000000);
    }
    ASSERT_EQ(f.registered.size(), 1u);
    EXPECT_EQ(f.registered[0], std::make_pair(kBase, size_t(8 * kPage)));
    EXPECT_EQ(c.stats().misses, 1u);
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(c.unpinned(), 1u);

    // Sub-ranges: inside, touching both ends, unaligned.
    for (auto [addr, len] : std::vector<std::pair<uintptr_t, size_t>>{
             {kBase + kPage + 100, 1000}, {kBase, 8 * kPage}, {kBase + 7 * kPage + 4095, 1}, {kBase + 5, 0}}) {
        RegHandle h = c.acquire(at(addr), len);
        ASSERT_TRUE(h.ok());
        EXPECT_EQ(h.lkey(), lkey);
        EXPECT_EQ(h.start(), kBase);
        EXPECT_EQ(h.length(), 8 * kPage);
        EXPECT_EQ(c.pinned(), 1u);
    }
    EXPECT_EQ(f.registered.size(), 1u);
    EXPECT_EQ(c.stats().hits, 4u);
    EXPECT_EQ(c.stats().misses, 1u);
    EXPECT_EQ(c.check(), "");

    // Two handles on one entry: pinned until both are gone.
    RegHandle a = c.acquire(page(1), 10), b = c.acquire(page(2), 10);
    EXPECT_EQ(c.pinned(), 1u);
    a.release();
    EXPECT_EQ(c.pinned(), 1u);
    b.release();
    EXPECT_EQ(c.pinned(), 0u);
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, MissRegistersPageAlignedRange)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    RegHandle h1 = c.acquire(at(kBase + 100), 5000); // bytes 100 .. 5099: pages 0 and 1
    ASSERT_TRUE(h1.ok());
    EXPECT_EQ(f.registered.back(), std::make_pair(kBase, size_t(2 * kPage)));
    RegHandle h2 = c.acquire(at(kBase + 4095), 2); // crosses into page 1: covered
    EXPECT_EQ(f.calls, 1u);
    RegHandle h3 = c.acquire(at(kBase + 2 * kPage - 1), 2); // crosses into page 2: not covered
    ASSERT_TRUE(h3.ok());
    EXPECT_EQ(f.calls, 2u);
    // It overlapped the first entry: the two were merged into pages 0 .. 2.
    EXPECT_EQ(f.registered.back(), std::make_pair(kBase, size_t(3 * kPage)));
    EXPECT_EQ(c.stats().merges, 1u);
    EXPECT_EQ(c.stale(), 1u); // the old one is pinned by h1 and h2
    RegHandle h4 = c.acquire(page(5), 0);      // zero length: one page
    EXPECT_EQ(f.registered.back(), std::make_pair(kBase + 5 * kPage, size_t(kPage)));
    RegHandle h5 = c.acquire(page(3), 2 * kPage); // adjacent to both neighbours, overlapping neither
    EXPECT_EQ(f.registered.back(), std::make_pair(kBase + 3 * kPage, size_t(2 * kPage)));
    EXPECT_EQ(c.stats().merges, 1u);
    EXPECT_EQ(c.stats().misses, 4u);
    EXPECT_EQ(c.check(), "");
    expect_same_entries(c, f);
    // A range wrapping around the address space is refused.
    RegHandle bad = c.acquire(at(UINTPTR_MAX - 10), 100);
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), EINVAL);
    EXPECT_NE(c.last_error().find("top page"), std::string::npos) << c.last_error();
}

TEST(RegCache, MergeAbsorbsOverlappedEntries)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    RegHandle a = c.acquire(page(0), 2 * kPage);       // A: pages 0-1, kept pinned
    c.acquire(page(4), 2 * kPage).release();           // B: pages 4-5, unpinned
    c.acquire(page(10), kPage).release();              // C: page 10, untouched
    uint64_t id_a = FakeRegistrar::id_of(a);
    RegHandle m = c.acquire(at(kBase + kPage + 1), 4 * kPage); // pages 1-5
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.start(), kBase);
    EXPECT_EQ(m.length(), 6 * kPage);
    EXPECT_EQ(c.stats().merges, 2u);
    // B went at once, A (pinned) stays registered, stale.
    EXPECT_EQ(f.deregistered.size(), 1u);
    EXPECT_EQ(f.live.count(id_a), 1u);
    EXPECT_EQ(c.stale(), 1u);
    EXPECT_EQ(c.size(), 3u); // A (stale), C, the merged one
    // Page 0 now finds the merged entry, not A.
    {
        RegHandle h = c.acquire(page(0), 1);
        EXPECT_EQ(FakeRegistrar::id_of(h), FakeRegistrar::id_of(m));
    }
    EXPECT_EQ(c.check(), "");
    a.release();
    EXPECT_EQ(f.live.count(id_a), 0u);
    EXPECT_EQ(c.stale(), 0u);
    EXPECT_EQ(c.size(), 2u);
    expect_same_entries(c, f);
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, BoundEvictsLeastRecentlyUsed)
{
    FakeRegistrar f;
    RegCache c(f, 4);
    std::vector<uint64_t> id(6);
    for (int i = 0; i < 4; i++) { // released in order 0, 1, 2, 3
        RegHandle h = c.acquire(page(10 * i), kPage);
        id[i] = FakeRegistrar::id_of(h);
    }
    c.acquire(page(10), 1).release(); // 1 used again: order 0, 2, 3, 1
    EXPECT_EQ(c.stats().hits, 1u);
    EXPECT_TRUE(f.deregistered.empty());
    {
        RegHandle h = c.acquire(page(40), kPage); // evicts 0
        id[4] = FakeRegistrar::id_of(h);
    }
    ASSERT_EQ(f.deregistered.size(), 1u);
    EXPECT_EQ(f.deregistered[0], id[0]);
    {
        RegHandle h = c.acquire(page(50), kPage); // evicts 2
        id[5] = FakeRegistrar::id_of(h);
    }
    ASSERT_EQ(f.deregistered.size(), 2u);
    EXPECT_EQ(f.deregistered[1], id[2]);
    EXPECT_EQ(c.size(), 4u);
    EXPECT_EQ(c.stats().evictions, 2u);
    EXPECT_EQ(c.stats().overflows, 0u);
    // Evicted ranges miss again; kept ones hit.
    uint64_t misses = c.stats().misses;
    c.acquire(page(10), 1).release();
    c.acquire(page(30), 1).release();
    EXPECT_EQ(c.stats().misses, misses);
    c.acquire(page(0), 1).release();
    EXPECT_EQ(c.stats().misses, misses + 1);
    EXPECT_EQ(c.size(), 4u);
    expect_same_entries(c, f);
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, PinnedEntriesAreNeverEvicted)
{
    FakeRegistrar f;
    RegCache c(f, 2);
    RegHandle h0 = c.acquire(page(0), kPage), h1 = c.acquire(page(10), kPage);
    RegHandle h2 = c.acquire(page(20), kPage); // all pinned: added above the bound
    ASSERT_TRUE(h2.ok());
    EXPECT_EQ(c.stats().overflows, 1u);
    EXPECT_EQ(c.size(), 3u);
    EXPECT_TRUE(f.deregistered.empty());
    RegHandle h3 = c.acquire(page(30), kPage);
    EXPECT_EQ(c.stats().overflows, 2u);
    EXPECT_EQ(c.size(), 4u);
    EXPECT_EQ(c.check(), "");
    // Releases trim back to the bound, oldest release first.
    uint64_t id2 = FakeRegistrar::id_of(h2), id0 = FakeRegistrar::id_of(h0);
    h2.release();
    EXPECT_EQ(c.size(), 3u);
    EXPECT_EQ(f.deregistered, std::vector<uint64_t>{id2});
    h0.release();
    EXPECT_EQ(c.size(), 2u);
    EXPECT_EQ(f.deregistered, (std::vector<uint64_t>{id2, id0}));
    h1.release();
    EXPECT_EQ(c.size(), 2u); // at the bound: kept
    EXPECT_EQ(c.stats().evictions, 2u);
    expect_same_entries(c, f);
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, InvalidateUnpinnedAndPinned)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    c.acquire(page(0), 4 * kPage).release();  // A, unpinned
    RegHandle b = c.acquire(page(8), 4 * kPage); // B, pinned
    c.acquire(page(20), kPage).release();     // C, elsewhere
    uint64_t id_b = FakeRegistrar::id_of(b);
    EXPECT_EQ(c.invalidate(page(30), 100 * kPage), 0u);
    // One byte in A's last page and everything up to B's first page.
    EXPECT_EQ(c.invalidate(at(kBase + 4 * kPage - 1), 4 * kPage + 2), 2u);
    EXPECT_EQ(c.stats().invalidated, 2u);
    EXPECT_EQ(f.deregistered.size(), 1u); // A now
    EXPECT_EQ(f.live.count(id_b), 1u);    // B when released
    EXPECT_EQ(c.stale(), 1u);
    EXPECT_EQ(c.check(), "");
    {
        // B's range again: a new registration, never the stale one.
        RegHandle again = c.acquire(page(9), kPage);
        EXPECT_NE(FakeRegistrar::id_of(again), id_b);
        EXPECT_EQ(c.stats().hits, 0u);
    }
    EXPECT_EQ(b.lkey(), uint32_t(id_b)); // still usable until released
    b.release();
    EXPECT_EQ(f.live.count(id_b), 0u);
    EXPECT_EQ(c.stale(), 0u);
    // Zero length invalidates nothing; a huge range invalidates everything.
    EXPECT_EQ(c.invalidate(page(20), 0), 0u);
    EXPECT_EQ(c.invalidate(at(0), SIZE_MAX), 2u);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_TRUE(f.live.empty());
    EXPECT_EQ(c.memory().bytes, RegCache::empty_bytes());
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, MaxEntriesZeroDisablesCaching)
{
    FakeRegistrar f;
    RegCache c(f, 0);
    RegHandle a = c.acquire(page(0), 100);
    RegHandle b = c.acquire(page(0), 100);
    EXPECT_EQ(f.calls, 2u);
    EXPECT_NE(FakeRegistrar::id_of(a), FakeRegistrar::id_of(b));
    EXPECT_EQ(c.size(), 2u);
    EXPECT_EQ(c.memory().nodes, 0u);
    EXPECT_EQ(c.invalidate(page(0), kPage), 0u);
    a.release();
    EXPECT_EQ(f.deregistered.size(), 1u);
    b.release();
    EXPECT_EQ(f.deregistered.size(), 2u);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_EQ(c.stats().hits, 0u);
    EXPECT_EQ(c.stats().misses, 2u);
    EXPECT_EQ(c.stats().overflows, 0u);
    EXPECT_EQ(c.stats().bypasses, 0u);
    EXPECT_EQ(c.memory().bytes, RegCache::empty_bytes());
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, AboveTheAddressBitsIsNotCached)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    uintptr_t high = uintptr_t(1) << 48;
    RegHandle a = c.acquire(at(high - kPage), 2 * kPage); // straddles 2^48
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.start(), high - kPage);
    EXPECT_EQ(a.length(), 2 * kPage);
    EXPECT_EQ(c.stats().bypasses, 1u);
    EXPECT_EQ(c.memory().nodes, 0u);
    a.release();
    EXPECT_EQ(c.size(), 0u);
    EXPECT_EQ(f.deregistered.size(), 1u);
    // Just below 2^48 is cached.
    c.acquire(at(high - kPage), kPage).release();
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(c.stats().bypasses, 1u);
    EXPECT_EQ(c.check(), "");
}

TEST(RegCache, RegistrationFailureRetriesAfterFlush)
{
    FakeRegistrar f;
    RegCache c(f, 16);
    c.acquire(page(0), kPage).release();
    c.acquire(page(10), kPage).release();
    RegHandle pinned = c.acquire(page(20), kPage);
    int refusals = 1;
    f.refuse = [&](uintptr_t, size_t) { return refusals-- > 0 ? ENOMEM : 0; };
    RegHandle h = c.acquire(page(30), kPage); // refused, flush (2 unpinned), accepted
    ASSERT_TRUE(h.ok()) << c.last_error();
    EXPECT_EQ(c.stats().evictions, 2u);
    EXPECT_EQ(c.size(), 2u);
    EXPECT_TRUE(pinned.ok());
    // Refused twice: a failed handle, nothing left behind.
    h.release();
    refusals = 2;
    RegHandle bad = c.acquire(page(40), kPage);
    EXPECT_FALSE(bad.ok());
    EXPECT_FALSE(bool(bad));
    EXPECT_EQ(bad.error(), ENOMEM);
    EXPECT_NE(c.last_error().find("fake refused"), std::string::npos) << c.last_error();
    EXPECT_NE(c.last_error().find("4096 bytes"), std::string::npos) << c.last_error();
    EXPECT_EQ(c.stats().failures, 1u);
    EXPECT_EQ(c.size(), 1u); // pinned only
    expect_same_entries(c, f);
    EXPECT_EQ(c.check(), "");
    // With nothing to flush: one attempt only.
    uint64_t calls = f.calls;
    refusals = 1;
    EXPECT_FALSE(c.acquire(page(50), kPage).ok());
    EXPECT_EQ(f.calls, calls + 1);
}

TEST(RegCache, HandlesMoveAndReleaseOnce)
{
    FakeRegistrar f;
    RegCache c(f, 0);
    RegHandle a = c.acquire(page(0), 1);
    RegHandle b = std::move(a);
    EXPECT_FALSE(a.ok());
    EXPECT_TRUE(b.ok());
    RegHandle d;
    d = std::move(b);
    EXPECT_EQ(f.deregistered.size(), 0u);
    d.release();
    d.release();
    EXPECT_EQ(f.deregistered.size(), 1u);
    RegHandle e = c.acquire(page(0), 1);
    e = c.acquire(page(1), 1); // assigning releases the old pin
    EXPECT_EQ(f.deregistered.size(), 2u);
    EXPECT_EQ(c.size(), 1u);
    static_assert(!std::is_copy_constructible<RegHandle>::value, "handles are not copied");
}

TEST(RegCache, TreeNodesFreedMemoryReturnsToEmpty)
{
    FakeRegistrar f;
    RegCache c(f, 65536);
    const uint64_t empty = RegCache::empty_bytes();
    EXPECT_EQ(c.memory().bytes, empty);
    EXPECT_EQ(c.memory().nodes, 0u);
    // One page: one slot per level, 8 nodes below the root.
    c.acquire(page(0), 1).release();
    llc::RegCacheMemory m = c.memory();
    EXPECT_EQ(m.nodes, 8u);
    EXPECT_EQ(m.entries, 1u);
    EXPECT_EQ(m.bytes, empty + 8 * m.node_bytes + m.entry_bytes);
    if (std::getenv("LLC_TEST_VERBOSE"))
        std::printf("node %llu bytes, entry %llu bytes, empty cache %llu bytes\n", (unsigned long long)m.node_bytes,
                    (unsigned long long)m.entry_bytes, (unsigned long long)empty);
    // A neighbouring page shares all of them.
    c.acquire(page(1), 1).release();
    EXPECT_EQ(c.memory().nodes, 8u);
    // A large aligned range needs only a few slots high up: 16^4 pages at a
    // 16^4-page boundary is one slot at depth 4.
    uintptr_t big = uintptr_t(0x5000'0000'0000);
    c.acquire(at(big), size_t(kPage) << 16).release();
    EXPECT_EQ(c.memory().nodes, 8u + 4u);
    EXPECT_EQ(c.check(), "");
    EXPECT_EQ(c.invalidate(at(big), 1), 1u);
    EXPECT_EQ(c.memory().nodes, 8u);

    // Scattered ranges of many sizes, then everything out again.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 2000; i++) {
            uintptr_t addr = rng() & ((uintptr_t(1) << 47) - 1);
            size_t len = size_t(1) << (rng() % 24);
            RegHandle h = c.acquire(at(addr), len);
            ASSERT_TRUE(h.ok());
            ASSERT_LE(h.start(), addr);
            ASSERT_GE(h.start() + h.length(), addr + len);
        }
        EXPECT_GT(c.memory().nodes, 100u);
        EXPECT_EQ(c.check(), "");
        expect_same_entries(c, f);
        if (round == 0)
            c.flush();
        else if (round == 1)
            c.invalidate(at(0), uintptr_t(1) << 48);
        else
            for (int i = 0; c.size() && i < 100000; i++) // piecewise invalidation frees nodes as it goes
                c.invalidate(at(rng() & ((uintptr_t(1) << 47) - 1)), size_t(1) << 44);
        EXPECT_EQ(c.size(), 0u);
        EXPECT_EQ(c.memory().nodes, 0u);
        EXPECT_EQ(c.memory().bytes, empty);
        EXPECT_TRUE(f.live.empty());
        EXPECT_EQ(c.check(), "");
    }
}

TEST(RegCache, DestructorDeregistersEverything)
{
    FakeRegistrar f;
    {
        RegCache c(f, 4);
        for (int i = 0; i < 10; i++)
            c.acquire(page(3 * i), kPage).release();
        RegHandle h = c.acquire(page(100), kPage);
        h.release();
        EXPECT_EQ(c.size(), 4u);
    }
    EXPECT_TRUE(f.live.empty());
    EXPECT_EQ(f.deregistered.size(), f.registered.size());
}

// Thousands of random acquire / release / invalidate / flush operations on
// overlapping ranges, checked after each one against a reference model:
//   * every handle covers the range it asked for and its registration is
//     live at the registrar for as long as the handle is held;
//   * the registrar's live registrations are exactly the cache's entries;
//   * no registration made before an invalidate of a range overlapping it
//     is handed out after that invalidate;
//   * above the bound there is no unpinned entry; a hit never registers;
//   * the tree and lists are consistent (check()).
namespace {

struct ModelRun {
    size_t cap;
    unsigned page_shift;
    uint32_t seed;
    int ops;
};

void random_run(const ModelRun &p)
{
    FakeRegistrar f;
    const uintptr_t pg = uintptr_t(1) << p.page_shift;
    f.page_size = pg;
    RegCache c(f, p.cap, p.page_shift);
    std::mt19937 rng(p.seed);
    auto uni = [&](uint64_t n) { return uint64_t(std::uniform_int_distribution<uint64_t>(0, n - 1)(rng)); };
    // Three regions: a dense one (many overlaps), a sparse one, and one just below 2^48.
    const uintptr_t regions[3] = {kBase, uintptr_t(0x1000'0000), (uintptr_t(1) << 48) - 64 * pg};
    const uint64_t region_pages[3] = {256, 1 << 20, 64};
    struct Held {
        RegHandle h;
        uintptr_t addr;
        size_t len;
    };
    std::vector<Held> held;
    struct Inval {
        uint64_t time;
        uintptr_t start, end; // bytes, as given (not page-rounded)
    };
    std::vector<Inval> invals;
    uint64_t acquires = 0;

    for (int op = 1; op <= p.ops; op++) {
        f.clock = uint64_t(op);
        uint64_t kind = uni(100);
        int region = uni(10) < 7 ? 0 : uni(3) < 2 ? 1 : 2;
        uintptr_t addr = regions[region] + uni(region_pages[region]) * pg + uni(pg);
        if (kind < 55) {
            size_t len = uni(4) == 0 ? size_t(uni(24 * pg)) : size_t(uni(2 * pg)) + 1;
            if (addr + len > regions[region] + region_pages[region] * pg) // stay in the region (below 2^48)
                len = regions[region] + region_pages[region] * pg - addr;
            uint64_t regs = f.registered.size(), hits = c.stats().hits;
            RegHandle h = c.acquire(at(addr), len);
            ASSERT_TRUE(h.ok()) << c.last_error();
            acquires++;
            size_t covered = len ? len : 1;
            ASSERT_LE(h.start(), addr);
            ASSERT_GE(h.start() + h.length(), addr + covered);
            ASSERT_EQ(h.start() % pg, 0u);
            ASSERT_EQ(h.length() % pg, 0u);
            uint64_t id = FakeRegistrar::id_of(h);
            ASSERT_EQ(f.live.count(id), 1u);
            if (c.stats().hits > hits) {
                ASSERT_EQ(f.registered.size(), regs) << "a hit registered";
            } else {
                ASSERT_GT(f.registered.size(), regs) << "a miss did not register";
            }
            // Not made before an invalidate that overlapped its range.
            uint64_t born = f.live[id].born;
            for (auto it = invals.rbegin(); it != invals.rend() && it->time >= born; ++it)
                ASSERT_FALSE(it->start < h.start() + h.length() && h.start() < it->end)
                    << "op " << op << ": registration made at op " << born << " survived the invalidate at op "
                    << it->time;
            if (held.size() < 40 && uni(3) != 0)
                held.push_back(Held{std::move(h), addr, len});
        } else if (kind < 85) {
            if (!held.empty()) {
                size_t i = size_t(uni(held.size()));
                std::swap(held[i], held.back());
                held.pop_back();
            }
        } else if (kind < 98) {
            size_t len = uni(5) == 0 ? size_t(uni(64 * pg)) : size_t(uni(3 * pg));
            size_t before = c.size();
            size_t n = c.invalidate(at(addr), len);
            ASSERT_LE(n, before);
            if (len)
                invals.push_back(Inval{uint64_t(op), addr, addr + len});
        } else {
            c.flush();
            ASSERT_EQ(c.unpinned(), 0u);
        }
        // Held handles: still covering, still live.
        for (const Held &x : held) {
            ASSERT_EQ(f.live.count(FakeRegistrar::id_of(x.h)), 1u) << "op " << op << ": a pinned registration went";
            ASSERT_LE(x.h.start(), x.addr);
            ASSERT_GE(x.h.start() + x.h.length(), x.addr + (x.len ? x.len : 1));
        }
        if (c.size() > p.cap) {
            ASSERT_EQ(c.unpinned(), 0u) << "op " << op;
        }
        if (p.cap == 0) {
            ASSERT_EQ(c.size(), held.size());
        }
        ASSERT_EQ(c.check(), "") << "op " << op;
        if (op % 16 == 0 || op == p.ops)
            expect_same_entries(c, f);
        if (::testing::Test::HasFatalFailure())
            return;
    }
    const auto &s = c.stats();
    if (std::getenv("LLC_TEST_VERBOSE"))
        std::printf("cap %zu: %llu hits %llu misses %llu merges %llu evictions %llu overflows %llu invalidated\n", p.cap,
                    (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.merges,
                    (unsigned long long)s.evictions, (unsigned long long)s.overflows, (unsigned long long)s.invalidated);
    EXPECT_EQ(s.hits + s.misses, acquires);
    EXPECT_EQ(s.registrations, f.registered.size());
    EXPECT_EQ(s.deregistrations, f.deregistered.size());
    if (p.cap > 0) {
        EXPECT_GT(s.hits, 0u);
        EXPECT_GT(s.merges, 0u);
        EXPECT_GT(s.invalidated, 0u);
    }
    if (p.cap > 0 && p.cap < 40) { // up to 40 handles held: beyond the bound at times
        EXPECT_GT(s.evictions, 0u);
        EXPECT_GT(s.overflows, 0u);
    }
    held.clear();
    EXPECT_EQ(c.pinned(), 0u);
    EXPECT_EQ(c.stale(), 0u);
    c.flush();
    EXPECT_TRUE(f.live.empty());
    EXPECT_EQ(c.memory().bytes, RegCache::empty_bytes());
    EXPECT_EQ(c.check(), "");
}

} // namespace

TEST(RegCache, RandomAgainstModelSmallBound) { random_run({8, 12, 1, 6000}); }
TEST(RegCache, RandomAgainstModelBoundAtPinnedLevel) { random_run({32, 12, 2, 6000}); }
TEST(RegCache, RandomAgainstModelLargeBound) { random_run({65536, 12, 3, 6000}); }
TEST(RegCache, RandomAgainstModel64KPages) { random_run({16, 16, 4, 4000}); }
TEST(RegCache, RandomAgainstModelNoCaching) { random_run({0, 12, 5, 3000}); }

TEST(RegCache, ConfigVariable)
{
    unsetenv("LLC_REG_CACHE_MAX");
    EXPECT_EQ(llc::Config::from_environment().reg_cache_max, RegCache::kDefaultMaxEntries);
    setenv("LLC_REG_CACHE_MAX", "0", 1);
    EXPECT_EQ(llc::Config::from_environment().reg_cache_max, 0u);
    setenv("LLC_REG_CACHE_MAX", "4k", 1);
    EXPECT_EQ(llc::Config::from_environment().reg_cache_max, 4096u);
    setenv("LLC_REG_CACHE_MAX", "lots", 1);
    EXPECT_THROW(llc::Config::from_environment(), llc::Error);
    unsetenv("LLC_REG_CACHE_MAX");
    bool listed = false;
    for (const auto &v : llc::env_vars())
        listed |= std::string(v.name) == "LLC_REG_CACHE_MAX" && std::string(v.default_text) == "65536";
    EXPECT_TRUE(listed);
}

#ifdef LLC_HAVE_VERBS
// Compiled only: there is no RDMA device here to register memory with.
static_assert(std::is_base_of<llc::Registrar, llc::VerbsRegistrar>::value, "VerbsRegistrar is a Registrar");
TEST(RegCache, VerbsRegistrarIsBuilt)
{
    llc::VerbsRegistrar r(nullptr);
    EXPECT_EQ(r.pd(), nullptr);
    EXPECT_EQ(r.dereg_failures(), 0u);
    r.deregister_region(llc::Registration{}); // a null handle is ignored
    EXPECT_EQ(r.dereg_failures(), 0u);
}
#endif
