// tagged_interleave_test.cpp - seeded random schedules of node-local tagged
// traffic, checked against MPI's matching rules.
//
// Every rank but 0 sends rank 0 a planned sequence of messages: tags from a
// small set, sizes at every protocol boundary from 0 B to a megabyte (the
// inline fast path's limit, the eager limit, one byte either side), some
// synchronous, most non-synchronous ones through llc_fast_tsend.  The plan
// is a function of (seed, sender), so rank 0 rebuilds it, and byte i of
// message k of sender s is a function of (seed, s, k).  Rank 0 posts at
// random times receives of every kind (a specific source and tag, any
// source, any tag, both; llc_trecv_from, so some are offered to their
// sender), probes and matched probes, receives with buffers too small
// (LLC_ERR_TRUNCATE for that receive only), and cancels some of its posted
// receives; it sleeps now and then so that messages wait, and a tiny ring
// fills up so that senders fall back to the library's queued path.
//
// What is checked: every message arrives exactly once with every byte (a
// truncated one: its prefix, and nothing past the buffer's end is written);
// a cancelled receive's buffer is never written; a probed message is the one
// the next receive for its envelope takes; and the order: a receive that
// took message k of sender s must not match an earlier message j < k of s
// that went to a receive posted after it, or was still unclaimed when it
// was posted (MPI's non-overtaking rule, which covers any-source and any-tag
// receives as well), and a receive cancelled after a later-posted matching
// receive had completed would have been passed over.
//
// Schedules differ from run to run only in the timing between processes;
// each process's decisions are a function of the seed.  LLC_INTERLEAVE_SEED
// replays one seed (every failure message names its seed).
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "llc_fast.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr uint64_t kTagBase = uint64_t(0x5a) << 32; // the "communicator" half of every tag
constexpr uint64_t kAnyTagIgnore = 0xffffffffull;   // an any-tag receive's mask (MPI_ANY_TAG)
constexpr uint32_t kTagCount = 3;                   // tags kTagBase + 0 .. 2
constexpr size_t kLargest = (size_t(1) << 20) - 3;  // the largest message
constexpr size_t kFullCapacity = size_t(1) << 20;   // a receive that takes any message
constexpr size_t kGuard = 64;                       // bytes past a receive buffer that must stay untouched
constexpr char kSentinel = char(0xa5);
constexpr size_t kMaxPending = 8; // posted receives at most
constexpr size_t kLookPast = 4096; // bytes past what a receive kept that are checked to be untouched
constexpr size_t kCancelledKept = 16; // buffers of cancelled receives checked again later
constexpr size_t kSendWindow = 24;
constexpr double kDeadlineS = 8;

struct PlannedMessage {
    uint64_t tag;
    size_t len;
    bool sync;
    bool try_fast; // through llc_fast_tsend when it takes it
};

// The sizes every plan draws from, with weights: the protocol boundaries
// (the inline path's limit and the eager limit, one byte either side),
// header and cache-line edges, and a few large ones.
std::vector<std::pair<size_t, unsigned>> size_menu(size_t fast_max, size_t eager)
{
    return {{0, 4},
            {1, 4},
            {7, 3},
            {8, 3},
            {40, 4},
            {41, 3},
            {fast_max > 0 ? fast_max - 1 : 0, 2},
            {fast_max, 3},
            {fast_max + 1, 2},
            {1024, 3},
            {eager, 3},
            {eager + 1, 3},
            {64 * 1024, 2},
            {kLargest, 1}};
}

std::vector<PlannedMessage> plan_of(uint64_t seed, int sender, uint32_t count, size_t fast_max, size_t eager)
{
    std::mt19937_64 rng(mix64(seed * 1000003u + uint64_t(sender)));
    const auto menu = size_menu(fast_max, eager);
    unsigned total_weight = 0;
    for (const auto &m : menu)
        total_weight += m.second;
    std::vector<PlannedMessage> plan;
    for (uint32_t k = 0; k < count; k++) {
        unsigned pick = unsigned(rng() % total_weight);
        size_t len = 0;
        for (const auto &m : menu) {
            if (pick < m.second) {
                len = m.first;
                break;
            }
            pick -= m.second;
        }
        PlannedMessage m;
        m.tag = kTagBase + rng() % kTagCount;
        m.len = len;
        m.sync = rng() % 8 == 0;
        m.try_fast = !m.sync && rng() % 4 != 0;
        plan.push_back(m);
    }
    return plan;
}

uint64_t payload_seed(uint64_t seed, int sender, uint32_t k)
{
    return mix64(seed * 0x100000001b3ull ^ (uint64_t(sender) << 40) ^ k);
}

