// tcp_rx.cpp - TcpTransport's receiving side: accepting, reading and
// decoding the streams, closing incoming connections, and writing the
// StreamAcks back.
#include "transport/tcp/tcp_transport.hpp"

#include "transport/tcp/tcp_messages.hpp"
#include "core/clock.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "support/inet_address.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace llc {

namespace {
constexpr size_t kStagingBytes = 64 * 1024;
constexpr size_t kDirectReadMin = 64 * 1024;
constexpr size_t kReadBudgetPerCall = 8u << 20;
// With LLC_TCP_PEER_TIMEOUT_MS at least this, StreamAcks are written with
// MSG_MORE: the kernel only appends them to the socket (no transmission on
// the receiver's critical path) and sends what it holds within its 200 ms
// cork ceiling, even if the process has gone off computing by then.
constexpr uint64_t kCorkedAcksMinTimeoutMs = 1000;
// Accepted connections still authenticating: beyond this many the oldest is
// closed (a stranger cannot hold more descriptors than this).
constexpr size_t kMaxPendingAuth = 128;
} // namespace

// -------------------------------------------------------------- receiving

// The record decoder of an authenticated receiving half (c.rank is known).
void TcpTransport::attach_decoder(InConn &c)
{
    InConn *raw = &c;
    c.decoder = std::make_unique<StreamDecoder>([this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
    c.decoder->set_source(c.rank);
    // A rendezvous payload for a posted receive is read from the socket
    // straight into its buffer (read_in's direct reads): no staging copy.
    c.decoder->set_placer([this, raw](const WireHeader &w, const void *hdr) {
        return int(w.src) == raw->rank ? ctx_.payload_destination(raw->rank, w, hdr) : nullptr;
    });
}

// A StreamAck read by the receiving half of a connection that carries both
// directions: it acknowledges the paired sending half's stream.
void TcpTransport::on_stream_ack(InConn &c, const WireHeader &w)
{
    c.bytes_read -= sizeof(WireHeader); // not part of the counted stream
    OutConn &o = *c.pair_out;
    if (w.src != c.rank || w.seq < o.bytes_acked || w.seq > o.bytes_written)
        throw Error(LLC_ERR_PEER, "protocol error: " + describe(c) + " sent an invalid stream acknowledgement (" +
                                      std::to_string(w.seq) + " bytes; " + std::to_string(o.bytes_written) +
                                      " written)");
    o.bytes_acked = w.seq;
    o.waiting_since_us = monotonic_us(); // advancing or not: the peer is alive (computing receivers)
}

bool TcpTransport::accept_all()
{
    bool did = false;
    for (;;) {
        sockaddr_in sa{};
        socklen_t len = sizeof(sa);
        int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr *>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                ctx_.report_error(LLC_ERR_SYSTEM, errno_message("accept() on the tcp listener", errno));
            return did;
        }
        auto c = std::make_unique<InConn>();
        c->fd.reset(fd);
        c->from = format_ip_port(sa);
        c->auth = std::make_unique<InConn::Auth>(); // the decoder comes with the authenticated Hello
        c->auth->accepted_us = monotonic_us();
        in_.push_back(std::move(c));
        pending_auth_++;
        did = true;
        if (pending_auth_ > kMaxPendingAuth) {
            for (auto &old : in_)
                if (old->auth && !old->closed) {
                    reject(*old, "more than " + std::to_string(kMaxPendingAuth) +
                                     " connections waiting to authenticate: the oldest is closed");
                    break;
                }
        }
    }
}

std::string TcpTransport::describe(const InConn &c) const
{
    if (c.rank >= 0)
        return "rank " + std::to_string(c.rank) + " (host " + c.addr + ")";
    return "an unidentified process at " + c.from;
}

void TcpTransport::on_record(InConn &c, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    switch (Kind(w.kind)) {
    case Kind::Hello: // only as the first record, read by the handshake (auth_step)
        throw Error(LLC_ERR_PEER, "protocol error: a second hello from " + describe(c));
    case Kind::Am:
        if (c.rank < 0 || w.src != c.rank)
            throw Error(LLC_ERR_PEER,
                        "protocol error: message before hello or with a wrong source from " + describe(c));
        events_->note_arrival(c.rank, NetEvents::Arrival::Tcp, w.payload_len);
        ctx_.deliver(c.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    case Kind::Goodbye:
        c.goodbye = true;
        break;
    case Kind::StreamAck:
        if (!c.pair_out)
            throw Error(LLC_ERR_PEER, "protocol error: a stream acknowledgement from " + describe(c) +
                                          " on a connection we do not send on");
        on_stream_ack(c, w);
        break;
    case Kind::Close:
        if (c.pair_out && !c.fd.valid())
            throw Error(LLC_ERR_PEER, "protocol error: " + describe(c) + " closed a connection it accepted");
        if (c.rank < 0 || w.src != c.rank)
            throw Error(LLC_ERR_PEER, "protocol error: close before hello or with a wrong source from " + describe(c));
        c.close_seen = true; // acted on by read_in once the bytes read are counted
        c.close_offset = w.seq;
        break;
    case Kind::Switch:
        if (c.rank < 0 || w.src != c.rank)
            throw Error(LLC_ERR_PEER,
                        "protocol error: switch marker before hello or with a wrong source from " + describe(c));
        events_->on_switch_marker(c.rank);
        break;
    default:
        throw Error(LLC_ERR_PEER,
                    "protocol error: unexpected record kind " + std::to_string(w.kind) + " from " + describe(c));
    }
}

void TcpTransport::close_in(InConn &c, int status, const std::string &message)
{
    OutConn *o = c.pair_out;
    if (o) {
        c.pair_out = nullptr;
        o->pair_in = nullptr;
    }
    c.closed = true;
    c.fd.reset();
    c.landing = nullptr;
    if (status != LLC_OK) {
        if (c.rank >= 0)
            events_->on_tcp_source_failed(c.rank); // its ring, if any, goes back after this progress call
        ctx_.report_peer_failure(c.rank, status, message);
    }
    if (!o || o->state == OutConn::State::Failed || o->state == OutConn::State::Closed)
        return;
    // The sending half on the same connection goes too (see tcp_transport.hpp).
    if (status != LLC_OK)
        fail_out(*o, status, message, false); // reported above
    else if (!o->queue.empty())
        fail_out(*o, LLC_ERR_PEER,
                 describe(c) + " closed the connection (it said goodbye) with " + std::to_string(o->queue.size()) +
                     " of our messages still to be written on it");
    else
        fail_out(*o, LLC_ERR_PEER, describe(c) + " has finalized and closed the connection", false);
}

bool TcpTransport::read_in(InConn &c)
{
    bool did = false;
    size_t budget = kReadBudgetPerCall;
    if (c.auth) {
        did = read_auth(c);
        if (c.auth || c.closed)
            return did;
    }
    while (!c.closed && budget > 0) {
        ssize_t n;
        size_t asked;
        StreamDecoder &d = *c.decoder;
        if (d.wants_payload() && d.payload_missing() >= kDirectReadMin) {
            char *dst = d.payload_cursor();
            asked = d.payload_room();
            n = ::recv(sock(c), dst, asked, MSG_DONTWAIT);
            if (n > 0) {
                c.bytes_read += uint64_t(n);
                {
                    Feeding guard(c);
                    d.payload_received(size_t(n));
                }
                if (c.pair_out && d.wants_payload()) {
                    // A connection used both ways is in the kernel's
                    // ping-pong mode, which delays its ACKs to ride on our
                    // next write; in the middle of a large payload that
                    // holds the sender's window back (64 KiB ping-pong 38 ->
                    // 51 us): ACK at once until the payload is in.
                    int one = 1;
                    ::setsockopt(sock(c), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
                }
            }
        } else {
            // A source holding a ring lands its records there (the ring is
            // returned only between progress calls, after a new epoch).
            if (c.rank >= 0 && c.landing_epoch != events_->landing_epoch()) {
                c.landing = events_->landing_for(c.rank, c.landing_bytes);
                c.landing_epoch = events_->landing_epoch();
            }
            asked = c.landing ? c.landing_bytes : kStagingBytes;
            char *buf = c.landing ? c.landing : staging_.reserve(kStagingBytes);
            n = ::recv(sock(c), buf, asked, MSG_DONTWAIT);
            if (n > 0) {
                c.bytes_read += uint64_t(n);
                if (c.landing)
                    ctx_.counters().ring_bytes_landed += uint64_t(n);
                {
                    Feeding guard(c);
                    d.feed(buf, size_t(n));
                }
            }
        }
        if (n > 0) {
            did = true;
            if (c.close_seen) {
                close_evicted(c);
                return true;
            }
            if (size_t(n) < asked)
                break; // the socket is drained (a short read): no recv just to see EAGAIN
            budget -= std::min(budget, size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        int err = n < 0 ? errno : 0;
        if (c.goodbye)
            close_in(c, LLC_OK, "");
        else if (err == ETIMEDOUT)
            close_in(c, LLC_ERR_PEER, kernel_timeout_message(describe(c)));
        else if (err == 0)
            close_in(c, LLC_ERR_PEER, describe(c) + " closed the connection unexpectedly; the process probably died");
        else
            close_in(c, LLC_ERR_PEER,
                     errno_message(describe(c) + "'s connection broke", err) + "; the process probably died");
        return true;
    }
    return did;
}

// The sender evicted this connection (a Close record): it is the last
// record, and everything before it has been delivered.  Close our end; the
// EOF that follows is not a failure.
void TcpTransport::close_evicted(InConn &c)
{
    const uint64_t expected = c.close_offset + sizeof(WireHeader);
    if (c.bytes_read != expected || !c.decoder->at_record_boundary()) {
        close_in(c, LLC_ERR_PEER,
                 "protocol error: " + describe(c) + " closed its connection after " + std::to_string(c.close_offset) +
                     " stream bytes, but " + std::to_string(c.bytes_read) +
                     " were read including the close record (expected " + std::to_string(expected) + ")");
        return;
    }
    ctx_.counters().tcp_closes_received++;
    close_in(c, LLC_OK, "");
}

// Prepare c.ack_out unless an acknowledgement is partly written already;
// true if there are acknowledgement bytes to write.
bool TcpTransport::stage_ack(InConn &c, bool repeat)
{
    if (c.ack_unsent > 0)
        return true;
    // Inside the decoder (a handler's send, c.feeding) the stream is read up
    // to the end of the record being delivered; otherwise up to bytes_read,
    // less the bytes of a header not decoded yet: they may be a StreamAck's,
    // which are not counted (both directions on one connection).
    const uint64_t upto = c.bytes_read - (!c.decoder  ? 0
                                          : c.feeding ? c.decoder->bytes_after_record()
                                                      : c.decoder->header_bytes_pending());
    if (upto <= c.bytes_acked) {
        c.ack_held_since_us = 0; // nothing decoded to acknowledge
        if (!repeat)
            return false;
    }
    c.bytes_acked = std::max(c.bytes_acked, upto);
    c.ack_out = make_wire_header(Kind::StreamAck, ctx_.rank(), 0, c.bytes_acked);
    c.ack_unsent = sizeof(WireHeader);
    c.ack_held_since_us = 0;
    return true;
}

// Tell the sender how much of its stream has been read (see tcp_transport.hpp).
void TcpTransport::send_ack(InConn &c, bool prompt, bool repeat)
{
    if (c.feeding)
        return; // called from a handler's send: at the end of the progress call instead (or with it, flush)
    // On a connection that carries both directions, a record starts only
    // where one of ours ends (see tcp_transport.hpp).
    if ((c.ack_unsent == 0 || c.ack_unsent == sizeof(WireHeader)) && c.pair_out && !c.pair_out->queue.empty() &&
        c.pair_out->queue.front()->started())
        return;
    if (!stage_ack(c, repeat))
        return;
    const char *p = reinterpret_cast<const char *>(&c.ack_out) + (sizeof(WireHeader) - c.ack_unsent);
    for (;;) {
        int more = peer_timeout_.ms() >= kCorkedAcksMinTimeoutMs && !c.acks_prompt && !prompt ? MSG_MORE : 0;
        ssize_t w = ::send(sock(c), p, c.ack_unsent, MSG_NOSIGNAL | MSG_DONTWAIT | more);
        if (w >= 0) {
            c.ack_unsent -= uint32_t(w);
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            c.ack_broken = true; // the read side sees the reset or EOF and reports it
        return;
    }
}

} // namespace llc
