// verbs_keyed_read.cpp - VerbsEngine's keyed reads (CapKeyedRead, see
// verbs_engine.hpp): the tagged layer's large messages to a verbs peer.
//
// Sender (expose): each payload piece is pinned through the RegCache and
// described as a KeyedSpan (address, length, rkey); the pins go back when
// the Exposure is destroyed (the tagged layer does so on the receiver's Fin
// or Fail, or when the peer fails).  Receiver (read_keyed): a landing buffer
// registered through the same cache (idle ones kept up to
// landing_keep_bytes), RDMA READs of at most read_chunk bytes (on the RC QP
// the sender connected to us, else on the DC initiator of the sender's rank,
// to its DCT), then the callback with the bytes, or with an error when a
// READ failed or the engine did.  What travels on the wire around the READs
// (AmRts, Fin, Fail, Cts + Data) and the order of the pair's later records
// are the tagged layer's (tagged_am.cpp).
#include "transport/verbs/verbs_engine.hpp"

#include "core/errors.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace llc {

namespace {

constexpr size_t kLandingAlign = 4096;

// The sender's pins on the pieces it exposed.
class VerbsExposure final : public Exposure {
public:
    std::vector<RegHandle> pins;
};

} // namespace

std::unique_ptr<Exposure> VerbsEngine::expose(const llc_iov_t *iov, int iovcnt, std::string *why)
{
    if (!reg_cache_) {
        *why = "keyed reads are off (no registration cache)";
        return nullptr;
    }
    if (iovcnt <= 0 || size_t(iovcnt) > params_.max_spans) {
        keyed_.expose_failures++;
        *why = std::to_string(iovcnt) + " pieces (at most " + std::to_string(params_.max_spans) + " are exposed)";
        return nullptr;
    }
    auto e = std::make_unique<VerbsExposure>();
    for (int i = 0; i < iovcnt; i++) {
        RegHandle h = reg_cache_->acquire(iov[i].base, iov[i].len);
        if (!h) {
            keyed_.expose_failures++; // (the pins taken so far go back with e)
            *why = "registering " + std::to_string(iov[i].len) + " bytes failed: " + reg_cache_->last_error();
            return nullptr;
        }
        e->spans.push_back(
            KeyedSpan{uint64_t(reinterpret_cast<uintptr_t>(iov[i].base)), uint64_t(iov[i].len), h.rkey(), 0});
        e->pins.push_back(std::move(h));
    }
    keyed_.exposed++;
    return e;
}

bool VerbsEngine::read_keyed(int src, const KeyedSpan *spans, size_t n, uint64_t len, KeyedReadDone done,
                             std::string *why)
{
    if (failed_) {
        *why = failure_;
        return false;
    }
    if (!reg_cache_) {
        *why = "keyed reads are off here (LLC_VERBS_RNDV_BYTES=0)";
        return false;
    }
    auto r = std::make_unique<KeyedRead>();
    r->rank = src;
    r->spans.assign(spans, spans + n);
    r->len = len;
    r->done = std::move(done);
    r->buf = landing_get(size_t(len), &r->cap);
    if (r->buf)
        r->pin = reg_cache_->acquire(r->buf, r->cap);
    if (!r->buf || !r->pin) {
        *why = "no registered landing buffer for " + std::to_string(len) + " bytes (" +
               (r->buf ? reg_cache_->last_error() : std::string("out of memory")) + ")";
        if (r->buf)
            landing_put(r->buf, r->cap);
        return false;
    }
    Peer &p = peer_for(src);
    resolve(p);
    p.keyed_reads++;
    keyed_.reads_started++;
    KeyedRead *raw = r.get();
    keyed_reads_.emplace(raw, std::move(r));
    post_reads(p, *raw);
    return true;
}

