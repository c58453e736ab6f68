// peer_cap_test.cpp - PeerCap, the eviction policy of every capped per-peer
// table, as a pure unit: room below the cap, one victim when full, an
// overflow when none may go, trimming back to the cap; the least recently
// used victim order; and a small table of connections driven by both, as
// tcp's is.
#include "support/peer_cap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

using llc::PeerCap;

namespace {

struct Entry {
    int rank = -1;
    uint64_t last_use = 0;
    bool busy = false; // may not go
};

// A capped table of entries kept as tcp keeps its connections: a list of
// pointers, the victim the least recently used entry that is not busy.
class LruTable {
public:
    explicit LruTable(size_t cap) : cap_(cap) {}

    Entry &use(int rank)
    {
        for (auto &e : entries_) {
            if (e->rank == rank) {
                e->last_use = ++clock_;
                return *e;
            }
        }
        cap_.make_room(
            entries_.size(), [this] { return victim(); }, [this](Entry *v) { drop(v); });
        entries_.push_back(std::make_unique<Entry>());
        Entry &e = *entries_.back();
        e.rank = rank;
        e.last_use = ++clock_;
        live_.push_back(&e);
        return e;
    }

    size_t trim()
    {
        return cap_.trim(
            entries_.size(), [this] { return victim(); }, [this](Entry *v) { drop(v); });
    }

    size_t size() const { return entries_.size(); }
    const PeerCap &cap() const { return cap_; }
    const std::vector<int> &evicted() const { return evicted_; }

private:
    void drop(Entry *v)
    {
        evicted_.push_back(v->rank);
        live_.erase(std::find(live_.begin(), live_.end(), v));
        entries_.erase(std::find_if(entries_.begin(), entries_.end(), [v](const auto &e) { return e.get() == v; }));
    }

    Entry *victim()
    {
        return llc::least_recently_used(
            live_, [](const Entry &e) { return !e.busy; }, [](const Entry &e) { return e.last_use; });
    }

    PeerCap cap_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::vector<Entry *> live_;
    std::vector<int> evicted_;
    uint64_t clock_ = 0;
};

} // namespace

TEST(PeerCap, BelowTheCapThereIsRoomAndNoVictimIsSought)
{
    PeerCap cap(3);
    int asked = 0, evicted = 0;
    Entry e;
    for (size_t live = 0; live < 3; live++) {
        auto room = cap.make_room(
            live,
            [&] {
                asked++;
                return &e;
            },
            [&](Entry *) { evicted++; });
        EXPECT_EQ(room, PeerCap::Room::Free);
    }
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(evicted, 0);
    EXPECT_EQ(cap.evictions(), 0u);
    EXPECT_EQ(cap.overflows(), 0u);
}

TEST(PeerCap, AFullTableEvictsItsVictimFirst)
{
    PeerCap cap(2);
    Entry e;
    Entry *gone = nullptr;
    EXPECT_EQ(cap.make_room(
                  2, [&] { return &e; }, [&](Entry *v) { gone = v; }),
              PeerCap::Room::Evicted);
    EXPECT_EQ(gone, &e);
    EXPECT_EQ(cap.evictions(), 1u);
    EXPECT_EQ(cap.overflows(), 0u);
}

TEST(PeerCap, WhenNoneMayGoTheTableOverflowsAndNothingIsEvicted)
{
    PeerCap cap(2);
    int evicted = 0;
    auto none = [] { return static_cast<Entry *>(nullptr); };
    EXPECT_EQ(cap.make_room(2, none, [&](Entry *) { evicted++; }), PeerCap::Room::Overflow);
    EXPECT_EQ(cap.make_room(3, none, [&](Entry *) { evicted++; }), PeerCap::Room::Overflow) << "already past the cap";
    EXPECT_EQ(evicted, 0);
    EXPECT_EQ(cap.overflows(), 2u);
    EXPECT_EQ(cap.evictions(), 0u);
}

TEST(PeerCap, TrimEvictsTheExcessUntilBackAtTheCapOrNoneMayGo)
{
    PeerCap cap(3);
    std::vector<Entry> entries(6);
    size_t next = 0, may_go = 1;
    auto victim = [&]() -> Entry * { return next < may_go ? &entries[next] : nullptr; };
    auto evict = [&](Entry *v) {
        EXPECT_EQ(v, &entries[next]);
        next++;
    };
    EXPECT_EQ(cap.trim(6, victim, evict), 1u) << "one may go";
    may_go = 6;
    EXPECT_EQ(cap.trim(5, victim, evict), 2u) << "back at the cap, not below it";
    EXPECT_EQ(next, 3u);
    EXPECT_EQ(cap.trim(3, victim, evict), 0u);
    EXPECT_EQ(cap.trim(1, victim, evict), 0u);
    EXPECT_EQ(cap.evictions(), 3u);
    EXPECT_EQ(cap.overflows(), 0u);
}

TEST(PeerCap, LeastRecentlyUsedIsTheOldestEntryThatMayGo)
{
    std::vector<Entry> e(4);
    e[0] = Entry{0, 7, false};
    e[1] = Entry{1, 3, true}; // the oldest, but busy
    e[2] = Entry{2, 5, false};
    e[3] = Entry{3, 5, false};
    std::vector<Entry *> all{&e[0], &e[1], &e[2], &e[3]};
    auto may_go = [](const Entry &x) { return !x.busy; };
    auto last_use = [](const Entry &x) { return x.last_use; };
    EXPECT_EQ(llc::least_recently_used(all, may_go, last_use), &e[2]) << "the first of equals";
    e[2].busy = true;
    EXPECT_EQ(llc::least_recently_used(all, may_go, last_use), &e[3]);
    for (Entry &x : e)
        x.busy = true;
    EXPECT_EQ(llc::least_recently_used(all, may_go, last_use), nullptr);
    EXPECT_EQ(llc::least_recently_used(std::vector<Entry *>{}, may_go, last_use), nullptr);
}

TEST(PeerCap, RotatingPeersStayWithinTheCapAndBusyOnesOverflowUntilTrimmed)
{
    LruTable t(2);
    for (int round = 0; round < 10; round++)
        for (int rank = 0; rank < 5; rank++) {
            t.use(rank);
            EXPECT_LE(t.size(), 2u);
        }
    EXPECT_EQ(t.cap().evictions(), 48u) << "every use but the first two makes room";
    EXPECT_EQ(t.cap().overflows(), 0u);
    EXPECT_EQ(t.evicted().front(), 0) << "least recently used first";

    // Busy entries are kept: new ones go past the cap, trimmed once they may go.
    t.use(3).busy = true;
    t.use(4).busy = true;
    t.use(5).busy = true;
    t.use(6);
    EXPECT_EQ(t.size(), 4u);
    EXPECT_EQ(t.cap().overflows(), 2u);
    EXPECT_EQ(t.trim(), 1u) << "only 6 may go";
    EXPECT_EQ(t.evicted().back(), 6);
    t.use(3).busy = false;
    t.use(5).busy = false;
    EXPECT_EQ(t.trim(), 1u);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.evicted().back(), 3) << "of those that may go, the least recently used";
}
