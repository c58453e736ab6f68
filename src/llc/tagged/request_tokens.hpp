// request_tokens.hpp - the numbers the tagged protocol puts on the wire in
// place of its requests (rendezvous sends and receives, synchronous sends),
// so that a reply from a peer is checked before any request is touched.
//
// A token is (generation << 32) | slot.  Looking one up is an index and a
// compare: no allocation, no search.  A slot's generation advances when its
// request lets go of it, so a token that was valid once (the request has
// completed, been cancelled or reused since) never matches again, and a
// forged one matches only by naming a slot in use with its current
// generation.  Token 0 is never issued (generation 0 is skipped): on the
// wire, 0 means "no request".
//
// The table holds a pointer and a generation per slot; the requests are the
// caller's (llc_treq_t).  It grows by doubling as the caller keeps more
// requests in flight (never because of what a peer sends: a token is only
// issued for a request of ours) and never shrinks; it is owned by the
// context's Tagged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

struct TreqState;

class RequestTokens {
public:
    RequestTokens() = default;
    RequestTokens(const RequestTokens &) = delete;
    RequestTokens &operator=(const RequestTokens &) = delete;

    // A token naming r until release(); throws Error(LLC_ERR_NOMEM) when
    // 2^32 - 1 tokens are in use at once.
    uint64_t issue(TreqState *r);
    // The request a token names now, or nullptr (unknown, stale, 0).
    TreqState *find(uint64_t token) const
    {
        uint32_t slot = uint32_t(token);
        if (slot >= slots_.size())
            return nullptr;
        const Slot &s = slots_[slot];
        return s.generation == uint32_t(token >> 32) && s.req ? s.req : nullptr;
    }
    // The token stops naming its request (a stale or unknown token: no-op).
    void release(uint64_t token);

    // f(request) for every request that holds a token now.
    template <class F> void for_each(F f) const
    {
        for (const Slot &s : slots_)
            if (s.req)
                f(s.req);
    }

    size_t in_use() const { return in_use_; }
    size_t capacity() const { return slots_.size(); }

private:
    static constexpr uint32_t kNoSlot = UINT32_MAX;
    struct Slot {
        TreqState *req = nullptr;   // nullptr while free
        uint32_t generation = 1;    // of the current (or next) token of this slot; never 0
        uint32_t next_free = kNoSlot;
    };
    void grow();

    std::vector<Slot> slots_;
    uint32_t free_head_ = kNoSlot;
    size_t in_use_ = 0;
};

} // namespace llc
