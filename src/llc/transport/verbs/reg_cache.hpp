// reg_cache.hpp - the memory-registration cache of Yamaguchi et al.'s design
// (doc/references.md; radix tree with a 4-bit radix, at most 65536
// registrations), for the single-copy / RDMA paths.
//
// On InfiniBand a buffer must be registered (ibv_reg_mr) before the adapter
// may read or write it, and registering is expensive (the kernel pins the
// pages and the adapter loads their translations).  RegCache keeps
// registrations by address range and hands them out again:
//
//   * Registrar: who registers.  register_region(addr, len) returns the keys
//     or an errno; deregister_region(reg) undoes it.  VerbsRegistrar
//     (verbs_registrar.hpp, built with libibverbs only) calls ibv_reg_mr /
//     ibv_dereg_mr; the unit tests use a fake that records the calls.
//   * Entries are page-aligned ranges [start, end), never overlapping each
//     other while they are in the tree.  acquire(addr, len) rounds the range
//     out to pages and looks up the entry holding its first page; when that
//     entry covers the whole range it is a hit.  Otherwise (a miss) the range
//     is merged with every entry that overlaps it, the merged range is
//     registered, and the overlapped entries leave the tree (deregistered at
//     once when unused, else when their last handle is released).
//   * Radix tree keyed by page number: 4 bits per level, so a 48-bit user
//     address space with 4 KiB pages (36-bit page numbers) has 9 levels of
//     16-way nodes.  A slot covering 16^k pages holds an entry when the entry
//     covers all of those pages, else a child node: an entry takes at most
//     2 x 15 slots per level (like a segment tree), a lookup reads at most 9
//     slots, and a node is freed as soon as its last slot is emptied.
//   * A handle (RegHandle) pins its entry (a reference count) until it is
//     released or destroyed.  Unpinned entries stay registered in
//     least-recently-released order (LRU).  At most `max_entries`
//     (LLC_REG_CACHE_MAX, default 65536) entries: a new entry first evicts
//     the least recently used unpinned ones (deregistering them); when every
//     entry is pinned it is added anyway and counted in overflows (a pin is
//     never refused because of the bound), and the excess is evicted as soon
//     as entries are released.  max_entries = 0 disables caching: every
//     acquire registers and every release deregisters.
//   * invalidate(addr, len): memory in that range was freed or unmapped (the
//     hook a memory-release interceptor calls).  Every entry overlapping it
//     leaves the tree: unpinned ones are deregistered now, pinned ones are
//     marked stale and deregistered on their last release.  Nothing acquired
//     later gets a registration made before the invalidation.  (Uncached
//     registrations, below, are not in the tree: they go at their release.)
//   * A registration that fails is retried once after deregistering every
//     unpinned entry (the adapter or the locked-memory limit may be full).
//   * Ranges reaching above 2^48 (not a 48-bit user address) are registered
//     without caching, like max_entries = 0 (stats: bypasses).
//
// Not thread-safe (one thread per context, as the rest of libllc).  Handles
// must be released before the cache is destroyed; the destructor deregisters
// every entry, pinned or not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llc {

// What a registration gives back.  `handle` is the registrar's own (an ibv_mr*
// for verbs); lkey/rkey are the keys the adapter wants in work requests.
struct Registration {
    void *handle = nullptr;
    uint32_t lkey = 0;
    uint32_t rkey = 0;
};

struct RegResult {
    Registration reg;
    int error = 0;       // 0: registered; else an errno value
    std::string message; // when error != 0: what failed
};

class Registrar {
public:
    virtual ~Registrar() = default;
    // Register [addr, addr + len); addr and len are page-aligned, len > 0.
    virtual RegResult register_region(void *addr, size_t len) = 0;
    // Undo a registration that register_region returned.
    virtual void deregister_region(const Registration &reg) = 0;
};

