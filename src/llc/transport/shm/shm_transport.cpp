// shm_transport.cpp - ring streaming, liveness, finalize draining.
#include "transport/shm/shm_transport.hpp"

#include "core/context.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

namespace llc {

// The inline fast path (llc_fast.h) writes the same message chunks.
static_assert(sizeof(TagChunkHeader) == sizeof(llc_ring_tag_header_t) &&
                  offsetof(TagChunkHeader, source) == offsetof(llc_ring_tag_header_t, source) &&
                  offsetof(TagChunkHeader, seq) == offsetof(llc_ring_tag_header_t, seq),
              "llc_fast.h's tag header is TagChunkHeader");

namespace {
// How often progress() looks whether the local peers' processes still exist
// (one poll() on their pidfds): the time to notice a peer that died.
constexpr uint64_t kLivenessPeriodUs = 50000;
} // namespace

ShmTransport::ShmTransport(Context &ctx, const std::string &job_id, const std::vector<int> &local_ranks)
    : ctx_(ctx), local_ranks_(local_ranks), job_id_(job_id)
{
    if (!std::is_sorted(local_ranks_.begin(), local_ranks_.end()))
        throw Error(LLC_ERR_INVALID, "internal error: the node's ranks are not in ascending order");
    auto me = std::lower_bound(local_ranks_.begin(), local_ranks_.end(), ctx_.rank());
    my_local_index_ = uint32_t(me - local_ranks_.begin());
    own_ = ShmSegment::create(ShmSegment::name_for(job_id_, ctx_.rank()), ctx_.rank(),
                              uint32_t(local_ranks_.size()), ctx_.config().shm_ring_bytes);
    const Config &cfg = ctx_.config();
    caps_ = shm_caps(cfg);
}

TransportCaps shm_caps(const Config &cfg)
{
    // inline_ready's bound: a payload the tagged layer's rendezvous would
    // carry (Tagged::am_by_rendezvous) never comes here
    size_t inline_max = cfg.copy_max;
    if (cfg.cma_enabled)
        inline_max = std::min<size_t>(inline_max, cfg.cma_threshold > 0 ? cfg.cma_threshold - 1 : 0);
    // ordered and reliable: one ring per sender and receiver in shared memory;
    // CapRemoteRead: its peers' memory is read and written with CMA (support/cma_copy.hpp)
    return TransportCaps::named("shm")
        .with(CapOrdered | CapReliable | (cfg.cma_enabled ? CapRemoteRead : 0u))
        .inline_up_to(inline_max);
}

ShmTransport::~ShmTransport() = default;

void ShmTransport::attach()
{
    for (uint32_t i = 0; i < local_ranks_.size(); i++) {
        int r = local_ranks_[i];
        if (r == ctx_.rank())
            continue;
        auto peer = std::make_unique<Peer>();
        peer->rank = r;
        peer->local_index = i;
        peer->segment = ShmSegment::open(ShmSegment::name_for(job_id_, r), r);
        if (peer->segment.header().slots != local_ranks_.size())
            throw Error(LLC_ERR_INVALID, "rank " + std::to_string(r) + " has a different node mapping (" +
                                             std::to_string(peer->segment.header().slots) +
                                             " processes on this node, expected " +
                                             std::to_string(local_ranks_.size()) + ")");
        peer->pid = peer->segment.header().owner_pid;
#ifdef SYS_pidfd_open
        // Watch the peer's process (check_liveness).  It is alive now (it
        // created its segment before the fence); failure (ENOSYS on old
        // kernels, ESRCH in another pid namespace) leaves process_gone().
        peer->pidfd.reset(int(::syscall(SYS_pidfd_open, peer->pid, 0)));
#endif
        peer->tx = peer->segment.ring(my_local_index_);
        peer->rx = own_.ring(i);
        peer->fast.ring = peer->tx.producer();
        peer->fast.send_seq = ctx_.send_seq_slot(r);
        peer->fast.max_len = std::min<size_t>(caps_.inline_max, ctx_.config().tag_eager_bytes);
        Peer *raw = peer.get();
        peer->decoder = std::make_unique<StreamDecoder>(
            [this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
        peers_.push_back(std::move(peer));
    }
    fast_rx_.reserve(peers_.size());
    for (const auto &p : peers_)
        fast_rx_.push_back(p->rx.consumer());
    fast_poll_.rings = fast_rx_.data();
    fast_poll_.nrings = uint32_t(fast_rx_.size());
    fast_poll_.period = ctx_.config().fast_poll_period;
    watch_fds_.reserve(peers_.size());
    watch_peers_.reserve(peers_.size());
    gone_.reserve(peers_.size());
}

ShmTransport::Peer *ShmTransport::find_peer(int rank)
{
    auto it = std::lower_bound(local_ranks_.begin(), local_ranks_.end(), rank);
    size_t i = size_t(it - local_ranks_.begin());
    size_t slot = i > my_local_index_ ? i - 1 : i;
    if (it == local_ranks_.end() || *it != rank || i == my_local_index_ || slot >= peers_.size())
        return nullptr;
    return peers_[slot].get();
}

ShmTransport::Peer &ShmTransport::peer_for(int rank)
{
    Peer *peer = find_peer(rank);
    if (!peer)
        throw Error(LLC_ERR_STATE, "no shared-memory connection to rank " + std::to_string(rank));
    return *peer;
}

llc_fast_peer_t *ShmTransport::fast_peer(int dest)
{
    Peer *peer = ctx_.config().fast_path ? find_peer(dest) : nullptr;
    return peer ? &peer->fast : nullptr;
}

int32_t ShmTransport::peer_pid(int rank)
{
    Peer *peer = find_peer(rank);
    return peer ? int32_t(peer->pid) : -1;
}

llc_fast_poll_t *ShmTransport::fast_poll()
{
    return fast_rx_.empty() || fast_poll_.period <= 1 ? nullptr : &fast_poll_;
}

void ShmTransport::add_stats(llc_stats_t &st) const
{
    for (const auto &p : peers_) {
        st.shm_msgs += p->fast.msgs;
        st.msgs_sent += p->fast.msgs;
        st.bytes_sent += p->fast.bytes;
        st.tag_eager_sends += p->fast.msgs;
    }
}

int ShmTransport::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    Peer &peer = peer_for(dest);
    if (peer.broken)
        throw Error(LLC_ERR_PEER, peer.failure);
    peer.contacted = true;
    ctx_.counters().shm_msgs++;
    OutgoingMessage *m = msg.get();
    peer.queue.push_back(std::move(msg));
    advance_sends(peer);
    refresh_fast(peer);
    bool still_queued = !peer.queue.empty() && peer.queue.back().get() == m;
    if (!still_queued)
        return LLC_OK; // written to the ring completely
    if (m->payload_len() <= ctx_.config().copy_max) {
        m->own_payload();
        return LLC_OK;
    }
    m->owes_callback = true;
    return LLC_INPROGRESS;
}

ShmTransport::Peer *ShmTransport::inline_ready(int dest, size_t payload_len)
{
    if (payload_len > caps_.inline_max)
        return nullptr;
    Peer &peer = peer_for(dest);
    if (peer.broken || !peer.queue.empty())
        return nullptr;
    peer.contacted = true;
    return &peer;
}

bool ShmTransport::try_send_tagged(int dest, const TagChunkHeader &h, const void *buf, size_t len)
{
    Peer *peer = inline_ready(dest, len);
    if (!peer)
        return false;
    ConstSpan spans[2] = {{reinterpret_cast<const char *>(&h), sizeof(h)}, {static_cast<const char *>(buf), len}};
    if (!peer->tx.try_write_message(spans, len ? 2 : 1, sizeof(h) + len))
        return false;
    ctx_.counters().shm_msgs++;
    return true;
}

bool ShmTransport::try_send_inline(int dest, const WireHeader &wire, const void *hdr, const llc_iov_t *iov,
                                   int iovcnt)
{
    constexpr int kMaxSpans = 6;
    Peer *peer = iovcnt > kMaxSpans - 2 ? nullptr : inline_ready(dest, size_t(wire.payload_len));
    if (!peer)
        return false;
    ConstSpan spans[kMaxSpans];
    size_t n = 0;
    spans[n++] = {reinterpret_cast<const char *>(&wire), sizeof(wire)};
    if (wire.hdr_len)
        spans[n++] = {static_cast<const char *>(hdr), wire.hdr_len};
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].len)
            spans[n++] = {static_cast<const char *>(iov[i].base), iov[i].len};
    if (!peer->tx.try_write_whole(spans, n, sizeof(wire) + wire.hdr_len + size_t(wire.payload_len)))
        return false;
    ctx_.counters().shm_msgs++;
    return true;
}

