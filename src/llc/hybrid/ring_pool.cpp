// ring_pool.cpp - see ring_pool.hpp.
#include "hybrid/ring_pool.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "support/shared_segment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <utility>

namespace llc {

namespace {
constexpr uint64_t kRingPoolMagic = 0x4c4c432d52494e47ull; // "LLC-RING"

size_t page_bytes()
{
    long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? size_t(p) : 4096;
}

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

void raise_high_water(std::atomic<uint32_t> &high, uint32_t now)
{
    uint32_t seen = high.load(std::memory_order_relaxed);
    while (seen < now && !high.compare_exchange_weak(seen, now, std::memory_order_relaxed))
        ;
}

struct Layout {
    size_t stride;       // per ring
    size_t rings_offset; // header + free list, page-aligned
    size_t total;
};

Layout layout_for(size_t rings, size_t slots, size_t slot_bytes)
{
    Layout l;
    l.stride = round_up(slots * slot_bytes, page_bytes());
    l.rings_offset = round_up(sizeof(RingPoolShared) + rings * sizeof(std::atomic<uint32_t>), page_bytes());
    l.total = l.rings_offset + rings * l.stride;
    return l;
}

uint64_t pack(uint32_t tag, uint32_t index) { return (uint64_t(tag) << 32) | index; }
uint32_t index_of(uint64_t top) { return uint32_t(top); }
uint32_t tag_of(uint64_t top) { return uint32_t(top >> 32); }
} // namespace

// The part of a pool that leases point to: the mapping, and what this
// process holds of it (so that the pool's destruction can give it back).
struct RingLease::State {
    MemoryMapping map;
    RingPoolShared *hdr = nullptr; // in map (shared or private)
    bool shared = false;           // a node segment (else anonymous private memory)
    std::string private_reason;
    std::mutex mutex;              // guards held and closed
    std::vector<uint8_t> held;     // per ring: leased by this process
    size_t held_count = 0;
    bool closed = false;           // the pool was destroyed: leases return nothing
    std::atomic<uint64_t> leases{0};
    std::atomic<uint64_t> empty{0};

    std::atomic<uint32_t> *next() const
    {
        return reinterpret_cast<std::atomic<uint32_t> *>(reinterpret_cast<char *>(hdr) + sizeof(RingPoolShared));
    }
    char *ring(uint32_t i) const { return map.data() + hdr->rings_offset + size_t(i) * hdr->ring_stride; }
    size_t ring_bytes() const { return size_t(hdr->slots) * hdr->slot_bytes; }

    // The free list (a Treiber stack; the tag makes a pop that read a stale
    // next index fail its compare-exchange).
    uint32_t pop()
    {
        std::atomic<uint32_t> *links = next();
        uint64_t top = hdr->free_top.load(std::memory_order_acquire);
        for (;;) {
            uint32_t i = index_of(top);
            if (i == RingPool::kNoRing)
                return RingPool::kNoRing;
            uint32_t after = links[i].load(std::memory_order_relaxed);
            if (hdr->free_top.compare_exchange_weak(top, pack(tag_of(top) + 1, after), std::memory_order_acq_rel,
                                                    std::memory_order_acquire))
                return i;
        }
    }
    void push(uint32_t i)
    {
        std::atomic<uint32_t> *links = next();
        uint64_t top = hdr->free_top.load(std::memory_order_relaxed);
        do {
            links[i].store(index_of(top), std::memory_order_relaxed);
        } while (!hdr->free_top.compare_exchange_weak(top, pack(tag_of(top) + 1, i), std::memory_order_release,
                                                       std::memory_order_relaxed));
    }

    // Give ring i back: its pages to the system, then its index to the list.
    // Caller holds mutex and has checked held[i].
    void give_back(uint32_t i)
    {
        held[i] = 0;
        held_count--;
        // MADV_REMOVE punches the pages out of the shared-memory file (every
        // process's view of them); private anonymous memory: MADV_DONTNEED.
        // Failure only costs memory (the next user overwrites the ring).
        ::madvise(ring(i), size_t(hdr->ring_stride), shared ? MADV_REMOVE : MADV_DONTNEED);
        hdr->in_use.fetch_sub(1, std::memory_order_acq_rel);
        push(i);
    }

    void give_all()
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (hdr)
            for (uint32_t i = 0; i < held.size() && held_count > 0; i++)
                if (held[i])
                    give_back(i);
        closed = true;
    }
};