// The inline path's limit (the same in every process of the job: one config).
size_t fast_limit(llc_context_t *ctx, int peer)
{
    if (llc_fast_peer_t *f = llc_fast_peer(ctx, peer, LLC_FAST_LAYOUT))
        return f->max_len;
    const llc::Config &cfg = llc::context_of(ctx).config();
    size_t limit = std::min<size_t>(cfg.copy_max, cfg.tag_eager_bytes);
    if (cfg.cma_enabled)
        limit = std::min<size_t>(limit, cfg.cma_threshold - 1);
    return limit;
}

std::string tag_name(uint64_t tag, uint64_t ignore)
{
    if (ignore == kAnyTagIgnore)
        return "any";
    return std::to_string(tag - kTagBase);
}

std::string source_name(int source) { return source == LLC_ANY_SOURCE ? "any" : std::to_string(source); }

// ------------------------------------------------------------ the senders

struct Send {
    llc_treq_t req{};
    std::vector<char> bytes;
    bool done = false;
    uint32_t index = 0;
};

struct SenderCounts {
    uint64_t fast = 0;         // sent by llc_fast_tsend
    uint64_t fast_refused = 0; // llc_fast_tsend said no: llc_tsend took it
    uint64_t fast_closed = 0;  // ... while the path was closed (sends queued in the library)
    uint64_t library = 0;      // llc_tsend
    uint64_t inprogress = 0;   // llc_tsend returned LLC_INPROGRESS
};

void run_sender(TestProcess &p, llc_context_t *ctx, uint64_t seed, uint32_t count, SenderCounts &counts)
{
    const size_t eager = llc::context_of(ctx).config().tag_eager_bytes;
    const auto plan = plan_of(seed, p.rank, count, fast_limit(ctx, 0), eager);
    llc_fast_peer_t *fast = llc_fast_peer(ctx, 0, LLC_FAST_LAYOUT);
    std::mt19937_64 rng(mix64(seed ^ (uint64_t(p.rank) << 48) ^ 0x5e4d));
    std::deque<std::unique_ptr<Send>> inflight;
    uint32_t next = 0;
    unsigned phase_left = 0;
    bool trickle = false;
    const double deadline = now_s() + kDeadlineS;
    auto send_next = [&]() -> bool {
        const PlannedMessage &m = plan[next];
        auto s = std::make_unique<Send>();
        s->index = next;
        s->bytes.resize(m.len + 1);
        fill_pattern(s->bytes.data(), m.len, payload_seed(seed, p.rank, next));
        next++;
        if (m.try_fast && fast) {
            if (llc_fast_tsend(fast, uint32_t(p.rank), m.tag, s->bytes.data(), m.len)) {
                counts.fast++;
                return true;
            }
            counts.fast_refused++;
            counts.fast_closed += fast->closed != 0;
        }
        s->req.cb = [](llc_treq_t *req) { static_cast<Send *>(req->user)->done = true; };
        s->req.user = s.get();
        int rc = llc_tsend(ctx, 0, uint32_t(p.rank), m.tag, s->bytes.data(), m.len, m.sync ? LLC_TSEND_SYNC : 0,
                           &s->req);
        counts.library++;
        if (rc == LLC_OK) {
            EXPECT_EQ(s->req.status, LLC_OK) << "seed " << seed << ": send " << s->index;
            return true;
        }
        if (rc != LLC_INPROGRESS) {
            ADD_FAILURE() << "seed " << seed << ": llc_tsend of message " << s->index << " (" << m.len
                          << " bytes): " << llc_strerror(rc) << ": " << llc_last_error(ctx);
            return false;
        }
        counts.inprogress++;
        inflight.push_back(std::move(s));
        return true;
    };
    auto reap = [&] {
        for (auto it = inflight.begin(); it != inflight.end();) {
            Send &s = **it;
            if (!s.done) {
                ++it;
                continue;
            }
            EXPECT_EQ(s.req.status, LLC_OK) << "seed " << seed << ": send " << s.index << " of rank " << p.rank;
            // the library is done with it: anything read from it now would be wrong
            std::fill(s.bytes.begin(), s.bytes.end(), char(0xee));
            it = inflight.erase(it);
        }
    };
    while (next < count || !inflight.empty()) {
        if (now_s() > deadline) {
            ADD_FAILURE() << "seed " << seed << ": rank " << p.rank << " sent " << next << " of " << count << ", "
                          << inflight.size() << " still in progress after " << kDeadlineS << " s";
            return;
        }
        // Phases: bursts that run ahead of the receiver (messages wait as
        // unexpected, the ring fills), then a trickle that lets it post first.
        if (phase_left == 0) {
            trickle = rng() % 2 == 0;
            phase_left = 10 + unsigned(rng() % 60);
        }
        phase_left--;
        const unsigned action = unsigned(rng() % 100);
        if (next < count && inflight.size() < kSendWindow && action < 55) {
            // a burst without progress: the ring may fill, and the sends queue
            for (unsigned b = trickle ? 1 : 1 + unsigned(rng() % 6); b > 0 && next < count; b--)
                if (!send_next())
                    return;
        } else if (action < 93) {
            const double until = now_s() + (trickle ? double(rng() % 3000) * 1e-6 : 0);
            for (unsigned n = 1 + unsigned(rng() % 8); n > 0 || now_s() < until; n -= n > 0) {
                int rc = llc_progress(ctx, nullptr);
                if (rc != LLC_OK) {
                    ADD_FAILURE() << "seed " << seed << ": llc_progress: " << llc_strerror(rc) << ": "
                                  << llc_last_error(ctx);
                    return;
                }
            }
        } else {
            usleep(useconds_t(rng() % 400));
        }
        reap();
    }
}