bool ShmTransport::advance_sends(Peer &peer)
{
    bool did = false;
    while (!peer.queue.empty()) {
        OutgoingMessage &m = *peer.queue.front();
        did |= peer.tx.write_from(m) > 0;
        if (!m.fully_written())
            break; // ring full
        ctx_.defer_completion(m, LLC_OK);
        peer.queue.pop_front();
    }
    return did;
}

bool ShmTransport::read_ring(Peer &peer)
{
    return peer.rx.read_all([&](const char *data, size_t len) { peer.decoder->feed(data, len); },
                            [&](const char *chunk, size_t len) {
                                if (!peer.decoder->at_record_boundary())
                                    throw Error(LLC_ERR_PEER, "protocol error: a message chunk inside a record "
                                                              "in the ring of rank " + std::to_string(peer.rank));
                                ctx_.deliver_tagged_chunk(peer.rank, chunk, len);
                            }) > 0;
}

bool ShmTransport::progress()
{
    bool did = false;
    for (auto &p : peers_) {
        Peer &peer = *p;
        if (peer.broken)
            continue;
        try {
            if (read_ring(peer))
                did = peer.contacted = true;
            if (!peer.queue.empty()) {
                did |= advance_sends(peer);
                refresh_fast(peer);
            } else if (peer.fast.closed) {
                refresh_fast(peer);
            }
        } catch (const Error &e) {
            fail_peer(peer, e.status(), e.what());
            did = true;
        }
    }
    // A peer that died (SIGKILL, a crash) writes nothing more and reads
    // nothing more: without this, a receive from it or a send to it that
    // waits for ring space or a CMA acknowledgement would wait forever when
    // the launcher does not end the job (doc/reliability.md).  The clock is
    // read on every 64th call only.
    if (!peers_.empty() && (++liveness_tick_ & 63) == 0) {
        uint64_t now = monotonic_us();
        if (now >= next_liveness_us_) {
            next_liveness_us_ = now + kLivenessPeriodUs;
            did |= check_liveness();
        }
    }
    return did;
}

