// udp_peer.cpp - UdpTransport's per-peer state: the Peer table, eviction
// under the cap (PeerCap through PeerTable) with its Forget handshake and
// incarnations, and failing a peer.
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"
#include "kvs/kvs.hpp"
#include "core/errors.hpp"
#include "support/inet_address.hpp"

#include <sys/socket.h>

#include <algorithm>

namespace llc {

namespace {
constexpr uint64_t kForgetWaitUs = 8 * kMaxRtoUs; // a peer's Forget takes a few of its retransmissions at most
} // namespace

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
                throw Error(LLC_ERR_BOOTSTRAP,
                            "rank " + std::to_string(rank) + " published a malformed udp address \"" + text + "\"");
        }
        return p;
    };
    const uint64_t now = monotonic_us();
    Peer &ref = *peers_.get_or_create(rank, make,
                                      [this, now](int, const std::unique_ptr<Peer> &q) { return evictable(*q, now); });
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

// The cap's counters are the Peer table's (PeerCap): udp_evictions counts
// the peers it evicted (each through on_evict), udp_cap_overflows the peers
// created past it.
void UdpTransport::add_stats(llc_stats_t &st) const
{
    st.udp_evictions = peers_.evictions();
    st.udp_cap_overflows = peers_.overflows();
}

void UdpTransport::on_evict(Peer &p)
{
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
    auto it = std::find_if(forgets_.begin(), forgets_.end(),
                           [&](const PendingForget &f) { return f.rank == h.src && f.header.src_inc == h.dst_inc; });
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
        fail_peer(p, LLC_ERR_PEER,
                  "protocol error: " + describe(p) + " dropped its udp state after sending " +
                      std::to_string(forget.psn) + " datagrams, but " + std::to_string(p.rx_next) + " arrived here");
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
        fail_peer(p, LLC_ERR_PEER,
                  "protocol error: " + describe(p) +
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
        const bool fate_unknown =
            p.tx && !p.tx->unacked.empty() && (old_pair_live || (no_pair && (h.flags & kFlagPairForgotten)));
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
    ctx_.report_peer_failure(p.rank, status, message);
}

} // namespace llc
