// node_segment.cpp - see node_segment.hpp.
#include "node/node_segment.hpp"

#include "core/errors.hpp"
#include "support/shared_segment.hpp"
#include "support/unique_fd.hpp"

#include <atomic>
#include <utility>

namespace llc {

std::string NodeSegment::private_from_the_start(bool share, int processes)
{
    if (!share)
        return "LLC_NODE_SHARED=0";
    if (processes <= 1)
        return "alone on its node";
    return std::string();
}

NodeSegment::NodeSegment(std::string name, Words words, bool share, int processes, bool leader)
    : name_(std::move(name)), words_(std::move(words)), private_reason_(private_from_the_start(share, processes)),
      leader_(leader)
{
    waiting_ = private_reason_.empty() && !leader; // maps the leader's segment in attach()
}

NodeSegment::NodeSegment(NodeSegment &&other) noexcept { *this = std::move(other); }

NodeSegment &NodeSegment::operator=(NodeSegment &&other) noexcept
{
    if (this != &other) {
        name_ = std::move(other.name_);
        words_ = std::move(other.words_);
        private_reason_ = std::move(other.private_reason_);
        leader_ = other.leader_;
        waiting_ = std::exchange(other.waiting_, false); // a moved-from segment attaches nothing
        created_ = other.created_;
    }
    return *this;
}

MemoryMapping NodeSegment::create(size_t bytes, const std::string &ftruncate_hint)
{
    try {
        UniqueFd fd = shm_create_replacing(name_.str(), words_.purpose);
        name_.own();
        MemoryMapping map = shm_size_and_map(fd, name_.str(), bytes, " for " + words_.purpose + ftruncate_hint);
        created_ = true;
        return map;
    } catch (const Error &e) {
        name_.release();
        private_reason_ = "the node leader could not create the " + words_.mine + ": " + e.what();
        return MemoryMapping();
    }
}

MemoryMapping NodeSegment::attach(size_t bytes, const std::string &size_hint)
{
    if (!waiting_)
        return MemoryMapping();
    waiting_ = false;
    MemoryMapping map;
    try {
        map = shm_open_and_map(name_.str(), true, words_.purpose);
    } catch (const Error &e) {
        private_reason_ = "the node leader's " + words_.leaders + " could not be opened: " + e.what() +
                          " (LLC_NODE_SHARED=0 there, or it could not create it?)";
        return MemoryMapping();
    }
    if (map.size() != bytes) {
        private_reason_ = "the node leader's " + words_.leaders + " " + name_.str() + " has the wrong size" + size_hint;
        return MemoryMapping();
    }
    // Pairs with the leader's release fence before it wrote the header's
    // magic (the bootstrap fence orders the rest).
    std::atomic_thread_fence(std::memory_order_acquire);
    return map;
}

void NodeSegment::mismatch(const std::string &hint)
{
    private_reason_ = "the node leader's " + words_.leaders + " " + name_.str() + " does not match this process" + hint;
}

} // namespace llc
