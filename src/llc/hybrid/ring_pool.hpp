// ring_pool.hpp - the node pool of ring buffers handed to connected-class
// (tcp; the paper's RC) peers.
//
// A ring is LLC_RING_SLOTS slots of LLC_RING_SLOT_BYTES (16 x 4 KiB by
// default): the landing zone of one connected peer's records.  A receiver leases one
// for a source when it asks that source to move to the connected class (tcp in the
// receiver-driven hybrid) and returns it when the source has left the connected
// class and its stream has drained.  Over sockets the tcp transport reads the
// source's stream into the ring (doc/libllc-hybrid.md, "Ring pool"); over verbs it
// would be the RDMA-write target handed to the peer (not built).
//
// Shared: the node leader creates one POSIX shared-memory segment
// "/llc-<jobhash>-node<N>-rings" before the first init fence, the other
// processes map it after it (attach), and the leader removes the name after
// the second fence (node_segment.hpp).  The segment holds a header
// (geometry, node-wide counters), a lock-free free list of ring indices (a
// Treiber stack: 32-bit top index and 32-bit ABA tag in one 64-bit atomic,
// a next index per ring) and the rings themselves.  The ring memory is
// sparse (ftruncate): a page is committed when first written, and a returned
// ring's pages are given back to the system (madvise MADV_REMOVE punches them
// out of the shared-memory file), so the pool costs what is leased, not
// rings x ring bytes.
//
// Private (LLC_NODE_SHARED=0, a process alone on its node, the leader could
// not create the segment, or this process could not map it): the same
// layout in anonymous memory, with LLC_RING_POOL / processes on the node
// rings (at least 1); describe() says why.
//
// A process gives back what it still holds when its pool is destroyed; a
// lease that outlives its pool returns nothing (its ring may be someone
// else's by then: never write through it).  A process that dies holding
// rings leaks them; the job is ending anyway.
#pragma once

#include "support/memory_mapping.hpp"
#include "node/node_segment.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llc {

struct RingPoolShared {
    uint64_t magic;
    uint32_t rings;      // in the pool
    uint32_t slots;      // per ring
    uint32_t slot_bytes; // per slot (power of two >= 1024)
    int32_t node;
    int32_t leader_rank; // its creator (-1: private)
    int32_t processes;   // on the node
    uint64_t ring_stride;   // bytes from one ring to the next (slots x slot_bytes rounded up to a page)
    uint64_t rings_offset;  // of ring 0 from the start of the segment (page-aligned)
    alignas(64) std::atomic<uint64_t> free_top; // (ABA tag << 32) | index of the top free ring (kNoRing: empty)
    alignas(64) std::atomic<uint32_t> in_use;     // rings leased now, node-wide
    std::atomic<uint32_t> high_water;             // most leased at once
    std::atomic<uint64_t> leases;                 // leases ever made, node-wide
    std::atomic<uint64_t> empty;                  // leases refused for an empty pool, node-wide
    // followed by std::atomic<uint32_t> next[rings] (the free list's links)
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the free list lives in shared memory");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the free list lives in shared memory");

class RingPool;

// One leased ring; move-only; the destructor returns it to its pool.
class RingLease {
public:
    RingLease() = default;
    RingLease(const RingLease &) = delete;
    RingLease &operator=(const RingLease &) = delete;
    RingLease(RingLease &&other) noexcept { *this = std::move(other); }
    RingLease &operator=(RingLease &&other) noexcept;
    ~RingLease() { reset(); }

    explicit operator bool() const { return base_ != nullptr; }
    uint32_t index() const { return index_; }
    char *data() const { return base_; }
    size_t size() const { return bytes_; }
    void reset(); // return the ring now (no-op when empty)

    struct State; // the pool's shared part (ring_pool.cpp)

private:
    friend class RingPool;
    RingLease(std::shared_ptr<State> pool, uint32_t index, char *base, size_t bytes)
        : pool_(std::move(pool)), index_(index), base_(base), bytes_(bytes) {}
    std::shared_ptr<State> pool_;
    uint32_t index_ = 0;
    char *base_ = nullptr;
    size_t bytes_ = 0;
};

class RingPool {
public:
    RingPool() = default; // no pool (0 rings: every lease is refused)
    // Before the first init fence.  rings: LLC_RING_POOL (> 0); slots,
    // slot_bytes: LLC_RING_SLOTS, LLC_RING_SLOT_BYTES (checked by Config);
    // processes: on this node; leader: its lowest rank; share: LLC_NODE_SHARED.
    RingPool(size_t rings, size_t slots, size_t slot_bytes, int node, int rank, int leader, int processes,
             const std::string &job_id, bool share);
    RingPool(const RingPool &) = delete;
    RingPool &operator=(const RingPool &) = delete;
    RingPool(RingPool &&other) noexcept { *this = std::move(other); }
    RingPool &operator=(RingPool &&other) noexcept;
    ~RingPool(); // gives back what this process holds, removes the name if still owned

    // After the first init fence: the others map the leader's segment (or
    // fall back to a private pool, saying why).
    void attach();
    // After the second init fence (leader): shm_unlink.  Idempotent.
    void release_name();

    // A free ring, or an empty lease when the pool has none (counted).
    // Thread-safe.
    RingLease try_lease();

    size_t rings() const;       // in the pool this process uses (the node's, or its private share)
    size_t ring_bytes() const;  // slots x slot bytes
    size_t in_use() const;      // node-wide when shared, this process's when private
    size_t high_water() const;  // same scope
    size_t held() const;        // by this process
    uint64_t leases() const;    // made by this process
    uint64_t empty() const;     // refused to this process for an empty pool
    bool shared() const;
    bool created_here() const;
    uint64_t mapped_bytes() const; // the whole mapping (address space, mostly not resident)
    uint64_t header_bytes() const; // header and free list (resident)
    // One line for the memory report: where the pool lives and why.
    std::string describe() const;
    const std::string &name() const { return segment_.name(); }
    // The address of ring i's memory (tests: residency checks).
    const char *ring_address(uint32_t i) const;

    static std::string name_for(const std::string &job_id, int node);
    static constexpr uint32_t kNoRing = 0xffffffffu;

private:
    void go_private(); // for segment_.private_reason()

    size_t node_rings_ = 0;
    size_t slots_ = 0;
    size_t slot_bytes_ = 0;
    int node_ = 0;
    int rank_ = 0;
    int leader_ = 0;
    int processes_ = 1;
    std::shared_ptr<RingLease::State> state_;
    NodeSegment segment_; // shared or private, and why; the name the leader removes
};

} // namespace llc
