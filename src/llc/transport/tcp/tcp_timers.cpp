// tcp_timers.cpp - TcpTransport's time-driven work: when StreamAcks are
// read and written (held, mid-record), the liveness check of peers that owe
// acknowledgements (PeerTimeout), and the alive acknowledgements of a
// process that computes (keep_alive).
#include "transport/tcp/tcp_transport.hpp"

#include "transport/tcp/tcp_messages.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>

namespace llc {

namespace {
constexpr uint64_t kAckDrainIntervalUs = 1000; // a sender reads StreamAcks at most this often
// StreamAcks while a record is partly read: the receiver acknowledges at
// the end of the progress call that completes a record, and in between only
// once it has held one back for LLC_TCP_PEER_TIMEOUT_MS / this much time (a
// record that takes long to arrive still keeps its sender's liveness check
// content).  On a connection that carries both directions, one per
// progress call made a 64 KiB ping-pong 1.29x and a 4 MiB one 1.16x slower:
// each is a small segment that the peer, busy sending that record, reads.
// A process that leaves libllc in the middle of a record has not read the
// rest either, so its sender's check would fire in any case.
constexpr uint64_t kMidRecordAckDivisor = 8;
// Held acknowledgements (tcp_transport.hpp): the process writes one it has
// held this long itself; the AckFlusher's period.
constexpr uint64_t kAckHoldUs = 500;
} // namespace

// Whether the acknowledgements on c should be read now (and so polled for).
bool TcpTransport::acks_due(const OutConn &c, uint64_t &now) const
{
    if (c.state != OutConn::State::Connected || !owes_ack(c) || c.adopted || c.pair_in)
        return false; // (a receiving half on the socket reads them as they come)
    if (now == 0)
        now = monotonic_us();
    return now - c.last_drain_us >= kAckDrainIntervalUs;
}

// The StreamAcks owed at the end of a progress call: written, or held
// (mid-record, or for our next record on the connection); see tcp_transport.hpp.
void TcpTransport::send_due_acks(uint64_t &now)
{
    for (size_t i = 0; i < in_.size(); i++) {
        InConn &c = *in_[i];
        if (c.closed || c.auth || c.ack_broken || (c.ack_unsent == 0 && c.bytes_read == c.bytes_acked))
            continue;
        if (c.ack_unsent == 0) {
            // In the middle of a record its sender learns nothing it needs
            // before the record is in (see kMidRecordAckDivisor); at a record
            // boundary on a connection used both ways, our next record there
            // may carry it (held acknowledgements, tcp_transport.hpp).
            const bool mid_record = c.decoder && !c.decoder->at_record_boundary();
            if (mid_record || (flusher_ && c.pair_out && !c.acks_prompt)) {
                if (now == 0)
                    now = monotonic_us();
                if (c.ack_held_since_us == 0)
                    c.ack_held_since_us = now;
                const uint64_t limit = mid_record ? peer_timeout_.ms() * 1000 / kMidRecordAckDivisor : kAckHoldUs;
                if (now - c.ack_held_since_us < limit) {
                    if (!mid_record)
                        flusher_->note_held();
                    continue;
                }
            }
        }
        send_ack(c);
    }
}

// The liveness check of the first nout outgoing connections (those polled
// by this progress call) whose peers owe us acknowledgements.
bool TcpTransport::check_senders(size_t nout, uint64_t &now)
{
    bool did = false;
    for (size_t i = 0; i < nout; i++) {
        OutConn &c = *out_live_[i];
        if (c.state == OutConn::State::Connected && owes_ack(c)) {
            if (now == 0)
                now = monotonic_us();
            did |= check_liveness(c, now);
        }
    }
    return did;
}

bool TcpTransport::check_liveness(OutConn &c, uint64_t now)
{
    if (c.state != OutConn::State::Connected || !owes_ack(c))
        return false;
    if (!peer_timeout_.expired(c.waiting_since_us, now))
        return false;
    // Acknowledgements are read lazily: look at the ones waiting first
    // (a receiving half on the same socket reads them whenever they come).
    if (!c.adopted && !c.pair_in && read_acks(c) && c.state == OutConn::State::Failed)
        return true;
    if (!owes_ack(c) || !peer_timeout_.expired(c.waiting_since_us, now))
        return false;
    fail_out(c, LLC_ERR_PEER,
             "rank " + std::to_string(c.rank) + " (host " + c.addr + ") has read none of the " +
                 std::to_string(std::min(c.bytes_written, c.owed_limit) - c.bytes_acked) +
                 " bytes outstanding to it for " + std::to_string(PeerTimeout::silent_ms(c.waiting_since_us, now)) +
                 " ms " + timeout_advice(peer_timeout_.ms()) + "; the process probably stopped or died");
    return true;
}

// Held acknowledgements (tcp_transport.hpp): from the AckFlusher's thread,
// with mu_ held, while the process is outside the transport.
bool TcpTransport::flush_held_acks(uint64_t older_than_us)
{
    const uint64_t now = monotonic_us();
    bool still = false;
    for (auto &p : in_) {
        InConn &c = *p;
        if ((c.ack_held_since_us == 0 && c.ack_unsent == 0) || c.closed || c.auth || c.ack_broken)
            continue;
        if (c.ack_unsent > 0 || now - c.ack_held_since_us >= older_than_us)
            send_ack(c, true); // the process is away: not corked
        still |= c.ack_held_since_us != 0 || c.ack_unsent > 0;
    }
    return still;
}

// Computing receivers (tcp_transport.hpp): from the AckFlusher's thread,
// with mu_ held, every alive period.  Connections a peer opened meanwhile
// are accepted and authenticated (the Hello only: exact-size reads, no
// record is decoded here).  A connection whose socket holds bytes we have
// not read, or whose read bytes are not all acknowledged, gets a StreamAck
// (the last count again if nothing new was decoded).
void TcpTransport::keep_alive()
{
    accept_all();
    for (size_t i = 0; i < in_.size(); i++) // (read_auth may not add or remove any)
        if (in_[i]->auth && !in_[i]->closed)
            read_auth(*in_[i]);
    for (auto &p : in_) {
        InConn &c = *p;
        if (c.closed || c.auth || c.ack_broken || c.rank < 0)
            continue;
        int unread = 0;
        if (::ioctl(sock(c), FIONREAD, &unread) != 0)
            unread = 0;
        if (unread > 0 || c.bytes_read > c.bytes_acked || c.ack_unsent > 0)
            send_ack(c, true, true);
    }
}

} // namespace llc