// ------------------------------------------------------------ the receiver

struct Receive {
    enum How : uint8_t { Posted, Probed, MatchedProbe };
    llc_treq_t req{};
    std::vector<char> buf; // capacity + kGuard bytes, kSentinel where nothing was written
    size_t capacity = 0;
    How how = Posted;
    int source = LLC_ANY_SOURCE; // what it was posted with (a matched probe: what the probe asked for)
    uint64_t tag = 0, ignore = 0;
    int check_source = LLC_ANY_SOURCE; // the envelope the order check holds it to: a probe's, for the
    uint64_t check_tag = 0, check_ignore = 0; // receive that takes the probed message
    size_t probed_length = 0;                 // Probed: the length the probe reported
    uint64_t posted_at = 0, finished_at = 0;  // the receiver's event clock
    bool done = false;                        // the callback ran
    bool cancel_asked = false;                // llc_tcancel returned LLC_INPROGRESS (an offered receive)
    bool cancelled = false;
    int sender = -1; // the message it got: sender and number
    uint32_t index = 0;
    size_t id = 0;
};

struct ReceiverCounts {
    uint64_t posted = 0, any_source = 0, any_tag = 0, truncated = 0, cancelled = 0, cancel_refused = 0,
             cancel_pending = 0, probes = 0, probes_found = 0, mprobes_found = 0, slept = 0;
};

class Receiver {
public:
    Receiver(TestProcess &p, llc_context_t *ctx, uint64_t seed, uint32_t count, ReceiverCounts &counts)
        : p_(p), ctx_(ctx), seed_(seed), counts_(counts), rng_(mix64(seed ^ 0x7ec0))
    {
        const size_t eager = llc::context_of(ctx).config().tag_eager_bytes;
        plans_.resize(size_t(p.size));
        owner_.resize(size_t(p.size));
        for (int s = 1; s < p.size; s++) {
            plans_[size_t(s)] = plan_of(seed, s, count, fast_limit(ctx, s), eager);
            owner_[size_t(s)].assign(count, nullptr);
            total_ += count;
        }
        small_capacities_ = {0, 1, 8, 39, 1000, fast_limit(ctx, 1), eager - 1, 65535};
        eager_ = eager;
    }

    // Receive everything, then cancel what is left and check the order.
    void run();

private:
    bool failed() const { return ::testing::Test::HasFailure(); }
    std::string where() const
    {
        return "seed " + std::to_string(seed_) + " (replay: LLC_INTERLEAVE_SEED=" + std::to_string(seed_) + "): ";
    }
    size_t pick_capacity();
    // A (sender, tag) pair with messages not yet received, and not covered by
    // as many specific posted receives; false if there is none.
    bool pick_target(int &sender, uint64_t &tag);
    void choose_envelope(int sender, uint64_t tag, int &source, uint64_t &want, uint64_t &ignore);
    Receive &new_receive(size_t capacity);
    void post();
    void probe(bool matched);
    void cancel(Receive &r);
    bool progress(unsigned n);
    void reap();
    void complete(Receive &r, int status);
    void check_order();
    bool plan_matches(const PlannedMessage &m, int sender, int source, uint64_t tag, uint64_t ignore) const
    {
        return (source == LLC_ANY_SOURCE || source == sender) && ((m.tag ^ tag) & ~ignore) == 0;
    }
    std::string describe(const Receive &r) const
    {
        std::ostringstream o;
        o << "receive #" << r.id << " (" << (r.how == Receive::Posted ? "posted" : r.how == Receive::Probed ? "after a probe" : "matched probe")
          << ", source " << source_name(r.source) << ", tag " << tag_name(r.tag, r.ignore) << ", " << r.capacity
          << " bytes, posted at " << r.posted_at << ")";
        return o.str();
    }