struct RegCacheStats {
    uint64_t hits = 0;            // acquire found an entry covering the range
    uint64_t misses = 0;          // acquire registered (includes bypasses and max_entries = 0)
    uint64_t merges = 0;          // entries absorbed into a new, larger registration on a miss
    uint64_t evictions = 0;       // unpinned entries deregistered: the bound, flush(), retry after a failure
    uint64_t overflows = 0;       // entries added above the bound because every entry was pinned
    uint64_t invalidated = 0;     // entries dropped (or marked stale) by invalidate()
    uint64_t bypasses = 0;        // ranges above 2^48 registered without caching
    uint64_t failures = 0;        // acquires that failed (the registrar refused twice)
    uint64_t registrations = 0;   // register_region calls that succeeded
    uint64_t deregistrations = 0; // deregister_region calls
    uint64_t registered_bytes = 0; // bytes registered now (every live entry, stale ones included)
};

// Bytes held by the cache: the object (which holds the root node), the tree
// nodes below the root and the entries.  bytes == empty_bytes() when empty.
struct RegCacheMemory {
    uint64_t bytes = 0;
    uint64_t nodes = 0;       // tree nodes allocated below the root
    uint64_t entries = 0;     // live entries (in the tree, stale or uncached)
    uint64_t node_bytes = 0;  // sizeof one node
    uint64_t entry_bytes = 0; // sizeof one entry
};

class RegCache;

// A pinned registration covering at least the acquired range.  Move-only;
// releases its pin when destroyed.  An empty handle (default-constructed,
// moved from, released, or returned by a failed acquire) has ok() false.
class RegHandle {
public:
    RegHandle() = default;
    ~RegHandle() { release(); }
    RegHandle(RegHandle &&o) noexcept : cache_(o.cache_), entry_(o.entry_), error_(o.error_)
    {
        o.cache_ = nullptr;
        o.entry_ = nullptr;
    }
    RegHandle &operator=(RegHandle &&o) noexcept
    {
        if (this != &o) {
            release();
            cache_ = o.cache_;
            entry_ = o.entry_;
            error_ = o.error_;
            o.cache_ = nullptr;
            o.entry_ = nullptr;
        }
        return *this;
    }
    RegHandle(const RegHandle &) = delete;
    RegHandle &operator=(const RegHandle &) = delete;

    bool ok() const { return entry_ != nullptr; }
    explicit operator bool() const { return ok(); }
    // errno of a failed acquire (RegCache::last_error() has the message); 0 otherwise.
    int error() const { return error_; }

    // Valid while ok(): the registration and the page-aligned range it covers.
    const Registration &registration() const;
    uint32_t lkey() const { return registration().lkey; }
    uint32_t rkey() const { return registration().rkey; }
    uintptr_t start() const;
    size_t length() const;

    // Give the pin back now (the destructor does it otherwise).
    void release();

private:
    friend class RegCache;
    RegCache *cache_ = nullptr;
    void *entry_ = nullptr; // RegCache::Entry
    int error_ = 0;
};

class RegCache {
public:
    static constexpr size_t kDefaultMaxEntries = 65536; // the paper's bound (LLC_REG_CACHE_MAX)
    static constexpr unsigned kAddressBits = 48;        // user virtual addresses below 2^48
    static constexpr unsigned kRadixBits = 4;           // 16 slots per node

    // page_shift: log2 of the page size (12: 4 KiB pages, 9 tree levels).
    explicit RegCache(Registrar &registrar, size_t max_entries = kDefaultMaxEntries, unsigned page_shift = 12);
    ~RegCache();
    RegCache(const RegCache &) = delete;
    RegCache &operator=(const RegCache &) = delete;

    // A registration covering [addr, addr + len) (len 0 counts as 1 byte),
    // pinned until the handle is released.  On failure the handle is empty,
    // error() holds the errno and last_error() the message.
    RegHandle acquire(const void *addr, size_t len);