void ShmTransport::on_record(Peer &peer, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    if (w.src != peer.rank)
        throw Error(LLC_ERR_PEER, "protocol error: record claiming to be from rank " + std::to_string(w.src) +
                                      " in the ring of rank " + std::to_string(peer.rank));
    switch (Kind(w.kind)) {
    case Kind::Am:
        ctx_.deliver(peer.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) +
                                      " in the ring of rank " + std::to_string(peer.rank));
    }
}

void ShmTransport::fail_peer(Peer &peer, int status, const std::string &message)
{
    peer.broken = true;
    peer.fast.closed = 1;
    peer.failure = message;
    for (auto &m : peer.queue)
        ctx_.defer_completion(*m, LLC_ERR_PEER);
    peer.queue.clear();
    ctx_.report_peer_failure(peer.rank, status, message);
}

bool ShmTransport::has_pending_sends() const
{
    for (const auto &p : peers_)
        if (!p->broken && !p->queue.empty())
            return true;
    return false;
}

bool ShmTransport::flush()
{
    if (!finalizing_) {
        finalizing_ = true;
        for (const auto &p : peers_)
            p->tx.control()->sender_finalizing.store(1, std::memory_order_release);
        return true;
    }
    for (const auto &p : peers_)
        if (p->queue.empty())
            p->tx.control()->sender_drained.store(1, std::memory_order_release);
    return true;
}

