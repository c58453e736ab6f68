// shm_segment.cpp - creating and opening ring segments (mapped with support/shared_segment.hpp).
#include "transport/shm/shm_segment.hpp"

#include "core/errors.hpp"
#include "llc.h"

#include <unistd.h>

namespace llc {

namespace {
constexpr uint64_t kSegmentMagic = 0x4c4c432d53484d31ull; // "LLC-SHM1"

size_t slot_stride(size_t ring_bytes) { return sizeof(RingControl) + ring_bytes; }
} // namespace

size_t ShmSegment::header_bytes()
{
    return (sizeof(SegmentHeader) + kCacheLine - 1) / kCacheLine * kCacheLine;
}

std::string ShmSegment::name_for(const std::string &job_id, int rank)
{
    return shm_name_for(job_id, std::to_string(rank));
}

ShmSegment ShmSegment::create(const std::string &name, int rank, uint32_t slots, size_t ring_bytes)
{
    UniqueFd fd = shm_create_replacing(name, "the shared-memory rings");
    ShmSegment seg;
    seg.name_ = ShmName(name);
    seg.name_.own();
    size_t bytes = header_bytes() + size_t(slots) * slot_stride(ring_bytes);
    seg.map_ = shm_size_and_map(fd, name, bytes, " (is /dev/shm large enough? see LLC_SHM_RING_BYTES)");
    auto *h = reinterpret_cast<SegmentHeader *>(seg.map_.data());
    h->slots = slots;
    h->ring_bytes = ring_bytes;
    h->owner_rank = rank;
    h->owner_pid = int32_t(::getpid());
    for (uint32_t s = 0; s < slots; s++)
        ShmRing::initialize(reinterpret_cast<RingControl *>(seg.map_.data() + header_bytes() +
                                                            s * slot_stride(ring_bytes)));
    std::atomic_thread_fence(std::memory_order_release);
    h->magic = kSegmentMagic; // peers map it only after a bootstrap fence
    return seg;
}

ShmSegment ShmSegment::open(const std::string &name, int expected_rank)
{
    MemoryMapping map = shm_open_and_map(
        name, true, "rank " + std::to_string(expected_rank) + "'s rings (does it share this node's /dev/shm?)");
    size_t bytes = map.size();
    if (bytes < header_bytes())
        throw Error(LLC_ERR_SYSTEM, "shared-memory segment " + name + " is too small");
    ShmSegment seg;
    seg.name_ = ShmName(name);
    seg.map_ = std::move(map);
    const SegmentHeader &h = seg.header();
    if (h.magic != kSegmentMagic || h.owner_rank != expected_rank ||
        bytes < header_bytes() + size_t(h.slots) * slot_stride(h.ring_bytes))
        throw Error(LLC_ERR_SYSTEM, "shared-memory segment " + name + " is not a valid segment of rank " +
                                        std::to_string(expected_rank));
    return seg;
}

ShmRing ShmSegment::ring(uint32_t slot) const
{
    const SegmentHeader &h = header();
    char *base = map_.data() + header_bytes() + size_t(slot) * slot_stride(h.ring_bytes);
    return ShmRing(reinterpret_cast<RingControl *>(base), base + sizeof(RingControl), size_t(h.ring_bytes));
}

} // namespace llc
