// shm_ring.hpp - single-producer single-consumer ring of byte chunks in
// shared memory.
//
// The producer writes a message's bytes as chunks.  A chunk is a 16-byte
// header {seal, len} followed by len bytes, padded to whole cache lines;
// chunks start on cache lines, so a header never wraps (the payload may) and
// a small message chunk (up to 32 bytes after the header) is one line.
// Positions count bytes ever written (64-bit, never wrap).  The producer
// writes len and the payload, then stores seal = start position + 1 with
// release: the chunk's own first word says it is ready, so a waiting
// consumer reads one cache line, the one that also holds the start of the
// data, instead of a shared head counter on a line of its own and then the
// data (one cache-line transfer less per message).  A seal left from an
// earlier lap holds an older position and never matches; and before it seals
// a chunk the producer zeroes the word where the next chunk will start, so
// that old payload bytes there (which could hold any value, a future
// position included) are never taken for a seal.  That word needs room: the
// producer always leaves one header's worth of space free.  It zeroes those
// words a few lines ahead, just after each seal (llc_ring_tx_publish): a
// store to a line the consumer still holds in its cache waits for the line,
// and the next seal would wait behind it.
//
// A chunk is either a piece of the byte stream (records, am_protocol.hpp,
// reassembled by a StreamDecoder) or, with kMessageFlag set in its len, one
// whole small message of its own format that never wraps: the fast path of
// small tagged sends (TagChunkHeader), which skips the decoder.
//
// tail counts bytes consumed (only the consumer stores it, with release, so
// the producer may reuse the space).  head counts bytes written; only the
// producer touches it.  The producer keeps the last tail it read and reads
// the shared one again only when that copy says the ring is too full.
//
// The layout, the producer's steps and the consumer's look for a sealed
// chunk are written once, in the installed header llc_fast.h (llc_ring_tx_t,
// llc_ring_rx_t and their inline functions), because a caller's inline fast
// path writes message chunks into the same ring with the same producer state
// (llc_fast_tsend) and looks at the consumer's position (llc_fast_poll_skip);
// this class uses them.
#pragma once

#include "llc_fast.h"

#include "core/errors.hpp"
#include "wire/outgoing_message.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace llc {

constexpr size_t kCacheLine = 64;

struct RingControl {
    alignas(kCacheLine) std::atomic<uint64_t> head;
    alignas(kCacheLine) std::atomic<uint64_t> tail;
    // Set by the producer during llc_finalize once it has nothing more to send.
    alignas(kCacheLine) std::atomic<uint32_t> sender_drained;
    // Set by the producer when it enters llc_finalize: until then a consumer
    // that finalizes first waits for it without a time limit (the producer
    // may compute for as long as it likes before finalizing).
    std::atomic<uint32_t> sender_finalizing;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");
static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t), "llc_ring_tx_t reads head and tail as plain words");
static_assert(sizeof(RingControl) % kCacheLine == 0, "ring control padding");

class ShmRing {
public:
    static constexpr size_t kChunkAlign = LLC_RING_CHUNK_ALIGN;
    static constexpr size_t kChunkHeader = LLC_RING_CHUNK_HEADER; // seal (8 bytes), len (8 bytes)
    static constexpr uint64_t kMessageFlag = LLC_RING_MESSAGE_FLAG; // in len: a whole message chunk
    // Space one chunk of n bytes takes, with the next chunk's zeroed seal.
    static size_t footprint(size_t n) { return size_t(llc_ring_footprint(n)); }
    // The most bytes one chunk can carry when `space` bytes are free (space
    // is a multiple of kChunkAlign: every chunk is).
    static size_t room(size_t space) { return space < footprint(1) ? 0 : space - kChunkAlign - kChunkHeader; }

    ShmRing() = default;
    // capacity: a power of two, at least 64 (the segment gives >= 4096).
    ShmRing(RingControl *control, char *data, size_t capacity) : control_(control), data_(data), capacity_(capacity), mask_(capacity - 1)
    {
        tx_.data = data;
        tx_.capacity = capacity;
        tx_.mask = capacity - 1;
        if (control) {
            tx_.head = control->head.load(std::memory_order_relaxed);
            tx_.tail_seen = control->tail.load(std::memory_order_acquire);
            tx_.zeroed = tx_.head; // nothing ahead is known to be zero
            tx_.shared_head = reinterpret_cast<uint64_t *>(&control->head);
            tx_.shared_tail = reinterpret_cast<uint64_t *>(&control->tail);
        }
    }

    // Called once by the segment's owner before anyone else maps it (the
    // data area of a new segment is zero: no seal matches position 0 + 1).
    static void initialize(RingControl *control)
    {
        new (&control->head) std::atomic<uint64_t>(0);
        new (&control->tail) std::atomic<uint64_t>(0);
        new (&control->sender_drained) std::atomic<uint32_t>(0);
        new (&control->sender_finalizing) std::atomic<uint32_t>(0);
    }

    RingControl *control() const { return control_; }
    // The producer's state, shared with the inline fast path (llc_fast.h).
    llc_ring_tx_t *producer() { return &tx_; }
    // The consumer's side, for a caller's inline look (llc_fast_poll_skip).
    llc_ring_rx_t consumer() const
    {
        return llc_ring_rx_t{data_, uint64_t(mask_), reinterpret_cast<const uint64_t *>(&control_->tail)};
    }

