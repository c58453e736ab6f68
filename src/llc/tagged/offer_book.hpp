// offer_book.hpp - the sender's side of the receiver-first path (offers): the
// receives that peers have offered us (their buffer, where we may write the
// next message that matches them), per peer, oldest first.
//
// An offer names the receive by its token (request_tokens.hpp), says what it
// matches (tag, ignore mask, source label) and where its buffer is (process
// and address, for a single-copy write on the same node).  A send to that
// peer whose envelope matches an offer must use the oldest such offer: the
// receiver posted those receives before any later one, and MPI's order is
// the posting order.  Offers from one peer are few (the receives it has
// posted for us and not yet filled); more than kMaxPerPeer are refused, so a
// peer cannot make this table grow without bound.
//
// No allocation per message once a peer's list has reached its working size
// (a std::vector used as a short queue).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace llc {

struct Offer {
    uint64_t rreq = 0;     // the receiver's token for the receive
    uint64_t tag = 0;      // the receive's tag ...
    uint64_t ignore = 0;   // ... and the bits it ignores
    uint64_t capacity = 0; // bytes the buffer holds
    uint64_t addr = 0;     // the buffer, in the receiver's process
    int32_t source = 0;    // the label the receive wants (never any-source)
    int32_t pid = 0;       // the receiver's process
};

class OfferBook {
public:
    static constexpr size_t kMaxPerPeer = 256;

    // Keep o (from peer); false (refused) when the peer has kMaxPerPeer.
    bool add(int peer, const Offer &o);
    // The oldest offer from peer that a message (tag, source label) matches,
    // taken out of the book; false when none does.
    bool take_match(int peer, uint64_t tag, uint32_t source, Offer &out);
    // Remove the offer named rreq from peer (a revoked receive); false when
    // it is not here (used, refused or never made).
    bool remove(int peer, uint64_t rreq);
    // The oldest offer from peer, left in the book (tests); false when none.
    bool peek(int peer, Offer &out) const;
    // Offers held now, from every peer (0: the send path skips the lookup).
    size_t size() const { return total_; }
    // Offers held now from peer.
    size_t count(int peer) const
    {
        auto it = by_peer_.find(peer);
        return it == by_peer_.end() ? 0 : it->second.size();
    }
    // Forget every offer from peer (it is gone).
    void drop_peer(int peer);

private:
    std::unordered_map<int, std::vector<Offer>> by_peer_;
    size_t total_ = 0;
};

} // namespace llc
