// node_map.cpp - see node_map.hpp.
#include "node/node_map.hpp"

#include "mem/mem_accounting.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "node/node_segment.hpp"

#include <cstring>

namespace llc {

NodeMap::NodeMap(const int *caller_map, int size, int rank, const std::string &job_id, bool share)
    : table_(caller_map), size_(size), rank_(rank), my_node_(caller_map[rank]), leader_(rank), job_id_(job_id)
{
    for (int r = 0; r < size; r++) {
        if (caller_map[r] != my_node_)
            continue;
        if (local_count_++ == 0)
            leader_ = r;
    }
    std::string why = NodeSegment::private_from_the_start(share, local_count_);
    if (!why.empty()) {
        keep_private_copy(caller_map, std::move(why));
        return;
    }
    if (rank_ != leader_)
        return; // reads the caller's array until attach()
    try {
        segment_ = NodeMapSegment::create(NodeMapSegment::name_for(job_id_, my_node_), my_node_, rank_, caller_map,
                                          size_);
        table_ = segment_.table();
        storage_ = Storage::SharedCreated;
    } catch (const Error &e) {
        // The others fail to map it and keep their own copies too.
        keep_private_copy(caller_map, std::string("the node leader could not create the shared table: ") + e.what());
    }
}

void NodeMap::keep_private_copy(const int *map, std::string why)
{
    private_.assign(map, map + size_);
    table_ = private_.data();
    storage_ = Storage::Private;
    private_reason_ = std::move(why);
}

void NodeMap::attach()
{
    if (attached_)
        return;
    attached_ = true;
    if (storage_ != Storage::Private || !private_reason_.empty())
        return; // the leader, or a process that already keeps a private copy
    const int *caller_map = table_;
    try {
        segment_ = NodeMapSegment::open(NodeMapSegment::name_for(job_id_, my_node_), my_node_, leader_, size_);
    } catch (const Error &e) {
        keep_private_copy(caller_map, "the node leader's shared table could not be mapped (" + std::string(e.what()) +
                                          "; LLC_NODE_SHARED=0 there, or it could not create it?)");
        return;
    }
    if (std::memcmp(segment_.table(), caller_map, size_t(size_) * sizeof(int)) != 0) {
        segment_ = NodeMapSegment();
        throw Error(LLC_ERR_INVALID, "rank " + std::to_string(rank_) + " was given a different rank -> node map "
                                     "than its node leader, rank " + std::to_string(leader_) +
                                         " (node_of_rank must be the same on every process)");
    }
    table_ = segment_.table();
    storage_ = Storage::SharedMapped;
}

std::string NodeMap::describe() const
{
    switch (storage_) {
    case Storage::SharedCreated:
        return "rank -> node table shared by the " + std::to_string(local_count_) +
               " processes of node " + std::to_string(my_node_) + ", created by this process (node leader)";
    case Storage::SharedMapped:
        return "rank -> node table shared by the " + std::to_string(local_count_) + " processes of node " +
               std::to_string(my_node_) + ", mapped read-only from node leader rank " + std::to_string(leader_);
    case Storage::Private:
        break;
    }
    return "rank -> node table private to this process: " + private_reason_;
}

uint64_t NodeMap::private_bytes() const { return uint64_t(private_.capacity()) * sizeof(int); }

uint64_t NodeMap::created_bytes() const
{
    return storage_ == Storage::SharedCreated ? uint64_t(segment_.mapped_bytes()) : 0;
}

uint64_t NodeMap::mapped_bytes() const
{
    return storage_ == Storage::SharedMapped ? uint64_t(segment_.mapped_bytes()) : 0;
}

void NodeMap::account(MemRegistry &r) const
{
    // The node-shared table is counted once per node: by the leader that
    // created it; the others count their mapping as shared (not in the total).
    r.add(MemComponent::RankTable, private_bytes() + created_bytes(), uint64_t(size()));
    r.add(MemComponent::RankTableMapped, mapped_bytes(), mapped_bytes() ? 1 : 0);
    r.add(MemComponent::Context, heap_bytes(private_reason()) + heap_bytes(job_id_) + heap_bytes(segment().name()));
    r.add_note(describe());
}

} // namespace llc
