// peer_table.hpp - capped on-demand per-peer contexts behind a hashed rank table.
//
// The memory-saving design of Yamaguchi et al. (doc/references.md) keeps at
// most gamma live high-level contexts and finds a rank's context through a
// hash into gamma short lists instead of an n-entry array.  PeerTable<T> is
// that component: memory is O(capacity) whatever the job size.
//
//   * Lookup: bucket = hash(rank) mod buckets (buckets = capacity by default),
//     then a walk of the bucket's chain (slot indices, no allocation).
//   * Capacity: at most `capacity` (gamma, LLC_MAX_CONTEXTS) live entries,
//     under the eviction policy of every capped per-peer table (PeerCap,
//     peer_cap.hpp): inserting into a full table evicts one entry first;
//     the owner's evict hook is called with the rank and the value so it
//     can flush or tear down the peer's state before the slot is reused.
//   * Eviction predictor (an approximation of Belady's MIN, which evicts the
//     entry whose next use is furthest in the future).  Time is a logical
//     clock that ticks on every use.  Each entry keeps its last use L and an
//     estimate I of its reuse interval (exponential average, weight 1/2 on
//     the newest interval; unknown until the second use).  With age a = now-L
//     and C the capacity, the predicted distance to the next use is
//         I - a       if I is known and a <= I (the peer is "on schedule"),
//         a + C       otherwise: used only once so far, or overdue (the
//                     interval failed to predict).  Such a peer is assumed
//                     not to come back before the table has turned over
//                     (C insertions); among them the older goes first.
//     The entry with the largest predicted distance is evicted (ties: the
//     older last use, then the lower slot).  With no reuse history this is
//     exactly LRU; a peer used at a regular period shorter than about C
//     operations survives a stream of one-off peers, which LRU would not
//     guarantee.  The victim search scans the live entries: O(capacity) per
//     eviction, none per lookup.
//   * History outlives eviction: an evicted entry leaves (rank, L, I) in a
//     direct-mapped "ghost" array of `capacity` slots (indexed by the rank's
//     hash, a collision overwrites).  When the rank comes back, its reuse
//     interval is updated with the gap since L, as if it had stayed; so a
//     peer evicted once under pressure is recognised as periodic.
//   * Entries that must not go (an owner's "busy" state): get_or_create with
//     a may_evict predicate only evicts an entry it accepts (the predictor
//     picks among those).  When none may go, the table grows past its
//     capacity instead of failing (PeerCap's overflow, counted in
//     overflows()); trim() evicts the excess once entries may go again.
//     Slots added that way stay allocated (on the free list) for reuse.
//   * Slots on demand (constructor flag): the slot array starts empty and
//     grows by one slot (vector growth: capacity doubling) when no free slot
//     is left, so a table sized for a large capacity costs only its bucket
//     heads and ghosts until it fills.  A reference returned by
//     get_or_create may then be invalidated by any later insertion.
#pragma once

#include "support/peer_cap.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace llc {

