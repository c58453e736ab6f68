// udp_rx.cpp - UdpTransport's receiving side: reading and checking
// datagrams, acknowledgements received, reassembly and delivery, DC RDMA
// landing rings, the socket's error queue and ranks that are gone.
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "support/inet_address.hpp"

#include <linux/errqueue.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace llc {

namespace {
constexpr int kRecvBudgetPerCall = 1024;
constexpr uint64_t kFastRetransmitDistance = 3;
} // namespace

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
    p.ring->landing->drain(
        [&](uint64_t psn, const char *data, size_t len) { p.ooo.emplace(psn, std::vector<char>(data, data + len)); });
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

// -------------------------------------------------------------- receiving

void UdpTransport::drop_stranger(const sockaddr_in &from, const char *why)
{
    ctx_.counters().udp_auth_dropped++;
    rejects_.note(ctx_.rank(), format_ip_port(from), why);
}

void UdpTransport::on_ack(Peer &p, uint64_t ack, uint64_t sack)
{
    if (ack > p.next_psn || !p.tx)
        return; // acknowledges something never sent: ignore
    Tx &t = *p.tx;
    bool advanced = false;
    uint64_t now = monotonic_us(), sample = 0;
    while (!t.unacked.empty() && t.unacked.front().psn < ack) {
        TxPacket &pkt = t.unacked.front();
        // Karn: never time a retransmitted datagram
        if (pkt.retries == 0 && !pkt.fast_done && !pkt.probed && pkt.sent_us)
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
        forgets_.erase(
            std::remove_if(forgets_.begin(), forgets_.end(), [&](const PendingForget &f) { return f.rank == h.src; }),
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
        ssize_t n =
            ::recvfrom(sock_.get(), rxbuf_.get(), kRxBufBytes, MSG_DONTWAIT, reinterpret_cast<sockaddr *>(&from), &fl);
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

} // namespace llc
