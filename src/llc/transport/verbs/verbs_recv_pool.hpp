// verbs_recv_pool.hpp - bookkeeping of the shared receive queue's buffers:
// `count` buffers of `buffer_bytes` in one registered region, of which at
// most `post_bound` are posted to the SRQ at any time (the SRQ's depth).
// Pure logic: the transport turns take_to_post() into ibv_post_srq_recv and
// a receive completion into on_completion(); release() hands a buffer back
// once its bytes have been consumed.  No ibv_* call here, so it is unit-tested
// without a device.
//
// Every buffer is in exactly one state:
//   Idle     - not posted, free to post (all start here)
//   Posted   - owned by the adapter (an SRQ work request names it)
//   Consumed - its completion arrived; the transport is reading it
// take_to_post: Idle -> Posted (never more than post_bound Posted);
// on_completion: Posted -> Consumed; release: Consumed -> Idle.  Anything
// else is refused (returns false) and counted, so a duplicated completion or a
// double release cannot post the same memory twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

class RecvBufferPool {
public:
    enum class State : uint8_t { Idle, Posted, Consumed };

    // Throws std::invalid_argument for count 0, buffer_bytes 0, post_bound 0
    // or post_bound > count.
    RecvBufferPool(size_t count, size_t buffer_bytes, size_t post_bound);

    size_t count() const { return states_.size(); }
    size_t buffer_bytes() const { return buffer_bytes_; }
    size_t post_bound() const { return post_bound_; }
    size_t region_bytes() const { return count() * buffer_bytes_; }
    // Byte offset of buffer id in the region.
    size_t offset(uint32_t id) const { return size_t(id) * buffer_bytes_; }

    // Up to `max` Idle buffers to post now (oldest released first), marked
    // Posted; never takes the number Posted above post_bound.
    std::vector<uint32_t> take_to_post(size_t max = SIZE_MAX);
    // A work request failed to post (ibv_post_srq_recv refused it):
    // Posted -> Idle again.  False if id was not Posted.
    bool unpost(uint32_t id);
    // A receive completion for id: Posted -> Consumed.  False otherwise.
    bool on_completion(uint32_t id);
    // Done with id's bytes: Consumed -> Idle (to be posted again).  False otherwise.
    bool release(uint32_t id);

    State state(uint32_t id) const { return states_.at(id); }
    size_t posted() const { return posted_; }
    size_t consumed() const { return consumed_; }
    size_t idle() const { return count() - posted_ - consumed_; }
    // How many more take_to_post could post now.
    size_t postable() const;
    uint64_t refused() const { return refused_; } // calls that returned false
    uint64_t reposts() const { return reposts_; } // posts of a buffer that had been consumed before

private:
    std::vector<State> states_;
    std::vector<uint8_t> used_before_;
    std::vector<uint32_t> idle_; // FIFO ring of Idle ids
    size_t idle_head_ = 0, idle_count_ = 0;
    size_t buffer_bytes_;
    size_t post_bound_;
    size_t posted_ = 0;
    size_t consumed_ = 0;
    uint64_t refused_ = 0;
    uint64_t reposts_ = 0;

    void push_idle(uint32_t id);
};

} // namespace llc
