// reg_cache.cpp - see reg_cache.hpp.
#include "transport/verbs/reg_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace llc {

namespace {

constexpr uintptr_t kEntryTag = 1;

std::string range_text(uintptr_t start, uintptr_t end)
{
    char buf[96];
    std::snprintf(buf, sizeof(buf), "[%#llx, %#llx) (%llu bytes)", (unsigned long long)start,
                  (unsigned long long)end, (unsigned long long)(end - start));
    return buf;
}

} // namespace

// ---- RegHandle ----

const Registration &RegHandle::registration() const
{
    return static_cast<const RegCache::Entry *>(entry_)->reg;
}

uintptr_t RegHandle::start() const { return static_cast<const RegCache::Entry *>(entry_)->start; }

size_t RegHandle::length() const
{
    const auto *e = static_cast<const RegCache::Entry *>(entry_);
    return size_t(e->end - e->start);
}

void RegHandle::release()
{
    if (entry_ && cache_)
        cache_->release(static_cast<RegCache::Entry *>(entry_));
    entry_ = nullptr;
    cache_ = nullptr;
}

// ---- lists ----

void RegCache::List::push_back(Entry *e)
{
    e->prev = tail;
    e->next = nullptr;
    if (tail)
        tail->next = e;
    else
        head = e;
    tail = e;
    count++;
}

void RegCache::List::remove(Entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        tail = e->prev;
    e->prev = e->next = nullptr;
    count--;
}

// ---- cache ----

RegCache::RegCache(Registrar &registrar, size_t max_entries, unsigned page_shift)
    : registrar_(registrar), max_entries_(max_entries), page_shift_(page_shift)
{
    if (page_shift < 10 || page_shift > 30)
        throw std::invalid_argument("RegCache page_shift must be in [10, 30]");
    unsigned key_bits = kAddressBits - page_shift;
    levels_ = (key_bits + kRadixBits - 1) / kRadixBits;
}

RegCache::~RegCache()
{
    for (unsigned i = 0; i < (1u << kRadixBits); i++)
        if (uintptr_t s = root_.slot[i]; s && !(s & kEntryTag))
            free_subtree(reinterpret_cast<Node *>(s));
    for (List *l : {&lru_, &pinned_})
        while (Entry *e = l->head) {
            l->remove(e);
            destroy(e);
        }
}

void RegCache::free_subtree(Node *n)
{
    for (uintptr_t s : n->slot)
        if (s && !(s & kEntryTag))
            free_subtree(reinterpret_cast<Node *>(s));
    delete n;
    nodes_--;
}

RegHandle RegCache::fail(int err, std::string message)
{
    stats_.failures++;
    last_error_ = std::move(message);
    RegHandle h;
    h.error_ = err ? err : EIO;
    return h;
}

RegHandle RegCache::pin(Entry *e)
{
    if (e->pins++ == 0) {
        lru_.remove(e);
        pinned_.push_back(e);
    }
    RegHandle h;
    h.cache_ = this;
    h.entry_ = e;
    return h;
}

void RegCache::release(Entry *e)
{
    if (--e->pins > 0)
        return;
    pinned_.remove(e);
    if (!e->in_tree) { // stale, or never cached
        if (e->stale)
            stale_--;
        destroy(e);
        return;
    }
    lru_.push_back(e);
    // Back under the bound after an overflow.
    while (entries_ > max_entries_ && lru_.count)
        evict_lru();
}

RegCache::Entry *RegCache::register_entry(uintptr_t start, uintptr_t end, int &err)
{
    auto e = std::make_unique<Entry>(); // before registering: nothing to undo if this throws
    RegResult r = registrar_.register_region(reinterpret_cast<void *>(start), size_t(end - start));
    if (r.error != 0) {
        err = r.error;
        last_error_ = "registering " + range_text(start, end) + " failed: " +
                      (r.message.empty() ? std::string(std::strerror(r.error)) : r.message);
        return nullptr;
    }
    stats_.registrations++;
    stats_.registered_bytes += end - start;
    e->start = start;
    e->end = end;
    e->reg = r.reg;
    entries_++;
    Entry *p = e.release();
    lru_.push_back(p);
    return p;
}

