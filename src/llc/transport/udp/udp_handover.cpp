// udp_handover.cpp - see udp_handover.hpp.
#include "transport/udp/udp_handover.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "support/shared_segment.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace llc {

namespace {
constexpr uint64_t kHandoverMagic = 0x4c4c432d55445052ull; // "LLC-UDPR"

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }
size_t header_bytes() { return align64(sizeof(HandoverSegmentHeader)); }
size_t inbox_bytes() { return align64(sizeof(HandoverInbox)); }
size_t slot_stride(uint32_t slot_bytes) { return align64(sizeof(HandoverSlot) + slot_bytes); }
} // namespace

size_t HandoverQueues::segment_bytes(uint32_t processes, uint32_t slots, uint32_t slot_bytes)
{
    return header_bytes() + size_t(processes) * (inbox_bytes() + size_t(slots) * slot_stride(slot_bytes));
}

HandoverQueues &HandoverQueues::operator=(HandoverQueues &&other) noexcept
{
    if (this == &other)
        return *this;
    unlink_name();
    map_ = std::move(other.map_);
    name_ = std::move(other.name_);
    name_owned_ = std::exchange(other.name_owned_, false);
    created_ = other.created_;
    processes_ = other.processes_;
    slots_ = other.slots_;
    slot_bytes_ = other.slot_bytes_;
    stride_ = other.stride_;
    return *this;
}

HandoverQueues::~HandoverQueues() { unlink_name(); }

void HandoverQueues::unlink_name()
{
    if (name_owned_) {
        ::shm_unlink(name_.c_str());
        name_owned_ = false;
    }
}

HandoverQueues HandoverQueues::create(const std::string &name, int leader_rank, uint32_t processes, uint32_t slots,
                                      uint32_t slot_bytes)
{
    HandoverQueues q;
    q.name_ = name;
    UniqueFd fd = shm_create_replacing(name, "the node's udp receive buffers");
    q.name_owned_ = true;
    q.map_ = shm_size_and_map(fd, name, segment_bytes(processes, slots, slot_bytes),
                              " for the node's udp receive buffers (LLC_UDP_SHARED_RECV=1)");
    q.created_ = true;
    q.processes_ = processes;
    q.slots_ = slots;
    q.slot_bytes_ = slot_bytes;
    q.stride_ = slot_stride(slot_bytes);
    // ftruncate gave zeroed pages: only the sequence numbers need a value
    // (writing them touches one line per slot, not the slots' data).
    for (uint32_t i = 0; i < processes; i++) {
        HandoverInbox *in = new (&q.inbox(i)) HandoverInbox{};
        in->tail.store(0, std::memory_order_relaxed);
        in->head = 0;
        in->sleeping.store(0, std::memory_order_relaxed);
        in->closed.store(0, std::memory_order_relaxed);
        for (uint32_t k = 0; k < slots; k++) {
            HandoverSlot *slot = new (&q.slot(i, k)) HandoverSlot{};
            slot->seq.store(k, std::memory_order_relaxed);
        }
    }
    auto *h = new (q.map_.data()) HandoverSegmentHeader{};
    h->processes = processes;
    h->slots = slots;
    h->slot_bytes = slot_bytes;
    h->leader_rank = leader_rank;
    std::atomic_thread_fence(std::memory_order_release);
    h->magic = kHandoverMagic; // the others open it only after a bootstrap fence
    return q;
}

HandoverQueues HandoverQueues::open(const std::string &name, int leader_rank, uint32_t processes, uint32_t slots,
                                    uint32_t slot_bytes)
{
    HandoverQueues q;
    q.name_ = name;
    q.map_ = shm_open_and_map(name, true, "the node's udp receive buffers");
    const auto *h = reinterpret_cast<const HandoverSegmentHeader *>(q.map_.data());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (q.map_.size() != segment_bytes(processes, slots, slot_bytes) || h->magic != kHandoverMagic ||
        h->processes != processes || h->slots != slots || h->slot_bytes != slot_bytes || h->leader_rank != leader_rank)
        throw Error(LLC_ERR_STATE, "LLC_UDP_SHARED_RECV=1: the node leader's udp receive buffers " + name +
                                       " do not match this process: are LLC_UDP_MTU and LLC_UDP_HANDOVER_SLOTS "
                                       "the same on every process?");
    q.processes_ = processes;
    q.slots_ = slots;
    q.slot_bytes_ = slot_bytes;
    q.stride_ = slot_stride(slot_bytes);
    return q;
}

HandoverInbox &HandoverQueues::inbox(uint32_t index) const
{
    char *base = map_.data() + header_bytes() + size_t(index) * (inbox_bytes() + size_t(slots_) * stride_);
    return *reinterpret_cast<HandoverInbox *>(base);
}

HandoverSlot &HandoverQueues::slot(uint32_t index, uint64_t position) const
{
    char *slots = reinterpret_cast<char *>(&inbox(index)) + inbox_bytes();
    return *reinterpret_cast<HandoverSlot *>(slots + size_t(position & (slots_ - 1)) * stride_);
}

HandoverQueues::Put HandoverQueues::put(uint32_t index, const sockaddr_in &from, const char *data, size_t len,
                                        bool *was_sleeping)
{
    HandoverInbox &in = inbox(index);
    if (in.closed.load(std::memory_order_acquire))
        return Put::Closed;
    if (len > slot_bytes_)
        return Put::Full; // cannot happen with the same LLC_UDP_MTU everywhere: dropped
    uint64_t pos = in.tail.load(std::memory_order_relaxed);
    for (;;) {
        HandoverSlot &s = slot(index, pos);
        uint64_t seq = s.seq.load(std::memory_order_acquire);
        if (seq == pos) {
            if (in.tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed))
                break;
        } else if (seq < pos) {
            return Put::Full; // the slot still holds the datagram of the previous round
        } else {
            pos = in.tail.load(std::memory_order_relaxed); // another producer took it
        }
    }
    HandoverSlot &s = slot(index, pos);
    s.len = uint32_t(len);
    s.from = from;
    std::memcpy(reinterpret_cast<char *>(&s) + sizeof(HandoverSlot), data, len);
    s.seq.store(pos + 1, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst); // against the owner's set_sleeping + empty()
    *was_sleeping = in.sleeping.load(std::memory_order_relaxed) != 0;
    return Put::Done;
}

size_t HandoverQueues::take(uint32_t index, char *buf, size_t cap, sockaddr_in &from)
{
    HandoverInbox &in = inbox(index);
    for (;;) {
        HandoverSlot &s = slot(index, in.head);
        if (s.seq.load(std::memory_order_acquire) != in.head + 1)
            return 0;
        size_t len = s.len;
        bool fits = len <= cap;
        if (fits) {
            from = s.from;
            std::memcpy(buf, reinterpret_cast<const char *>(&s) + sizeof(HandoverSlot), len);
        }
        s.seq.store(in.head + slots_, std::memory_order_release); // free for the next round
        in.head++;
        if (fits && len > 0)
            return len;
    }
}

bool HandoverQueues::empty(uint32_t index) const
{
    HandoverInbox &in = inbox(index);
    return slot(index, in.head).seq.load(std::memory_order_acquire) != in.head + 1;
}

void HandoverQueues::set_sleeping(uint32_t index, bool sleeping)
{
    inbox(index).sleeping.store(sleeping ? 1 : 0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst); // then check empty(): see put()
}

void HandoverQueues::close(uint32_t index)
{
    if (map_.data())
        inbox(index).closed.store(1, std::memory_order_release);
}

} // namespace llc