template <class T> class PeerTable {
public:
    using EvictHook = std::function<void(int rank, T &value)>;

    explicit PeerTable(size_t capacity, EvictHook on_evict = {}, size_t buckets = 0, bool slots_on_demand = false)
        : cap_(capacity), on_evict_(std::move(on_evict))
    {
        if (capacity == 0)
            throw std::invalid_argument("PeerTable capacity must be at least 1");
        heads_.assign(buckets ? buckets : capacity, kNone);
        ghosts_.resize(capacity);
        if (!slots_on_demand) {
            slots_.resize(capacity);
            for (size_t i = 0; i < capacity; i++)
                slots_[i].next = i + 1 < capacity ? int32_t(i + 1) : kNone;
            free_ = 0;
        }
    }

    size_t capacity() const { return cap_.cap(); }
    size_t size() const { return live_; }
    uint64_t overflows() const { return cap_.overflows(); }
    size_t buckets() const { return heads_.size(); }
    uint64_t evictions() const { return cap_.evictions(); }
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

    // Value for rank, or nullptr.  Counts as a use.
    T *find(int rank)
    {
        int32_t i = locate(rank);
        if (i == kNone)
            return nullptr;
        touch(slots_[size_t(i)]);
        return &slots_[size_t(i)].value;
    }
    // Value for rank without counting a use.
    const T *peek(int rank) const
    {
        int32_t i = locate(rank);
        return i == kNone ? nullptr : &slots_[size_t(i)].value;
    }
    T *peek(int rank)
    {
        int32_t i = locate(rank);
        return i == kNone ? nullptr : &slots_[size_t(i)].value;
    }
    bool contains(int rank) const { return locate(rank) != kNone; }

    // Value for rank; when absent, evicts (if full) and inserts make(rank).
    template <class Make> T &get_or_create(int rank, Make &&make)
    {
        return get_or_create(rank, std::forward<Make>(make), [](int, const T &) { return true; });
    }
    // The same, but only an entry for which may_evict(rank, value) holds is
    // evicted; when the table is full and none may go, it grows past its
    // capacity (overflows() counts that).  A reference returned earlier may
    // be invalidated by such growth.
    template <class Make, class MayEvict> T &get_or_create(int rank, Make &&make, MayEvict &&may_evict)
    {
        int32_t i = locate(rank);
        if (i != kNone) {
            hits_++;
            touch(slots_[size_t(i)]);
            return slots_[size_t(i)].value;
        }
        misses_++;
        T value = make(rank); // first, so a throwing make leaves the table as it was
        cap_.make_room(live_, victim_slot(may_evict), evict_slot());
        if (free_ == kNone)
            grow();
        i = free_;
        Slot &s = slots_[size_t(i)];
        free_ = s.next;
        s.value = std::move(value);
        s.rank = rank;
        s.live = true;
        s.last_use = ++clock_;
        s.interval = 0;
        Ghost &g = ghosts_[ghost_index(rank)];
        if (g.rank == rank) { // it was here before: keep learning its interval
            uint64_t gap = s.last_use - g.last_use;
            s.interval = g.interval == 0 ? gap : (g.interval + gap) / 2;
            g.rank = -1;
        }
        size_t b = bucket(rank);
        s.next = heads_[b];
        heads_[b] = i;
        live_++;
        return s.value;
    }
    T &get_or_create(int rank)
    {
        return get_or_create(rank, [](int) { return T(); });
    }

    // Remove rank without calling the hook; returns whether it was present.
    bool erase(int rank)
    {
        int32_t i = locate(rank);
        if (i == kNone)
            return false;
        unlink(i);
        return true;
    }

    // Remove (without calling the hook) every entry for which pred(rank,
    // value) holds; returns how many.  pred must not insert.
    template <class Pred> size_t erase_if(Pred &&pred)
    {
        size_t n = 0;
        for (size_t i = 0; i < slots_.size(); i++) {
            if (slots_[i].live && pred(slots_[i].rank, slots_[i].value)) {
                unlink(int32_t(i));
                n++;
            }
        }
        return n;
    }

    // The rank the next eviction would remove (-1 when the table is empty).
    int predicted_victim() const
    {
        int32_t v = victim([](int, const T &) { return true; });
        return v == kNone ? -1 : slots_[size_t(v)].rank;
    }

    // After an overflow: evict entries that may_evict accepts until the
    // table is back at its capacity.  Returns how many were evicted.
    template <class MayEvict> size_t trim(MayEvict &&may_evict)
    {
        return cap_.trim(live_, victim_slot(may_evict), evict_slot());
    }

    // Bytes held: the object, the slot array and the bucket heads.
    uint64_t memory_bytes() const
    {
        return sizeof(*this) + uint64_t(slots_.capacity()) * sizeof(Slot) +
               uint64_t(heads_.capacity()) * sizeof(int32_t) + uint64_t(ghosts_.capacity()) * sizeof(Ghost);
    }
    static constexpr size_t slot_bytes() { return sizeof(Slot); }
    static constexpr size_t ghost_bytes() { return sizeof(Ghost); }

    // fn must not insert (an insertion may move the slots).
    template <class Fn> void for_each(Fn &&fn)
    {
        for (size_t i = 0; i < slots_.size(); i++)
            if (slots_[i].live)
                fn(slots_[i].rank, slots_[i].value);
    }
    template <class Fn> void for_each(Fn &&fn) const
    {
        for (const Slot &s : slots_)
            if (s.live)
                fn(s.rank, s.value);
    }

private:
    static constexpr int32_t kNone = -1;
    struct Slot {
        T value{};
        uint64_t last_use = 0;
        uint64_t interval = 0; // 0: unknown
        int32_t rank = -1;
        int32_t next = kNone;  // bucket chain, or free list
        bool live = false;
    };

    struct Ghost {
        int32_t rank = -1;
        uint64_t last_use = 0;
        uint64_t interval = 0;
    };

    size_t ghost_index(int rank) const
    {
        uint64_t h = uint64_t(uint32_t(rank)) * 0xc2b2ae3d27d4eb4full;
        return size_t((h >> 32) % ghosts_.size());
    }

    size_t bucket(int rank) const
    {
        // Fibonacci hashing spreads consecutive ranks over the buckets.
        uint64_t h = uint64_t(uint32_t(rank)) * 0x9e3779b97f4a7c15ull;
        return size_t((h >> 32) % heads_.size());
    }

    int32_t locate(int rank) const
    {
        for (int32_t i = heads_[bucket(rank)]; i != kNone; i = slots_[size_t(i)].next)
            if (slots_[size_t(i)].rank == rank)
                return i;
        return kNone;
    }

    void touch(Slot &s)
    {
        uint64_t now = ++clock_;
        uint64_t gap = now - s.last_use;
        s.interval = s.interval == 0 ? gap : (s.interval + gap) / 2;
        s.last_use = now;
    }

    uint64_t predicted_distance(const Slot &s) const
    {
        uint64_t age = clock_ - s.last_use;
        if (s.interval != 0 && age <= s.interval)
            return s.interval - age;
        return age + cap_.cap();
    }

    template <class MayEvict> int32_t victim(MayEvict &&may_evict) const
    {
        int32_t best = kNone;
        uint64_t best_d = 0;
        for (size_t i = 0; i < slots_.size(); i++) {
            const Slot &s = slots_[i];
            if (!s.live || !may_evict(s.rank, s.value))
                continue;
            uint64_t d = predicted_distance(s);
            if (best == kNone || d > best_d ||
                (d == best_d && s.last_use < slots_[size_t(best)].last_use)) {
                best = int32_t(i);
                best_d = d;
            }
        }
        return best;
    }

    // PeerCap's victim() and evict(v) for this table: the predictor's
    // choice among the entries may_evict accepts, as a slot pointer.
    template <class MayEvict> auto victim_slot(MayEvict &&may_evict) const
    {
        return [this, &may_evict]() -> const Slot * {
            int32_t v = victim(may_evict);
            return v == kNone ? nullptr : &slots_[size_t(v)];
        };
    }
    auto evict_slot()
    {
        return [this](const Slot *s) { evict(int32_t(s - slots_.data())); };
    }

    void evict(int32_t i)
    {
        Slot &s = slots_[size_t(i)];
        if (on_evict_)
            on_evict_(s.rank, s.value);
        ghosts_[ghost_index(s.rank)] = Ghost{s.rank, s.last_use, s.interval};
        unlink(i);
    }

    // One more slot past the capacity, onto the free list.
    void grow()
    {
        // on demand: double up to the capacity, not past it
        if (slots_.size() < cap_.cap() && slots_.size() == slots_.capacity())
            slots_.reserve(std::min(cap_.cap(), std::max<size_t>(4, 2 * slots_.size())));
        slots_.emplace_back();
        slots_.back().next = free_;
        free_ = int32_t(slots_.size() - 1);
    }

    void unlink(int32_t i)
    {
        Slot &s = slots_[size_t(i)];
        size_t b = bucket(s.rank);
        int32_t *link = &heads_[b];
        while (*link != i)
            link = &slots_[size_t(*link)].next;
        *link = s.next;
        s.value = T();
        s.live = false;
        s.rank = -1;
        s.next = free_;
        free_ = i;
        live_--;
    }

    std::vector<Slot> slots_;
    std::vector<int32_t> heads_;
    std::vector<Ghost> ghosts_;
    int32_t free_ = kNone;
    PeerCap cap_;
    size_t live_ = 0;
    uint64_t clock_ = 0;
    uint64_t hits_ = 0, misses_ = 0;
    EvictHook on_evict_;
};

} // namespace llc
