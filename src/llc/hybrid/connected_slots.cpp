// connected_slots.cpp - see connected_slots.hpp.
#include "hybrid/connected_slots.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "support/shared_segment.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace llc {

namespace {
constexpr uint64_t kConnectedSlotsMagic = 0x4c4c432d52435354ull; // "LLC-RCST" (the value from when this was RcSlots: kept)

void raise_high_water(std::atomic<uint32_t> &high, uint32_t now)
{
    uint32_t seen = high.load(std::memory_order_relaxed);
    while (seen < now && !high.compare_exchange_weak(seen, now, std::memory_order_relaxed))
        ;
}
} // namespace

std::string ConnectedSlots::name_for(const std::string &job_id, int node)
{
    return shm_name_for(job_id, "node" + std::to_string(node) + "-rc");
}

namespace {
// How the messages name the count.
NodeSegment::Words count_words() { return {"the node's RC-class slot count", "shared count", "shared count"}; }
} // namespace

ConnectedSlots::ConnectedSlots(size_t node_cap, int node, int rank, int leader, int processes, const std::string &job_id,
                 bool share)
    : node_cap_(node_cap), node_(node), rank_(rank), leader_(leader), processes_(std::max(processes, 1)),
      segment_(name_for(job_id, node), count_words(), share, processes, rank == leader)
{
    if (segment_.is_private()) {
        go_private();
        return;
    }
    if (!segment_.leads())
        return; // maps the leader's segment in attach()
    MemoryMapping map = segment_.create(sizeof(ConnectedSlotsShared), "");
    if (!map.data()) {
        go_private();
        return;
    }
    auto *s = new (map.data()) ConnectedSlotsShared{};
    s->cap = uint32_t(std::min<size_t>(node_cap_, UINT32_MAX));
    s->node = node_;
    s->leader_rank = rank_;
    s->processes = processes_;
    for (auto &c : s->dir) {
        c.in_use.store(0, std::memory_order_relaxed);
        c.high_water.store(0, std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_release);
    s->magic = kConnectedSlotsMagic; // the others map it only after a bootstrap fence
    map_ = std::move(map);
    shared_ = s;
    cap_ = node_cap_;
}

ConnectedSlots::ConnectedSlots(ConnectedSlots &&other) noexcept { *this = std::move(other); }

ConnectedSlots &ConnectedSlots::operator=(ConnectedSlots &&other) noexcept
{
    if (this == &other)
        return *this;
    give_all();
    node_cap_ = other.node_cap_;
    cap_ = other.cap_;
    node_ = other.node_;
    rank_ = other.rank_;
    leader_ = other.leader_;
    processes_ = other.processes_;
    for (int d = 0; d < 2; d++) {
        held_[d] = std::exchange(other.held_[d], 0);
        private_high_[d] = other.private_high_[d];
    }
    shared_ = std::exchange(other.shared_, nullptr);
    map_ = std::move(other.map_);
    segment_ = std::move(other.segment_); // removes this count's name first
    return *this;
}

ConnectedSlots::~ConnectedSlots()
{
    give_all();
    segment_.release_name();
}

void ConnectedSlots::give_all()
{
    for (ConnectedDir d : {ConnectedDir::Out, ConnectedDir::In})
        while (held_[int(d)] > 0)
            give(d);
}

void ConnectedSlots::go_private()
{
    shared_ = nullptr;
    map_.reset();
    cap_ = node_cap_ == 0 ? 0 : std::max<size_t>(1, node_cap_ / size_t(processes_));
}

void ConnectedSlots::attach()
{
    if (!segment_.waiting())
        return; // not in use (default-constructed), the leader, private, or attached already
    MemoryMapping map = segment_.attach(sizeof(ConnectedSlotsShared), "");
    auto *s = reinterpret_cast<ConnectedSlotsShared *>(map.data());
    if (s && (s->magic != kConnectedSlotsMagic || s->node != node_ || s->leader_rank != leader_ ||
              s->cap != uint32_t(std::min<size_t>(node_cap_, UINT32_MAX))))
        segment_.mismatch(" (is LLC_MAX_RC_PER_NODE the same on every process?)");
    if (segment_.is_private()) {
        go_private();
        return;
    }
    map_ = std::move(map);
    shared_ = s;
    cap_ = node_cap_;
}

void ConnectedSlots::release_name() { segment_.release_name(); }

bool ConnectedSlots::try_take(ConnectedDir d)
{
    size_t &held = held_[int(d)];
    if (!shared_) {
        if (held >= cap_)
            return false;
        held++;
        private_high_[int(d)] = std::max(private_high_[int(d)], held);
        return true;
    }
    ConnectedSlotsShared::Count &c = shared_->dir[int(d)];
    uint32_t now = c.in_use.load(std::memory_order_relaxed);
    do {
        if (now >= shared_->cap)
            return false;
    } while (!c.in_use.compare_exchange_weak(now, now + 1, std::memory_order_acq_rel));
    raise_high_water(c.high_water, now + 1);
    held++;
    return true;
}

void ConnectedSlots::take_anyway(ConnectedDir d)
{
    size_t &held = held_[int(d)];
    held++;
    if (shared_) {
        ConnectedSlotsShared::Count &c = shared_->dir[int(d)];
        raise_high_water(c.high_water, c.in_use.fetch_add(1, std::memory_order_acq_rel) + 1);
    } else {
        private_high_[int(d)] = std::max(private_high_[int(d)], held);
    }
}

void ConnectedSlots::give(ConnectedDir d)
{
    size_t &held = held_[int(d)];
    if (held == 0)
        return;
    held--;
    if (shared_)
        shared_->dir[int(d)].in_use.fetch_sub(1, std::memory_order_acq_rel);
}

size_t ConnectedSlots::in_use(ConnectedDir d) const
{
    return shared_ ? shared_->dir[int(d)].in_use.load(std::memory_order_relaxed) : held_[int(d)];
}

size_t ConnectedSlots::free_slots(ConnectedDir d) const
{
    size_t used = in_use(d);
    return used >= cap_ ? 0 : cap_ - used;
}

size_t ConnectedSlots::may_hold(ConnectedDir d) const
{
    size_t room = held_[int(d)] + cap_;
    size_t used = in_use(d);
    return room > used ? room - used : 0;
}

size_t ConnectedSlots::high_water(ConnectedDir d) const
{
    return shared_ ? shared_->dir[int(d)].high_water.load(std::memory_order_relaxed) : private_high_[int(d)];
}

// The memory report's line keeps the paper's name ("hybrid RC slots").
std::string ConnectedSlots::describe() const
{
    auto usage = [this](ConnectedDir d, const char *what) {
        return std::string(what) + " " + std::to_string(in_use(d)) + " in use (most " +
               std::to_string(high_water(d)) + "), " + std::to_string(held(d)) + " held here";
    };
    std::string counts = usage(ConnectedDir::Out, "outgoing") + "; " + usage(ConnectedDir::In, "incoming");
    if (shared_)
        return "hybrid RC slots: " + std::to_string(cap_) + " per direction shared by the " +
               std::to_string(processes_) + " processes of node " + std::to_string(node_) +
               (segment_.created_here() ? ", count created by this process (node leader)" : ", count mapped from the node leader") +
               "; " + counts;
    return "hybrid RC slots: this process's share " + std::to_string(cap_) + " of " + std::to_string(node_cap_) +
           " per direction (" + segment_.private_reason() + "); " + counts;
}

} // namespace llc
