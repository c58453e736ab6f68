// tcp_tx.cpp - TcpTransport's sending side: connecting, the non-blocking
// writev queues, failing a connection, and reading the StreamAcks that come
// back on an outgoing connection.
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
#include <cstring>

namespace llc {

namespace {
constexpr int kMaxIovPerWrite = 64;
// At most this many bytes per sendmsg.  On loopback (and on a fast link) a
// non-blocking sendmsg of a large record keeps copying for as long as the
// reader drains, and a signal waits for the syscall's end: one call moved
// 1 GiB in 150 ms while a SIGKILL waited, so the peer received the whole
// message from a process killed near its start, and a job cancelled by
// SIGTERM or Ctrl-C waited as long.  Bounded calls keep the process killable
// within a few ms; tcp bandwidth between emulated hosts is unchanged within
// noise (a 1 MiB bound cost 5-8 % at 1-4 MiB).
constexpr size_t kMaxBytesPerWrite = size_t(16) << 20;

// Trims iov[0..n) to at most `max` bytes; returns the new count.
int clamp_iovec(struct iovec *iov, int n, size_t max)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len >= max - total) {
            iov[i].iov_len = max - total;
            return i + 1;
        }
        total += iov[i].iov_len;
    }
    return n;
}
constexpr size_t kAcksPerRead = 128; // per recv when draining (5 KiB of stack)
} // namespace

// ---------------------------------------------------------------- sending

void TcpTransport::start_connect(OutConn &c)
{
    std::string who = "rank " + std::to_string(c.rank) + " at " + c.addr;
    sockaddr_in sa;
    if (!parse_ip_port(c.addr, sa)) {
        fail_out(c, LLC_ERR_BOOTSTRAP,
                 "rank " + std::to_string(c.rank) + " published a malformed tcp address \"" + c.addr + "\"");
        return;
    }
    c.fd.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!c.fd.valid()) {
        fail_out(c, LLC_ERR_SYSTEM, errno_message("socket() to connect to " + who, errno));
        return;
    }
    int one = 1;
    ::setsockopt(c.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c.connect_deadline_us = monotonic_us() + ctx_.config().connect_timeout_ms * 1000;
    if (::connect(c.fd.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0) {
        c.state = OutConn::State::Connected;
    } else if (errno == EINPROGRESS || errno == EINTR) {
        c.state = OutConn::State::Connecting;
    } else {
        fail_out(c, LLC_ERR_PEER, errno_message("cannot connect to " + who, errno));
    }
}

int TcpTransport::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    auto in = enter();
    OutConn &c = out_conn(dest);
    if (c.state == OutConn::State::Failed)
        throw Error(c.failure_status, c.failure);
    OutgoingMessage *m = msg.get();
    c.queue.push_back(std::move(msg));
    if (c.state == OutConn::State::Connected && c.queue.size() == 1)
        write_out(c);
    if (c.state == OutConn::State::Failed)
        throw Error(c.failure_status, c.failure); // m was dropped: no callback
    if (c.queue.empty() || c.queue.back().get() != m)
        return LLC_OK; // fully written to the socket
    if (m->payload_len() <= ctx_.config().copy_max) {
        m->own_payload();
        return LLC_OK;
    }
    m->owes_callback = true;
    return LLC_INPROGRESS;
}

