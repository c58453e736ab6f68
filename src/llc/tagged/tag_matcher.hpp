// tag_matcher.hpp - MPI's matching rules: posted receives and unexpected
// messages, both in order, matched on (source label or any, tag under a mask).
//
// No allocation for a posted receive: its state lives in the caller's
// llc_treq_t (TreqState, below).  An unexpected message is a record of the
// matcher's UnexpectedPool (unexpected_pool.hpp), reused once given back.
#pragma once

#include "tagged/unexpected_pool.hpp"

#include "llc.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace llc {

class MemRegistry;

// What a message declares about itself (the tagged wire header, tagged.hpp).
struct TagEnvelope {
    uint64_t tag = 0;
    uint32_t source = 0; // the sender's label
    int src_rank = -1;   // the sender's rank in the job
    uint64_t length = 0; // bytes the sender sends
};

// The private part of an llc_treq_t (its internal_ words).
struct TreqState {
    enum Kind : uint8_t { Free = 0, Send = 1, Recv = 2 };
    TreqState *prev;
    TreqState *next;
    void *buf;          // receive: where the bytes go; send: where they come from
    uint64_t capacity;  // receive: buffer bytes; send: message bytes
    uint64_t tag;       // receive: wanted tag
    uint64_t ignore;    // receive: tag bits that do not matter
    int32_t source;     // receive: wanted label or LLC_ANY_SOURCE
    int32_t peer;       // send: destination rank; receive: the sender's rank when known, else -1
    uint32_t pending;   // send: events still owed before completion
    uint8_t kind;
    uint8_t posted;     // receive: in the posted list
    uint8_t awaiting;   // Await: the record from the peer this request waits for
    uint8_t revoking;   // offered receive: cancelled, its offer revoked; the sender's answer is due
    uint64_t magic;     // kMagic while in use
    uint64_t token;     // while awaiting: its token on the wire (request_tokens.hpp), else 0
    uint64_t peer_token; // split copy, receive: the sender's token (for Fin, Fail or Cts)
    uint8_t split;       // split copy: receive, its own part (CmaCopy); send, the split was answered
    static constexpr uint64_t kMagic = 0x6c6c632d74726571ull; // "llc-treq"
    // A request holds a token exactly while it awaits one of these.
    enum Await : uint8_t {
        AwaitNone = 0,
        AwaitReply = 1, // rendezvous send: clear-to-send, acknowledgement or read failure
        AwaitFin = 2,   // synchronous eager send: acknowledgement
        AwaitData = 3,  // receive that sent clear-to-send: the data
        AwaitOffer = 4, // receive offered to its sender (offers): its write, or its refusal
        AwaitSplit = 5  // receive of a split copy: the sender's part written (Written)
    };
};
static_assert(sizeof(TreqState) <= sizeof(((llc_treq_t *)nullptr)->internal_), "TreqState fits llc_treq_t");

inline TreqState &state_of(llc_treq_t *req) { return *reinterpret_cast<TreqState *>(req->internal_); }
inline llc_treq_t *request_of(TreqState *s)
{
    return reinterpret_cast<llc_treq_t *>(reinterpret_cast<char *>(s) - offsetof(llc_treq_t, internal_));
}

// An arrived message no receive had matched yet.
struct Unexpected {
    Unexpected *prev = nullptr;
    Unexpected *next = nullptr;
    TagEnvelope env;
    uint32_t flags = 0;    // the sender's tagged flags (wire)
    uint64_t sreq = 0;     // the sender's request token (sync or rendezvous)
    bool rndv = false;     // payload still at the sender (request-to-send)
    int32_t pid = 0;       // rendezvous: the sender's process (same node: CMA)
    uint64_t addr = 0;     // rendezvous: the sender's buffer
    char *data = nullptr;  // eager: the payload (a buffer of the record's size class, kept with it)
    uint8_t size_class = 0; // UnexpectedPool's class of data
};

inline bool tag_matches(uint64_t want, uint64_t ignore, int want_source, const TagEnvelope &env)
{
    return ((want ^ env.tag) & ~ignore) == 0 && (want_source == LLC_ANY_SOURCE || uint32_t(want_source) == env.source);
}

class TagMatcher {
public:
    TagMatcher() = default;
    TagMatcher(const TagMatcher &) = delete;
    TagMatcher &operator=(const TagMatcher &) = delete;
    ~TagMatcher();

    // First posted receive that env matches, taken out of the list; nullptr if none.
    TreqState *take_posted(const TagEnvelope &env);
    void post(TreqState &r);
    bool unpost(TreqState &r); // false if it was not posted

    // First unexpected message a receive (tag, ignore, source) matches; with
    // take, it leaves the queue (the caller owns it).
    Unexpected *find_unexpected(uint64_t tag, uint64_t ignore, int source, bool take);
    // A record for a message with len bytes of eager payload (data holds
    // them), to fill and queue with add_unexpected.
    Unexpected *new_unexpected(size_t len) { return pool_.take(len); }
    void add_unexpected(Unexpected *u);
    // A record taken out of the queue is done with (its message received).
    void recycle(Unexpected *u) { pool_.give(u); }
    // The owner of a taken record: recycles it when it goes out of scope.
    struct Recycle {
        TagMatcher *matcher;
        void operator()(Unexpected *u) const { matcher->recycle(u); }
    };
    using UnexpectedPtr = std::unique_ptr<Unexpected, Recycle>;
    UnexpectedPtr own(Unexpected *u) { return UnexpectedPtr(u, Recycle{this}); }
    // Its unexpected records, queued and kept for reuse (MemComponent::TaggedUnexpected).
    void account(MemRegistry &r) const;

    // Whether every posted receive that could match a message r could
    // match (the same or any source, tags that agree on the bits neither
    // ignores) satisfies ok(): the rule for offering r to its sender.
    template <class Ok> bool all_overlapping(const TreqState &r, Ok ok) const
    {
        for (const TreqState *p = posted_head_; p; p = p->next) {
            bool sources = p->source == LLC_ANY_SOURCE || r.source == LLC_ANY_SOURCE || p->source == r.source;
            if (sources && ((p->tag ^ r.tag) & ~p->ignore & ~r.ignore) == 0 && !ok(*p))
                return false;
        }
        return true;
    }

    // f(receive) for every posted receive, oldest first (f must not change the list).
    template <class F> void for_each_posted(F f) const
    {
        for (TreqState *p = posted_head_; p; p = p->next)
            f(p);
    }

    size_t posted_count() const { return posted_count_; }
    size_t unexpected_count() const { return unexpected_count_; }

private:
    UnexpectedPool pool_;
    TreqState *posted_head_ = nullptr;
    TreqState *posted_tail_ = nullptr;
    Unexpected *unexp_head_ = nullptr;
    Unexpected *unexp_tail_ = nullptr;
    size_t posted_count_ = 0;
    size_t unexpected_count_ = 0;
};

} // namespace llc
