// udp_timers.cpp - UdpTransport's time-driven work: the retransmission
// timeout and RTT estimate, retransmission on expiry, the silent-peer check
// (PeerTimeout), probing stalled senders and silent peers, and releasing
// idle peers' buffers.
#include "transport/udp/udp_transport.hpp"

#include "transport/udp/udp_constants.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"

#include <netinet/ip_icmp.h>

#include <algorithm>

namespace llc {

// ----------------------------------------------------------------- timers

// Retransmission timeout: srtt + 4 rttvar (as TCP does), at least
// LLC_UDP_RTO_US, at most kMaxRtoUs, doubled per retransmission up to 8x.
uint64_t UdpTransport::rto_for(const Peer &p, uint16_t retries) const
{
    uint64_t rto = std::max<uint64_t>(ctx_.config().udp_rto_us, uint64_t(p.srtt_us) + 4 * uint64_t(p.rttvar_us));
    rto = std::min(rto, kMaxRtoUs);
    return rto << std::min<unsigned>(retries, kMaxBackoffShift);
}

// Loss probe: a datagram's first resend comes after max(LLC_UDP_PROBE_US,
// 2 srtt) rather than after the retransmission timeout.  The timeout's floor
// must allow for a peer that is away from llc_progress for a while (its
// acknowledgements wait for it); the probe costs at most one datagram per
// datagram sent when the peer was only slow, and a lost datagram of a short
// flight (a request, a reply: no later datagram can reveal the loss through
// selective acknowledgements) is resent after a few round trips instead of
// LLC_UDP_RTO_US.  Never later than the timeout; 0 when there is no probe.
uint64_t UdpTransport::pto_for(const Peer &p) const
{
    const uint64_t floor = ctx_.config().udp_probe_us;
    const uint64_t rto = rto_for(p, 0);
    if (floor == 0 || p.srtt_us == 0 || floor >= rto)
        return 0;
    return std::min(rto, std::max<uint64_t>(floor, 2 * uint64_t(p.srtt_us)));
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
        if (previous == 0 || previous > now)
            break;
        // The first resend of a datagram is the loss probe (pto_for); the
        // timeout and its backoff run from the probe's transmission.
        const uint64_t pto = pkt.retries == 0 && !pkt.probed ? pto_for(p) : 0;
        if (pto != 0 && now - previous >= pto && now - previous < rto_for(p, 0)) {
            if (transmit(p, pkt)) {
                pkt.probed = true;
                ctx_.counters().udp_retransmits++;
                ctx_.counters().udp_probe_retransmits++;
                did = true;
            }
            break;
        }
        if (now - previous >= rto_for(p, pkt.retries) && transmit(p, pkt)) {
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

// A peer that died silently while it owed us nothing at this level (a
// reply above the transport: a get's data, the message a posted receive
// waits for, an MPI lock grant) was never noticed: nothing of ours was
// outstanding to it, and it was not in the middle of a message.  So a peer
// that has been silent for LLC_UDP_IDLE_PROBE_MS, and not probed for as
// long, is probed once, while we are in progress.  Only a closed socket
// answers (ICMP port unreachable, or Gone from its node's shared socket):
// a live peer says nothing, and its silence is never held against it, as
// it may compute outside MPI for any time.  A peer silent with its host
// gone is therefore not found this way (doc/reliability.md).  Bounded:
// kIdlePeersPerLook peers looked at and kIdleProbesPerLook probes per look.
void UdpTransport::probe_idle_peers(uint64_t now)
{
    if (!idle_probe_gap_us_ || finalizing_ || live_.empty())
        return;
    size_t n = live_.size(), sent = 0;
    for (size_t k = 0; k < std::min(n, kIdlePeersPerLook) && sent < kIdleProbesPerLook; k++) {
        if (idle_cursor_ >= n)
            idle_cursor_ = 0;
        Peer &p = *live_[idle_cursor_++];
        if (p.failed || p.goodbye_rx || p.peer_forgot || !p.tx_idle() || p.mid_message())
            continue; // gone, leaving, or watched already (check_timers, probe_stalled_senders)
        if (now <= p.last_heard_us || now - p.last_heard_us < idle_probe_gap_us_)
            continue;
        const uint32_t now_ms = uint32_t(now / 1000);
        if (p.idle_probe_ms && uint64_t(uint32_t(now_ms - p.idle_probe_ms)) * 1000 < idle_probe_gap_us_)
            continue; // (the difference of two truncated clocks: right for gaps under 49 days)
        p.idle_probe_ms = now_ms ? now_ms : 1;
        send_ack(p, true);
        sent++;
    }
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

} // namespace llc