bool TcpTransport::write_out(OutConn &c)
{
    bool did = false;
    if (ack_partly_written(c)) {
        send_ack(*c.pair_in); // records do not interleave: finish the acknowledgement first
        if (ack_partly_written(c))
            return false;
    }
    while (!c.queue.empty()) {
        // Both directions on this connection: an acknowledgement owed to the
        // peer goes at the next record boundary (before our next record), so
        // that a steady stream of partly written records cannot hold it back.
        InConn *in = c.pair_in;
        const bool ack_owed = in && !in->closed && !in->ack_broken && !in->auth &&
                              (in->ack_unsent > 0 || in->bytes_read != in->bytes_acked);
        struct iovec iov[kMaxIovPerWrite];
        int n = 0;
        // The acknowledgement goes in the same sendmsg as the record.  A
        // handler's answer (a rendezvous' clear-to-send) so carries the
        // acknowledgement of the record it answers, which otherwise would
        // go by itself at the end of the progress call: a small segment in
        // the middle of the exchange, 64 KiB ping-pong 1.1x slower.
        uint32_t ack_len = 0;
        if (ack_owed && !c.queue.front()->started() && stage_ack(*in)) {
            ack_len = in->ack_unsent;
            iov[0].iov_base = reinterpret_cast<char *>(&in->ack_out) + (sizeof(WireHeader) - ack_len);
            iov[0].iov_len = ack_len;
            n = 1;
        }
        for (auto &m : c.queue) {
            n += m->fill_iovec(iov + n, kMaxIovPerWrite - n);
            if (n == kMaxIovPerWrite || ack_owed)
                break; // (with an acknowledgement owed: up to the end of the record in progress)
        }
        n = clamp_iovec(iov, n, kMaxBytesPerWrite);
        msghdr mh{};
        mh.msg_iov = iov;
        mh.msg_iovlen = size_t(n);
        ssize_t w = ::sendmsg(sock(c), &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            std::string who = "rank " + std::to_string(c.rank) + " (host " + c.addr + ")";
            if (c.auth && (errno == ECONNRESET || errno == EPIPE))
                fail_out(c, LLC_ERR_PEER, unproven_close_message(who));
            else if (errno == ETIMEDOUT)
                fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who));
            else
                fail_out(c, LLC_ERR_PEER,
                         errno_message("connection to " + who + " broke while sending", errno) +
                             "; the process probably died");
            return true;
        }
        did = true;
        size_t left = size_t(w);
        if (ack_len > 0) {
            // (StreamAck bytes are not counted in the stream offsets.)
            const uint32_t acked = uint32_t(std::min<size_t>(left, ack_len));
            in->ack_unsent -= acked;
            left -= acked;
            if (in->ack_unsent > 0)
                continue; // nothing of the record went: the rest of the acknowledgement first
        }
        bool owed_before = owes_ack(c);
        c.bytes_written += uint64_t(left);
        if (!owed_before && owes_ack(c))
            c.waiting_since_us = monotonic_us(); // the peer owes an acknowledgement from now on
        while (left > 0) {
            OutgoingMessage &m = *c.queue.front();
            size_t take = std::min(left, m.remaining());
            m.advance(take);
            left -= take;
            if (m.fully_written()) {
                ctx_.defer_completion(m, LLC_OK);
                c.queue.pop_front();
            }
        }
    }
    return did;
}

void TcpTransport::fail_out(OutConn &c, int status, const std::string &message, bool report)
{
    c.state = OutConn::State::Failed;
    if (InConn *in = c.pair_in) {
        // The other half of the connection goes with it (reported once, here).
        c.pair_in = nullptr;
        in->pair_out = nullptr;
        drop_in(*in);
    }
    c.fd.reset();
    c.failure_status = status;
    c.failure = message;
    for (auto &m : c.queue)
        ctx_.defer_completion(*m, LLC_ERR_PEER);
    c.queue.clear();
    if (report)
        ctx_.report_peer_failure(c.rank, status, message);
}

