// udp_transport.cpp - reliable, ordered byte streams over datagrams: the
// transport's setup, its progress loop and its finalize hooks; the rest of
// UdpTransport is in udp_peer.cpp, udp_tx.cpp, udp_rx.cpp, udp_timers.cpp
// and udp_switch_channel.cpp.
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "transport/goodbye_book.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"
#include "kvs/kvs.hpp"
#include "core/errors.hpp"
#include "support/string_hash.hpp"
#include "support/inet_address.hpp"

#include <linux/errqueue.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace llc {

namespace {
constexpr uint64_t kLingerRtos = 64;    // see has_pending_sends
constexpr uint64_t kProbeRtos = 8;      // finalize: a waiting process acknowledges this often (see progress)
constexpr uint64_t kMaxLingerUs = 2000000;
void set_buffer_size(int fd, int force_opt, int opt, size_t bytes)
{
    if (bytes == 0)
        return;
    int v = int(std::min<size_t>(bytes, size_t(1) << 30));
    // The FORCE variant ignores rmem_max/wmem_max but needs CAP_NET_ADMIN.
    if (::setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) != 0)
        ::setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}
} // namespace

UdpTransport::UdpTransport(Context &ctx, const std::vector<int> &local_ranks)
    : ctx_(ctx), secret_(ctx.bootstrap(), ctx.rank(), "llc-secret-udp"), mtu_(ctx.config().udp_mtu),
      window_(size_t(ctx.config().udp_window)), evict_idle_us_(ctx.config().udp_evict_idle_ms * 1000),
      peer_timeout_(ctx.config().udp_peer_timeout_ms),
      peers_(ctx.config().max_contexts, [this](int, std::unique_ptr<Peer> &p) { on_evict(*p); }),
      ghosts_(std::max(kMinGhosts, kGhostsPerSlot * ctx.config().max_contexts))
{
    const Config &cfg = ctx.config();
    idle_probe_gap_us_ = cfg.udp_idle_probe_ms * 1000;
    if (cfg.udp_shared_recv && local_ranks.size() > 1) // alone on its node, a process's own socket is the node's
        node_ = std::make_unique<UdpNodeSocket>(ctx.job_id(), ctx.node_map().my_node(), ctx.rank(), local_ranks,
                                                uint32_t(cfg.udp_handover_slots), uint32_t(sizeof(UdpHeader) + mtu_));
    job_tag_ = fnv1a32(ctx.job_id());
    rxbuf_.reset(new char[kRxBufBytes]);
    // The datagram pool starts full: what a process holds is then the same
    // before and after traffic, whatever bursts it saw (buffers beyond the
    // pool are allocated for a burst and freed on acknowledgement).
    free_bufs_.reserve(kKeepFreeBuffers);
    while (free_bufs_.size() < kKeepFreeBuffers)
        free_bufs_.emplace_back(new char[sizeof(UdpHeader) + mtu_]);
    rng_ = (uint64_t(ctx.rank()) << 32) ^ uint64_t(::getpid()) ^ monotonic_us() ^ 0x9e3779b97f4a7c15ull;
    if (node_ && !node_->is_leader())
        return; // takes the leader's socket over in attach()
    sock_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!sock_.valid())
        throw_errno(LLC_ERR_SYSTEM, "socket() for the udp transport", errno);
    // ICMP errors (port unreachable: the peer's socket is closed, i.e. the
    // process died) are queued with the destination they concern.
    int one = 1;
    ::setsockopt(sock_.get(), IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
    set_buffer_size(sock_.get(), SO_SNDBUFFORCE, SO_SNDBUF, ctx.config().udp_sockbuf);
    set_buffer_size(sock_.get(), SO_RCVBUFFORCE, SO_RCVBUF, ctx.config().udp_sockbuf);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    sa.sin_port = 0;
    if (::bind(sock_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0)
        throw_errno(LLC_ERR_SYSTEM, "bind() of the udp socket to 0.0.0.0", errno);
    socklen_t len = sizeof(sa);
    if (::getsockname(sock_.get(), reinterpret_cast<sockaddr *>(&sa), &len) != 0)
        throw_errno(LLC_ERR_SYSTEM, "getsockname() of the udp socket", errno);
    std::string ip = !cfg.udp_addr.empty() ? choose_publish_address(cfg.udp_addr, "LLC_UDP_ADDR")
                                           : choose_publish_address(cfg.tcp_addr, "LLC_TCP_ADDR");
    my_addr_ = ip + ":" + std::to_string(ntohs(sa.sin_port));
}

UdpTransport::~UdpTransport() = default;

const TransportCaps &UdpTransport::caps() const
{
    // ordered and reliable: numbered datagrams, delivered in stream order,
    // acknowledged and resent until a peer times out; idle_wait polls the socket
    static constexpr TransportCaps udp =
        TransportCaps::named("udp").with(CapOrdered | CapReliable | CapWakesOnArrival);
    return udp;
}

void UdpTransport::idle_wait(uint64_t us)
{
    if (!prepare_sleep())
        return; // a neighbour has handed a datagram over already
    pollfd p[2] = {{fd(), POLLIN, 0}, {handover_fd(), POLLIN, 0}};
    const timespec ts = timespec_of_us(us);
    ::ppoll(p, p[1].fd >= 0 ? 2 : 1, &ts, nullptr);
    finish_sleep();
}

void UdpTransport::publish_address()
{
    // With a shared socket only the node leader has an address before the
    // first fence; the others' udp address is the leader's (udp_address_rank).
    if (!node_ || node_->is_leader())
        ctx_.addresses().publish(AddrKind::Udp, my_addr_);
}

void UdpTransport::attach()
{
    if (!node_)
        return;
    const uint64_t timeout_ms = ctx_.config().kvs_timeout_ms;
    if (node_->is_leader()) {
        node_->share(sock_.get(), my_addr_, timeout_ms);
        return;
    }
    sock_ = node_->receive(my_addr_, timeout_ms);
}

// The rank whose published udp address is rank's: with LLC_UDP_SHARED_RECV=1
// (the same on every process), its node leader, the lowest rank of its node.
// A scan of the rank -> node map up to rank, on first contact only.
int UdpTransport::udp_address_rank(int rank) const
{
    if (!ctx_.config().udp_shared_recv)
        return rank;
    const NodeMap &nodes = ctx_.node_map();
    const int node = nodes.node_of(rank);
    for (int r = 0; r < rank; r++)
        if (nodes.node_of(r) == node)
            return r;
    return rank;
}

uint32_t UdpTransport::random()
{
    // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return uint32_t((rng_ * 2685821657736338717ull) >> 32);
}

std::string UdpTransport::describe(const Peer &p) const
{
    return "rank " + std::to_string(p.rank) + " (udp host " + format_ip_port(p.addr) + ")";
}

// --------------------------------------------------------------- progress

bool UdpTransport::progress_after_poll(bool socket_ready)
{
    // (the hand-over socket of a shared node socket is read every time)
    bool did = socket_ready || errors_pending_ || node_ ? receive_all(socket_ready || errors_pending_) : false;
    if (errors_pending_)
        drain_errors();
    uint64_t now = monotonic_us();
    size_t n = live_.size(); // handlers may add peers while we iterate
    for (size_t i = 0; i < n; i++) {
        Peer &p = *live_[i];
        if (p.failed)
            continue;
        did |= pump(p);
        did |= check_timers(p, now);
    }
    if (finalizing_ && now >= next_probe_us_) {
        // "Still here, still waiting": a finalizing peer stops waiting for
        // us after a silence (has_pending_sends), so while we wait for its
        // Goodbye we acknowledge regularly even if nothing arrives.
        next_probe_us_ = now + kProbeRtos * std::min<uint64_t>(ctx_.config().udp_rto_us, kMaxRtoUs);
        for (Peer *p : live_)
            if (!p->failed && !p->goodbye_rx && !p->peer_forgot && !p->ack_pending)
                send_ack(*p, true);
    }
    if (now >= next_stall_probe_us_) {
        next_stall_probe_us_ = now + kStallProbeUs;
        did |= probe_stalled_senders(now);
        probe_idle_peers(now);
    }
    for (Peer *p : live_)
        if (p->ack_pending && !p->failed)
            send_ack(*p);
    if (!forgets_.empty())
        did |= resend_forgets(now);
    if (!asks_.empty())
        did |= resend_asks(now);
    flush_held();
    if (errors_pending_)
        drain_errors();
    if (now >= next_sweep_us_) {
        next_sweep_us_ = now + kIdleReleaseUs;
        release_idle(now);
        if (peers_.size() > peers_.capacity()) {
            // back under the cap once the peers that overflowed it may go
            peers_.trim([this, now](int, const std::unique_ptr<Peer> &q) { return evictable(*q, now); });
            ctx_.counters().udp_peers = peers_.size();
        }
    }
    return did;
}

bool UdpTransport::has_pending_sends() const
{
    uint64_t now = monotonic_us();
    for (const Peer *p : live_) {
        if (p->failed)
            continue;
        if (p->tx_idle())
            continue;
        if (!p->tx->queue.empty())
            return true;
        // The last acknowledgement of a finalizing peer may be lost after it
        // left (two-generals).  Its Goodbye proves it is finalizing; it can
        // only have left after receiving our Goodbye.  Keep retransmitting
        // while it is heard (data, acknowledgements, probes: a probe moves
        // oldest_unacked_since_us), then stop waiting after a silence.  A peer that
        // still waits for us (for data or our Goodbye) is never silent that
        // long: during finalize it acknowledges every kProbeRtos minimum
        // timeouts (see progress).  The silence is counted from the last time
        // it was heard; counted from its Goodbye or the last advance, heavy
        // loss with backed-off timers made us leave with data the peer still
        // waited for (2 of 70 runs at 20 % loss).
        if (finalizing_ && p->goodbye_rx &&
            now - std::max({p->goodbye_rx_us, p->oldest_unacked_since_us, p->last_heard_us}) >
                std::min<uint64_t>(kLingerRtos * rto_for(*p, 0), kMaxLingerUs))
            continue;
        // The same for a peer that dropped its state for us (its Forget came
        // after our Goodbye was queued): it does not wait for our Goodbye and
        // may have left; what we resend on the restarted stream is answered
        // only while it is still there.
        if (finalizing_ && p->peer_forgot &&
            now - std::max(finalize_us_, p->oldest_unacked_since_us) >
                std::min<uint64_t>(kLingerRtos * rto_for(*p, 0), kMaxLingerUs))
            continue;
        return true;
    }
    // A Forget nobody answers during finalize: the peer had nothing of ours
    // pending and already left (the answer can be lost after it left, as
    // with the last acknowledgement): linger as for a Goodbye, then stop.
    for (const PendingForget &f : forgets_)
        if (!finalizing_ || now - std::max(f.first_us, finalize_us_) <= kMaxLingerUs)
            return true;
    return have_held_;
}

std::string UdpTransport::pending_report() const
{
    std::string r;
    auto sep = [&r] {
        if (!r.empty())
            r += "; ";
    };
    const uint64_t now = monotonic_us();
    for (const Peer *p : live_) {
        if (p->failed)
            continue;
        const bool sending = !p->tx_idle(), waiting = !p->goodbye_rx && !p->peer_forgot;
        if (!sending && !waiting)
            continue;
        sep();
        r += "rank " + std::to_string(p->rank) + ":";
        if (sending) {
            r += " " + std::to_string(p->tx->queue.size()) + " queued, " + std::to_string(p->tx->unacked.size()) +
                 " unacked";
            if (!p->tx->unacked.empty()) {
                const TxPacket &f = p->tx->unacked.front();
                r += " from psn " + std::to_string(f.psn) + " x" + std::to_string(f.retries);
            }
            r += " (next " + std::to_string(p->next_psn) + "),";
        }
        r += " rx_next " + std::to_string(p->rx_next) + ", inc " + std::to_string(p->inc) + "/" +
             std::to_string(p->peer_inc) + (p->peer_forgot ? " forgot" : "") + ", bye " +
             GoodbyeBook::bye_flags(p->goodbye_sent, p->goodbye_rx) + ", heard " +
             std::to_string((now - std::min(now, p->last_heard_us)) / 1000) + " ms ago";
    }
    for (const PendingForget &f : forgets_) {
        sep();
        r += "Forget to rank " + std::to_string(f.rank) + " unanswered (" + std::to_string(f.header.src_inc) + "/" +
             std::to_string(f.header.dst_inc) + " x" + std::to_string(f.retries) + ")";
    }
    if (have_held_) {
        sep();
        r += "a datagram held back for reordering";
    }
    return r.empty() ? r : "udp: " + r;
}

bool UdpTransport::drained_towards(int dest) const
{
    const Peer *p = peek(dest);
    return !p || p->failed || p->tx_idle();
}

void UdpTransport::queue_goodbye(Peer &p)
{
    p.txs().queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
    p.goodbye_sent = true;
    pump(p);
}

bool UdpTransport::flush()
{
    if (finalizing_)
        return true; // the Goodbyes are queued
    finalizing_ = true;
    finalize_us_ = monotonic_us();
    asks_.clear(); // no more switches: the policy is frozen
    for (Peer *p : live_) {
        // A peer that dropped its state for us (and we owe nothing) will not
        // say goodbye either: it has nothing of ours and sends us nothing.
        if (p->failed || p->goodbye_sent || (p->peer_forgot && p->tx_idle()))
            continue;
        queue_goodbye(*p);
    }
    return true;
}

Transport::CloseState UdpTransport::close_state(CloseDetail detail) const
{
    CloseState s;
    s.quiet = incoming_quiet();
    if (detail == CloseDetail::Full)
        s.report = pending_report();
    return s;
}

bool UdpTransport::incoming_quiet() const
{
    // A peer that dropped its state for us sends nothing more without
    // making new state first (which clears peer_forgot).
    for (const Peer *p : live_)
        if (!p->failed && !p->goodbye_rx && !p->peer_forgot)
            return false;
    return true;
}

} // namespace llc