void RegCache::destroy(Entry *e)
{
    registrar_.deregister_region(e->reg);
    stats_.deregistrations++;
    stats_.registered_bytes -= e->end - e->start;
    entries_--;
    delete e;
}

void RegCache::evict_lru()
{
    Entry *e = lru_.head;
    lru_.remove(e);
    tree_remove(&root_, 0, 0, e->start >> page_shift_, e->end >> page_shift_, e);
    e->in_tree = false;
    destroy(e);
    stats_.evictions++;
}

void RegCache::drop_from_tree(Entry *e)
{
    tree_remove(&root_, 0, 0, e->start >> page_shift_, e->end >> page_shift_, e);
    e->in_tree = false;
    if (e->pins == 0) {
        lru_.remove(e);
        destroy(e);
    } else {
        e->stale = true;
        stale_++;
    }
}

size_t RegCache::flush()
{
    size_t n = 0;
    while (lru_.count) {
        evict_lru();
        n++;
    }
    return n;
}

RegHandle RegCache::acquire(const void *addr, size_t len)
{
    const uintptr_t mask = (uintptr_t(1) << page_shift_) - 1;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (len == 0)
        len = 1;
    if (len - 1 > UINTPTR_MAX - a || a + (len - 1) >= UINTPTR_MAX - mask) {
        stats_.misses++;
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)a);
        return fail(EINVAL, "cannot register " + std::to_string(len) + " bytes at " + buf +
                                ": the range reaches the top page of the address space");
    }
    const uintptr_t start = a & ~mask;
    const uintptr_t end = ((a + (len - 1)) | mask) + 1;

    if (max_entries_ == 0 || uint64_t(end) > (uint64_t(1) << kAddressBits)) {
        // Not cached: registered now, deregistered on release.
        stats_.misses++;
        if (max_entries_ != 0)
            stats_.bypasses++;
        int err = 0;
        Entry *e = register_entry(start, end, err);
        if (!e && lru_.count) {
            flush();
            e = register_entry(start, end, err);
        }
        if (!e)
            return fail(err, last_error_);
        return pin(e);
    }

    const uint64_t first = start >> page_shift_, last = end >> page_shift_;
    if (Entry *e = find_page(first); e && e->end >= end) {
        stats_.hits++;
        return pin(e);
    }
    stats_.misses++;

    // The new range absorbs every entry it overlaps, so entries in the tree
    // never overlap each other.
    std::vector<Entry *> merged;
    uintptr_t mstart = start, mend = end;
    auto merge_range = [&] {
        merged.clear();
        collect(first, last, merged);
        mstart = start;
        mend = end;
        for (const Entry *m : merged) {
            mstart = std::min(mstart, m->start);
            mend = std::max(mend, m->end);
        }
    };
    merge_range();
    int err = 0;
    Entry *e = register_entry(mstart, mend, err);
    if (!e && lru_.count) {
        // Maybe the adapter or the locked-memory limit is full, or an unused
        // entry covers memory that was unmapped without an invalidate: give
        // back every unused registration and try once more.
        flush();
        merge_range();
        e = register_entry(mstart, mend, err);
    }
    if (!e)
        return fail(err, last_error_);
    RegHandle h = pin(e); // pinned first, so the eviction below cannot take it
    for (Entry *m : merged) {
        drop_from_tree(m);
        stats_.merges++;
    }
    while (entries_ > max_entries_ && lru_.count)
        evict_lru();
    if (entries_ > max_entries_)
        stats_.overflows++;
    try {
        tree_insert(&root_, 0, 0, mstart >> page_shift_, mend >> page_shift_, e);
    } catch (...) {
        // Out of memory for a node: take back what was inserted; the handle
        // deregisters the entry (not in the tree) when it goes.
        tree_remove(&root_, 0, 0, mstart >> page_shift_, mend >> page_shift_, e);
        throw;
    }
    e->in_tree = true;
    return h;
}

