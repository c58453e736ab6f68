// offer_book.cpp - receives offered to us, per peer, oldest first.
#include "tagged/offer_book.hpp"

#include "tagged/tag_matcher.hpp"

#include <algorithm>

namespace llc {

bool OfferBook::add(int peer, const Offer &o)
{
    std::vector<Offer> &list = by_peer_[peer];
    if (list.size() >= kMaxPerPeer)
        return false;
    list.push_back(o);
    total_++;
    return true;
}

bool OfferBook::take_match(int peer, uint64_t tag, uint32_t source, Offer &out)
{
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end())
        return false;
    std::vector<Offer> &list = it->second;
    TagEnvelope env;
    env.tag = tag;
    env.source = source;
    for (auto o = list.begin(); o != list.end(); ++o) {
        if (tag_matches(o->tag, o->ignore, o->source, env)) {
            out = *o;
            list.erase(o); // keeps the order of the rest; the list is short
            total_--;
            return true;
        }
    }
    return false;
}

bool OfferBook::peek(int peer, Offer &out) const
{
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end() || it->second.empty())
        return false;
    out = it->second.front();
    return true;
}

bool OfferBook::remove(int peer, uint64_t rreq)
{
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end())
        return false;
    std::vector<Offer> &list = it->second;
    auto o = std::find_if(list.begin(), list.end(), [rreq](const Offer &x) { return x.rreq == rreq; });
    if (o == list.end())
        return false;
    list.erase(o);
    total_--;
    return true;
}

void OfferBook::drop_peer(int peer)
{
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end())
        return;
    total_ -= it->second.size();
    by_peer_.erase(it);
}

} // namespace llc
