// shm_transport.cpp - ring streaming, stop-and-wait CMA, finalize draining.
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
    // inline_ready's bound: a payload CMA would carry goes through send()
    size_t inline_max = cfg.copy_max;
    if (cfg.cma_enabled)
        inline_max = std::min<size_t>(inline_max, cfg.cma_threshold > 0 ? cfg.cma_threshold - 1 : 0);
    // ordered and reliable: one ring per sender and receiver in shared memory
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
    const Config &cfg = ctx_.config();
    OutgoingMessage *m = msg.get();
    bool cma = cfg.cma_enabled && peer.cma_usable && m->payload_len() >= cfg.cma_threshold;
#ifndef HAVE_PROCESS_VM_READV
    cma = false;
#endif
    if (cma)
        m->convert_to_cma_rts(int(::getpid()));
    peer.queue.push_back(std::move(msg));
    advance_sends(peer);
    refresh_fast(peer);
    bool still_queued = !peer.queue.empty() && peer.queue.back().get() == m;
    if (!still_queued)
        return LLC_OK; // written to the ring completely
    if (!cma && m->payload_len() <= cfg.copy_max) {
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
    if (peer.broken || !peer.queue.empty() || !peer.control.empty())
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

OutgoingMessage *ShmTransport::next_to_write(Peer &peer) const
{
    // A record once started must finish before anything else enters the stream.
    if (!peer.control.empty() && peer.control.front()->started())
        return peer.control.front().get();
    bool front_writable = !peer.queue.empty() && !peer.queue.front()->awaiting_ack;
    if (front_writable && peer.queue.front()->started())
        return peer.queue.front().get();
    if (!peer.control.empty())
        return peer.control.front().get();
    return front_writable ? peer.queue.front().get() : nullptr;
}

bool ShmTransport::advance_sends(Peer &peer)
{
    bool did = false;
    while (OutgoingMessage *m = next_to_write(peer)) {
        did |= peer.tx.write_from(*m) > 0;
        if (!m->fully_written())
            break; // ring full
        if (!peer.control.empty() && peer.control.front().get() == m) {
            peer.control.pop_front();
        } else if (m->kind() == Kind::CmaRts) {
            m->awaiting_ack = true; // stop-and-wait: nothing else until Ack/Nack
        } else {
            ctx_.defer_completion(*m, LLC_OK);
            peer.queue.pop_front();
        }
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
            if (!peer.queue.empty() || !peer.control.empty()) {
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
    case Kind::CmaRts:
        receive_cma(peer, rec);
        break;
    case Kind::CmaAck:
    case Kind::CmaNack:
        on_cma_reply(peer, rec);
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) +
                                      " in the ring of rank " + std::to_string(peer.rank));
    }
}

namespace {
// The aux of a CmaNack that says "I could not read it" (EFAULT, ESRCH, a
// short read, a pid that is not yours, no memory for it): the send fails
// with LLC_ERR_PEER.  A CmaNack without aux says "not permitted here" (EPERM,
// ENOSYS): the sender streams the payload instead.
struct CmaReadFailure {
    int32_t err;
};

std::string hex(uint64_t v)
{
    char b[24];
    std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
    return b;
}
} // namespace

