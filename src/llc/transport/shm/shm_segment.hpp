// shm_segment.hpp - a process's POSIX shared-memory segment: a header and one
// receive ring per process on the node (indexed by local rank).
#pragma once

#include "support/memory_mapping.hpp"
#include "support/shared_segment.hpp"
#include "support/shm_name.hpp"
#include "transport/shm/shm_ring.hpp"
#include "support/unique_fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace llc {

struct SegmentHeader {
    uint64_t magic;
    uint32_t slots;       // rings in this segment (processes on the node)
    uint32_t reserved;
    uint64_t ring_bytes;  // data bytes per ring (power of two)
    int32_t owner_rank;
    int32_t owner_pid;
};

class ShmSegment {
public:
    // "/llc-<16 hex digits of hash(job_id)>-<rank>"
    static std::string name_for(const std::string &job_id, int rank);

    // Create (replacing a stale segment of the same name) and initialise.
    static ShmSegment create(const std::string &name, int rank, uint32_t slots, size_t ring_bytes);
    // Map a segment created by another process.
    static ShmSegment open(const std::string &name, int expected_rank);

    ShmSegment() = default;
    ShmSegment(ShmSegment &&) noexcept = default;
    ShmSegment &operator=(ShmSegment &&) noexcept = default; // removes this one's name first

    // Remove the name (the mapping stays valid).  Idempotent.
    void unlink() { name_.release(); }

    const SegmentHeader &header() const { return *reinterpret_cast<const SegmentHeader *>(map_.data()); }
    ShmRing ring(uint32_t slot) const;
    const std::string &name() const { return name_.str(); }
    size_t mapped_bytes() const { return map_.size(); }

private:
    static size_t header_bytes();
    ShmName name_; // owned by the creator
    MemoryMapping map_;
};

} // namespace llc
