// peer_table_test.cpp - PeerTable: cap, lookups under churn, eviction order,
// memory; LazyZeroArray: pages committed on first write.
#include "support/lazy_array.hpp"
#include "support/peer_table.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

using llc::PeerTable;

namespace {
struct Value {
    int rank = -1;
    int version = 0;
};
} // namespace

TEST(PeerTable, CapNeverExceededAndLookupsCorrectUnderChurn)
{
    const size_t cap = 64;
    std::map<int, int> live; // reference: rank -> version
    std::vector<int> evicted;
    PeerTable<Value> t(cap, [&](int rank, Value &v) {
        EXPECT_EQ(v.rank, rank);
        ASSERT_EQ(live.count(rank), 1u);
        EXPECT_EQ(live[rank], v.version);
        live.erase(rank);
        evicted.push_back(rank);
    });
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> hot(0, 80), cold(0, 1 << 22);
    int version = 0;
    for (int i = 0; i < 100000; i++) {
        int rank = (i % 3) ? hot(rng) : cold(rng);
        if (i % 97 == 0) {
            bool had = live.erase(rank) > 0;
            EXPECT_EQ(t.erase(rank), had);
            continue;
        }
        bool present = live.count(rank) > 0;
        ASSERT_EQ(t.contains(rank), present);
        Value &v = t.get_or_create(rank, [&](int r) { return Value{r, ++version}; });
        if (!present)
            live[rank] = v.version;
        EXPECT_EQ(v.rank, rank);
        EXPECT_EQ(v.version, live[rank]);
        ASSERT_LE(t.size(), cap);
        ASSERT_EQ(t.size(), live.size());
    }
    EXPECT_EQ(t.size(), cap);
    EXPECT_EQ(t.evictions(), evicted.size());
    EXPECT_GT(t.evictions(), 1000u);
    for (auto &kv : live) {
        const Value *v = t.peek(kv.first);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->version, kv.second);
    }
    for (int r : evicted) {
        if (!live.count(r)) {
            EXPECT_EQ(t.peek(r), nullptr);
        }
    }
}

TEST(PeerTable, WithoutReuseHistoryEvictionIsLru)
{
    std::vector<int> order;
    PeerTable<int> t(3, [&](int rank, int &) { order.push_back(rank); });
    for (int r : {10, 20, 30})
        t.get_or_create(r);
    EXPECT_EQ(t.predicted_victim(), 10);
    t.get_or_create(40); // evicts 10
    t.get_or_create(50); // evicts 20
    EXPECT_EQ(order, (std::vector<int>{10, 20}));
    EXPECT_FALSE(t.contains(10));
    EXPECT_TRUE(t.contains(30));
    EXPECT_EQ(t.predicted_victim(), 30);
}

// A peer used every 5 operations stays while one-off peers stream through a
// table of 4; LRU would evict it every time (it is the least recently used
// entry when the fourth one-off arrives).
TEST(PeerTable, PeriodicPeerOutlivesOneOffsAsPredicted)
{
    const int periodic = 7;
    std::vector<int> order;
    PeerTable<int> t(4, [&](int rank, int &) { order.push_back(rank); });
    int oneoff = 1000;
    int periodic_misses = 0;
    for (int round = 0; round < 50; round++) {
        if (!t.contains(periodic))
            periodic_misses++;
        t.get_or_create(periodic);
        for (int k = 0; k < 4; k++)
            t.get_or_create(oneoff++);
    }
    // Evicted at most once: in the first round it has no history yet.
    EXPECT_LE(periodic_misses, 2) << "the periodic peer was evicted";
    EXPECT_LE(std::count(order.begin(), order.end(), periodic), 1);
    order.erase(std::remove(order.begin(), order.end(), periodic), order.end());
    // The one-offs leave oldest first.
    for (size_t i = 1; i < order.size(); i++)
        EXPECT_LT(order[i - 1], order[i]);
}

TEST(PeerTable, OverduePeerFallsBackToRecency)
{
    PeerTable<int> t(3);
    t.get_or_create(1);
    t.get_or_create(1); // interval 1
    t.get_or_create(2);
    t.get_or_create(3);
    for (int i = 0; i < 10; i++)
        t.find(3); // 1 is long overdue: like 2 (used once) it is ranked by age, and it is older
    EXPECT_EQ(t.predicted_victim(), 1);
}

TEST(PeerTable, MemoryIsCountedAndIndependentOfRankRange)
{
    PeerTable<uint64_t> t(1024);
    uint64_t expect = sizeof(t) + 1024 * (PeerTable<uint64_t>::slot_bytes() + sizeof(int32_t) +
                                          PeerTable<uint64_t>::ghost_bytes());
    EXPECT_EQ(t.memory_bytes(), expect);
    for (int r = 0; r < 5000; r++)
        t.get_or_create(r * 977 + (1 << 30)) = uint64_t(r);
    EXPECT_EQ(t.size(), 1024u);
    EXPECT_EQ(t.memory_bytes(), expect);
    EXPECT_EQ(t.buckets(), 1024u);
    EXPECT_THROW(PeerTable<int>(0), std::invalid_argument);
}

TEST(PeerTable, ThrowingFactoryLeavesTableUnchanged)
{
    PeerTable<int> t(2);
    t.get_or_create(1);
    t.get_or_create(2);
    EXPECT_THROW(t.get_or_create(3, [](int) -> int { throw std::runtime_error("no"); }), std::runtime_error);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_TRUE(t.contains(1));
    EXPECT_TRUE(t.contains(2));
    EXPECT_EQ(t.evictions(), 0u);
}