size_t RegCache::invalidate(const void *addr, size_t len)
{
    if (len == 0 || max_entries_ == 0)
        return 0;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uint64_t limit_page = uint64_t(1) << (kAddressBits - page_shift_);
    uint64_t first = uint64_t(a) >> page_shift_;
    uint64_t last_byte = len - 1 > UINTPTR_MAX - a ? UINTPTR_MAX : a + (len - 1);
    uint64_t last = std::min<uint64_t>((last_byte >> page_shift_) + 1, limit_page);
    if (first >= last)
        return 0;
    std::vector<Entry *> hit;
    collect(first, last, hit);
    for (Entry *e : hit)
        drop_from_tree(e);
    stats_.invalidated += hit.size();
    return hit.size();
}

RegCacheMemory RegCache::memory() const
{
    RegCacheMemory m;
    m.nodes = nodes_;
    m.entries = entries_;
    m.node_bytes = sizeof(Node);
    m.entry_bytes = sizeof(Entry);
    m.bytes = sizeof(RegCache) + nodes_ * sizeof(Node) + uint64_t(entries_) * sizeof(Entry);
    return m;
}

// ---- radix tree ----

RegCache::Entry *RegCache::find_page(uint64_t page) const
{
    const Node *n = &root_;
    for (unsigned depth = 0; depth < levels_; depth++) {
        uintptr_t s = n->slot[(page / span(depth)) & ((1u << kRadixBits) - 1)];
        if (!s)
            return nullptr;
        if (s & kEntryTag)
            return reinterpret_cast<Entry *>(s & ~kEntryTag);
        n = reinterpret_cast<const Node *>(s);
    }
    return nullptr; // not reached: the last level holds entries only
}

void RegCache::collect(uint64_t first, uint64_t last, std::vector<Entry *> &out) const
{
    if (first < last)
        collect_node(&root_, 0, 0, first, last, out);
}

void RegCache::collect_node(const Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last,
                            std::vector<Entry *> &out) const
{
    const uint64_t sp = span(depth);
    const unsigned i0 = unsigned((first - base) / sp), i1 = unsigned((last - 1 - base) / sp);
    for (unsigned i = i0; i <= i1; i++) {
        uintptr_t s = n->slot[i];
        if (!s)
            continue;
        if (s & kEntryTag) {
            // An entry's slots are contiguous in address order: one check suffices.
            Entry *e = reinterpret_cast<Entry *>(s & ~kEntryTag);
            if (out.empty() || out.back() != e)
                out.push_back(e);
            continue;
        }
        uint64_t lo = base + i * sp;
        collect_node(reinterpret_cast<const Node *>(s), depth + 1, lo, std::max(first, lo), std::min(last, lo + sp),
                     out);
    }
}

void RegCache::tree_insert(Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last, Entry *e)
{
    const uint64_t sp = span(depth);
    const unsigned i0 = unsigned((first - base) / sp), i1 = unsigned((last - 1 - base) / sp);
    for (unsigned i = i0; i <= i1; i++) {
        const uint64_t lo = base + i * sp, hi = lo + sp;
        const uint64_t a = std::max(first, lo), b = std::min(last, hi);
        uintptr_t &s = n->slot[i];
        if (a == lo && b == hi) { // the entry covers the whole slot
            if (s)
                throw std::logic_error("RegCache: inserting over an occupied slot");
            s = reinterpret_cast<uintptr_t>(e) | kEntryTag;
            n->used++;
            continue;
        }
        if (s & kEntryTag)
            throw std::logic_error("RegCache: inserting an entry that overlaps another");
        if (!s) {
            s = reinterpret_cast<uintptr_t>(new Node());
            n->used++;
            nodes_++;
        }
        tree_insert(reinterpret_cast<Node *>(s), depth + 1, lo, a, b, e);
    }
}