    TestProcess &p_;
    llc_context_t *ctx_;
    uint64_t seed_;
    ReceiverCounts &counts_;
    std::mt19937_64 rng_;
    std::vector<std::vector<PlannedMessage>> plans_; // per sender
    std::vector<std::vector<Receive *>> owner_;      // per sender and message: the receive that took it
    uint64_t total_ = 0, received_ = 0;
    uint64_t clock_ = 0;
    size_t eager_ = 0;
    std::vector<size_t> small_capacities_;
    std::deque<std::unique_ptr<Receive>> all_; // every receive (requests stay in place)
    std::vector<Receive *> pending_;           // posted, not complete
    std::vector<std::vector<char>> spare_;     // full-capacity buffers to reuse, all kSentinel
    std::deque<Receive *> cancelled_;          // the last cancelled receives, their buffers kept

    // [from, from + span) of r's buffer (within its capacity) and the guard
    // past its end hold kSentinel.
    static bool untouched(const Receive &r, size_t from, size_t span)
    {
        const size_t to = std::min(r.capacity, from + std::min(span, r.capacity));
        const auto is_sentinel = [](char c) { return c == kSentinel; };
        return std::all_of(r.buf.begin() + ptrdiff_t(std::min(from, to)), r.buf.begin() + ptrdiff_t(to), is_sentinel) &&
               std::all_of(r.buf.begin() + ptrdiff_t(r.capacity), r.buf.end(), is_sentinel);
    }
    // Done with r's buffer (it kept `kept` bytes): back to the spares.
    void recycle(Receive &r, size_t kept)
    {
        if (r.capacity == kFullCapacity && r.buf.size() == kFullCapacity + kGuard) {
            std::fill(r.buf.begin(), r.buf.begin() + ptrdiff_t(std::min(r.capacity, kept + kLookPast)), kSentinel);
            spare_.push_back(std::move(r.buf));
        }
        r.buf = std::vector<char>();
    }
    // A cancelled receive: its buffer is checked now and once more when it
    // leaves the last kCancelledKept (or at the end).
    void keep_cancelled(Receive &r)
    {
        if (!untouched(r, 0, r.capacity))
            ADD_FAILURE() << where() << "the buffer of cancelled " << describe(r) << " was written";
        cancelled_.push_back(&r);
        if (cancelled_.size() > kCancelledKept)
            release_cancelled();
    }
    void release_cancelled()
    {
        Receive &old = *cancelled_.front();
        cancelled_.pop_front();
        if (!untouched(old, 0, old.capacity))
            ADD_FAILURE() << where() << "the buffer of cancelled " << describe(old) << " was written after the cancel";
        recycle(old, 0);
    }
};

size_t Receiver::pick_capacity()
{
    unsigned r = unsigned(rng_() % 100);
    if (r < 60)
        return kFullCapacity; // larger than the eager limit: offered when posted first for one source
    if (r < 82)
        return eager_; // takes every eager message, not offered
    return small_capacities_[rng_() % small_capacities_.size()];
}

bool Receiver::pick_target(int &sender, uint64_t &tag)
{
    std::vector<std::pair<int, uint64_t>> open;
    for (int s = 1; s < p_.size; s++) {
        for (uint32_t t = 0; t < kTagCount; t++) {
            const uint64_t want = kTagBase + t;
            size_t left = 0;
            for (size_t k = 0; k < plans_[size_t(s)].size(); k++)
                left += plans_[size_t(s)][k].tag == want && owner_[size_t(s)][k] == nullptr;
            size_t covered = 0;
            for (const Receive *r : pending_)
                covered += r->source == s && r->ignore == 0 && r->tag == want;
            if (left > covered)
                open.emplace_back(s, want);
        }
    }
    if (open.empty())
        return false;
    const auto &pick = open[rng_() % open.size()];
    sender = pick.first;
    tag = pick.second;
    return true;
}

void Receiver::choose_envelope(int sender, uint64_t tag, int &source, uint64_t &want, uint64_t &ignore)
{
    unsigned r = unsigned(rng_() % 100);
    source = r < 55 || (r >= 80 && r < 90) ? sender : LLC_ANY_SOURCE; // specific, any-source, any-tag, both
    ignore = r >= 80 ? kAnyTagIgnore : 0;
    want = tag;
}

Receive &Receiver::new_receive(size_t capacity)
{
    auto r = std::make_unique<Receive>();
    r->capacity = capacity;
    if (capacity == kFullCapacity && !spare_.empty()) {
        r->buf = std::move(spare_.back()); // all kSentinel again
        spare_.pop_back();
    } else {
        r->buf.assign(capacity + kGuard, kSentinel);
    }
    r->id = all_.size();
    r->req.user = r.get();
    r->req.cb = [](llc_treq_t *req) { static_cast<Receive *>(req->user)->done = true; };
    all_.push_back(std::move(r));
    return *all_.back();
}

