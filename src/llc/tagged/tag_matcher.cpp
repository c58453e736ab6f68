// tag_matcher.cpp - the posted and unexpected queues.
#include "tagged/tag_matcher.hpp"

#include "mem/mem_accounting.hpp"

namespace llc {

TagMatcher::~TagMatcher()
{
    while (Unexpected *u = unexp_head_) {
        unexp_head_ = u->next;
        pool_.give(u);
    }
}

TreqState *TagMatcher::take_posted(const TagEnvelope &env)
{
    for (TreqState *r = posted_head_; r; r = r->next) {
        if (tag_matches(r->tag, r->ignore, r->source, env)) {
            unpost(*r);
            return r;
        }
    }
    return nullptr;
}

void TagMatcher::post(TreqState &r)
{
    r.prev = posted_tail_;
    r.next = nullptr;
    if (posted_tail_)
        posted_tail_->next = &r;
    else
        posted_head_ = &r;
    posted_tail_ = &r;
    r.posted = 1;
    posted_count_++;
}

bool TagMatcher::unpost(TreqState &r)
{
    if (!r.posted)
        return false;
    (r.prev ? r.prev->next : posted_head_) = r.next;
    (r.next ? r.next->prev : posted_tail_) = r.prev;
    r.prev = r.next = nullptr;
    r.posted = 0;
    posted_count_--;
    return true;
}

Unexpected *TagMatcher::find_unexpected(uint64_t tag, uint64_t ignore, int source, bool take)
{
    for (Unexpected *u = unexp_head_; u; u = u->next) {
        if (!tag_matches(tag, ignore, source, u->env))
            continue;
        if (take) {
            (u->prev ? u->prev->next : unexp_head_) = u->next;
            (u->next ? u->next->prev : unexp_tail_) = u->prev;
            u->prev = u->next = nullptr;
            unexpected_count_--;
        }
        return u;
    }
    return nullptr;
}

void TagMatcher::add_unexpected(Unexpected *u)
{
    u->prev = unexp_tail_;
    u->next = nullptr;
    if (unexp_tail_)
        unexp_tail_->next = u;
    else
        unexp_head_ = u;
    unexp_tail_ = u;
    unexpected_count_++;
}

void TagMatcher::account(MemRegistry &r) const
{
    uint64_t queued = 0;
    for (const Unexpected *u = unexp_head_; u; u = u->next)
        queued += UnexpectedPool::record_bytes(*u);
    r.add(MemComponent::TaggedUnexpected, queued, unexpected_count_);
    r.add(MemComponent::TaggedUnexpected, pool_.kept_bytes(), pool_.kept());
}

} // namespace llc