void VerbsEngine::post_reads(Peer &p, KeyedRead &r)
{
    const bool rc = p.rc_rx_qp != nullptr;
    const size_t qp = rc ? fabric_.data_qps() + 1 : size_t(p.rank) % fabric_.data_qps();
    const uint32_t depth =
        rc ? std::min(fabric_.send_queue_depth(), fabric_.rc_cq_depth()) : fabric_.send_queue_depth();
    while (!failed_ && r.error.empty() && r.next_span < r.spans.size()) {
        const KeyedSpan &span = r.spans[r.next_span];
        if (span.len == 0) {
            r.next_span++;
            continue;
        }
        if (qp_in_flight_[qp] >= depth) {
            if (!r.queued) {
                r.queued = true;
                read_queue_.push_back(&r);
            }
            return;
        }
        VerbsRead rd;
        rd.id = kKeyedReadBit | next_read_id_++;
        rd.len = uint32_t(std::min<uint64_t>(params_.read_chunk, span.len - r.next_off));
        rd.remote = span.addr + r.next_off;
        rd.rkey = span.key;
        rd.local = r.buf + r.dest_off;
        rd.lkey = r.pin.lkey();
        int err = rc ? fabric_.post_read_rc(p.rc_rx_qp, rd) : fabric_.post_read(qp, p.route, p.addr, rd);
        if (err != 0) {
            r.error = errno_message("posting an RDMA READ from " + describe(p.rank), err);
            break;
        }
        reads_[rd.id] = ReadRef{&r, rd.len};
        qp_in_flight_[qp]++;
        r.reads_in_flight++;
        keyed_.reads++;
        r.next_off += rd.len;
        r.dest_off += rd.len;
        if (r.next_off == span.len) {
            r.next_span++;
            r.next_off = 0;
        }
    }
    r.queued = false;
    if (r.reads_in_flight == 0)
        ready_.push_back(&r); // nothing in flight (a READ could not be posted): progress() finishes it
}

void VerbsEngine::flush_reads()
{
    size_t n = read_queue_.size();
    while (n-- > 0 && !failed_ && !read_queue_.empty()) {
        KeyedRead *r = read_queue_.front();
        read_queue_.pop_front();
        r->queued = false;
        if (std::unique_ptr<Peer> *slot = peers_.peek(r->rank))
            if (*slot) // (not evictable while it has keyed reads)
                post_reads(**slot, *r);
    }
}

void VerbsEngine::on_read_done(uint64_t id, const VerbsCompletion &wc)
{
    auto it = reads_.find(id);
    if (it == reads_.end())
        return;
    KeyedRead *r = it->second.r;
    const uint32_t len = it->second.len;
    reads_.erase(it);
    if (r->reads_in_flight > 0)
        r->reads_in_flight--;
    if (!wc.ok) {
        if (r->error.empty())
            r->error = "an RDMA READ from " + describe(r->rank) + " failed (" + wc.status + ")";
    } else {
        keyed_.bytes_read += len;
    }
    if (r->reads_in_flight > 0)
        return;
    if (r->error.empty() && r->next_span < r->spans.size()) {
        if (!r->queued)
            if (std::unique_ptr<Peer> *slot = peers_.peek(r->rank))
                if (*slot)
                    post_reads(**slot, *r);
        return;
    }
    finish_read(r);
}

void VerbsEngine::finish_read(KeyedRead *r)
{
    auto it = keyed_reads_.find(r);
    if (it == keyed_reads_.end())
        return;
    std::unique_ptr<KeyedRead> owned = std::move(it->second);
    keyed_reads_.erase(it);
    // (a read that failed while queued for more READs is still named there)
    read_queue_.erase(std::remove(read_queue_.begin(), read_queue_.end(), r), read_queue_.end());
    ready_.erase(std::remove(ready_.begin(), ready_.end(), r), ready_.end());
    if (std::unique_ptr<Peer> *slot = peers_.peek(owned->rank))
        if (*slot && (*slot)->keyed_reads > 0)
            (*slot)->keyed_reads--;
    KeyedReadResult res;
    if (owned->error.empty()) {
        keyed_.reads_completed++;
        res.data = owned->buf;
        res.len = size_t(owned->len);
    } else {
        keyed_.read_errors++;
        res.error = owned->error;
    }
    KeyedReadDone done = std::move(owned->done);
    // The landing buffer is in use until the callback returns (a handler
    // reads it); it goes back to the idle ones afterwards, also when the
    // callback throws.
    struct GiveBack {
        VerbsEngine &e;
        KeyedRead &r;
        ~GiveBack()
        {
            r.pin.release();
            e.landing_put(r.buf, r.cap);
        }
    } give_back{*this, *owned};
    if (done)
        done(res);
}