    // Producer: write as much of the message's remaining bytes as fits, as
    // one chunk.
    size_t write_from(OutgoingMessage &msg)
    {
        size_t space = size_t(llc_ring_tx_space(&tx_, footprint(msg.remaining())));
        size_t want = std::min(room(space), msg.remaining());
        if (want == 0)
            return 0;
        size_t pos = (size_t(tx_.head) + kChunkHeader) & mask_;
        size_t first = std::min(want, capacity_ - pos);
        size_t done = msg.copy_out(data_ + pos, first);
        if (done == first && want > first)
            done += msg.copy_out(data_, want - first);
        if (done == 0)
            return 0;
        llc_ring_tx_publish(&tx_, done, 0);
        return done;
    }

    // Producer: copy the n spans (total bytes) as one chunk only if all fit
    // now.  The fast path of small sends (no message object).
    bool try_write_whole(const ConstSpan *spans, size_t n, size_t total)
    {
        if (total == 0 || footprint(total) > capacity_ || llc_ring_tx_space(&tx_, footprint(total)) < footprint(total))
            return false;
        size_t pos = (size_t(tx_.head) + kChunkHeader) & mask_;
        for (size_t i = 0; i < n; i++) {
            const char *p = spans[i].data;
            size_t len = spans[i].len;
            size_t first = std::min(len, capacity_ - pos);
            std::memcpy(data_ + pos, p, first);
            if (len > first)
                std::memcpy(data_, p + first, len - first);
            pos = (pos + len) & mask_;
        }
        llc_ring_tx_publish(&tx_, total, 0);
        return true;
    }

    // Producer: copy the n spans (total bytes) as one message chunk
    // (kMessageFlag) if they fit now without wrapping around the end of the
    // ring; else false (the caller sends them as stream records).
    bool try_write_message(const ConstSpan *spans, size_t n, size_t total)
    {
        char *at = llc_ring_tx_message_slot(&tx_, total);
        if (!at)
            return false;
        for (size_t i = 0; i < n; i++) {
            std::memcpy(at, spans[i].data, spans[i].len);
            at += spans[i].len;
        }
        llc_ring_tx_publish(&tx_, total, kMessageFlag);
        return true;
    }

    // Consumer: pass the bytes of every sealed chunk to consume(ptr, len)
    // (two spans for a payload that wraps), or of a message chunk to
    // message(ptr, len), in ring order, then release the space.  Stops after
    // one capacity's worth so that a busy producer cannot keep it here.  A
    // chunk header that cannot have been written by a correct producer is a
    // protocol error (LLC_ERR_PEER).
    template <class Consume> size_t read_all(Consume &&consume)
    {
        return read_all(consume, [this](const char *, size_t) {
            throw Error(LLC_ERR_PEER, "protocol error: a message chunk in a shared-memory ring of stream records "
                                      "(ring of " + std::to_string(capacity_) + " bytes)");
        });
    }
    template <class Consume, class Message> size_t read_all(Consume &&consume, Message &&message)
    {
        const uint64_t start = control_->tail.load(std::memory_order_relaxed);
        uint64_t tail = start;
        while (tail - start < capacity_) {
            size_t pos = size_t(tail) & mask_;
            if (seal_at(pos).load(std::memory_order_acquire) != tail + 1)
                break;
            uint64_t word;
            std::memcpy(&word, data_ + pos + 8, sizeof(word));
            const bool whole = word & kMessageFlag;
            const uint64_t len = word & ~kMessageFlag;
            size_t at = (pos + kChunkHeader) & mask_;
            if (len == 0 || len > capacity_ - 2 * kChunkHeader || (whole && at + len > capacity_))
                throw Error(LLC_ERR_PEER, "protocol error: shared-memory ring chunk of " + std::to_string(len) +
                                              " bytes in a ring of " + std::to_string(capacity_) +
                                              (whole ? " (a message chunk that wraps)" : ""));
            // The space is released after the callbacks: what they are given stays put.
            if (whole) {
                message(static_cast<const char *>(data_ + at), size_t(len));
            } else {
                size_t first = std::min(size_t(len), capacity_ - at);
                consume(static_cast<const char *>(data_ + at), first);
                if (len > first)
                    consume(static_cast<const char *>(data_), size_t(len) - first);
            }
            tail += llc_ring_chunk_size(len);
        }
        if (tail == start)
            return 0;
        control_->tail.store(tail, std::memory_order_release);
        return size_t(tail - start);
    }

    // Consumer: no sealed chunk waits (the look of llc_fast.h at the
    // consumer's position, as a caller's inline poll makes it).
    bool empty() const
    {
        const llc_ring_rx_t rx = consumer();
        return !llc_ring_rx_ready(&rx);
    }

private:
    std::atomic<uint64_t> &seal_at(size_t pos) const
    {
        return *reinterpret_cast<std::atomic<uint64_t> *>(data_ + pos);
    }

    RingControl *control_ = nullptr;
    char *data_ = nullptr;
    size_t capacity_ = 0;
    size_t mask_ = 0;
    llc_ring_tx_t tx_{};     // producer: position, the consumer's last seen tail
};

} // namespace llc
