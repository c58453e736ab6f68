// udp_tx.cpp - UdpTransport's sending side: queueing messages, datagram
// headers and pair tokens, writing datagrams (pump, transmit, raw_send) and
// acknowledgements.
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"

#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace llc {

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

} // namespace llc
