// node_map.hpp - rank -> node, held once per node.
//
// The caller gives llc_init the node of every rank (n entries).  Instead of
// a private copy per process, the node leader (the lowest rank of the node)
// copies it into a shared-memory segment (NodeMapSegment) and the other
// processes of the node map that segment read-only, so a node holds the
// n-entry table once instead of m times.  Sequence, driven by Context's
// init (the same fences as the shm rings):
//
//   constructor   leader: create the segment and fill it; the others read the
//                 caller's array until attach()          (before fence 1)
//   attach()      the others: map the leader's segment and check that it
//                 holds the same map as the caller's     (between the fences)
//   release_name() leader: shm_unlink                    (after fence 2)
//
// Private copy instead (the object says why): LLC_NODE_SHARED=0, a process
// alone on its node (nothing to share), the leader cannot create the
// segment, or a process cannot map it.
#pragma once

#include "node/node_map_segment.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llc {

class MemRegistry;

class NodeMap {
public:
    enum class Storage {
        Private,       // this process's own copy
        SharedCreated, // the node's segment, created here (node leader)
        SharedMapped,  // the node leader's segment, mapped read-only
    };

    NodeMap() = default;
    // Before the first init fence.  caller_map (size entries) must stay
    // valid until attach() has returned.  share: LLC_NODE_SHARED.
    NodeMap(const int *caller_map, int size, int rank, const std::string &job_id, bool share);
    NodeMap(NodeMap &&) noexcept = default;
    NodeMap &operator=(NodeMap &&) noexcept = default;
    NodeMap(const NodeMap &) = delete;
    NodeMap &operator=(const NodeMap &) = delete;

    // After the first init fence (the leader has created its segment).
    // Throws Error(LLC_ERR_INVALID) if the leader's map differs from ours.
    void attach();
    // After the second init fence: every process of the node has attached.
    void release_name() { segment_.unlink(); }

    int node_of(int rank) const { return table_[rank]; }
    int size() const { return size_; }
    int my_node() const { return my_node_; }
    int leader() const { return leader_; }              // lowest rank on this node
    int processes_on_node() const { return local_count_; }
    Storage storage() const { return storage_; }
    const std::string &private_reason() const { return private_reason_; }
    // One line for the memory report: where the table lives and why.
    std::string describe() const;

    // Memory accounting (doc/memory.md): the node's shared table is counted
    // once, by the leader that created it.
    uint64_t private_bytes() const;    // the private copy (0 when shared)
    uint64_t created_bytes() const;    // the segment, if created here
    uint64_t mapped_bytes() const;     // the leader's segment, if mapped here
    const NodeMapSegment &segment() const { return segment_; }
    // All of the above into r (mem/mem_accounting.hpp): the rank table, its
    // mapping, the strings it keeps, and a note saying where the table lives.
    void account(MemRegistry &r) const;

private:
    void keep_private_copy(const int *map, std::string why);

    const int *table_ = nullptr; // what node_of reads: private_, the segment, or (until attach) the caller's array
    int size_ = 0;
    int rank_ = 0;
    int my_node_ = 0;
    int leader_ = 0;
    int local_count_ = 0;
    Storage storage_ = Storage::Private;
    std::string private_reason_;
    std::string job_id_;
    std::vector<int> private_;
    NodeMapSegment segment_;
    bool attached_ = false;
};

} // namespace llc
