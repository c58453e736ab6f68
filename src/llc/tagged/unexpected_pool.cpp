// unexpected_pool.cpp - the size classes and free lists of UnexpectedPool.
#include "tagged/unexpected_pool.hpp"
#include "tagged/tag_matcher.hpp"

namespace llc {

namespace {
constexpr size_t kClassBytes[UnexpectedPool::kClasses] = {0, 64, 256, 1024, 4096, 16384};
constexpr size_t kKeep[UnexpectedPool::kClasses] = {64, 64, 64, 32, 8, 2};
} // namespace

size_t UnexpectedPool::class_bytes(size_t cls) { return cls < kClasses ? kClassBytes[cls] : 0; }

size_t UnexpectedPool::keep_limit(size_t cls) { return cls < kClasses ? kKeep[cls] : 0; }

UnexpectedPool::UnexpectedPool()
{
    // reserved up front: giving a record back never allocates
    for (size_t c = 0; c < kClasses; c++)
        free_[c].reserve(kKeep[c]);
}

UnexpectedPool::~UnexpectedPool()
{
    for (auto &list : free_)
        for (Unexpected *u : list)
            destroy(u);
}

void UnexpectedPool::destroy(Unexpected *u)
{
    delete[] u->data;
    delete u;
}

Unexpected *UnexpectedPool::take(size_t len)
{
    size_t cls = 0;
    while (cls < kClasses && kClassBytes[cls] < len)
        cls++;
    Unexpected *u;
    if (cls < kClasses && !free_[cls].empty()) {
        u = free_[cls].back();
        free_[cls].pop_back();
        char *data = u->data;
        *u = Unexpected{};
        u->data = data;
    } else {
        u = new Unexpected{};
        size_t bytes = cls < kClasses ? kClassBytes[cls] : len;
        u->data = bytes ? new char[bytes] : nullptr;
    }
    u->size_class = cls < kClasses ? uint8_t(cls) : kOwnBuffer;
    return u;
}

void UnexpectedPool::give(Unexpected *u)
{
    if (!u)
        return;
    if (u->size_class == kOwnBuffer || free_[u->size_class].size() >= kKeep[u->size_class]) {
        destroy(u);
        return;
    }
    u->prev = u->next = nullptr;
    free_[u->size_class].push_back(u);
}

size_t UnexpectedPool::record_bytes(const Unexpected &u)
{
    const size_t data = u.size_class == kOwnBuffer ? (u.data ? size_t(u.env.length) : 0) : kClassBytes[u.size_class];
    return sizeof(Unexpected) + data;
}

size_t UnexpectedPool::kept() const
{
    size_t n = 0;
    for (const auto &list : free_)
        n += list.size();
    return n;
}

size_t UnexpectedPool::kept_bytes() const
{
    size_t bytes = 0;
    for (size_t c = 0; c < kClasses; c++)
        bytes += free_[c].size() * (sizeof(Unexpected) + kClassBytes[c]) + free_[c].capacity() * sizeof(void *);
    return bytes;
}

} // namespace llc