void VerbsEngine::fail_reads()
{
    // The engine failed: every keyed read ends with the error, from the
    // next progress() (no READ is posted any more, and none starts).
    read_queue_.clear();
    reads_.clear();
    ready_.clear();
    for (auto &e : keyed_reads_) {
        if (e.second->error.empty())
            e.second->error = "the verbs transport failed: " + failure_;
        ready_.push_back(e.first);
    }
}

bool VerbsEngine::finish_ready_reads()
{
    bool did = false;
    while (!ready_.empty()) {
        KeyedRead *r = ready_.front();
        ready_.pop_front();
        finish_read(r);
        did = true;
    }
    return did;
}

char *VerbsEngine::landing_get(size_t len, size_t *cap)
{
    // The smallest idle buffer that holds len and is at most twice its size.
    auto it = landing_idle_.lower_bound(len);
    if (it != landing_idle_.end() && it->first <= 2 * len + kLandingAlign) {
        char *b = it->second;
        *cap = it->first;
        landing_idle_bytes_ -= it->first;
        landing_idle_.erase(it);
        return b;
    }
    size_t c = (len + kLandingAlign - 1) / kLandingAlign * kLandingAlign;
    if (c == 0)
        c = kLandingAlign;
    void *p = nullptr;
    if (posix_memalign(&p, kLandingAlign, c) != 0)
        return nullptr;
    landing_all_[static_cast<char *>(p)] = c;
    landing_bytes_ += c;
    keyed_.landing_allocs++;
    *cap = c;
    return static_cast<char *>(p);
}

void VerbsEngine::landing_put(char *buf, size_t cap)
{
    landing_idle_.emplace(cap, buf);
    landing_idle_bytes_ += cap;
    // Beyond the bound, the largest idle buffers go: their registrations
    // first (invalidate: the memory is about to be freed), then the memory.
    while (landing_idle_bytes_ > params_.landing_keep_bytes && !landing_idle_.empty()) {
        auto last = std::prev(landing_idle_.end());
        char *b = last->second;
        size_t c = last->first;
        landing_idle_.erase(last);
        landing_idle_bytes_ -= c;
        if (reg_cache_)
            reg_cache_->invalidate(b, c);
        landing_all_.erase(b);
        landing_bytes_ -= c;
        std::free(b);
    }
}

void VerbsEngine::export_stats(llc_stats_t &st) const
{
    st.verbs_rndv_sends = keyed_.exposed;
    st.verbs_rndv_send_errors = keyed_.read_errors;
    st.verbs_rndv_recvs = keyed_.reads_completed;
    st.verbs_rndv_bytes_read = keyed_.bytes_read;
    st.verbs_rndv_fallbacks = keyed_.expose_failures;
    st.verbs_rndv_held_records = 0; // (the tagged layer holds records now: held_records.hpp)
    if (reg_cache_) {
        const RegCacheStats &c = reg_cache_->stats();
        st.reg_cache_hits = c.hits;
        st.reg_cache_misses = c.misses;
        st.reg_cache_evictions = c.evictions;
        st.reg_cache_overflows = c.overflows;
        st.reg_cache_entries = reg_cache_->size();
        st.reg_cache_pinned = reg_cache_->pinned();
    }
}

} // namespace llc