void RegCache::tree_remove(Node *n, unsigned depth, uint64_t base, uint64_t first, uint64_t last, const Entry *e)
{
    const uint64_t sp = span(depth);
    const unsigned i0 = unsigned((first - base) / sp), i1 = unsigned((last - 1 - base) / sp);
    for (unsigned i = i0; i <= i1; i++) {
        uintptr_t &s = n->slot[i];
        if (!s)
            continue;
        if (s & kEntryTag) {
            if (reinterpret_cast<const Entry *>(s & ~kEntryTag) == e) {
                s = 0;
                n->used--;
            }
            continue;
        }
        const uint64_t lo = base + i * sp;
        Node *c = reinterpret_cast<Node *>(s);
        tree_remove(c, depth + 1, lo, std::max(first, lo), std::min(last, lo + sp), e);
        if (c->used == 0) { // empty nodes are freed at once
            delete c;
            nodes_--;
            s = 0;
            n->used--;
        }
    }
}

// ---- consistency check (tests) ----

std::string RegCache::check_node(const Node *n, unsigned depth, uint64_t base, uint64_t &nodes,
                                 uint64_t &slot_pages) const
{
    const uint64_t sp = span(depth);
    uint32_t used = 0;
    for (unsigned i = 0; i < (1u << kRadixBits); i++) {
        uintptr_t s = n->slot[i];
        if (!s)
            continue;
        used++;
        const uint64_t lo = base + i * sp;
        if (s & kEntryTag) {
            const Entry *e = reinterpret_cast<const Entry *>(s & ~kEntryTag);
            if (!e->in_tree)
                return "an entry in the tree is not marked in_tree";
            if ((e->start >> page_shift_) > lo || (e->end >> page_shift_) < lo + sp)
                return "a slot lies outside its entry's range " + range_text(e->start, e->end);
            slot_pages += sp;
            continue;
        }
        if (depth + 1 >= levels_)
            return "a node below the last level";
        nodes++;
        if (std::string p = check_node(reinterpret_cast<const Node *>(s), depth + 1, lo, nodes, slot_pages);
            !p.empty())
            return p;
    }
    if (used != n->used)
        return "a node's used count is " + std::to_string(n->used) + ", it has " + std::to_string(used) + " slots";
    if (depth > 0 && used == 0)
        return "an empty node was not freed";
    return {};
}

std::string RegCache::check() const
{
    uint64_t nodes = 0, slot_pages = 0;
    if (std::string p = check_node(&root_, 0, 0, nodes, slot_pages); !p.empty())
        return p;
    if (nodes != nodes_)
        return "the tree has " + std::to_string(nodes) + " nodes, counted " + std::to_string(nodes_);
    uint64_t tree_pages = 0, bytes = 0;
    size_t stale = 0, listed = 0;
    for (const List *l : {&lru_, &pinned_}) {
        size_t n = 0;
        const Entry *prev = nullptr;
        for (const Entry *e = l->head; e; prev = e, e = e->next) {
            n++;
            if (e->prev != prev)
                return "a broken list link";
            if ((l == &lru_) != (e->pins == 0))
                return "an entry is in the wrong list for its pin count";
            if (e->start >= e->end || (e->start | e->end) & ((uintptr_t(1) << page_shift_) - 1))
                return "an entry's range " + range_text(e->start, e->end) + " is not page-aligned";
            if (e->in_tree)
                tree_pages += (e->end - e->start) >> page_shift_;
            else if (e->pins == 0)
                return "an unpinned entry outside the tree";
            if (e->stale && e->in_tree)
                return "a stale entry in the tree";
            stale += e->stale;
            bytes += e->end - e->start;
        }
        if (n != l->count || l->tail != prev)
            return "a list's count or tail is wrong";
        listed += n;
    }
    if (tree_pages != slot_pages)
        return "the tree's slots cover " + std::to_string(slot_pages) + " pages, its entries " +
               std::to_string(tree_pages);
    if (listed != entries_)
        return "the lists hold " + std::to_string(listed) + " entries, counted " + std::to_string(entries_);
    if (stale != stale_)
        return "stale count " + std::to_string(stale_) + ", found " + std::to_string(stale);
    if (bytes != stats_.registered_bytes)
        return "registered_bytes is " + std::to_string(stats_.registered_bytes) + ", entries hold " +
               std::to_string(bytes);
    if (entries_ > max_entries_ && lru_.count)
        return "above the bound with unpinned entries left";
    return {};
}

} // namespace llc
