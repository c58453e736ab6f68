// busy_promotion.hpp - which busy peers get one of a limited number of
// connected slots.
//
// One rule for the router's tcp routes (LLC_NET=hybrid) and verbs' RC queue
// pairs, both at LLC_HYBRID_PROMOTE_MSGS:
//   * A peer is busy when its load reaches promote_at.  The load is the
//     caller's measure: the router's score of a route (halved every policy
//     period, plus the period's sends), verbs' data frames to the peer within
//     the last window of frames.
//   * A busy peer takes a free slot, if there is one.
//   * With none free, the router lets it take the slot of the least busy
//     promoted peer (which is demoted) when it is twice as busy as that one
//     (displaces).  Exactly twice is the caller's parameter: the sender
//     driver's tick keeps the promoted peer (AtTwice::Stays), a receiver's
//     ask displaces it (AtTwice::Displaces).  verbs never displaces: an RC
//     queue pair, once made, is kept for its peer.
//   * A promoted peer whose load falls below a quarter of promote_at is quiet:
//     the router's sender driver demotes it (verbs never demotes).
#pragma once

#include <cstdint>

namespace llc {

class BusyPromotion {
public:
    // A newcomer exactly twice as busy as the promoted peer: which one keeps the slot.
    enum class AtTwice { Displaces, Stays };

    explicit BusyPromotion(uint64_t promote_at) : promote_at_(promote_at) {}

    uint64_t promote_at() const { return promote_at_; }
    bool busy(uint64_t load) const { return load >= promote_at_; }
    bool quiet(uint64_t load) const { return load < promote_at_ / 4; }

    // Whether a busy peer of `load` takes the slot of a promoted peer of
    // `incumbent` load when no slot is free.
    static bool displaces(uint64_t load, uint64_t incumbent, AtTwice at_twice)
    {
        return at_twice == AtTwice::Displaces ? incumbent * 2 <= load : incumbent * 2 < load;
    }

private:
    uint64_t promote_at_;
};

} // namespace llc
