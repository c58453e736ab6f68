// node_map_segment.hpp - the rank -> node table of a job in a POSIX
// shared-memory segment, created once per node by the node leader and mapped
// read-only by the other processes of the node (see node_map.hpp).
#pragma once

#include "support/memory_mapping.hpp"
#include "support/shm_name.hpp"

#include <cstdint>
#include <string>

namespace llc {

struct NodeMapHeader {
    uint64_t magic;
    int32_t ranks;       // entries in the table (the job size)
    int32_t node;        // the node whose leader created the segment
    int32_t leader_rank; // its creator
    int32_t leader_pid;
};

class NodeMapSegment {
public:
    // "/llc-<16 hex digits of hash(job_id)>-node<node>" (the ring segments
    // end in "-<rank>", so the names cannot collide).
    static std::string name_for(const std::string &job_id, int node);
    // Bytes of a segment holding `ranks` entries (header padded to a cache line).
    static size_t bytes_for(int ranks);

    // Leader: create (replacing a stale segment of the same name), copy
    // table[0..ranks) in, then make the mapping read-only.  Throws Error.
    static NodeMapSegment create(const std::string &name, int node, int leader_rank, const int *table, int ranks);
    // Another process of the node: map the leader's segment read-only and
    // check its header (magic, node, leader, size).  Throws Error.
    static NodeMapSegment open(const std::string &name, int node, int leader_rank, int ranks);

    NodeMapSegment() = default;
    NodeMapSegment(NodeMapSegment &&) noexcept = default;
    NodeMapSegment &operator=(NodeMapSegment &&) noexcept = default; // removes this one's name first

    // Creator: remove the name (the mappings stay valid).  Idempotent; a no-op elsewhere.
    void unlink() { name_.release(); }

    bool mapped() const { return map_.data() != nullptr; }
    bool created_here() const { return created_here_; }
    const NodeMapHeader &header() const { return *reinterpret_cast<const NodeMapHeader *>(map_.data()); }
    const int *table() const { return reinterpret_cast<const int *>(map_.data() + header_bytes()); }
    const std::string &name() const { return name_.str(); }
    size_t mapped_bytes() const { return map_.size(); }

private:
    static size_t header_bytes();
    ShmName name_; // owned by the leader until it removes it
    MemoryMapping map_;
    bool created_here_ = false; // this process is the leader that created it
};

} // namespace llc
