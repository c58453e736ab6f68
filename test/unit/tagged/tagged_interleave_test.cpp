// tagged_interleave_test.cpp - seeded random schedules of node-local tagged
// traffic, checked against MPI's matching rules.
//
// Senders send their receiver a planned sequence of messages: tags from a
// small set, sizes at every protocol boundary from 0 B to a megabyte (the
// inline fast path's limit, the eager limit, one byte either side), some
// synchronous, most non-synchronous ones through llc_fast_tsend.  The plan
// is a function of (seed, sender, receiver), so the receiver rebuilds it,
// and byte i of message k is a function of (seed, sender, receiver, k).  The
// receiver posts at random times receives of every kind (a specific source
// and tag, any source, any tag, both; llc_trecv_from, so some are offered to
// their sender), probes and matched probes, receives with buffers too small
// (LLC_ERR_TRUNCATE for that receive only), and cancels some of its posted
// receives; it sleeps now and then so that messages wait, and a tiny ring
// fills up so that senders fall back to the library's queued path.  Either
// rank 0 receives from all the others, or every rank sends to and receives
// from every other (its senders and its receiver stepped in a random order).
//
// What is checked: every message arrives exactly once with every byte (a
// truncated one: its prefix, and nothing past the buffer's end is written);
// a cancelled receive's buffer is never written; a probed message is the one
// the next receive for its envelope takes; and the order: a receive that
// took message k of sender s must not match an earlier message j < k of s
// that went to a receive posted after it, or was still unclaimed when it
// was posted (MPI's non-overtaking rule, which covers any-source and any-tag
// receives as well), and a receive cancelled after a later-posted matching
// receive had completed would have been passed over.  (Messages from
// different senders have no order to check: their arrival order is not seen.)
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
#include <functional>
#include <map>
#include <tuple>
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
constexpr size_t kMaxPending = 8;     // posted receives at most
constexpr size_t kLookPast = 4096;    // bytes past what a receive kept that are checked to be untouched
constexpr size_t kCancelledKept = 16; // buffers of cancelled receives checked again later
constexpr size_t kSendWindow = 24;
constexpr double kDeadlineS = 30; // a stream that has not finished by then is stuck

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
    return {{0, 4},         {1, 4},
            {7, 3},         {8, 3},
            {40, 4},        {41, 3},
            {32, 2}, // a message chunk's payload that fills its one cache line, and one byte more
            {33, 2},        {fast_max > 0 ? fast_max - 1 : 0, 2},
            {fast_max, 3},  {fast_max + 1, 2},
            {1024, 3},      {eager, 3},
            {eager + 1, 3}, {64 * 1024, 2},
            {kLargest, 1}};
}