void ShmTransport::receive_cma(Peer &peer, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    const std::string from = " from rank " + std::to_string(peer.rank);
    // The record itself: a malformed one is a protocol error naming the peer.
    CmaDescriptor d;
    if (w.aux_len < sizeof(d))
        throw Error(LLC_ERR_PEER, "protocol error: short CMA descriptor (" + std::to_string(w.aux_len) + " bytes)" + from);
    std::memcpy(&d, rec.aux, sizeof(d));
    // (aux_len is at most kMaxAuxBytes, 16 MiB, checked by the decoder: so
    // are the segments, about a million)
    if (w.aux_len != sizeof(d) + size_t(d.segments) * sizeof(CmaSegment))
        throw Error(LLC_ERR_PEER, "protocol error: bad CMA descriptor" + from + ": " + std::to_string(d.segments) +
                                      " segments in " + std::to_string(w.aux_len) + " bytes");
    std::vector<CmaSegment> segs(d.segments);
    std::memcpy(segs.data(), rec.aux + sizeof(d), segs.size() * sizeof(CmaSegment));
    uint64_t total = 0;
    for (const CmaSegment &s : segs) {
        if (s.addr + s.len < s.addr || total + s.len < total)
            throw Error(LLC_ERR_PEER, "protocol error: CMA descriptor" + from + " has a segment of " +
                                          std::to_string(s.len) + " bytes at " + hex(s.addr) +
                                          " that overflows (the address space or the total length)");
        total += s.len;
    }
    if (total != w.payload_len)
        throw Error(LLC_ERR_PEER, "protocol error: CMA descriptor length mismatch" + from + ": segments of " +
                                      std::to_string(total) + " bytes for a message of " +
                                      std::to_string(w.payload_len));

    // The memory it names: what cannot be read fails this message alone.
    const size_t len = size_t(w.payload_len);
    char *buf = nullptr;
    int err = 0;
    std::string why;
    if (ctx_.config().cma_simulate_eperm) {
        err = EPERM;
    } else if (d.pid != int32_t(peer.pid)) {
        err = ESRCH;
        why = "names process " + std::to_string(d.pid) + ", not the sender (pid " + std::to_string(int(peer.pid)) + ")";
    } else {
        try {
            buf = peer.cma_buffer.reserve(len);
        } catch (const std::bad_alloc &) {
            err = ENOMEM;
        }
        if (err == 0)
            err = read_remote(d.pid, segs.data(), d.segments, buf, len);
    }
    if (err == 0) {
        peer.control.push_back(OutgoingMessage::make_control(Kind::CmaAck, ctx_.rank(), w.seq));
        ctx_.deliver(peer.rank, w, rec.hdr, buf, len);
    } else if (err == EPERM || err == ENOSYS) {
        // Not permitted here (ptrace rules, a seccomp filter): the sender
        // streams the payload through the ring instead.
        peer.control.push_back(OutgoingMessage::make_control(Kind::CmaNack, ctx_.rank(), w.seq));
    } else {
        // The sender named memory (or a process) we cannot read: this
        // message is not delivered and its send fails, nothing else does.
        ctx_.skip_message(peer.rank, w);
        ctx_.counters().cma_read_failed++;
        if (why.empty())
            why = "names " + std::to_string(len) + " bytes in " + std::to_string(d.segments) + " segment(s) from " +
                  (segs.empty() ? std::string("nowhere") : hex(segs[0].addr)) + " that could not be read (" +
                  std::strerror(err) + ")";
        cma_rejects_.note(ctx_.rank(), "rank " + std::to_string(peer.rank),
                          "its single-copy message " + why + ": not delivered, its send fails with LLC_ERR_PEER");
        CmaReadFailure f{err};
        peer.control.push_back(OutgoingMessage::make_control(Kind::CmaNack, ctx_.rank(), w.seq, &f, sizeof(f)));
    }
    peer.cma_buffer.shrink_if_above(1u << 20);
}

int ShmTransport::read_remote(pid_t pid, const CmaSegment *segs, uint32_t nsegs, char *dst, size_t len) const
{
#ifdef HAVE_PROCESS_VM_READV
    // segs add up to len without overflow (receive_cma checked).
    size_t done = 0;
    uint32_t seg = 0;
    uint64_t seg_off = 0;
    std::vector<struct iovec> remote;
    while (done < len) {
        remote.clear();
        uint32_t s = seg;
        uint64_t off = seg_off;
        while (s < nsegs && remote.size() < size_t(IOV_MAX)) {
            if (segs[s].len > off) // empty segments are skipped (a read of 0 bytes would look like a fault)
                remote.push_back({reinterpret_cast<void *>(uintptr_t(segs[s].addr + off)), size_t(segs[s].len - off)});
            s++;
            off = 0;
        }
        struct iovec local = {dst + done, len - done};
        ssize_t n = ::process_vm_readv(pid, &local, 1, remote.data(), remote.size(), 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EFAULT;
        done += size_t(n);
        // Advance the remote cursor by n bytes.
        size_t left = size_t(n);
        while (left > 0 && seg < nsegs) {
            uint64_t in_seg = segs[seg].len - seg_off;
            if (left < in_seg) {
                seg_off += left;
                left = 0;
            } else {
                left -= size_t(in_seg);
                seg++;
                seg_off = 0;
            }
        }
    }
    return 0;
#else
    (void)pid, (void)segs, (void)nsegs, (void)dst, (void)len;
    return ENOSYS;
#endif
}

void ShmTransport::on_cma_reply(Peer &peer, const IncomingRecord &rec)
{
    const WireHeader &wire = rec.wire;
    if (peer.queue.empty() || !peer.queue.front()->awaiting_ack || peer.queue.front()->wire().seq != wire.seq)
        throw Error(LLC_ERR_PEER, "protocol error: unexpected CMA reply from rank " + std::to_string(peer.rank));
    OutgoingMessage &m = *peer.queue.front();
    if (Kind(wire.kind) == Kind::CmaAck) {
        ctx_.counters().cma_msgs++;
        ctx_.defer_completion(m, LLC_OK);
        peer.queue.pop_front();
    } else if (wire.aux_len == sizeof(CmaReadFailure)) {
        // The receiver could not read our buffer (we named memory we do not
        // have: freed or unmapped before the send completed): this send fails.
        ctx_.defer_completion(m, LLC_ERR_PEER);
        peer.queue.pop_front();
    } else {
        peer.cma_usable = false; // the kernel forbids it for this peer: stream from now on
        m.convert_to_streamed_am();
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
    peer.control.clear();
    ctx_.report_peer_failure(peer.rank, status, message);
}

bool ShmTransport::has_pending_sends() const
{
    for (const auto &p : peers_)
        if (!p->broken && (!p->queue.empty() || !p->control.empty()))
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
        if (p->queue.empty() && p->control.empty())
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
        bool busy = !peer.queue.empty() || !peer.control.empty() || !peer.decoder->at_record_boundary();
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