    // [addr, addr + len) was freed or unmapped: drop every entry overlapping
    // it (pinned ones are deregistered on their last release).  Returns how
    // many entries it dropped.
    size_t invalidate(const void *addr, size_t len);

    // Deregister every unpinned entry.  Returns how many.
    size_t flush();

    size_t max_entries() const { return max_entries_; }
    size_t page_size() const { return size_t(1) << page_shift_; }
    unsigned levels() const { return levels_; }
    size_t size() const { return entries_; }              // live entries (each one registration)
    size_t pinned() const { return pinned_.count; }       // entries with a handle out
    size_t unpinned() const { return lru_.count; }        // entries the LRU may evict
    size_t stale() const { return stale_; }               // pinned entries already invalidated
    const RegCacheStats &stats() const { return stats_; }
    RegCacheMemory memory() const;
    static uint64_t empty_bytes() { return sizeof(RegCache); }
    const std::string &last_error() const { return last_error_; }

    // Every live entry: fn(start, length, registration, pins, in_tree).
    template <class Fn> void for_each_entry(Fn &&fn) const
    {
        for (const List *l : {&lru_, &pinned_})
            for (const Entry *e = l->head; e; e = e->next)
                fn(e->start, size_t(e->end - e->start), e->reg, e->pins, e->in_tree);
    }
    // Walks the tree and the lists and checks their invariants (tests).
    // Empty when consistent, else the first problem found.
    std::string check() const;

private:
    friend class RegHandle;

    struct Entry {
        uintptr_t start = 0; // page-aligned
        uintptr_t end = 0;   // page-aligned, > start
        Registration reg;
        uint32_t pins = 0;
        bool in_tree = false; // false: stale, or never cached (max_entries 0, bypass)
        bool stale = false;   // left the tree (invalidated or merged away) while pinned
        Entry *prev = nullptr, *next = nullptr; // in lru_ (pins == 0) or pinned_
    };
    struct List {
        Entry *head = nullptr, *tail = nullptr; // head: least recently released
        size_t count = 0;
        void push_back(Entry *e);
        void remove(Entry *e);
    };
    // A slot is 0 (empty), a Node* (low bit 0) or an Entry* | 1.
    struct Node {
        uintptr_t slot[size_t(1) << kRadixBits] = {};
        uint32_t used = 0; // non-empty slots
    };

    void release(Entry *e);
    RegHandle pin(Entry *e);
    RegHandle fail(int err, std::string message);
    // Registers [start, end) into a new unpinned entry (at the tail of lru_,
    // not in the tree); nullptr, err and last_error_ set on failure.
    Entry *register_entry(uintptr_t start, uintptr_t end, int &err);
    void destroy(Entry *e); // deregister and free (the entry is in no list, not in the tree)
    void evict_lru();
    void drop_from_tree(Entry *e); // out of the tree: freed when unpinned, else stale

    // Tree over page numbers [0, 2^(levels * 4)).
    Entry *find_page(uint64_t page) const;
    // The entries holding a page of [first, last), each once, in address order.
    void collect(uint64_t first, uint64_t last, std::vector<Entry *> &out) const;
    void collect_node(const Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last,
                      std::vector<Entry *> &out) const;
    void tree_insert(Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last, Entry *e);
    void tree_remove(Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last, const Entry *e);
    void free_subtree(Node *n);
    uint64_t span(unsigned depth) const { return uint64_t(1) << (kRadixBits * (levels_ - 1 - depth)); }
    std::string check_node(const Node *n, unsigned depth, uint64_t base, uint64_t &nodes, uint64_t &slots_seen) const;

    Registrar &registrar_;
    size_t max_entries_;
    unsigned page_shift_;
    unsigned levels_;
    Node root_;
    uint64_t nodes_ = 0; // below the root
    size_t entries_ = 0;
    size_t stale_ = 0;
    List lru_, pinned_;
    RegCacheStats stats_;
    std::string last_error_;
};

} // namespace llc
