// token_table.hpp - numbers put on the wire (or in a region key) in place of
// local objects, so that what a peer names is looked up and checked before
// anything is touched.
//
// A token is (generation << 32) | slot.  A slot's generation advances when
// its object lets go of it, so a token that was valid once never names
// anything again, and a forged one names something only by hitting a slot in
// use with its current generation.  Token 0 is never issued (generation 0 is
// skipped): on the wire, 0 means "nothing".
//
// Slots live in fixed chunks that never move, so the word holding a slot's
// current token (live_word) has a stable address for the table's life: a
// process of the same node may read it with process_vm_readv to learn that a
// token is still live (rma/: region keys).  The word is 0 while the slot is
// free.  It is followed by kPublished words the owner of the object sets
// (publish), read together with it: for a region, its base, length, flags
// and the table's nonce, so that a reader of the node trusts its own read of
// the owner's table rather than a key.  The table grows by chunks as the owner keeps more objects at once
// (never because of what a peer sends) and never shrinks.
//
// (tagged/request_tokens.hpp is the same idea for the tagged protocol's
// requests, kept as it is.)
#pragma once

#include "core/errors.hpp"
#include "llc.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llc {

template <class T, size_t kPublished = 0> class TokenTable {
public:
    // what: the objects, for the error message when no token is left.
    explicit TokenTable(const char *what) : what_(what) {}
    TokenTable(const TokenTable &) = delete;
    TokenTable &operator=(const TokenTable &) = delete;

    // A token naming obj until release(); throws Error(LLC_ERR_NOMEM) when
    // every token is in use.
    uint64_t issue(T *obj)
    {
        if (free_head_ == kNoSlot)
            grow();
        const uint32_t index = free_head_;
        Slot &s = slot(index);
        free_head_ = s.next_free;
        s.next_free = kNoSlot;
        s.obj = obj;
        s.words[0] = (uint64_t(s.generation) << 32) | index;
        in_use_++;
        return s.words[0];
    }
    // The object a token names now, or nullptr (unknown, stale, 0).
    T *find(uint64_t token) const
    {
        const uint32_t index = uint32_t(token);
        if (token == 0 || index >= slot_count())
            return nullptr;
        const Slot &s = slot(index);
        return s.obj && s.words[0] == token ? s.obj : nullptr;
    }
    // The token stops naming its object (a stale or unknown token: no-op).
    void release(uint64_t token)
    {
        if (!find(token))
            return;
        const uint32_t index = uint32_t(token);
        Slot &s = slot(index);
        s.obj = nullptr;
        for (uint64_t &w : s.words)
            w = 0;
        if (++s.generation == 0)
            s.generation = 1;
        s.next_free = free_head_;
        free_head_ = index;
        in_use_--;
    }
    // The address of the word that holds `token` while it is live (0 once
    // released); stable for the table's life.  nullptr for a token not live.
    const uint64_t *live_word(uint64_t token) const { return find(token) ? &slot(uint32_t(token)).words[0] : nullptr; }
    // Set published word i (0 .. kPublished-1) of a live token.
    void publish(uint64_t token, size_t i, uint64_t value)
    {
        if (find(token) && i < kPublished)
            slot(uint32_t(token)).words[1 + i] = value;
    }
    // Every live object, in slot order.
    template <class Fn> void for_each(Fn fn) const
    {
        for (size_t i = 0; i < slot_count(); i++)
            if (T *obj = slot(uint32_t(i)).obj)
                fn(obj);
    }

    size_t in_use() const { return in_use_; }
    size_t capacity() const { return slot_count(); }

private:
    static constexpr uint32_t kNoSlot = UINT32_MAX;
    static constexpr size_t kChunkSlots = 64;
    static constexpr size_t kMaxChunks = (size_t(UINT32_MAX) - 1) / kChunkSlots;
    struct Slot {
        T *obj = nullptr; // nullptr while free
        // [0]: the slot's current token while in use, else 0; then the published words
        uint64_t words[1 + kPublished] = {};
        uint32_t generation = 1; // of the current (or next) token; never 0
        uint32_t next_free = kNoSlot;
    };
    size_t slot_count() const { return chunks_.size() * kChunkSlots; }
    Slot &slot(uint32_t index) { return chunks_[index / kChunkSlots][index % kChunkSlots]; }
    const Slot &slot(uint32_t index) const { return chunks_[index / kChunkSlots][index % kChunkSlots]; }
    void grow()
    {
        if (chunks_.size() >= kMaxChunks)
            throw Error(LLC_ERR_NOMEM, std::to_string(slot_count()) + " " + what_ + " at once: no token left");
        const size_t first = slot_count();
        chunks_.push_back(std::make_unique<Slot[]>(kChunkSlots));
        // the new slots join the free list in index order
        for (size_t i = first + kChunkSlots; i-- > first;) {
            slot(uint32_t(i)).next_free = free_head_;
            free_head_ = uint32_t(i);
        }
    }

    const char *what_;
    std::vector<std::unique_ptr<Slot[]>> chunks_;
    uint32_t free_head_ = kNoSlot;
    size_t in_use_ = 0;
};

} // namespace llc