void Receiver::post()
{
    int sender = 0;
    uint64_t tag = 0;
    if (!pick_target(sender, tag))
        return;
    int source = 0;
    uint64_t want = 0, ignore = 0;
    choose_envelope(sender, tag, source, want, ignore);
    Receive &r = new_receive(pick_capacity());
    r.source = r.check_source = source;
    r.tag = r.check_tag = want;
    r.ignore = r.check_ignore = ignore;
    r.posted_at = ++clock_;
    counts_.posted++;
    counts_.any_source += source == LLC_ANY_SOURCE;
    counts_.any_tag += ignore != 0;
    // a receive for one source names its sender's rank (the labels are the ranks), so it may be offered
    int rc = source == LLC_ANY_SOURCE
                 ? llc_trecv(ctx_, source, want, ignore, r.buf.data(), r.capacity, &r.req)
                 : llc_trecv_from(ctx_, source, source, want, ignore, r.buf.data(), r.capacity, &r.req);
    if (rc == LLC_OK)
        complete(r, r.req.status);
    else if (rc == LLC_INPROGRESS)
        pending_.push_back(&r);
    else
        ADD_FAILURE() << where() << "llc_trecv: " << llc_strerror(rc) << ": " << llc_last_error(ctx_);
}

void Receiver::probe(bool matched)
{
    int sender = 0;
    uint64_t tag = 0;
    if (!pick_target(sender, tag))
        return;
    int source = 0;
    uint64_t want = 0, ignore = 0;
    choose_envelope(sender, tag, source, want, ignore);
    counts_.probes++;
    llc_treq_t info{};
    int found = 0;
    llc_tmsg_t *msg = nullptr;
    int rc = matched ? llc_tmprobe(ctx_, source, want, ignore, &found, &msg, &info)
                     : llc_tprobe(ctx_, source, want, ignore, &found, &info);
    if (rc != LLC_OK) {
        ADD_FAILURE() << where() << (matched ? "llc_tmprobe: " : "llc_tprobe: ") << llc_strerror(rc);
        return;
    }
    if (!found)
        return;
    const uint64_t probe_at = ++clock_;
    if (int(info.source) != info.src_rank || info.src_rank < 1 || info.src_rank >= p_.size ||
        !plan_matches(PlannedMessage{info.tag, 0, false, false}, info.src_rank, source, want, ignore)) {
        ADD_FAILURE() << where() << "a probe for source " << source_name(source) << ", tag "
                      << tag_name(want, ignore) << " found a message from rank " << info.src_rank << " (label "
                      << info.source << ") with tag " << std::hex << info.tag;
        return;
    }
    // the receive that takes it: the message is unexpected, so it matches at once
    Receive &r = new_receive(pick_capacity());
    r.check_source = source;
    r.check_tag = want;
    r.check_ignore = ignore;
    r.posted_at = probe_at;
    int post_rc;
    if (matched) {
        counts_.mprobes_found++;
        r.how = Receive::MatchedProbe;
        r.source = source;
        r.tag = want;
        r.ignore = ignore;
        post_rc = llc_tmrecv(ctx_, msg, r.buf.data(), r.capacity, &r.req);
    } else {
        counts_.probes_found++;
        r.how = Receive::Probed;
        r.source = int(info.source);
        r.tag = info.tag;
        r.ignore = 0;
        r.posted_at = ++clock_;
        post_rc = llc_trecv_from(ctx_, r.source, info.src_rank, r.tag, 0, r.buf.data(), r.capacity, &r.req);
    }
    r.probed_length = info.length;
    if (post_rc != LLC_OK && !(post_rc == LLC_INPROGRESS && info.length > eager_)) {
        ADD_FAILURE() << where() << describe(r) << " for a probed message of " << info.length
                      << " bytes returned " << post_rc << ": an unexpected eager message completes it at once";
        if (post_rc == LLC_INPROGRESS)
            pending_.push_back(&r);
        return;
    }
    if (post_rc == LLC_OK)
        complete(r, r.req.status);
    else
        pending_.push_back(&r);
}

void Receiver::cancel(Receive &r)
{
    if (r.how == Receive::MatchedProbe || r.cancel_asked)
        return;
    int cancelled = -1;
    int rc = llc_tcancel(ctx_, &r.req, &cancelled);
    if (rc == LLC_INPROGRESS) {
        r.cancel_asked = true; // an offered receive: its callback says cancelled or gives the message
        counts_.cancel_pending++;
        return;
    }
    if (rc != LLC_OK) {
        ADD_FAILURE() << where() << "llc_tcancel: " << llc_strerror(rc);
        return;
    }
    if (!cancelled) {
        counts_.cancel_refused++; // matched already: it completes as usual
        return;
    }
    EXPECT_EQ(r.req.status, LLC_ERR_CANCELED) << where() << describe(r);
    r.cancelled = true;
    r.finished_at = ++clock_;
    counts_.cancelled++;
    pending_.erase(std::find(pending_.begin(), pending_.end(), &r));
    keep_cancelled(r);
}