bool TcpTransport::check_out(OutConn &c, short revents)
{
    switch (c.state) {
    case OutConn::State::Failed:
    case OutConn::State::Closed:
        return false;
    case OutConn::State::Closing: {
        if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
            return false;
        write_out(c);
        if (c.state == OutConn::State::Closing && c.queue.empty())
            finish_close(c);
        return true;
    }
    case OutConn::State::Connecting: {
        std::string who = "rank " + std::to_string(c.rank) + " at " + c.addr;
        if (revents & (POLLOUT | POLLERR | POLLHUP)) {
            int err = 0;
            socklen_t len = sizeof(err);
            if (::getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                err = errno;
            if (err != 0) {
                fail_out(c, LLC_ERR_PEER, errno_message("cannot connect to " + who, err));
                return true;
            }
            c.state = OutConn::State::Connected;
            write_out(c);
            return true;
        }
        if (monotonic_us() > c.connect_deadline_us) {
            fail_out(c, LLC_ERR_TIMEOUT,
                     "connecting to " + who + " timed out after " + std::to_string(ctx_.config().connect_timeout_ms) +
                         " ms (LLC_CONNECT_TIMEOUT_MS); is the process alive and the address reachable?");
            return true;
        }
        return false;
    }
    case OutConn::State::Connected: {
        bool did = false;
        // Only StreamAck records come back on a connection we initiated
        // (polled for when due); otherwise the peer closed or reset it.
        // With both directions on it, the receiving half reads it instead
        // (the connector's once created, the acceptor's always).
        if (!c.adopted && !c.pair_in && (revents & (POLLIN | POLLRDHUP | POLLERR | POLLHUP))) {
            did = read_acks(c);
            if (c.state == OutConn::State::Failed)
                return true;
        }
        if (!c.queue.empty() && (revents & POLLOUT))
            did |= write_out(c);
        return did;
    }
    }
    return false;
}

// Read the StreamAck records waiting on an outbound socket.  Also the place
// where EOF or an error on it is noticed.
bool TcpTransport::read_acks(OutConn &c)
{
    auto who = [&c] { return "rank " + std::to_string(c.rank) + " (host " + c.addr + ")"; };
    alignas(8) char buf[sizeof(WireHeader) * kAcksPerRead];
    c.last_drain_us = monotonic_us();
    bool did = false;
    if (c.auth) {
        did = read_proof(c); // the first bytes back
        if (c.auth || c.state == OutConn::State::Failed)
            return did;
    }
    for (;;) {
        size_t have = c.ack_have;
        std::memcpy(buf, c.ack_buf, have);
        ssize_t n = ::recv(c.fd.get(), buf + have, sizeof(buf) - have, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return did;
            if (errno == ETIMEDOUT)
                fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who()));
            else
                fail_out(c, LLC_ERR_PEER,
                         errno_message("connection to " + who() + " broke", errno) + "; the process probably died");
            return true;
        }
        if (n == 0) {
            fail_out(c, LLC_ERR_PEER, who() + " closed the connection unexpectedly; the process probably died");
            return true;
        }
        did = true;
        size_t total = have + size_t(n), off = 0;
        for (; off + sizeof(WireHeader) <= total; off += sizeof(WireHeader)) {
            WireHeader w;
            std::memcpy(&w, buf + off, sizeof(w));
            if (bidi_ && w.kind != uint8_t(Kind::StreamAck)) {
                // The peer sends on this connection too: from here on the
                // stream back is read by a receiving half (see tcp_transport.hpp).
                c.ack_have = 0;
                InConn &r = reverse_half(c);
                r.bytes_read += uint64_t(total - off);
                try {
                    Feeding guard(r);
                    r.decoder->feed(buf + off, total - off);
                } catch (const Error &e) {
                    close_in(r, e.status(), e.what());
                }
                return true;
            }
            if (w.magic != kWireMagic || w.version != kWireVersion || w.kind != uint8_t(Kind::StreamAck) ||
                w.src != c.rank || w.hdr_len != 0 || w.aux_len != 0 || w.payload_len != 0 || w.seq < c.bytes_acked ||
                w.seq > c.bytes_written) {
                fail_out(c, LLC_ERR_PEER,
                         "protocol error: " + who() +
                             " sent something other than a valid stream acknowledgement on a send-only connection");
                return true;
            }
            c.bytes_acked = w.seq;
            c.waiting_since_us = c.last_drain_us; // advancing or not: alive (computing receivers)
        }
        c.ack_have = uint32_t(total - off);
        std::memcpy(c.ack_buf, buf + off, c.ack_have);
        if (size_t(n) < sizeof(buf) - have)
            return did; // short read: nothing more is waiting
    }
}

} // namespace llc