RingLease &RingLease::operator=(RingLease &&other) noexcept
{
    if (this != &other) {
        reset();
        pool_ = std::move(other.pool_);
        index_ = other.index_;
        base_ = std::exchange(other.base_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void RingLease::reset()
{
    if (pool_) {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        if (!pool_->closed && index_ < pool_->held.size() && pool_->held[index_])
            pool_->give_back(index_);
    }
    pool_.reset();
    base_ = nullptr;
    bytes_ = 0;
}

std::string RingPool::name_for(const std::string &job_id, int node)
{
    return shm_name_for(job_id, "node" + std::to_string(node) + "-rings");
}

namespace {
void initialize(RingPoolShared *h, size_t rings, size_t slots, size_t slot_bytes, int node, int leader,
                int processes, const Layout &l)
{
    h->rings = uint32_t(rings);
    h->slots = uint32_t(slots);
    h->slot_bytes = uint32_t(slot_bytes);
    h->node = node;
    h->leader_rank = leader;
    h->processes = processes;
    h->ring_stride = l.stride;
    h->rings_offset = l.rings_offset;
    auto *links = reinterpret_cast<std::atomic<uint32_t> *>(reinterpret_cast<char *>(h) + sizeof(RingPoolShared));
    // Ring 0 on top, then 1, ...: low rings are reused first.
    for (size_t i = 0; i < rings; i++)
        new (&links[i]) std::atomic<uint32_t>(i + 1 < rings ? uint32_t(i + 1) : RingPool::kNoRing);
    h->free_top.store(pack(0, rings > 0 ? 0 : RingPool::kNoRing), std::memory_order_relaxed);
    h->in_use.store(0, std::memory_order_relaxed);
    h->high_water.store(0, std::memory_order_relaxed);
    h->leases.store(0, std::memory_order_relaxed);
    h->empty.store(0, std::memory_order_relaxed);
}

// How the messages name the pool.
NodeSegment::Words pool_words() { return {"the node's ring pool", "shared pool", "ring pool"}; }
// What a process compares when the leader's pool does not fit it.
const char *const kSettingsHint =
    " (are LLC_RING_POOL, LLC_RING_SLOTS and LLC_RING_SLOT_BYTES the same on every process?)";
} // namespace

RingPool::RingPool(size_t rings, size_t slots, size_t slot_bytes, int node, int rank, int leader, int processes,
                   const std::string &job_id, bool share)
    : node_rings_(std::min<size_t>(rings, RingPool::kNoRing - 1)), slots_(slots), slot_bytes_(slot_bytes),
      node_(node), rank_(rank), leader_(leader), processes_(std::max(processes, 1)),
      segment_(name_for(job_id, node), pool_words(), share, processes, rank == leader)
{
    state_ = std::make_shared<RingLease::State>();
    if (segment_.is_private()) {
        go_private();
        return;
    }
    if (!segment_.leads())
        return; // maps the leader's segment in attach()
    const Layout l = layout_for(node_rings_, slots_, slot_bytes_);
    // Sparse: ftruncate commits nothing; pages come when a ring is written.
    MemoryMapping map =
        segment_.create(l.total, " (LLC_RING_POOL x LLC_RING_SLOTS x LLC_RING_SLOT_BYTES of address space)");
    if (!map.data()) {
        go_private();
        return;
    }
    auto *h = new (map.data()) RingPoolShared{};
    initialize(h, node_rings_, slots_, slot_bytes_, node_, rank_, processes_, l);
    std::atomic_thread_fence(std::memory_order_release);
    h->magic = kRingPoolMagic; // the others map it only after a bootstrap fence
    state_->map = std::move(map);
    state_->hdr = h;
    state_->shared = true;
    state_->held.assign(node_rings_, 0);
}

RingPool &RingPool::operator=(RingPool &&other) noexcept
{
    if (this != &other) {
        if (state_)
            state_->give_all();
        node_rings_ = other.node_rings_;
        slots_ = other.slots_;
        slot_bytes_ = other.slot_bytes_;
        node_ = other.node_;
        rank_ = other.rank_;
        leader_ = other.leader_;
        processes_ = other.processes_;
        state_ = std::move(other.state_);
        segment_ = std::move(other.segment_); // removes this pool's name first
    }
    return *this;
}

RingPool::~RingPool()
{
    if (state_)
        state_->give_all();
    segment_.release_name();
}

void RingPool::go_private()
{
    RingLease::State &s = *state_;
    s.map.reset();
    s.hdr = nullptr;
    s.shared = false;
    s.private_reason = segment_.private_reason();
    size_t rings = node_rings_ == 0 ? 0 : std::max<size_t>(1, node_rings_ / size_t(processes_));
    const Layout l = layout_for(rings, slots_, slot_bytes_);
    // MAP_NORESERVE: address space only; pages come when a ring is written.
    void *addr = ::mmap(nullptr, l.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (addr == MAP_FAILED) {
        s.private_reason += "; no private pool either (" + errno_message("mmap", errno) + ")";
        return; // no rings: every lease is refused
    }
    s.map = MemoryMapping(addr, l.total);
    auto *h = new (addr) RingPoolShared{};
    initialize(h, rings, slots_, slot_bytes_, node_, -1, processes_, l);
    h->magic = kRingPoolMagic;
    s.hdr = h;
    s.held.assign(rings, 0);
}

void RingPool::attach()
{
    if (!state_ || !segment_.waiting())
        return; // not in use, the leader, private, or attached already
    const Layout l = layout_for(node_rings_, slots_, slot_bytes_);
    MemoryMapping map = segment_.attach(l.total, kSettingsHint);
    auto *h = reinterpret_cast<RingPoolShared *>(map.data());
    if (h && (h->magic != kRingPoolMagic || h->node != node_ || h->leader_rank != leader_ ||
              h->rings != node_rings_ || h->slots != slots_ || h->slot_bytes != slot_bytes_ ||
              h->ring_stride != l.stride || h->rings_offset != l.rings_offset))
        segment_.mismatch(kSettingsHint);
    if (segment_.is_private()) {
        go_private();
        return;
    }
    RingLease::State &s = *state_;
    s.map = std::move(map);
    s.hdr = h;
    s.shared = true;
    s.held.assign(node_rings_, 0);
}

void RingPool::release_name() { segment_.release_name(); }

RingLease RingPool::try_lease()
{
    if (!state_ || !state_->hdr)
        return RingLease();
    RingLease::State &s = *state_;
    uint32_t i = s.pop();
    if (i == kNoRing) {
        s.hdr->empty.fetch_add(1, std::memory_order_relaxed);
        s.empty.fetch_add(1, std::memory_order_relaxed);
        return RingLease();
    }
    raise_high_water(s.hdr->high_water, s.hdr->in_use.fetch_add(1, std::memory_order_acq_rel) + 1);
    s.hdr->leases.fetch_add(1, std::memory_order_relaxed);
    s.leases.fetch_add(1, std::memory_order_relaxed);
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.held[i] = 1;
        s.held_count++;
    }
    return RingLease(state_, i, s.ring(i), s.ring_bytes());
}

size_t RingPool::rings() const { return state_ && state_->hdr ? state_->hdr->rings : 0; }
size_t RingPool::ring_bytes() const { return state_ && state_->hdr ? state_->ring_bytes() : slots_ * slot_bytes_; }
size_t RingPool::in_use() const
{
    return state_ && state_->hdr ? state_->hdr->in_use.load(std::memory_order_relaxed) : 0;
}
size_t RingPool::high_water() const
{
    return state_ && state_->hdr ? state_->hdr->high_water.load(std::memory_order_relaxed) : 0;
}
size_t RingPool::held() const
{
    if (!state_)
        return 0;
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->held_count;
}
uint64_t RingPool::leases() const { return state_ ? state_->leases.load(std::memory_order_relaxed) : 0; }
uint64_t RingPool::empty() const { return state_ ? state_->empty.load(std::memory_order_relaxed) : 0; }
bool RingPool::shared() const { return state_ && state_->shared; }
bool RingPool::created_here() const { return state_ && segment_.created_here(); }
uint64_t RingPool::mapped_bytes() const { return state_ ? state_->map.size() : 0; }
uint64_t RingPool::header_bytes() const { return state_ && state_->hdr ? state_->hdr->rings_offset : 0; }
const char *RingPool::ring_address(uint32_t i) const
{
    return state_ && state_->hdr && i < state_->hdr->rings ? state_->ring(i) : nullptr;
}

std::string RingPool::describe() const
{
    std::string geometry = std::string(rings() == 1 ? " ring of " : " rings of ") + std::to_string(slots_) + " x " +
                           std::to_string(slot_bytes_) + " B";
    std::string usage = std::to_string(in_use()) + " in use (most " + std::to_string(high_water()) + "), " +
                        std::to_string(held()) + " held here, " + std::to_string(leases()) + " leased here, " +
                        std::to_string(empty()) + " refused here for an empty pool";
    if (shared())
        return "ring pool: " + std::to_string(rings()) + geometry + " shared by the " +
               std::to_string(processes_) + " processes of node " + std::to_string(node_) +
               (created_here() ? ", segment created by this process (node leader)"
                               : ", segment mapped from the node leader") +
               "; " + usage;
    std::string why = state_ ? state_->private_reason : std::string("not in use");
    return "ring pool: this process's private " + std::to_string(rings()) + geometry + " of " +
           std::to_string(node_rings_) + " (" + why + "); " + usage;
}

} // namespace llc