bool Receiver::progress(unsigned n)
{
    for (; n > 0; n--) {
        int rc = llc_progress(ctx_, nullptr);
        if (rc != LLC_OK) {
            ADD_FAILURE() << where() << "llc_progress: " << llc_strerror(rc) << ": " << llc_last_error(ctx_);
            return false;
        }
    }
    reap();
    return true;
}

void Receiver::reap()
{
    for (size_t i = 0; i < pending_.size();) {
        Receive &r = *pending_[i];
        if (!r.done) {
            i++;
            continue;
        }
        pending_.erase(pending_.begin() + ptrdiff_t(i));
        complete(r, r.req.status);
    }
}

// A receive completed with status: which message did it get?
void Receiver::complete(Receive &r, int status)
{
    r.finished_at = ++clock_;
    if (status == LLC_ERR_CANCELED && r.cancel_asked) {
        r.cancelled = true;
        counts_.cancelled++;
        keep_cancelled(r);
        return;
    }
    const llc_treq_t &q = r.req;
    const int s = q.src_rank;
    if (status != LLC_OK && status != LLC_ERR_TRUNCATE) {
        ADD_FAILURE() << where() << describe(r) << " completed with " << llc_strerror(status);
        return;
    }
    if (s < 1 || s >= p_.size || q.source != uint32_t(s)) {
        ADD_FAILURE() << where() << describe(r) << " got a message from rank " << s << " with label " << q.source;
        return;
    }
    if (!plan_matches(PlannedMessage{q.tag, 0, false, false}, s, r.source, r.tag, r.ignore)) {
        ADD_FAILURE() << where() << describe(r) << " got a message with tag " << std::hex << q.tag
                      << " it does not match";
        return;
    }
    const size_t kept = std::min(q.length, r.capacity);
    EXPECT_EQ(q.received, kept) << where() << describe(r) << ", a message of " << q.length << " bytes";
    EXPECT_EQ(status, q.length > r.capacity ? LLC_ERR_TRUNCATE : LLC_OK)
        << where() << describe(r) << ", a message of " << q.length << " bytes";
    if (r.how == Receive::Probed || r.how == Receive::MatchedProbe) {
        EXPECT_EQ(q.length, r.probed_length) << where() << describe(r) << " did not get the probed message";
    }
    counts_.truncated += status == LLC_ERR_TRUNCATE;
    if (!untouched(r, kept, kLookPast))
        ADD_FAILURE() << where() << describe(r) << " has bytes written past the " << kept << " it kept";
    // The message: the first one of s with this tag and length, not yet
    // received, whose bytes these are.
    const auto &plan = plans_[size_t(s)];
    std::vector<char> expect;
    for (uint32_t k = 0; k < plan.size(); k++) {
        if (owner_[size_t(s)][k] || plan[k].tag != q.tag || plan[k].len != q.length)
            continue;
        expect.resize(plan[k].len);
        fill_pattern(expect.data(), expect.size(), payload_seed(seed_, s, k));
        if (kept && std::memcmp(expect.data(), r.buf.data(), kept) != 0)
            continue;
        owner_[size_t(s)][k] = &r;
        r.sender = s;
        r.index = k;
        received_++;
        recycle(r, kept);
        return;
    }
    ADD_FAILURE() << where() << describe(r) << " got " << q.length << " bytes from rank " << s << " with tag "
                  << tag_name(q.tag, 0) << " that are no message of rank " << s
                  << " not yet received (corrupted, duplicated or invented)";
}

