// udp_transport.cpp - reliable, ordered byte streams over datagrams.
#include "transport/udp/udp_transport.hpp"

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
#include <cstring>

namespace llc {

namespace {
constexpr int kRecvBudgetPerCall = 1024;
constexpr unsigned kMaxBackoffShift = 3; // the retransmission timeout grows to at most 8x
constexpr uint64_t kLingerRtos = 64;    // see has_pending_sends
constexpr uint64_t kProbeRtos = 8;      // finalize: a waiting process acknowledges this often (see progress)
// Upper bound of the timeout before backoff.  RTT samples include the time
// the sender spent outside llc_progress before it read the acknowledgement,
// so they can be far above the network's round trip; the cap keeps one long
// computation from making later loss recovery slow.
constexpr uint64_t kMaxRtoUs = 200000;
// A peer that stopped in the middle of a message it was sending us is probed
// (an acknowledgement flagged as probe) after this much silence, and then as
// often: if its process is gone, the ICMP port unreachable fails it at once.
constexpr uint64_t kStallProbeUs = 100000;
constexpr uint64_t kMaxLingerUs = 2000000;
constexpr uint64_t kFastRetransmitDistance = 3;
// UdpHeader::flags: the sender's Peer for us has forgotten an older pair
// (it is new after an eviction, or got our Forget): a datagram of ours it
// dropped may have been delivered by its old Peer.
constexpr uint8_t kFlagPairForgotten = 1;
// On an Ack: a finalize probe ("still here, still waiting", see progress),
// not an answer to anything: it keeps the sender's finalize linger from
// running out but does not make the pair look busy to the idle eviction.
constexpr uint8_t kFlagProbe = 2;
// On Data: DC RDMA, ring-addressed (UdpHeader::reserved is its slot): the
// receiver lands it in that slot of the ring it leased for us, if it still
// has one; otherwise it is an ordinary datagram (udp_ring_landing.hpp).
constexpr uint8_t kFlagRing = 4;
constexpr uint64_t kForgetWaitUs = 8 * kMaxRtoUs; // a peer's Forget takes a few of its retransmissions at most
constexpr uint64_t kIdleReleaseUs = 1000000; // send queues / decoder of a peer idle this long are freed

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

// Retransmission timeout: srtt + 4 rttvar (as TCP does), at least
// LLC_UDP_RTO_US, at most kMaxRtoUs, doubled per retransmission up to 8x.
uint64_t UdpTransport::rto_for(const Peer &p, uint16_t retries) const
{
    uint64_t rto = std::max<uint64_t>(ctx_.config().udp_rto_us, uint64_t(p.srtt_us) + 4 * uint64_t(p.rttvar_us));
    rto = std::min(rto, kMaxRtoUs);
    return rto << std::min<unsigned>(retries, kMaxBackoffShift);
}

void UdpTransport::rtt_sample(Peer &p, uint64_t sample_us)
{
    uint32_t s = uint32_t(std::min<uint64_t>(sample_us, kMaxRtoUs));
    if (p.srtt_us == 0) {
        p.srtt_us = std::max<uint32_t>(s, 1);
        p.rttvar_us = s / 2;
        return;
    }
    uint32_t dev = s > p.srtt_us ? s - p.srtt_us : p.srtt_us - s;
    p.rttvar_us = (3 * p.rttvar_us + dev) / 4;
    p.srtt_us = std::max<uint32_t>((7 * p.srtt_us + s) / 8, 1);
}

std::string UdpTransport::describe(const Peer &p) const
{
    return "rank " + std::to_string(p.rank) + " (udp host " + format_ip_port(p.addr) + ")";
}

// ------------------------------------------------------------- peer state

UdpTransport::Peer *UdpTransport::find(int rank)
{
    std::unique_ptr<Peer> *p = peers_.find(rank);
    return p ? p->get() : nullptr;
}

const UdpTransport::Peer *UdpTransport::peek(int rank) const
{
    const std::unique_ptr<Peer> *p = peers_.peek(rank);
    return p ? p->get() : nullptr;
}

UdpTransport::Peer &UdpTransport::add_peer(int rank, const sockaddr_in *from)
{
    auto make = [&](int) {
        auto p = std::make_unique<Peer>();
        p->rank = rank;
        p->tx_token = pair_token(ctx_.rank(), rank);
        p->rx_token = pair_token(rank, ctx_.rank());
        if (from) {
            p->addr = *from; // the datagram's source: no bootstrap lookup needed
        } else {
            std::string text = ctx_.addresses().lookup(udp_address_rank(rank), AddrKind::Udp); // first contact only
            if (!parse_ip_port(text, p->addr))
                throw Error(LLC_ERR_BOOTSTRAP, "rank " + std::to_string(rank) + " published a malformed udp address \"" +
                                                   text + "\"");
        }
        return p;
    };
    const uint64_t now = monotonic_us();
    const uint64_t overflows = peers_.overflows();
    Peer &ref = *peers_.get_or_create(rank, make,
                                      [this, now](int, const std::unique_ptr<Peer> &q) { return evictable(*q, now); });
    if (peers_.overflows() != overflows)
        ctx_.counters().udp_cap_overflows++;
    ref.inc = next_incarnation();
    Ghost &g = ghost_of(rank);
    if (g.rank == rank) {
        // We had state for it before: its old incarnation is over (a late
        // datagram of it is dropped), a newer one starts new streams.
        ref.peer_inc = g.peer_inc & ~kGhostGoodbye;
        ref.peer_forgot = true;
        if (g.peer_inc & kGhostGoodbye) {
            // It said goodbye to the dropped Peer: it is finalizing and sends
            // no second Goodbye; do not wait for one.
            ref.goodbye_rx = true;
            ref.goodbye_rx_us = now;
        }
        g = Ghost{};
    }
    ref.last_heard_us = now;
    ref.failed = failures_.count(rank) != 0;
    live_.push_back(&ref);
    ctx_.counters().udp_peers = peers_.size();
    if (finalizing_ && !ref.failed) {
        ref.txs().queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
        ref.goodbye_sent = true;
    }
    return ref;
}

UdpTransport::Peer &UdpTransport::peer_for(int rank)
{
    if (Peer *p = find(rank))
        return *p;
    if (failed(rank))
        throw_failure(rank); // no new state for a failed rank
    return add_peer(rank, nullptr);
}

bool UdpTransport::failed(int dest) const { return failures_.count(dest) != 0; }

void UdpTransport::throw_failure(int dest) const
{
    const Failure &f = failures_.at(dest);
    throw Error(f.status, f.message);
}

// ------------------------------------------------------- eviction (the cap)
//
// The policy is every capped table's (PeerCap, support/peer_cap.hpp, through
// the PeerTable): evictable() is this table's may-go predicate, and the
// once-a-second sweep in progress trims the table back after an overflow.
// A Peer may be dropped only when dropping loses nothing: all our datagrams
// to it acknowledged (so delivered), nothing queued, nothing received early
// or half a record decoded, no acknowledgement owed, not finalizing ourselves,
// no hybrid switch or tcp route for it, and nothing heard from or sent to it
// for LLC_UDP_EVICT_IDLE_MS (a peer with unacknowledged data retransmits well
// within that, so an idle peer has none; and a stray old datagram is unlikely
// to still be in the network).  A failed peer may always go: its failure
// stays in failures_.

bool UdpTransport::evictable(const Peer &p, uint64_t now) const
{
    if (finalizing_)
        return false;
    if (p.failed)
        return true;
    // (A peer that said goodbye may go: it sends nothing after it, its ghost
    // remembers the Goodbye (see on_evict), and our Forget tells it not to
    // wait for our goodbye.)
    if (!p.tx_idle() || p.mid_message() || p.ack_pending)
        return false;
    uint64_t last = std::max(p.last_heard_us, p.last_tx_us);
    if (now < last || now - last < evict_idle_us_)
        return false;
    return events_->udp_state_droppable(p.rank);
}

// Called by the table just before the Peer is destroyed.  The peer is told
// (Forget, repeated until answered) so that it drops the incarnation pair
// too: otherwise it could wait at finalize for a goodbye we will never send.
uint32_t UdpTransport::next_incarnation()
{
    uint32_t inc = next_inc_++;
    if (next_inc_ == kGhostGoodbye)
        next_inc_ = 1; // 0 means "unknown" on the wire; the top bit is the ghost's goodbye flag
    return inc;
}

UdpTransport::Ghost &UdpTransport::ghost_of(int rank)
{
    return ghosts_[size_t(uint32_t(rank)) % ghosts_.size()]; // no collision among ghosts_.size() consecutive ranks
}

void UdpTransport::on_evict(Peer &p)
{
    ctx_.counters().udp_evictions++;
    if (p.peer_inc != 0)
        ghost_of(p.rank) = Ghost{p.rank, p.peer_inc | (p.goodbye_rx ? kGhostGoodbye : 0u)};
    if (!p.failed && p.peer_inc != 0 && !p.peer_forgot) {
        PendingForget f;
        f.rank = p.rank;
        f.addr = p.addr;
        f.header = header_to(UdpType::Forget, p.rank);
        f.header.src_inc = p.inc;
        f.header.dst_inc = p.peer_inc;
        f.header.psn = p.next_psn; // all of them acknowledged
        f.header.ack = p.rx_next;  // all of them delivered
        f.first_us = f.sent_us = monotonic_us();
        raw_send(reinterpret_cast<const char *>(&f.header), sizeof(f.header), f.addr);
        forgets_.push_back(f);
    }
    if (p.tx)
        for (auto &pkt : p.tx->unacked)
            put_buffer(std::move(pkt.buf));
    live_.erase(std::find(live_.begin(), live_.end(), &p));
}

bool UdpTransport::resend_forgets(uint64_t now)
{
    bool did = false;
    for (auto it = forgets_.begin(); it != forgets_.end();) {
        PendingForget &f = *it;
        if (peer_timeout_.expired(f.first_us, now)) { // (a Forget made after now was read is not 2^64 us old)
            it = forgets_.erase(it); // the peer is gone or not progressing: nothing of ours depends on it
            continue;
        }
        uint64_t rto = std::min<uint64_t>(ctx_.config().udp_rto_us, kMaxRtoUs)
                       << std::min<unsigned>(f.retries, kMaxBackoffShift);
        if (now >= f.sent_us && now - f.sent_us >= rto &&
            raw_send(reinterpret_cast<const char *>(&f.header), sizeof(f.header), f.addr)) {
            f.sent_us = now;
            if (f.retries < 0xffff)
                f.retries++;
            did = true;
        }
        ++it;
    }
    return did;
}

void UdpTransport::send_forget_ack(const UdpHeader &forget, const sockaddr_in &to)
{
    UdpHeader h = header_to(UdpType::ForgetAck, forget.src);
    h.dst_inc = forget.src_inc;
    raw_send(reinterpret_cast<const char *>(&h), sizeof(h), to);
}

void UdpTransport::on_forget_ack(const UdpHeader &h)
{
    auto it = std::find_if(forgets_.begin(), forgets_.end(), [&](const PendingForget &f) {
        return f.rank == h.src && f.header.src_inc == h.dst_inc;
    });
    if (it != forgets_.end())
        forgets_.erase(it);
}

// The peer dropped its state for the incarnation pair (h.src_inc, h.dst_inc).
void UdpTransport::on_forget(const UdpHeader &h, const sockaddr_in &from)
{
    Peer *p = find(h.src);
    // (No pair known here, peer_inc 0 or forgotten: we never heard from that
    // incarnation, all its acknowledgements were lost, but it had our
    // datagrams.)
    // live_pair also when our Peer is still `forgot` with that very
    // incarnation (and the Forget names ours): the peer's Peer learnt our
    // incarnation, delivered what we sent it and may have acknowledged it
    // only with answers that were lost; its Forget (with its ack) is then
    // the only word we get about those datagrams.
    const bool live_pair = p && p->peer_inc == h.src_inc;
    const bool no_pair = p && (p->peer_inc == 0 || (p->peer_forgot && h.src_inc > p->peer_inc));
    if (p && !p->failed && (live_pair || no_pair) && h.dst_inc == p->inc)
        forget_live(*p, h);
    // Both sides dropped the pair: ours need not be answered any more (the
    // peer may finish before it would be).
    forgets_.erase(std::remove_if(forgets_.begin(), forgets_.end(),
                                  [&](const PendingForget &f) {
                                      return f.rank == h.src && f.header.src_inc == h.dst_inc &&
                                             f.header.dst_inc == h.src_inc;
                                  }),
                   forgets_.end());
    send_forget_ack(h, from); // also for a repeated or stale Forget, so the peer stops
}

void UdpTransport::forget_live(Peer &p, const UdpHeader &forget)
{
    // It had every datagram of ours below forget.ack and had sent forget.psn
    // datagrams, all acknowledged by us.
    if (p.rx_next != forget.psn) {
        fail_peer(p, LLC_ERR_PEER, "protocol error: " + describe(p) + " dropped its udp state after sending " +
                                       std::to_string(forget.psn) + " datagrams, but " +
                                       std::to_string(p.rx_next) + " arrived here");
        return;
    }
    on_ack(p, forget.ack, 0);
    restart_streams(p); // what it never received goes again, numbered from 0, to its next incarnation
    // A new incarnation of ours too: a late datagram of the old pair (which
    // names our old one) cannot be taken for the new streams.
    p.inc = next_incarnation();
    p.peer_inc = forget.src_inc;
    p.peer_forgot = true;
    p.newer_peer_seen_us = 0;
}

// Both psn streams of the pair start again at 0 (the peer has a new
// incarnation, or dropped the old one).  The receive side holds nothing:
// the peer only drops its state once we acknowledged all it sent.  Datagrams
// of ours it never acknowledged are renumbered and sent again.
void UdpTransport::restart_streams(Peer &p)
{
    if (p.mid_message()) {
        fail_peer(p, LLC_ERR_PEER, "protocol error: " + describe(p) +
                                       " restarted its udp stream while a message from it was incomplete");
        return;
    }
    ctx_.counters().udp_peer_restarts++;
    p.rx_next = 0;
    p.decoder.reset();
    uint64_t psn = 0;
    if (p.tx) {
        for (TxPacket &pkt : p.tx->unacked) {
            pkt.psn = psn++;
            pkt.sent_us = 0; // pump sends it again
            pkt.retries = 0;
            pkt.sacked = false;
            pkt.fast_done = false;
        }
    }
    p.next_psn = psn;
    p.recover_psn = 0;
}

// Decides whether a datagram belongs to the current incarnation pair.
// Returns false when it is to be dropped.
bool UdpTransport::reconcile_incarnation(Peer &p, const UdpHeader &h)
{
    const bool data = h.type == uint8_t(UdpType::Data);
    if (h.src_inc == 0)
        return false;
    if (h.src_inc < p.peer_inc) {
        if (data)
            ctx_.counters().udp_duplicates++; // of a Peer it has since dropped
        return false;
    }
    if (p.peer_forgot && h.src_inc == p.peer_inc) {
        // The pair (peer_inc, old incarnation of ours) is over.  Only a
        // datagram addressed to our current incarnation is new: the peer
        // kept its Peer and has learned our new one (and restarted).
        if (h.dst_inc != p.inc) {
            if (data) {
                ctx_.counters().udp_duplicates++;
                p.ack_pending = true; // tells it our incarnation
            }
            return false;
        }
        p.peer_forgot = false;
    }
    if (h.src_inc > p.peer_inc) {
        if (!data && h.dst_inc != p.inc) {
            // An acknowledgement from a newer incarnation that does not name
            // our current one acknowledges nothing of ours, and says that
            // this incarnation of the peer has no pair with us: typically a
            // Peer that forgot us answering a stale datagram (dst_inc 0,
            // "tells it our incarnation").  It must not make the pair live
            // here: we would then wait at finalize for that peer's Goodbye
            // and for its acknowledgement of ours, while its Peer, still
            // `forgot`, waits for nothing of ours and may already have left
            // its drain loop (blocked in the closing fence, it answers
            // nothing).  Only data, or an answer addressed to our
            // incarnation, binds the pair.  (A peer still holding our old
            // pair is reached by its Forget.)
            return false;
        }
        // It dropped its state and made a new one.  Which of our
        // unacknowledged datagrams it delivered before that only its Forget
        // says (it repeats it until answered): wait for it.  Also when we
        // never learnt its old incarnation (all its acknowledgements lost)
        // and it says it forgot a pair.  (Bounded: without an answer for
        // kForgetWaitUs, go on anyway.)
        const bool old_pair_live = p.peer_inc != 0 && !p.peer_forgot;
        const bool no_pair = p.peer_inc == 0 || p.peer_forgot; // we learnt no incarnation of it since ours began
        const bool fate_unknown = p.tx && !p.tx->unacked.empty() &&
                                  (old_pair_live || (no_pair && (h.flags & kFlagPairForgotten)));
        if (fate_unknown) {
            uint64_t now = monotonic_us();
            if (p.newer_peer_seen_us == 0)
                p.newer_peer_seen_us = now;
            if (now - p.newer_peer_seen_us < kForgetWaitUs)
                return false;
        }
        p.newer_peer_seen_us = 0;
        if (old_pair_live)
            restart_streams(p);
        if (p.failed)
            return false;
        p.peer_inc = h.src_inc;
        p.peer_forgot = false;
    }
    if (h.dst_inc != 0 && h.dst_inc != p.inc) {
        // Sent to an older Peer of ours (we dropped it): not ours to deliver;
        // our answer tells the peer our incarnation, so it restarts.
        if (data)
            p.ack_pending = true;
        return false;
    }
    return true;
}

std::unique_ptr<char[]> UdpTransport::get_buffer()
{
    if (!free_bufs_.empty()) {
        auto b = std::move(free_bufs_.back());
        free_bufs_.pop_back();
        return b;
    }
    return std::unique_ptr<char[]>(new char[sizeof(UdpHeader) + mtu_]);
}

void UdpTransport::put_buffer(std::unique_ptr<char[]> b)
{
    if (b && free_bufs_.size() < kKeepFreeBuffers)
        free_bufs_.push_back(std::move(b));
}

void UdpTransport::fail_peer(Peer &p, int status, const std::string &message)
{
    if (p.failed)
        return;
    p.failed = true;
    failures_.emplace(p.rank, Failure{status, message});
    asks_.drop(p.rank);
    if (p.tx) {
        for (auto &m : p.tx->queue)
            ctx_.defer_completion(*m, LLC_ERR_PEER);
        for (auto &pkt : p.tx->unacked)
            put_buffer(std::move(pkt.buf));
        p.tx.reset();
    }
    p.ooo.clear();
    if (p.ring && p.ring->landing)
        p.ring->landing->clear(); // the ring stays leased until the context sees the failure
    p.ack_pending = false;
    ctx_.report_error(status, message);
}

// ---------------------------------------------------------------- sending

int UdpTransport::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    Peer &p = peer_for(dest);
    if (p.failed)
        throw_failure(dest);
    OutgoingMessage *m = msg.get();
    p.txs().queue.push_back(std::move(msg));
    pump(p);
    if (p.failed)
        throw_failure(dest);
    if (p.tx->queue.empty() || p.tx->queue.back().get() != m)
        return LLC_OK; // every byte is in datagrams now (kept for retransmission)
    if (m->payload_len() <= ctx_.config().copy_max) {
        m->own_payload();
        return LLC_OK;
    }
    m->owes_callback = true;
    return LLC_INPROGRESS;
}

void UdpTransport::send_control(int dest, Kind kind, uint64_t seq)
{
    Peer &p = peer_for(dest);
    if (p.failed)
        throw_failure(dest);
    p.txs().queue.push_back(OutgoingMessage::make_control(kind, ctx_.rank(), seq));
    pump(p);
}

// ------------------------------------------------- the switching channel

void UdpTransport::ask_switch(int dest, SwitchWant want, uint64_t number, uint64_t geometry)
{
    Peer &p = peer_for(dest);
    if (p.failed)
        throw_failure(dest);
    SwitchAsks::Ask &a = asks_.add(dest, number, uint64_t(want), p.addr, monotonic_us(), geometry);
    send_switch_datagram(UdpType::SwitchAsk, dest, a.number, a.want, a.addr, a.detail);
}

void UdpTransport::send_switch_datagram(UdpType type, int dest, uint64_t number, uint64_t value, const sockaddr_in &to,
                                        uint64_t detail)
{
    UdpHeader h = header_to(type, dest);
    h.psn = number;
    h.ack = value;
    h.sack = detail;
    raw_send(reinterpret_cast<const char *>(&h), sizeof(h), to); // lost or not sent: the asker resends
}

// An ask from a receiver: act on it (or refuse) and answer, every time it
// comes (a repeated ask is answered again; Context's answer is the same).
//
// DC RDMA: an accepted UdpRing ask makes every datagram we packetize from
// now on (psn >= our next psn, the change point the answer carries) ring-
// addressed; an accepted Udp or Tcp ask ends that at our next psn.  The
// datagrams already built keep their addressing; the receiver lands each
// by its own flag, so the change point needs no agreement to be safe: it
// only tells the receiver where its ring starts being used.
void UdpTransport::on_switch_ask(const UdpHeader &h, const sockaddr_in &from)
{
    if (failed(h.src))
        return;
    SwitchVerdict v;
    const RingAddressing geometry = RingAddressing::unpack(h.sack);
    if (h.ack == uint64_t(SwitchWant::UdpRing) && !geometry.valid()) {
        ctx_.counters().rc_requests_received++;
        ctx_.counters().rc_requests_refused++;
        v = SwitchVerdict::Refused; // not a ring we could address
    } else {
        v = events_->on_switch_request(h.src, h.ack, h.psn);
    }
    uint64_t point = 0;
    Peer *p = find(h.src);
    if (!p && v == SwitchVerdict::Accepted && h.ack == uint64_t(SwitchWant::UdpRing))
        p = &peer_for(h.src); // (evicted since it last sent: its next datagrams are ring-addressed)
    if (p) {
        if (v == SwitchVerdict::Accepted) {
            if (h.ack == uint64_t(SwitchWant::UdpRing)) {
                if (!p->ring_tx())
                    ctx_.counters().dc_rdma_requests_accepted++;
                p->rings().tx = geometry;
            } else if (p->ring_tx()) {
                p->ring->tx = RingAddressing{};
            }
        }
        point = p->next_psn;
    }
    send_switch_datagram(UdpType::SwitchAnswer, h.src, h.psn, uint64_t(v), from, point);
}

// ------------------------------------------------- DC RDMA, receive side

UdpRingLanding *UdpTransport::landing_of(Peer &p)
{
    Peer::Ring &r = p.rings();
    if (r.looked_up && r.landing_epoch == events_->landing_epoch())
        return r.landing.get();
    size_t bytes = 0;
    char *base = events_->udp_landing_for(p.rank, bytes);
    r.looked_up = true;
    r.landing_epoch = events_->landing_epoch();
    if (r.landing && r.landing->base() == base)
        return r.landing.get();
    unland(p);
    const Config &cfg = ctx_.config();
    if (base && bytes >= cfg.ring_slots * cfg.ring_slot_bytes)
        r.landing = std::make_unique<UdpRingLanding>(base, size_t(cfg.ring_slots), size_t(cfg.ring_slot_bytes));
    return r.landing.get();
}

void UdpTransport::unland(Peer &p)
{
    if (!p.ring || !p.ring->landing)
        return;
    p.ring->landing->drain([&](uint64_t psn, const char *data, size_t len) {
        p.ooo.emplace(psn, std::vector<char>(data, data + len));
    });
    p.ring->landing.reset();
}

void UdpTransport::detach_landing(int src)
{
    Peer *p = const_cast<Peer *>(peek(src));
    if (!p || !p->ring)
        return;
    unland(*p);
    p->ring->looked_up = false; // look again at the next ring-addressed datagram
}

bool UdpTransport::resend_asks(uint64_t now)
{
    auto timeout = [this](const SwitchAsks::Ask &a) {
        const Peer *p = peek(a.dest);
        uint64_t base = p ? rto_for(*p, 0) : std::min<uint64_t>(ctx_.config().udp_rto_us, kMaxRtoUs);
        return base << std::min<unsigned>(a.retries, kMaxBackoffShift);
    };
    SwitchAsks::DueResult r = asks_.due(now, timeout, [this](const SwitchAsks::Ask &a) {
        send_switch_datagram(UdpType::SwitchAsk, a.dest, a.number, a.want, a.addr, a.detail);
    });
    ctx_.counters().rc_ask_resends += r.resent;
    ctx_.counters().rc_asks_unanswered += r.given_up;
    return r.resent != 0;
}

UdpHeader UdpTransport::header_to(UdpType type, int dest) const
{
    UdpHeader h{};
    h.magic = kUdpMagic;
    h.type = uint8_t(type);
    h.src = ctx_.rank();
    h.dst = dest;
    h.job_tag = job_tag_;
    const Peer *p = peek(dest);
    h.token = p ? p->tx_token : pair_token(h.src, dest);
    return h;
}

UdpHeader UdpTransport::header_to(UdpType type, const Peer &p) const
{
    UdpHeader h{};
    h.magic = kUdpMagic;
    h.type = uint8_t(type);
    h.src = ctx_.rank();
    h.dst = p.rank;
    h.job_tag = job_tag_;
    h.token = p.tx_token;
    return h;
}

uint64_t UdpTransport::pair_token(int src, int dst) const
{
    Mac m = secret_.mac(MacInput("llc-udp-pair-1").add_int(src).add_int(dst));
    uint64_t t;
    std::memcpy(&t, m.data(), sizeof(t));
    return t;
}

void UdpTransport::drop_stranger(const sockaddr_in &from, const char *why)
{
    ctx_.counters().udp_auth_dropped++;
    rejects_.note(ctx_.rank(), format_ip_port(from), why);
}

void UdpTransport::stamp(const Peer &p, UdpHeader &h) const
{
    h.src_inc = p.inc;
    h.dst_inc = p.peer_forgot ? 0 : p.peer_inc;
    h.flags = p.peer_forgot ? kFlagPairForgotten : 0;
}

void UdpTransport::fill_ack(const Peer &p, UdpHeader &h) const
{
    stamp(p, h);
    h.ack = p.rx_next;
    h.sack = 0;
    for (const auto &e : p.ooo) {
        uint64_t d = e.first - p.rx_next - 1;
        if (d >= 64)
            break; // std::map is ordered
        h.sack |= uint64_t(1) << d;
    }
    if (p.ring_held())
        h.sack |= p.ring->landing->sack_bits(p.rx_next);
}

namespace {
bool is_switch_datagram(const char *buf, size_t len)
{
    UdpHeader h;
    if (len < sizeof(h))
        return false;
    std::memcpy(&h, buf, sizeof(h));
    return h.type == uint8_t(UdpType::SwitchAsk) || h.type == uint8_t(UdpType::SwitchAnswer);
}
} // namespace

bool UdpTransport::raw_send(const char *buf, size_t len, const sockaddr_in &to)
{
    const Config &cfg = ctx_.config();
    if (cfg.udp_drop_permille && (!cfg.udp_drop_switch_only || is_switch_datagram(buf, len)) &&
        random() % 1000 < cfg.udp_drop_permille) {
        ctx_.counters().udp_injected_drops++;
        return true; // "sent", lost on the way
    }
    if (cfg.udp_reorder_permille && !have_held_ && random() % 1000 < cfg.udp_reorder_permille) {
        held_.assign(buf, buf + len); // goes out after the next datagram
        held_to_ = to;
        have_held_ = true;
        return true;
    }
    for (;;) {
        ssize_t w = ::sendto(sock_.get(), buf, len, MSG_DONTWAIT | MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr *>(&to), sizeof(to));
        if (w >= 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
            return false; // socket buffer full: try again later
        if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) {
            // A pending ICMP error (for any destination) was reported instead of sending.
            errors_pending_ = true;
            return false;
        }
        break; // anything else: treat as lost; the timers cope
    }
    if (have_held_)
        flush_held();
    return true;
}

void UdpTransport::flush_held()
{
    if (!have_held_)
        return;
    have_held_ = false;
    ::sendto(sock_.get(), held_.data(), held_.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
             reinterpret_cast<const sockaddr *>(&held_to_), sizeof(held_to_));
}

bool UdpTransport::transmit(Peer &p, TxPacket &pkt)
{
    UdpHeader h;
    std::memcpy(&h, pkt.buf.get(), sizeof(h));
    h.psn = pkt.psn; // renumbered when the streams restart
    fill_ack(p, h);
    // Ring-addressed if it was built so and the receiver still wants it (its
    // slot follows the psn, which a stream restart may have changed).
    h.reserved = 0;
    if (pkt.ring && p.ring_tx()) {
        h.flags |= kFlagRing;
        h.reserved = p.ring->tx.slot_of(pkt.psn);
    }
    std::memcpy(pkt.buf.get(), &h, sizeof(h));
    if (!raw_send(pkt.buf.get(), sizeof(UdpHeader) + pkt.len, p.addr))
        return false;
    pkt.sent_us = monotonic_us();
    p.ack_pending = false; // the acknowledgement rode along
    return true;
}

bool UdpTransport::pump(Peer &p)
{
    if (p.failed || !p.tx)
        return false;
    Tx &t = *p.tx;
    bool did = false;
    for (TxPacket &pkt : t.unacked) {
        if (pkt.sent_us != 0)
            continue;
        if (!transmit(p, pkt))
            return did;
        did = true;
    }
    // DC RDMA: at most one ring slot of bytes per datagram and one datagram
    // in flight per slot; a slot comes back with the cumulative ack that
    // says its datagram was fed to the receiver's decoder.
    const RingAddressing ring = p.ring ? p.ring->tx : RingAddressing{};
    const size_t window = ring.window(window_);
    const size_t cap = ring.payload_cap(mtu_);
    while (!t.queue.empty() && t.unacked.size() < window) {
        TxPacket pkt;
        pkt.psn = p.next_psn++;
        pkt.ring = ring.on();
        pkt.buf = get_buffer();
        char *data = pkt.buf.get() + sizeof(UdpHeader);
        size_t n = 0;
        while (n < cap && !t.queue.empty()) {
            OutgoingMessage &m = *t.queue.front();
            n += m.copy_out(data + n, cap - n);
            if (m.fully_written()) {
                ctx_.defer_completion(m, LLC_OK);
                t.queue.pop_front();
            }
        }
        pkt.len = uint32_t(n);
        UdpHeader h = header_to(UdpType::Data, p);
        h.len = uint16_t(pkt.len);
        h.psn = pkt.psn;
        std::memcpy(pkt.buf.get(), &h, sizeof(h));
        p.last_tx_us = monotonic_us();
        if (t.unacked.empty())
            p.oldest_unacked_since_us = p.last_tx_us;
        t.unacked.push_back(std::move(pkt));
        ctx_.counters().udp_packets_sent++;
        if (ring.on())
            ctx_.counters().dc_rdma_packets_sent++;
        did = true;
        if (!transmit(p, t.unacked.back()))
            break;
    }
    return did;
}

void UdpTransport::send_ack(Peer &p, bool probe)
{
    UdpHeader h = header_to(UdpType::Ack, p);
    fill_ack(p, h);
    if (probe)
        h.flags |= kFlagProbe;
    if (raw_send(reinterpret_cast<const char *>(&h), sizeof(h), p.addr)) {
        p.ack_pending = false;
        ctx_.counters().udp_acks_sent++;
    }
}

// -------------------------------------------------------------- receiving

void UdpTransport::on_ack(Peer &p, uint64_t ack, uint64_t sack)
{
    if (ack > p.next_psn || !p.tx)
        return; // acknowledges something never sent: ignore
    Tx &t = *p.tx;
    bool advanced = false;
    uint64_t now = monotonic_us(), sample = 0;
    while (!t.unacked.empty() && t.unacked.front().psn < ack) {
        TxPacket &pkt = t.unacked.front();
        if (pkt.retries == 0 && !pkt.fast_done && pkt.sent_us) // Karn: never time a retransmitted datagram
            sample = now - pkt.sent_us;
        put_buffer(std::move(pkt.buf));
        t.unacked.pop_front();
        advanced = true;
    }
    if (advanced) {
        p.oldest_unacked_since_us = now;
        if (sample)
            rtt_sample(p, sample);
        // Recovery after a timeout (like TCP NewReno's partial acks): the
        // next missing datagram was probably lost too; resend it now rather
        // than one timeout later.
        if (!t.unacked.empty() && t.unacked.front().psn < p.recover_psn) {
            TxPacket &f = t.unacked.front();
            if (!f.sacked && f.sent_us && now - f.sent_us >= std::max<uint64_t>(p.srtt_us, 1) && transmit(p, f)) {
                if (f.retries < 0xffff)
                    f.retries++;
                ctx_.counters().udp_retransmits++;
            }
        }
    }
    if (sack == 0)
        return;
    uint64_t highest = 0;
    for (TxPacket &pkt : t.unacked) {
        if (pkt.psn <= ack)
            continue;
        uint64_t d = pkt.psn - ack - 1;
        if (d >= 64)
            break;
        if ((sack >> d) & 1) {
            pkt.sacked = true;
            highest = pkt.psn;
        }
    }
    // Fast retransmit: a datagram that is missing although several later ones arrived.
    const uint64_t fast_distance = std::min<uint64_t>(kFastRetransmitDistance, window_ - 1);
    for (TxPacket &pkt : t.unacked) {
        if (pkt.psn + fast_distance > highest)
            break;
        if (pkt.sacked || pkt.fast_done || pkt.sent_us == 0)
            continue;
        pkt.fast_done = true;
        if (!transmit(p, pkt))
            break;
        ctx_.counters().udp_retransmits++;
    }
}

void UdpTransport::on_record(Peer &p, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    if (w.src != p.rank)
        throw Error(LLC_ERR_PEER, "protocol error: record with source rank " + std::to_string(w.src) +
                                      " in the udp stream from " + describe(p));
    switch (Kind(w.kind)) {
    case Kind::Am:
        events_->note_arrival(p.rank, NetEvents::Arrival::Udp, w.payload_len);
        ctx_.deliver(p.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    case Kind::Goodbye:
        p.goodbye_rx = true;
        p.goodbye_rx_us = monotonic_us();
        break;
    case Kind::SwitchAck:
        events_->on_switch_ack(p.rank);
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) +
                                      " in the udp stream from " + describe(p));
    }
}

