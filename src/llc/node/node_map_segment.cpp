// node_map_segment.cpp - shm_open/mmap of the node-shared rank -> node table.
#include "node/node_map_segment.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "support/shared_segment.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace llc {

namespace {
constexpr uint64_t kNodeMapMagic = 0x4c4c432d4e4d4150ull; // "LLC-NMAP"
constexpr size_t kHeaderAlign = 64;
static_assert(sizeof(int) == sizeof(int32_t), "the table stores the caller's int node indices as they are");
} // namespace

size_t NodeMapSegment::header_bytes()
{
    return (sizeof(NodeMapHeader) + kHeaderAlign - 1) / kHeaderAlign * kHeaderAlign;
}

size_t NodeMapSegment::bytes_for(int ranks) { return header_bytes() + size_t(ranks) * sizeof(int); }

std::string NodeMapSegment::name_for(const std::string &job_id, int node)
{
    return shm_name_for(job_id, "node" + std::to_string(node));
}

NodeMapSegment NodeMapSegment::create(const std::string &name, int node, int leader_rank, const int *table,
                                      int ranks)
{
    UniqueFd fd = shm_create_replacing(name, "the node-shared rank -> node table");
    NodeMapSegment seg;
    seg.name_ = ShmName(name);
    seg.name_.own(); // from here on the destructor removes the name
    seg.created_here_ = true;
    size_t bytes = bytes_for(ranks);
    seg.map_ = shm_size_and_map(fd, name, bytes, " for the node-shared rank -> node table (is /dev/shm large enough?)");
    auto *h = reinterpret_cast<NodeMapHeader *>(seg.map_.data());
    h->ranks = ranks;
    h->node = node;
    h->leader_rank = leader_rank;
    h->leader_pid = int32_t(::getpid());
    std::memcpy(seg.map_.data() + header_bytes(), table, size_t(ranks) * sizeof(int));
    std::atomic_thread_fence(std::memory_order_release);
    h->magic = kNodeMapMagic; // the others map it only after a bootstrap fence
    // Nobody writes it again, the leader included.
    if (::mprotect(seg.map_.data(), bytes, PROT_READ) != 0)
        throw_errno(LLC_ERR_SYSTEM, "mprotect(PROT_READ) of " + name, errno);
    return seg;
}

NodeMapSegment NodeMapSegment::open(const std::string &name, int node, int leader_rank, int ranks)
{
    MemoryMapping map = shm_open_and_map(
        name, false, "the rank -> node table of node leader rank " + std::to_string(leader_rank));
    size_t bytes = map.size();
    if (bytes != bytes_for(ranks))
        throw Error(LLC_ERR_SYSTEM, "node-shared rank -> node table " + name + " has " + std::to_string(bytes) +
                                        " bytes, expected " + std::to_string(bytes_for(ranks)));
    NodeMapSegment seg;
    seg.name_ = ShmName(name);
    seg.map_ = std::move(map);
    const NodeMapHeader &h = seg.header();
    if (h.magic != kNodeMapMagic || h.ranks != ranks || h.node != node || h.leader_rank != leader_rank)
        throw Error(LLC_ERR_SYSTEM, "shared-memory segment " + name + " is not the rank -> node table of node " +
                                        std::to_string(node) + " (leader rank " + std::to_string(leader_rank) +
                                        ", " + std::to_string(ranks) + " ranks)");
    return seg;
}

} // namespace llc