void Receiver::run()
{
    const double deadline = now_s() + kDeadlineS;
    while (received_ < total_ && !failed()) {
        if (now_s() > deadline) {
            std::string posted;
            for (const Receive *r : pending_)
                posted += "\n  " + describe(*r) + (r->cancel_asked ? " (cancel asked)" : "");
            ADD_FAILURE() << where() << received_ << " of " << total_ << " messages received after " << kDeadlineS
                          << " s; posted:" << posted;
            return;
        }
        const unsigned action = unsigned(rng_() % 100);
        if (action < 30) {
            if (pending_.size() >= kMaxPending)
                cancel(*pending_.front()); // make room (the oldest may wait for a message taken by another)
            for (unsigned n = 1 + unsigned(rng_() % 4); n > 0 && pending_.size() < kMaxPending; n--)
                post();
        } else if (action < 37) {
            probe(false);
        } else if (action < 42) {
            probe(true);
        } else if (action < 47) {
            if (!pending_.empty())
                cancel(*pending_[rng_() % pending_.size()]);
        } else if (action < 51) {
            counts_.slept++;
            usleep(useconds_t(50 + rng_() % 1500)); // post late: messages wait in the ring, or as unexpected
        } else {
            if (!progress(1 + unsigned(rng_() % 16)))
                return;
        }
    }
    if (failed())
        return;
    // Everything arrived: what is still posted can only be cancelled.
    while (!pending_.empty() && !failed()) {
        Receive &r = *pending_.front();
        if (!r.cancel_asked)
            cancel(r);
        if (!pending_.empty() && pending_.front() == &r && !r.cancel_asked && !failed()) {
            ADD_FAILURE() << where() << describe(r) << " could not be cancelled with every message received";
            return;
        }
        if (now_s() > deadline + 5) {
            ADD_FAILURE() << where() << "offered receives still not cancelled";
            return;
        }
        if (!progress(1))
            return;
    }
    while (!cancelled_.empty())
        release_cancelled();
    for (const auto &r : all_) {
        if (r->cancelled) {
            EXPECT_FALSE(r->done && !r->cancel_asked) << where() << "the callback of cancelled " << describe(*r) << " ran";
        }
    }
    check_order();
}

void Receiver::check_order()
{
    for (const auto &rp : all_) {
        const Receive &r = *rp;
        if (r.cancelled || r.sender < 0)
            continue;
        const auto &plan = plans_[size_t(r.sender)];
        // (1) an earlier message of the same sender that r matches went to
        // a receive posted before r
        for (uint32_t j = 0; j < r.index; j++) {
            if (!plan_matches(plan[j], r.sender, r.check_source, r.check_tag, r.check_ignore))
                continue;
            const Receive *o = owner_[size_t(r.sender)][j];
            if (o && o->posted_at < r.posted_at)
                continue;
            ADD_FAILURE() << where() << describe(r) << " took message " << r.index << " of rank " << r.sender
                          << " (tag " << tag_name(plan[r.index].tag, 0) << ", " << plan[r.index].len
                          << " bytes), but its earlier message " << j << " (tag " << tag_name(plan[j].tag, 0)
                          << ", " << plan[j].len << " bytes), which it matches too, went to "
                          << (o ? describe(*o) : std::string("no receive")) << ": non-overtaking violated";
            return;
        }
    }
    // (2) a receive cancelled after a later-posted receive that it matches
    // had completed with its message was passed over
    for (const auto &cp : all_) {
        const Receive &c = *cp;
        if (!c.cancelled)
            continue;
        for (const auto &rp : all_) {
            const Receive &r = *rp;
            if (r.cancelled || r.sender < 0 || r.posted_at <= c.posted_at || r.finished_at >= c.finished_at)
                continue;
            if (plan_matches(plans_[size_t(r.sender)][r.index], r.sender, c.source, c.tag, c.ignore)) {
                ADD_FAILURE() << where() << describe(c) << " was cancelled at " << c.finished_at
                              << ", after message " << r.index << " of rank " << r.sender
                              << ", which it matches, had gone to the later " << describe(r) << " (completed at "
                              << r.finished_at << ")";
                return;
            }
        }
    }
}

// ------------------------------------------------------------ the variants

struct Variant {
    const char *name;
    std::vector<int> nodes; // all on node 0: one rank receives, the others send
    std::vector<std::pair<std::string, std::string>> env;
    uint32_t messages_per_sender;
    bool expect_queued; // a tiny ring: the senders' fast path must find it closed at times
};

// (GoogleTest names the variant, not its bytes)
void PrintTo(const Variant &v, std::ostream *os) { *os << v.name; }

std::vector<uint64_t> seeds_to_run()
{
    if (const char *s = getenv("LLC_INTERLEAVE_SEED"))
        return {std::strtoull(s, nullptr, 0)};
    return {1, 2, 3};
}

class TaggedInterleave : public ::testing::TestWithParam<Variant> {};

