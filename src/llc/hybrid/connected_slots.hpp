// connected_slots.hpp - the connected-class (tcp) slots of a node in the
// hybrid transport (the paper's RC slots): LLC_MAX_RC_PER_NODE of them,
// shared by the node's processes.
//
// A slot is one connected-class (tcp) route that touches this node, in one of two
// directions counted apart: outgoing, a destination this process sends to on
// tcp; incoming (receiver-driven hybrid), a source this process has asked to
// send to it on tcp.  A process takes a slot before it promotes a route and
// gives it back when the route goes back to udp, so one busy process can use
// the slots its quiet neighbours do not need, and the node as a whole never
// holds more than the cap in each direction (the paper's per-node RC limit).
// The directions have a cap each because one shared count let receivers take
// every slot for sources whose senders then had none left to accept with:
// every request was refused (seen with 4 processes streaming to each other).
//
// Shared: the node leader creates a one-page shared-memory segment with the
// node-wide count before the first init fence, the other processes map it
// after it (attach), and the leader removes the name after the second fence
// (node_segment.hpp).
// A process gives back what it still holds when it is destroyed (finalize).
// A process that dies holding slots leaks them; the job is ending anyway
// (libllc reports the dead peer).
//
// Private (this process gets cap / processes on the node, as before the
// slots were shared; describe() says why): LLC_NODE_SHARED=0, a process
// alone on its node, the leader could not create the segment, or this
// process could not map it.
#pragma once

#include "support/memory_mapping.hpp"
#include "node/node_segment.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace llc {

enum class ConnectedDir : int { Out = 0, In = 1 }; // a slot's direction

struct ConnectedSlotsShared {
    uint64_t magic;
    uint32_t cap;        // LLC_MAX_RC_PER_NODE, per direction
    int32_t node;
    int32_t leader_rank; // its creator
    int32_t processes;   // on the node
    struct Count {
        alignas(64) std::atomic<uint32_t> in_use; // slots held by the node's processes
        std::atomic<uint32_t> high_water;         // most ever held at once
    } dir[2];                                     // indexed by ConnectedDir
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the node-wide count lives in shared memory");

class ConnectedSlots {
public:
    ConnectedSlots() = default;
    // Before the first init fence.  node_cap: LLC_MAX_RC_PER_NODE (> 0);
    // processes: on this node; leader: its lowest rank; share: LLC_NODE_SHARED.
    ConnectedSlots(size_t node_cap, int node, int rank, int leader, int processes, const std::string &job_id, bool share);
    ConnectedSlots(const ConnectedSlots &) = delete;
    ConnectedSlots &operator=(const ConnectedSlots &) = delete;
    ConnectedSlots(ConnectedSlots &&other) noexcept;
    ConnectedSlots &operator=(ConnectedSlots &&other) noexcept;
    ~ConnectedSlots(); // gives back what this process holds, removes the name if still owned

    // After the first init fence: the others map the leader's segment (or
    // fall back to a private share, saying why).
    void attach();
    // After the second init fence (leader): shm_unlink.  Idempotent.
    void release_name();

    // One slot, if the node (or this process's share) has one free.
    bool try_take(ConnectedDir d);
    // One slot even above the cap: an incoming route found on tcp after its
    // request had expired (a late grant); the next policy round sheds it.
    void take_anyway(ConnectedDir d);
    // Give one back (no-op when this process holds none).
    void give(ConnectedDir d);

    size_t held(ConnectedDir d) const { return held_[int(d)]; }  // by this process
    size_t free_slots(ConnectedDir d) const;                      // what try_take could get now
    // How many this process may hold now: what it holds plus what the node
    // has free, less what the node holds beyond its cap (take_anyway), at
    // least 0.  The receiver's policy decides within it.
    size_t may_hold(ConnectedDir d) const;
    size_t in_use(ConnectedDir d) const;                          // node-wide (this process's when private)
    size_t high_water(ConnectedDir d) const;                      // most in use at once (same scope)
    size_t cap() const { return cap_; } // per direction: the node's when shared, this process's share otherwise
    bool shared() const { return shared_ != nullptr; }
    bool created_here() const { return segment_.created_here(); }
    uint64_t mapped_bytes() const { return map_.size(); }
    // One line for the memory report: where the count lives and why.
    std::string describe() const;
    const std::string &name() const { return segment_.name(); }

    static std::string name_for(const std::string &job_id, int node);

private:
    void go_private(); // for segment_.private_reason()
    void give_all();

    size_t node_cap_ = 0;
    size_t cap_ = 0;
    int node_ = 0;
    int rank_ = 0;
    int leader_ = 0;
    int processes_ = 1;
    size_t held_[2] = {0, 0};
    size_t private_high_[2] = {0, 0};
    ConnectedSlotsShared *shared_ = nullptr; // in map_, when shared
    MemoryMapping map_;
    NodeSegment segment_; // shared or private, and why; the name the leader removes
};

} // namespace llc
