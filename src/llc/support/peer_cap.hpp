// peer_cap.hpp - the eviction policy of a table of per-peer state capped at
// LLC_MAX_CONTEXTS entries.
//
// Every capped per-peer table follows the one rule written here: udp's and
// verbs' Peers and the router's routes and sources (PeerTables, which call
// it), and tcp's outgoing connections (which call it directly).
//
//   * An entry may be evicted only when its owner says that dropping it
//     loses nothing (the owner's may-go predicate: everything acknowledged,
//     nothing queued, quiet, ...; each owner has its own).
//   * Before a new entry joins a table that holds `cap` entries, one entry
//     that may go is evicted: the victim the table's order picks.
//   * When none may go, the new entry joins anyway, past the cap: a send is
//     never blocked or failed for the cap.  That is an overflow.
//   * trim() evicts the excess once entries may go again.  The owner calls
//     it from its own progress: tcp on every progress call, udp in its
//     once-a-second sweep, the router at the end of every policy period.
//     verbs does not trim: after an overflow its table keeps that size,
//     each later insertion evicting one entry that may go.
//
// The victim order is the table's, passed in as victim(): a PeerTable's
// reuse predictor (peer_table.hpp), or least recently used
// (least_recently_used below: tcp's connections, kept in a map of open
// connections only, with a clock that ticks per send).
#pragma once

#include <cstddef>
#include <cstdint>

namespace llc {

class PeerCap {
public:
    explicit PeerCap(size_t cap) : cap_(cap) {}

    size_t cap() const { return cap_; }
    uint64_t evictions() const { return evictions_; }
    uint64_t overflows() const { return overflows_; }

    enum class Room {
        Free,     // below the cap: nothing evicted
        Evicted,  // full: one entry went
        Overflow, // full and none may go: the new entry goes past the cap
    };

    // Before an entry joins a table of `live` entries.  victim() returns the
    // entry to evict (a pointer; nullptr when none may go) and is called only
    // when the table is full; evict(v) removes it.
    template <class Victim, class Evict> Room make_room(size_t live, Victim &&victim, Evict &&evict)
    {
        if (live < cap_)
            return Room::Free;
        if (auto v = victim()) {
            evict(v);
            evictions_++;
            return Room::Evicted;
        }
        overflows_++;
        return Room::Overflow;
    }

    // A table of `live` entries past the cap (after overflows): evicts
    // victims until it is back at the cap or none may go.  Returns how many
    // were evicted.
    template <class Victim, class Evict> size_t trim(size_t live, Victim &&victim, Evict &&evict)
    {
        size_t n = 0;
        for (; live > cap_; live--, n++) {
            auto v = victim();
            if (!v)
                break;
            evict(v);
            evictions_++;
        }
        return n;
    }

private:
    size_t cap_;
    uint64_t evictions_ = 0;
    uint64_t overflows_ = 0;
};

// The victim order "least recently used": of the entries (pointers) that
// may_go accepts, the one with the smallest last_use (the first of equals),
// or nullptr when none may go.
template <class Entries, class MayGo, class LastUse>
auto least_recently_used(const Entries &entries, MayGo &&may_go, LastUse &&last_use) -> typename Entries::value_type
{
    typename Entries::value_type best = nullptr;
    for (const auto &e : entries)
        if (may_go(*e) && (!best || last_use(*e) < last_use(*best)))
            best = e;
    return best;
}

} // namespace llc
