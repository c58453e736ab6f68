// request_tokens.cpp - the table of request tokens (request_tokens.hpp).
#include "tagged/request_tokens.hpp"

#include "core/errors.hpp"
#include "llc.h"

#include <algorithm>
#include <string>

namespace llc {

namespace {
constexpr size_t kFirstSlots = 64;
constexpr size_t kMaxSlots = UINT32_MAX; // slot kNoSlot (UINT32_MAX) is never used
} // namespace

void RequestTokens::grow()
{
    size_t old = slots_.size();
    if (old >= kMaxSlots)
        throw Error(LLC_ERR_NOMEM, "tagged: " + std::to_string(old) +
                                       " rendezvous or synchronous requests are in flight at once: no token left");
    size_t bigger = std::min(kMaxSlots, std::max(kFirstSlots, old * 2));
    slots_.resize(bigger);
    // new slots join the free list in index order
    for (size_t i = bigger; i-- > old;) {
        slots_[i].next_free = free_head_;
        free_head_ = uint32_t(i);
    }
}

uint64_t RequestTokens::issue(TreqState *r)
{
    if (free_head_ == kNoSlot)
        grow();
    uint32_t slot = free_head_;
    Slot &s = slots_[slot];
    free_head_ = s.next_free;
    s.next_free = kNoSlot;
    s.req = r;
    in_use_++;
    return (uint64_t(s.generation) << 32) | slot;
}

void RequestTokens::release(uint64_t token)
{
    uint32_t slot = uint32_t(token);
    if (slot >= slots_.size())
        return;
    Slot &s = slots_[slot];
    if (!s.req || s.generation != uint32_t(token >> 32))
        return;
    s.req = nullptr;
    if (++s.generation == 0)
        s.generation = 1;
    s.next_free = free_head_;
    free_head_ = slot;
    in_use_--;
}

} // namespace llc