Transport::CloseState ShmTransport::close_state(CloseDetail detail) const
{
    CloseState s;
    s.quiet = incoming_quiet();
    if (detail == CloseDetail::Full)
        s.peer_running = waits_for_a_running_peer();
    return s;
}

namespace {
// The process has exited: no such pid, or a zombie its parent has not reaped
// yet (kill(pid, 0) still succeeds on those).
bool process_gone(pid_t pid)
{
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[32];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", int(pid));
    FILE *f = std::fopen(path, "r");
    if (!f)
        return errno == ENOENT;
    char line[256] = {};
    bool zombie = false;
    if (std::fgets(line, sizeof(line), f)) {
        const char *close = std::strrchr(line, ')'); // after "pid (comm)": the state letter
        zombie = close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
    }
    std::fclose(f);
    return zombie;
}
} // namespace

bool ShmTransport::check_liveness()
{
    // (the vectors are members reserved for every peer: no allocation here,
    // progress stays allocation-free)
    watch_fds_.clear();
    watch_peers_.clear();
    gone_.clear();
    for (auto &p : peers_) {
        if (p->broken || p->exited)
            continue;
        if (p->pidfd.valid()) {
            watch_fds_.push_back(pollfd{p->pidfd.get(), POLLIN, 0});
            watch_peers_.push_back(p.get());
        } else if (process_gone(p->pid)) {
            gone_.push_back(p.get());
        }
    }
    if (!watch_fds_.empty() && ::poll(watch_fds_.data(), watch_fds_.size(), 0) > 0)
        for (size_t i = 0; i < watch_fds_.size(); i++)
            if (watch_fds_[i].revents)
                gone_.push_back(watch_peers_[i]);
    bool did = false;
    for (Peer *p : gone_) {
        Peer &peer = *p;
        // The ring lives on in our mapping: take what it wrote before dying.
        try {
            did |= read_ring(peer);
        } catch (const Error &e) {
            fail_peer(peer, e.status(), e.what());
            continue;
        }
        peer.pidfd.reset();
        bool busy = !peer.queue.empty() || !peer.decoder->at_record_boundary();
        if (!busy && peer.rx.control()->sender_drained.load(std::memory_order_acquire) != 0) {
            peer.exited = true; // it finalized, then exited: nothing lost
            continue;
        }
        std::string why = "rank " + std::to_string(peer.rank) + " (pid " + std::to_string(int(peer.pid)) +
                          ", on this node) died: its process exited without finalizing";
        if (!busy && !peer.contacted && peer.fast.msgs == 0) { // (fast.msgs: sent inline)
            // We never talked to it: no error for this progress call (a
            // neighbour's death is not ours to report, as tcp reports only
            // broken connections), but a send to it fails at once.  A peer
            // we talked to may owe us a reply (a rendezvous of the tagged
            // layer waits above this transport): its death is reported.
            peer.broken = true;
            peer.fast.closed = 1;
            peer.failure = why + " (shared memory transport)";
            continue;
        }
        fail_peer(peer, LLC_ERR_PEER,
                  why + (peer.decoder->at_record_boundary() ? " while messages to it were in progress"
                                                            : " in the middle of a message it was sending") +
                      " (shared memory transport)");
        did = true;
    }
    return did;
}

bool ShmTransport::waits_for_a_running_peer() const
{
    for (const auto &p : peers_) {
        if (p->broken || p->exited)
            continue;
        const RingControl &c = *p->rx.control();
        if (c.sender_drained.load(std::memory_order_acquire) != 0 ||
            c.sender_finalizing.load(std::memory_order_acquire) != 0)
            continue;
        if (!process_gone(p->pid))
            return true;
    }
    return false;
}

bool ShmTransport::incoming_quiet() const
{
    for (const auto &p : peers_) {
        if (p->broken)
            continue;
        bool drained = p->rx.control()->sender_drained.load(std::memory_order_acquire) != 0;
        if (drained && p->rx.empty())
            continue;
        if (process_gone(p->pid))
            continue; // the peer is gone; nothing more will come
        return false;
    }
    return true;
}

} // namespace llc