std::vector<PlannedMessage> plan_of(uint64_t seed, int sender, int receiver, uint32_t count, size_t fast_max,
                                    size_t eager)
{
    std::mt19937_64 rng(mix64(seed * 1000003u + uint64_t(sender) * 1009u + uint64_t(receiver)));
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

uint64_t payload_seed(uint64_t seed, int sender, int receiver, uint32_t k)
{
    return mix64(seed * 0x100000001b3ull ^ (uint64_t(sender) << 48) ^ (uint64_t(receiver) << 32) ^ k);
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

// One sender's stream to one destination: act() is one step of its random
// schedule (a burst of sends, some progress, a pause).
class Sender {
public:
    Sender(TestProcess &p, llc_context_t *ctx, uint64_t seed, int dest, uint32_t count, SenderCounts &counts)
        : p_(p), ctx_(ctx), seed_(seed), dest_(dest), counts_(counts),
          plan_(
              plan_of(seed, p.rank, dest, count, fast_limit(ctx, dest), llc::context_of(ctx).config().tag_eager_bytes)),
          fast_(llc_fast_peer(ctx, dest, LLC_FAST_LAYOUT)),
          rng_(mix64(seed ^ (uint64_t(p.rank) << 48) ^ (uint64_t(dest) << 40) ^ 0x5e4d)),
          deadline_(now_s() + kDeadlineS)
    {
    }
    bool finished() const { return next_ == plan_.size() && inflight_.empty(); }
    // false: a failure was reported
    bool act();

private:
    std::string where() const
    {
        return "seed " + std::to_string(seed_) + ", rank " + std::to_string(p_.rank) + " to rank " +
               std::to_string(dest_) + ": ";
    }
    bool send_next();
    void reap();

    TestProcess &p_;
    llc_context_t *ctx_;
    uint64_t seed_;
    int dest_;
    SenderCounts &counts_;
    const std::vector<PlannedMessage> plan_;
    llc_fast_peer_t *fast_;
    std::mt19937_64 rng_;
    double deadline_;
    std::deque<std::unique_ptr<Send>> inflight_;
    uint32_t next_ = 0;
    unsigned phase_left_ = 0;
    bool trickle_ = false;
};

bool Sender::send_next()
{
    const PlannedMessage &m = plan_[next_];
    auto s = std::make_unique<Send>();
    s->index = next_;
    s->bytes.resize(m.len + 1);
    fill_pattern(s->bytes.data(), m.len, payload_seed(seed_, p_.rank, dest_, next_));
    next_++;
    const uint32_t label = uint32_t(p_.rank);
    if (m.try_fast && fast_) {
        if (llc_fast_tsend(fast_, label, m.tag, s->bytes.data(), m.len)) {
            counts_.fast++;
            return true;
        }
        counts_.fast_refused++;
        counts_.fast_closed += fast_->closed != 0;
    }
    s->req.cb = [](llc_treq_t *req) { static_cast<Send *>(req->user)->done = true; };
    s->req.user = s.get();
    int rc = llc_tsend(ctx_, dest_, label, m.tag, s->bytes.data(), m.len, m.sync ? LLC_TSEND_SYNC : 0, &s->req);
    counts_.library++;
    if (rc == LLC_OK) {
        EXPECT_EQ(s->req.status, LLC_OK) << where() << "send " << s->index;
        return true;
    }
    if (rc != LLC_INPROGRESS) {
        ADD_FAILURE() << where() << "llc_tsend of message " << s->index << " (" << m.len
                      << " bytes): " << llc_strerror(rc) << ": " << llc_last_error(ctx_);
        return false;
    }
    counts_.inprogress++;
    inflight_.push_back(std::move(s));
    return true;
}

void Sender::reap()
{
    for (auto it = inflight_.begin(); it != inflight_.end();) {
        Send &s = **it;
        if (!s.done) {
            ++it;
            continue;
        }
        EXPECT_EQ(s.req.status, LLC_OK) << where() << "send " << s.index;
        // the library is done with it: anything read from it now would be wrong
        std::fill(s.bytes.begin(), s.bytes.end(), char(0xee));
        it = inflight_.erase(it);
    }
}

bool Sender::act()
{
    if (now_s() > deadline_) {
        ADD_FAILURE() << where() << "sent " << next_ << " of " << plan_.size() << ", " << inflight_.size()
                      << " still in progress after " << kDeadlineS << " s";
        return false;
    }
    // Phases: bursts that run ahead of the receiver (messages wait as
    // unexpected, the ring fills), then a trickle that lets it post first.
    if (phase_left_ == 0) {
        trickle_ = rng_() % 2 == 0;
        phase_left_ = 10 + unsigned(rng_() % 60);
    }
    phase_left_--;
    const unsigned action = unsigned(rng_() % 100);
    if (next_ < plan_.size() && inflight_.size() < kSendWindow && action < 55) {
        // a burst without progress: the ring may fill, and the sends queue
        for (unsigned b = trickle_ ? 1 : 1 + unsigned(rng_() % 6); b > 0 && next_ < plan_.size(); b--)
            if (!send_next())
                return false;
    } else if (action < 93) {
        const double until = now_s() + (trickle_ ? double(rng_() % 3000) * 1e-6 : 0);
        for (unsigned n = 1 + unsigned(rng_() % 8); n > 0 || now_s() < until; n -= n > 0) {
            int rc = llc_progress(ctx_, nullptr);
            if (rc != LLC_OK) {
                ADD_FAILURE() << where() << "llc_progress: " << llc_strerror(rc) << ": " << llc_last_error(ctx_);
                return false;
            }
        }
    } else {
        usleep(useconds_t(rng_() % 400));
    }
    reap();
    return !::testing::Test::HasFailure();
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
    int check_source = LLC_ANY_SOURCE;        // the envelope the order check holds it to: a probe's, for the
    uint64_t check_tag = 0, check_ignore = 0; // receive that takes the probed message
    size_t probed_length = 0;                 // Probed: the length the probe reported
    uint64_t posted_at = 0, finished_at = 0;  // the receiver's event clock
    bool done = false;                        // the callback ran
    uint64_t *clock = nullptr;                // the receiver's event clock, read by the callback
    bool cancel_asked = false;                // llc_tcancel returned LLC_INPROGRESS (an offered receive)
    bool cancelled = false;
    int sender = -1; // the message it got: sender and number
    uint32_t index = 0;
    size_t id = 0;
    // Kept fewer than kIdentifying bytes: its bytes may fit several messages of
    // the sender with its tag and length (all of 0 bytes do), so which one it
    // got is settled at the end (Receiver::settle_ambiguous); these are its bytes.
    bool ambiguous = false;
    std::string few_bytes;
};

constexpr size_t kIdentifying = 16; // kept bytes that tell a message from the others

struct ReceiverCounts {
    uint64_t posted = 0, any_source = 0, any_tag = 0, truncated = 0, cancelled = 0, cancel_refused = 0,
             cancel_pending = 0, probes = 0, probes_found = 0, mprobes_found = 0, slept = 0;
};

class Receiver {
public:
    // sources: the ranks that send to this one, count messages each
    Receiver(TestProcess &p, llc_context_t *ctx, uint64_t seed, std::vector<int> sources, uint32_t count,
             ReceiverCounts &counts)
        : p_(p), ctx_(ctx), seed_(seed), counts_(counts), sources_(std::move(sources)),
          rng_(mix64(seed ^ (uint64_t(p.rank) << 40) ^ 0x7ec0)), deadline_(now_s() + kDeadlineS)
    {
        const size_t eager = llc::context_of(ctx).config().tag_eager_bytes;
        plans_.resize(size_t(p.size));
        owner_.resize(size_t(p.size));
        for (int s : sources_) {
            plans_[size_t(s)] = plan_of(seed, s, p.rank, count, fast_limit(ctx, s), eager);
            owner_[size_t(s)].assign(count, nullptr);
            total_ += count;
        }
        small_capacities_ = {0, 1, 8, 39, 1000, fast_limit(ctx, sources_.front()), eager - 1, 65535};
        poll_ = llc_fast_poll(ctx, LLC_FAST_LAYOUT);
        eager_ = eager;
    }

    // Every message has arrived.
    bool finished() const { return received_ == total_; }
    // One step of the random schedule (posts, probes, cancels, a pause, some
    // progress); false: a failure was reported.
    bool act();
    // Once finished: cancel what is still posted and check the order.
    void finish();

private:
    bool failed() const { return ::testing::Test::HasFailure(); }
    bool is_source(int s) const { return std::find(sources_.begin(), sources_.end(), s) != sources_.end(); }
    std::string where() const
    {
        return "seed " + std::to_string(seed_) + " (replay: LLC_INTERLEAVE_SEED=" + std::to_string(seed_) + "), rank " +
               std::to_string(p_.rank) + " receiving: ";
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
    // r (ambiguous) could have got message k of its sender
    bool fits(const Receive &r, uint32_t k) const;
    // Give r (its sender set) a message that fits it and passes check,
    // moving ambiguous receives to others where needed; false if none.
    bool assign(Receive &r, std::vector<bool> &visited, const std::function<bool(uint32_t)> &check);
    void settle_ambiguous();
    bool plan_matches(const PlannedMessage &m, int sender, int source, uint64_t tag, uint64_t ignore) const
    {
        return (source == LLC_ANY_SOURCE || source == sender) && ((m.tag ^ tag) & ~ignore) == 0;
    }
    std::string describe(const Receive &r) const
    {
        std::ostringstream o;
        o << "receive #" << r.id << " ("
          << (r.how == Receive::Posted   ? "posted"
              : r.how == Receive::Probed ? "after a probe"
                                         : "matched probe")
          << ", source " << source_name(r.source) << ", tag " << tag_name(r.tag, r.ignore) << ", " << r.capacity
          << " bytes, posted at " << r.posted_at << ")";
        return o.str();
    }

    TestProcess &p_;
    llc_context_t *ctx_;
    uint64_t seed_;
    ReceiverCounts &counts_;
    const std::vector<int> sources_;
    std::mt19937_64 rng_;
    double deadline_;
    llc_fast_poll_t *poll_ = nullptr;
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
    for (int s : sources_) {
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
    r->clock = &clock_;
    // (the callback reads the clock itself: any llc_progress call of the
    // process runs it, a sender's too, before the receiver looks)
    r->req.cb = [](llc_treq_t *req) {
        Receive *self = static_cast<Receive *>(req->user);
        self->done = true;
        self->finished_at = ++*self->clock;
    };
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
    if (int(info.source) != info.src_rank || !is_source(info.src_rank) ||
        !plan_matches(PlannedMessage{info.tag, 0, false, false}, info.src_rank, source, want, ignore)) {
        ADD_FAILURE() << where() << "a probe for source " << source_name(source) << ", tag " << tag_name(want, ignore)
                      << " found a message from rank " << info.src_rank << " (label " << info.source << ") with tag "
                      << std::hex << info.tag;
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
        ADD_FAILURE() << where() << describe(r) << " for a probed message of " << info.length << " bytes returned "
                      << post_rc << ": an unexpected eager message completes it at once";
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
        // the inline look at the rings leaves out polls while nothing has arrived
        if (poll_ && llc_fast_poll_skip(poll_))
            continue;
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
    if (!r.done)
        r.finished_at = ++clock_; // at once (LLC_OK): now; by callback: when it ran
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
    if (!is_source(s) || q.source != uint32_t(s)) {
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
    // received, whose bytes these are.  One with few bytes kept may be any
    // of several; one with enough bytes is one message.  A message that
    // fits is taken from a receive with few bytes if that one can have
    // another message that fits it (an augmenting path: which of the alike
    // messages each got is settled at the end).
    r.sender = s;
    r.ambiguous = kept < kIdentifying;
    if (r.ambiguous)
        r.few_bytes.assign(r.buf.data(), kept);
    else
        r.few_bytes.assign(r.buf.data(), kIdentifying); // (fits() compares these; the rest below)
    const auto &plan = plans_[size_t(s)];
    std::vector<char> expect;
    auto whole_bytes_match = [&](uint32_t k) {
        if (r.ambiguous)
            return true;
        expect.resize(plan[k].len);
        fill_pattern(expect.data(), expect.size(), payload_seed(seed_, s, p_.rank, k));
        return std::memcmp(expect.data(), r.buf.data(), kept) == 0;
    };
    std::vector<bool> visited(plan.size(), false);
    if (assign(r, visited, whole_bytes_match)) {
        received_++;
        recycle(r, kept);
        return;
    }
    r.sender = -1;
    ADD_FAILURE() << where() << describe(r) << " got " << q.length << " bytes from rank " << s << " with tag "
                  << tag_name(q.tag, 0) << " that are no message of rank " << s
                  << " not yet received (corrupted, duplicated or invented)";
}

bool Receiver::assign(Receive &r, std::vector<bool> &visited, const std::function<bool(uint32_t)> &check)
{
    auto &owners = owner_[size_t(r.sender)];
    for (int pass = 0; pass < 2; pass++) { // a free message first, then one an ambiguous receive may give up
        for (uint32_t k = 0; k < owners.size(); k++) {
            if (visited[k] || !fits(r, k) || !check(k))
                continue;
            Receive *holder = owners[k];
            if (pass == 0 && holder)
                continue;
            if (holder && !holder->ambiguous)
                continue;
            visited[k] = true;
            if (holder && !assign(*holder, visited, [](uint32_t) { return true; }))
                continue;
            owners[k] = &r;
            r.index = k;
            return true;
        }
    }
    return false;
}

bool Receiver::fits(const Receive &r, uint32_t k) const
{
    const PlannedMessage &m = plans_[size_t(r.sender)][k];
    if (m.tag != r.req.tag || m.len != r.req.length)
        return false;
    // (whole words of a pattern do not depend on its length: 24 bytes give the first 16)
    std::vector<char> head(m.len < 24 ? m.len : 24);
    fill_pattern(head.data(), head.size(), payload_seed(seed_, r.sender, p_.rank, k));
    return r.few_bytes.empty() || std::memcmp(head.data(), r.few_bytes.data(), r.few_bytes.size()) == 0;
}

void Receiver::settle_ambiguous()
{
    // Receives that got the same bytes of the same sender, tag and length
    // cannot be told apart by what they got: give them their messages in
    // posting order (if any assignment keeps the order rule, this one does).
    std::map<std::tuple<int, uint64_t, size_t, std::string>, std::vector<Receive *>> alike;
    for (const auto &r : all_)
        if (r->ambiguous && r->sender >= 0 && !r->cancelled)
            alike[std::make_tuple(r->sender, r->req.tag, r->req.length, r->few_bytes)].push_back(r.get());
    for (auto &group : alike) {
        std::vector<Receive *> &rs = group.second;
        std::vector<uint32_t> indices;
        for (Receive *r : rs)
            indices.push_back(r->index);
        std::sort(indices.begin(), indices.end());
        std::sort(rs.begin(), rs.end(), [](const Receive *a, const Receive *b) { return a->posted_at < b->posted_at; });
        for (size_t i = 0; i < rs.size(); i++) {
            rs[i]->index = indices[i];
            owner_[size_t(rs[i]->sender)][indices[i]] = rs[i];
        }
    }
}

bool Receiver::act()
{
    {
        if (now_s() > deadline_) {
            std::string posted;
            for (const Receive *r : pending_)
                posted += "\n  " + describe(*r) + (r->cancel_asked ? " (cancel asked)" : "");
            ADD_FAILURE() << where() << received_ << " of " << total_ << " messages received after " << kDeadlineS
                          << " s; posted:" << posted;
            return false;
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
                return false;
        }
    }
    return !failed();
}

void Receiver::finish()
{
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
        if (now_s() > deadline_ + 5) {
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
            EXPECT_FALSE(r->done && !r->cancel_asked)
                << where() << "the callback of cancelled " << describe(*r) << " ran";
        }
    }
    check_order();
}

void Receiver::check_order()
{
    settle_ambiguous();
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
                          << " bytes), but its earlier message " << j << " (tag " << tag_name(plan[j].tag, 0) << ", "
                          << plan[j].len << " bytes), which it matches too, went to "
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
                ADD_FAILURE() << where() << describe(c) << " was cancelled at " << c.finished_at << ", after message "
                              << r.index << " of rank " << r.sender << ", which it matches, had gone to the later "
                              << describe(r) << " (completed at " << r.finished_at << ")";
                return;
            }
        }
    }
}

// ------------------------------------------------------------ the variants

struct Variant {
    const char *name;
    std::vector<int> nodes; // all on node 0
    std::vector<std::pair<std::string, std::string>> env;
    uint32_t messages_per_pair;
    bool all_to_all;    // false: rank 0 receives, the others send to it; true: every rank to every other
    bool expect_queued; // a tiny ring: the senders' fast path must find it closed at times
};

// One process's part: its senders and its receiver, each a step at a time
// in a random order, then the receiver's final checks.
void run_process(TestProcess &p, llc_context_t *ctx, uint64_t seed, const Variant &v, SenderCounts &sc,
                 ReceiverCounts &rc)
{
    std::vector<std::unique_ptr<Sender>> senders;
    std::vector<int> sources;
    for (int other = 0; other < p.size; other++) {
        if (other == p.rank)
            continue;
        if (v.all_to_all || p.rank != 0) {
            if (v.all_to_all || other == 0)
                senders.push_back(std::make_unique<Sender>(p, ctx, seed, other, v.messages_per_pair, sc));
        }
        if (v.all_to_all || p.rank == 0)
            sources.push_back(other);
    }
    std::unique_ptr<Receiver> receiver;
    if (!sources.empty())
        receiver = std::make_unique<Receiver>(p, ctx, seed, sources, v.messages_per_pair, rc);
    std::mt19937_64 rng(mix64(seed ^ (uint64_t(p.rank) << 32) ^ 0x70e5));
    for (;;) {
        std::vector<Sender *> sending;
        for (auto &s : senders)
            if (!s->finished())
                sending.push_back(s.get());
        const bool receiving = receiver && !receiver->finished();
        if (sending.empty() && !receiving)
            break;
        const size_t pick = size_t(rng() % (sending.size() + (receiving ? 1 : 0)));
        if (!(pick < sending.size() ? sending[pick]->act() : receiver->act()))
            return;
    }
    if (receiver)
        receiver->finish();
}

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
            run_process(p, ctx, seed, v, sc, rc);
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
            // the job's totals, through the harness's bootstrap
            auto sum = [&p](const char *key, uint64_t mine) { return job_sum(p, key, mine); };
            const uint64_t fast = sum("fast", sc.fast), refused = sum("refused", sc.fast_refused),
                           closed = sum("closed", sc.fast_closed), lib = sum("library", sc.library),
                           inprogress = sum("inprogress", sc.inprogress), posted = sum("posted", rc.posted),
                           any_source = sum("any_source", rc.any_source), any_tag = sum("any_tag", rc.any_tag),
                           truncated = sum("truncated", rc.truncated), cancelled = sum("cancelled", rc.cancelled),
                           cancel_pending = sum("cancel_pending", rc.cancel_pending),
                           cancel_refused = sum("cancel_refused", rc.cancel_refused), probes = sum("probes", rc.probes),
                           probes_found = sum("probes_found", rc.probes_found),
                           mprobes_found = sum("mprobes_found", rc.mprobes_found),
                           unexpected = sum("unexpected", st.tag_unexpected),
                           offers_sent = sum("offers_sent", st.tag_offers_sent),
                           offers_used = sum("offers_used", st.tag_offers_used),
                           cma_reads = sum("cma_reads", st.tag_cma_reads);
            if (p.rank == 0) {
                std::fprintf(stderr,
                             "[%s seed %" PRIu64 "] sends: %" PRIu64 " fast, %" PRIu64 " refused (%" PRIu64
                             " closed), %" PRIu64 " llc_tsend (%" PRIu64 " in progress); receives: %" PRIu64
                             " posted (%" PRIu64 " any source, %" PRIu64 " any tag), %" PRIu64 " truncated, %" PRIu64
                             " cancelled (%" PRIu64 " offered, %" PRIu64 " too late), %" PRIu64 "/%" PRIu64
                             " probes found, %" PRIu64 " matched probes; %" PRIu64 " unexpected, %" PRIu64
                             " offers (%" PRIu64 " used), %" PRIu64 " cma reads\n",
                             v.name, seed, fast, refused, closed, lib, inprogress, posted, any_source, any_tag,
                             truncated, cancelled, cancel_pending, cancel_refused, probes_found, probes, mprobes_found,
                             unexpected, offers_sent, offers_used, cma_reads);
                // a seed that drew none of these would not test them: the plan sizes make that unlikely
                EXPECT_GT(truncated, 0u);
                EXPECT_GT(any_source, 0u);
                EXPECT_GT(any_tag, 0u);
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
        Variant{"TwoProcesses", kTwo, {}, 500, false, false}, Variant{"ThreeProcesses", kThree, {}, 300, false, false},
        // 4 KiB rings: bursts fill them, fast-path sends fall back to queued ones
        Variant{"TinyRing", kThree, {{"LLC_SHM_RING_BYTES", "4096"}}, 300, false, true},
        // ... and a CMA threshold of 4 KiB (large active messages by the tagged layer's rendezvous)
        Variant{"TinyRingLowCmaThreshold",
                kTwo,
                {{"LLC_SHM_RING_BYTES", "4096"}, {"LLC_CMA_THRESHOLD", "4096"}},
                300,
                false,
                true},
        Variant{"NoOffers", kThree, {{"LLC_TAG_OFFER", "0"}}, 300, false, false},
        // rendezvous by clear-to-send and data; offers carry their payload
        Variant{"NoCma", kThree, {{"LLC_CMA", "0"}}, 300, false, false},
        Variant{"NoCmaTinyRing", kTwo, {{"LLC_CMA", "0"}, {"LLC_SHM_RING_BYTES", "4096"}}, 150, false, true},
        // every rank sends to and receives from every other: application
        // messages and protocol records share every ring in both directions
        Variant{"AllToAll", kThree, {}, 150, true, false},
        Variant{"AllToAllTinyRing", kThree, {{"LLC_SHM_RING_BYTES", "4096"}}, 150, true, true},
        Variant{"AllToAllNoCmaTinyRing", kThree, {{"LLC_CMA", "0"}, {"LLC_SHM_RING_BYTES", "4096"}}, 100, true, true},
        // the inline path ends at 1 KiB, far below the eager limit; queued
        // eager sends above it are not copied (the sender's buffer is read
        // until the send completes, then scribbled over)
        Variant{"AllToAllSmallCopyMax",
                kThree,
                {{"LLC_COPY_MAX", "1024"}, {"LLC_SHM_RING_BYTES", "4096"}},
                150,
                true,
                true},
        // eager messages up to 64 KiB, sixteen times the ring: streamed in
        // pieces, held as unexpected in buffers of their own
        Variant{"AllToAllBigEagerTinyRing",
                kThree,
                {{"LLC_TAG_EAGER_BYTES", "65536"}, {"LLC_SHM_RING_BYTES", "4096"}},
                120,
                true,
                true}),
    [](const ::testing::TestParamInfo<Variant> &info) { return std::string(info.param.name); });

} // namespace
