// goodbye_book.hpp - the goodbye exchange of llc_finalize, per peer rank:
// whom we sent to (they wait for our goodbye), whom we heard from (we wait
// for theirs), whose goodbye we queued, whose arrived, and who is gone.  It
// answers "is incoming quiet" and "whom are we still waiting for" in one
// place.  How a goodbye travels is the transport's (a Goodbye record behind
// the data).
//
// Users: verbs (VerbsEngine keeps one book for the job).  udp keeps the same
// facts in each Peer, whose state is dropped and re-made with every
// incarnation (a Forget, an eviction, a ghost that remembers a goodbye), so
// a table by rank would have to be reset at each of those steps; it shares
// the book's notation (bye_flags) in its report.  tcp waits per accepted
// connection, not per rank (a peer may reconnect; an unauthenticated one is
// given a grace period).  shm reads its peers' ring-control flags
// (sender_finalizing, sender_drained) and whether their processes are
// alive: nothing to record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llc {

class GoodbyeBook {
public:
    explicit GoodbyeBook(int ranks = 0) : peers_(size_t(ranks > 0 ? ranks : 0)) {}

    // Data went to r: it waits for our goodbye.
    void sent(int r) { peers_[size_t(r)] |= kSent; } // (no change to whom we wait for)
    // Something arrived from r: we wait for its goodbye.
    void heard(int r) { set(r, kHeard); }
    // Our goodbye to r is queued (behind the data).
    void said(int r) { peers_[size_t(r)] |= kSaid; }
    // r's goodbye arrived.
    void got(int r) { set(r, kGot); }
    // r failed, or dropped its state for us: nothing more comes from it.
    void gone(int r) { set(r, kGone); }

    bool has_sent(int r) const { return has(r, kSent); }
    bool has_heard(int r) const { return has(r, kHeard); }
    bool has_said(int r) const { return has(r, kSaid); }
    bool has_got(int r) const { return has(r, kGot); }
    // r gets a goodbye from us that is not queued yet.
    bool owes_goodbye(int r) const { return (peers_[size_t(r)] & (kSent | kSaid)) == kSent; }
    // We heard from r, and neither its goodbye nor its end has come.
    bool waiting_for(int r) const { return waits(peers_[size_t(r)]); }
    // Waiting for nobody: nothing more can arrive.
    bool quiet() const { return waiting_ == 0; }
    size_t waiting_count() const { return waiting_; }
    int size() const { return int(peers_.size()); }

    // "s-", "sr", "-r" or "--": our goodbye said, its goodbye received.
    static std::string bye_flags(bool said, bool got);
    // "rank 3: heard, bye s-" (sent, heard, gone when so).
    std::string line(int r) const;
    // "waiting for the goodbye of rank 3, 7" or "".
    std::string waiting_report() const;

private:
    // One byte per rank (a million ranks: 1 MB).
    enum : uint8_t { kSent = 1, kHeard = 2, kSaid = 4, kGot = 8, kGone = 16 };
    static bool waits(uint8_t f) { return (f & (kHeard | kGot | kGone)) == kHeard; }
    bool has(int r, uint8_t flag) const { return (peers_[size_t(r)] & flag) != 0; }
    void set(int r, uint8_t flag)
    {
        uint8_t &f = peers_[size_t(r)];
        const bool before = waits(f);
        f = uint8_t(f | flag);
        if (waits(f) != before)
            waiting_ = before ? waiting_ - 1 : waiting_ + 1; // got or gone; heard
    }

    std::vector<uint8_t> peers_;
    size_t waiting_ = 0; // ranks for which waiting_for is true
};

} // namespace llc