TEST_P(TaggedInterleave, RandomSchedulesKeepMpiMatchingOrder)
{
    const Variant &v = GetParam();
    SenderCounts sent_total;
    ReceiverCounts recv_total;
    for (uint64_t seed : seeds_to_run()) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: LLC_INTERLEAVE_SEED=" + std::to_string(seed) + ")");
        JobOptions o = job(v.nodes, 90);
        o.env = v.env;
        const double start = now_s();
        // the children's counts, summed through the harness's bootstrap
        auto failures = run_job(o, [&](TestProcess &p) {
            llc_context_t *ctx = init_or_fail(p);
            ASSERT_NE(ctx, nullptr);
            SenderCounts sc;
            ReceiverCounts rc;
            if (p.rank == 0) {
                Receiver r(p, ctx, seed, v.messages_per_sender, rc);
                r.run();
            } else {
                run_sender(p, ctx, seed, v.messages_per_sender, sc);
            }
            if (::testing::Test::HasFailure()) {
                p.depart(); // the others may wait for us for ever: leave without finalize
                return;
            }
            // (a sender's completed sends may still have records queued in
            // the library, the notice of a write into an offered receive: it
            // keeps progressing, in llc_finalize, before a bootstrap fence)
            llc_stats_t st{};
            llc_get_stats(ctx, &st);
            finalize_ok(ctx);
            if (p.rank == 0) {
            std::fprintf(stderr,
                         "[%s seed %" PRIu64 "] receiver stats: %" PRIu64 " unexpected, %" PRIu64
                         " offers sent, %" PRIu64 " used, %" PRIu64 " declined, %" PRIu64 " cma reads\n",
                         v.name, seed, st.tag_unexpected, st.tag_offers_sent, st.tag_offers_used,
                         st.tag_offers_declined, st.tag_cma_reads);
            }
            const uint64_t fast = job_sum(p, "fast", sc.fast), refused = job_sum(p, "refused", sc.fast_refused),
                           closed = job_sum(p, "closed", sc.fast_closed), lib = job_sum(p, "library", sc.library),
                           inprogress = job_sum(p, "inprogress", sc.inprogress);
            if (p.rank == 0) {
                std::fprintf(stderr,
                             "[%s seed %" PRIu64 "] senders: %" PRIu64 " fast, %" PRIu64 " refused (%" PRIu64
                             " closed), %" PRIu64 " llc_tsend (%" PRIu64 " in progress); receiver: %" PRIu64
                             " posted (%" PRIu64 " any source, %" PRIu64 " any tag), %" PRIu64 " truncated, %" PRIu64
                             " cancelled (%" PRIu64 " offered, %" PRIu64 " too late), %" PRIu64 "/%" PRIu64
                             " probes found, %" PRIu64 " matched probes, %" PRIu64 " pauses\n",
                             v.name, seed, fast, refused, closed, lib, inprogress, rc.posted, rc.any_source, rc.any_tag,
                             rc.truncated, rc.cancelled, rc.cancel_pending, rc.cancel_refused, rc.probes_found,
                             rc.probes, rc.mprobes_found, rc.slept);
                // a seed that drew none of these would not test them: the plan sizes make that unlikely
                EXPECT_GT(rc.truncated, 0u);
                EXPECT_GT(rc.any_source, 0u);
                EXPECT_GT(rc.any_tag, 0u);
                if (v.expect_queued) {
                    EXPECT_GT(closed, 0u) << "the tiny ring never made a fast-path send fall back";
                } else {
                    EXPECT_GT(fast, 0u) << "no message went by the inline fast path";
                }
            }
        });
        EXPECT_TRUE(failures.empty()) << join_lines(failures);
        std::fprintf(stderr, "[%s seed %" PRIu64 "] %.2f s\n", v.name, seed, now_s() - start);
        if (!failures.empty())
            break;
    }
}

const std::vector<int> kTwo = {0, 0}, kThree = {0, 0, 0};

INSTANTIATE_TEST_SUITE_P(
    Shm, TaggedInterleave,
    ::testing::Values(
        Variant{"TwoProcesses", kTwo, {}, 500, false},
        Variant{"ThreeProcesses", kThree, {}, 300, false},
        // 4 KiB rings: bursts fill them, fast-path sends fall back to queued ones
        Variant{"TinyRing", kThree, {{"LLC_SHM_RING_BYTES", "4096"}}, 300, true},
        // ... and eager messages from 4 KiB up go by single copy (CmaRts, stop-and-wait)
        Variant{"TinyRingLowCmaThreshold", kTwo, {{"LLC_SHM_RING_BYTES", "4096"}, {"LLC_CMA_THRESHOLD", "4096"}}, 500,
                true},
        Variant{"NoOffers", kThree, {{"LLC_TAG_OFFER", "0"}}, 300, false},
        // rendezvous by clear-to-send and data; offers carry their payload
        Variant{"NoCma", kThree, {{"LLC_CMA", "0"}}, 300, false},
        Variant{"NoCmaTinyRing", kTwo, {{"LLC_CMA", "0"}, {"LLC_SHM_RING_BYTES", "4096"}}, 300, true}),
    [](const ::testing::TestParamInfo<Variant> &info) { return std::string(info.param.name); });

} // namespace
