// udp_handover.hpp - the receive buffers of a node's shared udp socket
// (LLC_UDP_SHARED_RECV=1): one inbox per process of the node, in one
// shared-memory segment created by the node leader.  A process that reads a
// datagram for a neighbour from the node's socket copies it into the
// neighbour's inbox; the neighbour takes it out in its progress.
//
// An inbox is a bounded queue of fixed slots (LLC_UDP_HANDOVER_SLOTS of
// UdpHeader + LLC_UDP_MTU bytes) with many producers (the node's other
// processes) and one consumer (its owner): a slot's sequence number says
// whether it is free for position p (== p), filled for p (== p + 1), so
// producers claim a position with one compare-and-swap on the tail and
// publish the slot with one release store; no lock a dead process could
// leave held.  A producer that dies between claim and publish stalls that
// inbox's consumer at the slot (the job is failing anyway: its peers see
// the death).  A full inbox drops the datagram; the sender retransmits it.
//
// The owner marks its inbox closed when it leaves, so producers can answer
// for it (UdpType::Gone); and sets `sleeping` while it blocks in poll(),
// so producers ring its doorbell (its unix socket, udp_node_socket.hpp).
#pragma once

#include "support/memory_mapping.hpp"

#include <netinet/in.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace llc {

struct HandoverSegmentHeader {
    uint64_t magic;
    uint32_t processes; // inboxes, in the node's rank order
    uint32_t slots;     // per inbox (a power of two)
    uint32_t slot_bytes;
    int32_t leader_rank;
};

struct HandoverInbox {
    alignas(64) std::atomic<uint64_t> tail; // next position a producer claims
    alignas(64) uint64_t head;              // next position the owner takes (owner only)
    std::atomic<uint32_t> sleeping;         // the owner blocks in poll(): ring its doorbell
    std::atomic<uint32_t> closed;           // the owner has left
};

struct HandoverSlot {
    std::atomic<uint64_t> seq;
    uint32_t len;
    uint32_t pad;
    sockaddr_in from;
    // then slot_bytes of datagram
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the inboxes live in shared memory");

class HandoverQueues {
public:
    HandoverQueues() = default;
    HandoverQueues(HandoverQueues &&other) noexcept { *this = std::move(other); }
    HandoverQueues &operator=(HandoverQueues &&other) noexcept;
    HandoverQueues(const HandoverQueues &) = delete;
    HandoverQueues &operator=(const HandoverQueues &) = delete;
    ~HandoverQueues();

    // Node leader, before the first init fence.  Throws Error.
    static HandoverQueues create(const std::string &name, int leader_rank, uint32_t processes, uint32_t slots,
                                 uint32_t slot_bytes);
    // The others, after it.  Throws Error saying what does not match.
    static HandoverQueues open(const std::string &name, int leader_rank, uint32_t processes, uint32_t slots,
                               uint32_t slot_bytes);
    void unlink_name(); // leader, once every process has opened it

    enum class Put { Done, Full, Closed };
    // Copy a datagram into inbox `index` (a neighbour's).  *was_sleeping: its owner blocks in poll().
    Put put(uint32_t index, const sockaddr_in &from, const char *data, size_t len, bool *was_sleeping);
    // Take one datagram from inbox `index` (this process's): its length, 0 if empty.
    size_t take(uint32_t index, char *buf, size_t cap, sockaddr_in &from);
    bool empty(uint32_t index) const;

    void set_sleeping(uint32_t index, bool sleeping);
    void close(uint32_t index); // this process leaves

    uint64_t mapped_bytes() const { return map_.size(); }
    bool created_here() const { return created_; }
    uint32_t slots() const { return slots_; }

    static size_t segment_bytes(uint32_t processes, uint32_t slots, uint32_t slot_bytes);

private:
    HandoverInbox &inbox(uint32_t index) const;
    HandoverSlot &slot(uint32_t index, uint64_t position) const;

    MemoryMapping map_;
    std::string name_;
    bool name_owned_ = false;
    bool created_ = false;
    uint32_t processes_ = 0;
    uint32_t slots_ = 0;
    uint32_t slot_bytes_ = 0;
    size_t stride_ = 0; // bytes per slot including its HandoverSlot
};

} // namespace llc
