// udp_switch_channel.cpp - UdpTransport's switching channel: the asks and
// answers by which the router moves a pair between transports (SwitchAsks).
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"

#include <sys/socket.h>

#include <algorithm>

namespace llc {

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

} // namespace llc
