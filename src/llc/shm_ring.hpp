// shm_ring.hpp - single-producer single-consumer byte ring in shared memory.
//
// head counts bytes ever written (only the producer stores it), tail counts
// bytes ever consumed (only the consumer stores it).  Both are monotonically
// increasing 64-bit counters, so full/empty need no extra bit.  The producer
// copies data then publishes head with release; the consumer acquires head,
// reads, then publishes tail with release so the producer may reuse the space.
// The producer keeps the last tail it read and reads the shared one again only
// when that copy says the ring is too full: the tail's cache line then stays
// with the consumer instead of crossing cores on every send.
#pragma once

#include "outgoing_message.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace llc {

constexpr size_t kCacheLine = 64;

struct RingControl {
    alignas(kCacheLine) std::atomic<uint64_t> head;
    alignas(kCacheLine) std::atomic<uint64_t> tail;
    // Set by the producer during llc_finalize once it has nothing more to send.
    alignas(kCacheLine) std::atomic<uint32_t> sender_drained;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");
static_assert(sizeof(RingControl) % kCacheLine == 0, "ring control padding");

class ShmRing {
public:
    ShmRing() = default;
    ShmRing(RingControl *control, char *data, size_t capacity)
        : control_(control), data_(data), capacity_(capacity), mask_(capacity - 1) {}

    // Called once by the segment's owner before anyone else maps it.
    static void initialize(RingControl *control)
    {
        new (&control->head) std::atomic<uint64_t>(0);
        new (&control->tail) std::atomic<uint64_t>(0);
        new (&control->sender_drained) std::atomic<uint32_t>(0);
    }

    RingControl *control() const { return control_; }

    // Producer: copy as much of the message's remaining bytes as fits.
    size_t write_from(OutgoingMessage &msg)
    {
        uint64_t head = control_->head.load(std::memory_order_relaxed);
        size_t space = space_for(head, msg.remaining());
        size_t want = std::min(space, msg.remaining());
        if (want == 0)
            return 0;
        size_t pos = size_t(head) & mask_;
        size_t first = std::min(want, capacity_ - pos);
        size_t done = msg.copy_out(data_ + pos, first);
        if (done == first && want > first)
            done += msg.copy_out(data_, want - first);
        control_->head.store(head + done, std::memory_order_release);
        return done;
    }

    // Producer: copy the n spans (total bytes) only if all fit now; one
    // publication of head.  The fast path of small sends (no message object).
    bool try_write_whole(const ConstSpan *spans, size_t n, size_t total)
    {
        uint64_t head = control_->head.load(std::memory_order_relaxed);
        if (space_for(head, total) < total)
            return false;
        size_t pos = size_t(head) & mask_;
        for (size_t i = 0; i < n; i++) {
            const char *p = spans[i].data;
            size_t len = spans[i].len;
            size_t first = std::min(len, capacity_ - pos);
            std::memcpy(data_ + pos, p, first);
            if (len > first)
                std::memcpy(data_, p + first, len - first);
            pos = (pos + len) & mask_;
        }
        control_->head.store(head + total, std::memory_order_release);
        return true;
    }

    // Consumer: pass every readable byte to consume(ptr, len) (at most two
    // spans because of wrap-around), then release the space.
    template <class Consume> size_t read_all(Consume &&consume)
    {
        uint64_t tail = control_->tail.load(std::memory_order_relaxed);
        uint64_t head = control_->head.load(std::memory_order_acquire);
        size_t avail = size_t(head - tail);
        if (avail == 0)
            return 0;
        size_t pos = size_t(tail) & mask_;
        size_t first = std::min(avail, capacity_ - pos);
        consume(static_cast<const char *>(data_ + pos), first);
        if (avail > first)
            consume(static_cast<const char *>(data_), avail - first);
        control_->tail.store(head, std::memory_order_release);
        return avail;
    }

    bool empty() const
    {
        return control_->head.load(std::memory_order_acquire) ==
               control_->tail.load(std::memory_order_relaxed);
    }

private:
    // Producer: free bytes, from the remembered tail when that shows `want`
    // fit, else from a fresh read of the shared tail.
    size_t space_for(uint64_t head, size_t want)
    {
        size_t space = capacity_ - size_t(head - tail_seen_);
        if (space >= want)
            return space;
        tail_seen_ = control_->tail.load(std::memory_order_acquire);
        return capacity_ - size_t(head - tail_seen_);
    }

    RingControl *control_ = nullptr;
    char *data_ = nullptr;
    size_t capacity_ = 0;
    size_t mask_ = 0;
    uint64_t tail_seen_ = 0; // producer's copy of control_->tail (never ahead of it)
};

} // namespace llc