// Only entries the owner lets go are evicted; when none may go the table
// grows past its capacity (counted), and trim() gives the room back later.
TEST(PeerTable, BusyEntriesAreNeverEvictedOverflowIsCountedAndTrimmed)
{
    std::set<int> busy;
    std::vector<int> evicted;
    PeerTable<Value> t(2, [&](int rank, Value &) { evicted.push_back(rank); });
    auto may_evict = [&](int rank, const Value &) { return busy.count(rank) == 0; };
    auto make = [](int rank) { return Value{rank, 0}; };
    t.get_or_create(10, make, may_evict);
    t.get_or_create(11, make, may_evict);
    busy = {10};
    t.get_or_create(12, make, may_evict); // 10 is older but busy: 11 goes
    EXPECT_EQ(evicted, std::vector<int>({11}));
    EXPECT_TRUE(t.contains(10));
    busy = {10, 12};
    t.get_or_create(13, make, may_evict); // nobody may go: above the cap
    EXPECT_EQ(t.size(), 3u);
    EXPECT_EQ(t.overflows(), 1u);
    EXPECT_EQ(t.capacity(), 2u);
    for (int r : {10, 12, 13})
        EXPECT_EQ(t.peek(r)->rank, r);
    EXPECT_EQ(t.trim(may_evict), 1u); // 13 (not busy) is the only one that may go
    EXPECT_EQ(evicted, std::vector<int>({11, 13}));
    EXPECT_EQ(t.size(), 2u);
    busy.clear();
    EXPECT_EQ(t.trim(may_evict), 0u); // at the cap: nothing to do
    // the slot added by the overflow is reused, not leaked
    t.get_or_create(14, make, may_evict);
    t.get_or_create(15, make, may_evict);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.overflows(), 1u);
    EXPECT_TRUE(t.contains(14) && t.contains(15));
}

// Slots on demand (the hybrid's tables): only the bucket heads and ghosts
// are sized by the capacity; the slot array grows with the entries, never
// past the capacity without an overflow, and keeps its slots for reuse.
// erase_if removes without the hook and frees the slots.
TEST(PeerTable, SlotsOnDemandGrowUpToTheCapacityOnly)
{
    std::vector<int> evicted;
    PeerTable<uint64_t> t(1000, [&](int rank, uint64_t &) { evicted.push_back(rank); }, 0, true);
    const uint64_t fixed = sizeof(t) + 1000 * (sizeof(int32_t) + PeerTable<uint64_t>::ghost_bytes());
    const uint64_t slot = PeerTable<uint64_t>::slot_bytes();
    EXPECT_EQ(t.memory_bytes(), fixed);
    for (int r = 0; r < 3; r++)
        t.get_or_create(r) = uint64_t(r);
    EXPECT_EQ(t.memory_bytes(), fixed + 4 * slot);
    for (int r = 3; r < 5000; r++)
        t.get_or_create(r * 977 + 5) = uint64_t(r);
    EXPECT_EQ(t.size(), 1000u);
    EXPECT_EQ(t.memory_bytes(), fixed + 1000 * slot) << "never more slots than the capacity";
    EXPECT_EQ(t.evictions(), 4000u);
    EXPECT_EQ(evicted.size(), 4000u);
    size_t odd = 0;
    t.for_each([&](int, const uint64_t &v) { odd += v % 2; });
    EXPECT_EQ(t.erase_if([](int, uint64_t &v) { return v % 2 == 1; }), odd);
    EXPECT_EQ(t.size(), 1000u - odd);
    EXPECT_EQ(evicted.size(), 4000u) << "erase_if does not call the hook";
    t.for_each([&](int, const uint64_t &v) { EXPECT_EQ(v % 2, 0u); });
    for (int r = 0; r < int(odd); r++)
        t.get_or_create(-1 - r);
    EXPECT_EQ(t.size(), 1000u);
    EXPECT_EQ(t.evictions(), 4000u) << "the freed slots were reused";
    EXPECT_EQ(t.memory_bytes(), fixed + 1000 * slot);
    uint64_t *v = t.peek(-1);
    ASSERT_NE(v, nullptr);
    *v = 42;
    EXPECT_EQ(*static_cast<const PeerTable<uint64_t> &>(t).peek(-1), 42u);
}

TEST(LazyZeroArray, CommitsOnlyWrittenPages)
{
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    llc::LazyZeroArray<uint64_t> a;
    EXPECT_EQ(a.resident_bytes(), 0u);
    a.assign(1 << 22, 0); // 32 MiB of address space
    EXPECT_EQ(a.size(), size_t(1) << 22);
    EXPECT_EQ(a.mapped_bytes(), (size_t(1) << 22) * 8);
    EXPECT_EQ(a.resident_bytes(), 0u);
    a[0]++;
    a[1]++;
    a[(size_t(1) << 22) - 1] = 7;
    EXPECT_EQ(a.resident_bytes(), 2 * page);
    EXPECT_EQ(a[0], 1u);
    EXPECT_EQ(a[12345], 0u);
    llc::LazyZeroArray<uint64_t> b = std::move(a);
    EXPECT_EQ(b[(size_t(1) << 22) - 1], 7u);
    EXPECT_EQ(a.size(), 0u);
    EXPECT_THROW(b.assign(10, 3), std::logic_error);
    b.assign(10, 0);
    EXPECT_EQ(b[0], 0u);
    EXPECT_EQ(b.mapped_bytes(), page);
}