void UdpTransport::feed(Peer &p, const char *data, size_t len)
{
    if (!p.decoder) {
        Peer *raw = &p;
        p.decoder = std::make_unique<StreamDecoder>([this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
    }
    try {
        p.decoder->feed(data, len);
    } catch (const Error &e) {
        fail_peer(p, e.status(), e.what());
    }
}

void UdpTransport::on_datagram(const char *buf, size_t len, const sockaddr_in &from)
{
    UdpHeader h;
    UdpHeaderCheck check = read_udp_header(buf, len, job_tag_, ctx_.size(), ctx_.rank(), h);
    if (check == UdpHeaderCheck::Short) {
        drop_stranger(from, "shorter than a header");
        return;
    }
    if (check != UdpHeaderCheck::Ok) {
        drop_stranger(from, "not a datagram of this job (magic, job tag or ranks)"); // or a stale port
        return;
    }
    // The pair token (see udp_transport.hpp) is checked before anything
    // looks further at the datagram: a known peer's is kept in its state, a
    // new one's computed.  Data and Ack below, with the lookup they make anyway.
    const bool data = h.type == uint8_t(UdpType::Data);
    if (!data && h.type != uint8_t(UdpType::Ack)) {
        const Peer *known = peek(h.src);
        if (h.token != (known ? known->rx_token : pair_token(h.src, h.dst))) {
            drop_stranger(from, "wrong pair token (does not know the job secret)");
            return;
        }
    }
    if (h.type == uint8_t(UdpType::Gone)) {
        // A process of h.src's node answers for it: it has left.
        forgets_.erase(std::remove_if(forgets_.begin(), forgets_.end(),
                                      [&](const PendingForget &f) { return f.rank == h.src; }),
                       forgets_.end());
        if (Peer *p = find(h.src))
            on_rank_gone(*p, describe(*p) + " has left: a process of its node answered that its socket is closed "
                                            "(LLC_UDP_SHARED_RECV=1); the process probably died");
        return;
    }
    if (h.type == uint8_t(UdpType::Forget)) {
        on_forget(h, from);
        return;
    }
    if (h.type == uint8_t(UdpType::ForgetAck)) {
        on_forget_ack(h);
        return;
    }
    if (h.type == uint8_t(UdpType::SwitchAsk)) {
        on_switch_ask(h, from);
        return;
    }
    if (h.type == uint8_t(UdpType::SwitchAnswer)) {
        uint64_t want = 0;
        if (asks_.answered(h.src, h.psn, &want))
            events_->on_switch_answer(h.src, h.psn, SwitchVerdict(h.ack), want, h.sack);
        return;
    }
    if (!udp_data_or_ack_shape_ok(h, len)) {
        drop_stranger(from, "malformed (type or length)");
        return;
    }
    Peer *p = find(h.src);
    if (h.token != (p ? p->rx_token : pair_token(h.src, h.dst))) {
        drop_stranger(from, "wrong pair token (does not know the job secret)");
        return;
    }
    if (!p) {
        if (!data || failed(h.src))
            return;
        p = &add_peer(h.src, &from);
    }
    if (p->failed)
        return;
    if (!data && (h.flags & kFlagProbe))
        p->oldest_unacked_since_us = monotonic_us(); // alive, waiting for us: liveness only (not activity)
    else
        p->last_heard_us = monotonic_us();
    if (!reconcile_incarnation(*p, h))
        return;
    if (finalizing_ && !p->goodbye_sent)
        queue_goodbye(*p); // a peer that had dropped its state for us talks again
    if (h.dst_inc == p->inc)
        on_ack(*p, h.ack, h.sack);
    if (!data)
        return;
    const char *payload = buf + sizeof(UdpHeader);
    p->ack_pending = true;
    if (h.psn < p->rx_next || p->ooo.count(h.psn) || (p->ring_held() && p->ring->landing->holds(h.psn))) {
        ctx_.counters().udp_duplicates++;
        return;
    }
    if (h.psn >= p->rx_next + window_)
        return; // beyond the window (cannot happen with a well-behaved sender): dropped
    // DC RDMA: a ring-addressed datagram lands in its slot of the ring
    // leased for this source (if it still has one and the slot is free) and
    // is fed from there; otherwise it takes the ordinary way below.
    UdpRingLanding *landing = (h.flags & kFlagRing) ? landing_of(*p) : nullptr;
    if (landing && landing->fits(h.psn, h.reserved, h.len, p->rx_next)) {
        landing->land(h.psn, payload, h.len);
        ctx_.counters().dc_rdma_bytes_landed += h.len;
    } else if (h.psn != p->rx_next) {
        p->ooo.emplace(h.psn, std::vector<char>(payload, payload + h.len));
        return;
    } else {
        p->rx_next++;
        feed(*p, payload, h.len);
    }
    deliver_early(*p);
    // Owed again: a handler fed above may have sent to p (a tagged CTS or
    // FIN), and that datagram carried the acknowledgement of its moment and
    // cleared ack_pending before the datagrams after it were fed.
    p->ack_pending = true;
}

// Feeds the datagrams that are next in psn order, from the ring or the
// early-datagram map.  The landing is looked up again after every feed:
// a failed decode drops it (fail_peer).
void UdpTransport::deliver_early(Peer &p)
{
    while (!p.failed) {
        size_t len = 0;
        const char *slot = p.ring_held() ? p.ring->landing->find(p.rx_next, len) : nullptr;
        if (slot) {
            const uint64_t psn = p.rx_next++;
            feed(p, slot, len);
            if (p.ring && p.ring->landing)
                p.ring->landing->release(psn); // consumed: the next ack credits the slot back
            continue;
        }
        auto it = p.ooo.find(p.rx_next);
        if (it == p.ooo.end())
            break;
        std::vector<char> d = std::move(it->second);
        p.ooo.erase(it);
        p.rx_next++;
        feed(p, d.data(), d.size());
    }
}

bool UdpTransport::receive_all(bool read_socket)
{
    bool did = take_handed_over(); // first: it frees the neighbours' hand-overs to us
    if (stalled_ && !retry_stalled())
        read_socket = false; // its destination is still full: leave the node's socket to the others
    for (int i = 0; read_socket && i < kRecvBudgetPerCall; i++) {
        sockaddr_in from{};
        socklen_t fl = sizeof(from);
        ssize_t n = ::recvfrom(sock_.get(), rxbuf_.get(), kRxBufBytes, MSG_DONTWAIT,
                               reinterpret_cast<sockaddr *>(&from), &fl);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) {
                errors_pending_ = true;
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                ctx_.report_error(LLC_ERR_SYSTEM, errno_message("recvfrom() on the udp socket", errno));
            break;
        }
        did = true;
        if (!dispatch(rxbuf_.get(), size_t(n), from))
            break; // held: read no more until it is handed over
    }
    did |= take_handed_over();
    return did;
}

bool UdpTransport::take_handed_over()
{
    if (!node_)
        return false;
    bool did = false;
    for (int i = 0; i < kRecvBudgetPerCall; i++) {
        sockaddr_in from{};
        size_t n = node_->take_handed_over(rxbuf_.get(), kRxBufBytes, from);
        if (n == 0)
            break;
        did = true;
        on_datagram(rxbuf_.get(), n, from);
    }
    return did;
}

// LLC_UDP_SHARED_RECV=1: a datagram read from the node's socket that is
// addressed to another process of the node goes to that process.  False if
// its buffers are full: the datagram is held (stalled_) and this process
// reads nothing more from the node's socket until it has been handed over,
// so the destination reads its own datagrams meanwhile; none is dropped.
bool UdpTransport::dispatch(const char *buf, size_t len, const sockaddr_in &from)
{
    if (node_ && len >= sizeof(UdpHeader)) {
        UdpHeader h;
        std::memcpy(&h, buf, sizeof(h));
        if (h.magic == kUdpMagic && h.job_tag == job_tag_ && h.dst != ctx_.rank()) {
            if (!node_->is_local(h.dst) || len > sizeof(UdpHeader) + mtu_)
                return true; // not for this node (a stale address), or an LLC_UDP_MTU we do not share: dropped
            if (hand_over(h, buf, len, from))
                return true;
            ctx_.counters().udp_handover_waits++;
            stalled_ = get_buffer();
            std::memcpy(stalled_.get(), buf, len);
            stalled_len_ = len;
            stalled_from_ = from;
            return false;
        }
    }
    on_datagram(buf, len, from);
    return true;
}

// False: the destination's buffers are full.
bool UdpTransport::hand_over(const UdpHeader &h, const char *buf, size_t len, const sockaddr_in &from)
{
    switch (node_->hand_over(h.dst, from, buf, len)) {
    case UdpNodeSocket::Handover::Sent:
        ctx_.counters().udp_handed_over++;
        return true;
    case UdpNodeSocket::Handover::Full:
        return false;
    case UdpNodeSocket::Handover::Gone:
        ctx_.counters().udp_handover_drops++;
        if (h.type == uint8_t(UdpType::Data) || h.type == uint8_t(UdpType::Forget))
            send_gone(h, from);
        return true;
    }
    return true;
}

bool UdpTransport::retry_stalled()
{
    UdpHeader h;
    std::memcpy(&h, stalled_.get(), sizeof(h));
    if (!hand_over(h, stalled_.get(), stalled_len_, stalled_from_))
        return false;
    put_buffer(std::move(stalled_));
    return true;
}

// Answer in the place of a process of this node that has left: the
// sender stops resending to it (or fails it), as on ICMP port unreachable.
void UdpTransport::send_gone(const UdpHeader &h, const sockaddr_in &to)
{
    UdpHeader g = header_to(UdpType::Gone, h.src);
    g.src = h.dst; // in its place
    g.token = pair_token(g.src, g.dst);
    g.dst_inc = h.src_inc;
    raw_send(reinterpret_cast<const char *>(&g), sizeof(g), to);
}

void UdpTransport::drain_errors()
{
    errors_pending_ = false;
    for (;;) {
        char control[512];
        char data[sizeof(UdpHeader)];
        sockaddr_in offender{};
        iovec iov{data, sizeof(data)};
        msghdr mh{};
        mh.msg_name = &offender;
        mh.msg_namelen = sizeof(offender);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = control;
        mh.msg_controllen = sizeof(control);
        ssize_t n = ::recvmsg(sock_.get(), &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
                continue;
            sock_extended_err ee;
            std::memcpy(&ee, CMSG_DATA(c), sizeof(ee));
            // Only "port unreachable" means the process is gone; host or
            // network unreachable can be transient: the timeout decides.
            if (ee.ee_origin == SO_EE_ORIGIN_ICMP && ee.ee_type == ICMP_DEST_UNREACH && ee.ee_code == ICMP_PORT_UNREACH)
                on_unreachable(offender);
        }
    }
}

void UdpTransport::on_unreachable(const sockaddr_in &addr)
{
    // The process is gone: nobody is left to answer our Forgets.
    forgets_.erase(std::remove_if(forgets_.begin(), forgets_.end(),
                                  [&](const PendingForget &f) {
                                      return f.addr.sin_addr.s_addr == addr.sin_addr.s_addr &&
                                             f.addr.sin_port == addr.sin_port;
                                  }),
                   forgets_.end());
    for (Peer *p : live_) {
        if (p->failed || p->addr.sin_addr.s_addr != addr.sin_addr.s_addr || p->addr.sin_port != addr.sin_port)
            continue;
        on_rank_gone(*p, describe(*p) + " is unreachable (ICMP port unreachable: its socket is closed); the process "
                                         "probably died");
    }
}

void UdpTransport::on_rank_gone(Peer &p, const std::string &why)
{
    if (p.failed)
        return;
    if (p.goodbye_rx) {
        // It said goodbye, so it had everything we sent (it waits for our
        // Goodbye, which follows our data) and has now left: stop
        // retransmitting to it.
        if (p.tx) {
            for (auto &pkt : p.tx->unacked)
                put_buffer(std::move(pkt.buf));
            p.tx->unacked.clear();
        }
        return;
    }
    fail_peer(p, LLC_ERR_PEER, why);
}

// ----------------------------------------------------------------- timers

bool UdpTransport::check_timers(Peer &p, uint64_t now)
{
    if (p.failed || !p.tx || p.tx->unacked.empty())
        return false;
    bool did = false;
    bool hole = false; // a datagram not selectively acknowledged is outstanding
    // One timer per peer, as in TCP: only the oldest datagram not yet
    // acknowledged is sent again on expiry (a stalled receiver then costs one
    // spurious datagram, not a window); later holes are filled by the
    // selective-acknowledgement path in on_ack or by the next expiry.
    for (TxPacket &pkt : p.tx->unacked) {
        if (pkt.sacked)
            continue;
        hole = true;
        // now was read before pump(p): a datagram pump sent in this call has
        // sent_us > now and must not look 2^64 us old (unsigned wrap).
        const uint64_t previous = pkt.sent_us;
        if (previous != 0 && previous <= now && now - previous >= rto_for(p, pkt.retries) && transmit(p, pkt)) {
            p.recover_psn = p.next_psn;
            if (pkt.retries < 0xffff)
                pkt.retries++;
            ctx_.counters().udp_retransmits++;
            ctx_.counters().udp_timeout_retransmits++;
            ctx_.counters().udp_timeout_wait_us += now - previous;
            did = true;
        }
        break;
    }
    // Every datagram still unacknowledged was selectively acknowledged: only
    // the receiver's cumulative acknowledgement is missing (lost, or never
    // sent), and the loop above has nothing to resend.  Without a timer here
    // the pair would wait for it forever whenever we have nothing new to
    // send (a hybrid route waiting for udp to drain holds its new sends).
    // After a timeout since the acknowledgements last advanced, resend the
    // oldest one: a duplicate makes the receiver acknowledge again.
    TxPacket &front = p.tx->unacked.front();
    if (!hole && front.sent_us != 0) {
        const uint64_t quiet_since = std::max(front.sent_us, p.oldest_unacked_since_us);
        if (quiet_since <= now && now - quiet_since >= rto_for(p, front.retries) && transmit(p, front)) {
            if (front.retries < 0xffff)
                front.retries++;
            ctx_.counters().udp_retransmits++;
            ctx_.counters().udp_timeout_retransmits++;
            did = true;
        }
    }
    if (peer_timeout_.expired(std::max(p.oldest_unacked_since_us, p.last_heard_us), now)) {
        fail_peer(p, LLC_ERR_PEER,
                  describe(p) + " acknowledged nothing for " + std::to_string(peer_timeout_.ms()) +
                      " ms (LLC_UDP_PEER_TIMEOUT_MS) while data to it was outstanding; the process probably died");
        did = true;
    }
    return did;
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

// A sender that died in the middle of a message sends nothing more, and a
// receiver with nothing to send never learns of it (check_timers watches
// only data we sent): a receive of a large message from a killed rank waited
// forever.  Such a peer is probed; a closed socket answers
// with ICMP port unreachable (on_rank_gone), and a peer that stays silent
// (host gone, or a stopped process) fails after LLC_UDP_PEER_TIMEOUT_MS.
bool UdpTransport::probe_stalled_senders(uint64_t now)
{
    bool did = false;
    size_t n = live_.size();
    for (size_t i = 0; i < n; i++) {
        Peer &p = *live_[i];
        if (p.failed || p.goodbye_rx)
            continue;
        if (!p.mid_message() || now <= p.last_heard_us || now - p.last_heard_us < kStallProbeUs)
            continue;
        if (peer_timeout_.expired(p.last_heard_us, now)) {
            fail_peer(p, LLC_ERR_PEER,
                      describe(p) + " sent part of a message and then nothing for " +
                          std::to_string(peer_timeout_.ms()) +
                          " ms (LLC_UDP_PEER_TIMEOUT_MS); the process probably died");
            did = true;
        } else if (!p.ack_pending) {
            send_ack(p, true);
        }
    }
    return did;
}

void UdpTransport::release_idle(uint64_t now)
{
    for (Peer *p : live_) {
        if (p->tx && p->tx_idle() && now - p->last_tx_us > kIdleReleaseUs)
            p->tx.reset();
        if (p->decoder && !p->mid_message() && now - p->last_heard_us > kIdleReleaseUs)
            p->decoder.reset();
    }
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
             (p->goodbye_sent ? "s" : "-") + (p->goodbye_rx ? "r" : "-") + ", heard " +
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

void UdpTransport::say_goodbye()
{
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
