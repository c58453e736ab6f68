// tcp_transport.cpp - lazy connections, non-blocking writev queues, reassembly.
#include "transport/tcp/tcp_transport.hpp"

#include "core/clock.hpp"
#include "core/context.hpp"
#include "kvs/kvs.hpp"
#include "core/errors.hpp"
#include "support/inet_address.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace llc {

namespace {
constexpr size_t kStagingBytes = 64 * 1024;
constexpr size_t kDirectReadMin = 64 * 1024;
constexpr size_t kReadBudgetPerCall = 8u << 20;
constexpr int kMaxIovPerWrite = 64;
constexpr uint64_t kAckDrainIntervalUs = 1000; // a sender reads StreamAcks at most this often
constexpr size_t kAcksPerRead = 128; // per recv when draining (5 KiB of stack)
// With LLC_TCP_PEER_TIMEOUT_MS at least this, StreamAcks are written with
// MSG_MORE: the kernel only appends them to the socket (no transmission on
// the receiver's critical path) and sends what it holds within its 200 ms
// cork ceiling, even if the process has gone off computing by then.
constexpr uint64_t kCorkedAcksMinTimeoutMs = 1000;
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
constexpr uint64_t kAckFlushPeriodUs = 10000;
// Accepted connections still authenticating: beyond this many the oldest is
// closed (a stranger cannot hold more descriptors than this).
constexpr size_t kMaxPendingAuth = 128;
// incoming_quiet: an unauthenticated connection younger than this may be a
// peer of the job that is about to send (its Goodbye too); older ones are
// strangers as far as finalize is concerned.
constexpr uint64_t kAuthQuietGraceUs = 1000000;
const char kMacLabelAccept[] = "llc-tcp-accept-1";

// Part of the timeout messages for a peer that read nothing (the
// application-level check) or whose kernel acknowledged nothing
// (TCP_USER_TIMEOUT, ETIMEDOUT).
std::string timeout_advice(uint64_t timeout_ms)
{
    return "(LLC_TCP_PEER_TIMEOUT_MS=" + std::to_string(timeout_ms) +
           "; raise it if processes may spend longer without calling into MPI/llc_progress)";
}

// ETIMEDOUT on a socket with TCP_USER_TIMEOUT: "<who>: ... ; the host ...".
std::string kernel_timeout_message(const std::string &who, uint64_t timeout_ms)
{
    return "the kernel gave up on the connection with " + who + ": nothing acknowledged for " +
           std::to_string(timeout_ms) + " ms " + timeout_advice(timeout_ms) +
           "; the host is unreachable, or the process stopped or died";
}

// A connection closed by its acceptor before it proved itself (our Hello was
// rejected, most likely: see tcp_transport.hpp).
std::string unproven_close_message(const std::string &who)
{
    return who + " closed the connection before proving that it belongs to this job: it rejected our hello "
                 "(it does not know this job's secret, or we do not: not a process of this job, a stale address?), "
                 "or it died";
}

} // namespace

TcpTransport::TcpTransport(Context &ctx)
    : ctx_(ctx), cap_(ctx.config().max_contexts), peer_timeout_(ctx.config().tcp_peer_timeout_ms),
      secret_(ctx.bootstrap(), ctx.rank(), "llc-secret-tcp")
{
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listener_.valid())
        throw_errno(LLC_ERR_SYSTEM, "socket() for the tcp listener", errno);
    int one = 1;
    ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    sa.sin_port = 0;
    if (::bind(listener_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0)
        throw_errno(LLC_ERR_SYSTEM, "bind() of the tcp listener to 0.0.0.0", errno);
    if (::listen(listener_.get(), SOMAXCONN) != 0)
        throw_errno(LLC_ERR_SYSTEM, "listen() on the tcp listener", errno);
    socklen_t len = sizeof(sa);
    if (::getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&sa), &len) != 0)
        throw_errno(LLC_ERR_SYSTEM, "getsockname() of the tcp listener", errno);
    my_addr_ = choose_publish_address(ctx_.config().tcp_addr) + ":" + std::to_string(ntohs(sa.sin_port));
}

TcpTransport::~TcpTransport() = default;

const TransportCaps &TcpTransport::caps() const
{
    // a byte stream per connection; idle_wait is a poll() over its sockets
    static constexpr TransportCaps tcp =
        TransportCaps::named("tcp").with(CapOrdered | CapReliable | CapWakesOnArrival);
    return tcp;
}

void TcpTransport::publish_address() { ctx_.addresses().publish(AddrKind::Tcp, my_addr_); }

// See tcp_transport.hpp: with a cap below size - 1 eviction can happen, and
// evicting a connection that carries both directions is not done.
void TcpTransport::enable_bidirectional()
{
    bidi_ = ctx_.config().tcp_bidi && (ctx_.size() < 2 || ctx_.config().max_contexts >= size_t(ctx_.size() - 1));
    if (bidi_ && !flusher_) {
        const uint64_t period = std::min(kAckFlushPeriodUs, peer_timeout_.ms() * 1000 / 8);
        flusher_ = std::make_unique<AckFlusher>(mu_, period, [this] { return flush_held_acks(flusher_->period_us()); });
    }
}

// ---------------------------------------------------------------- sending

TcpTransport::OutConn &TcpTransport::out_conn(int dest)
{
    auto found = out_.find(dest);
    if (found != out_.end()) {
        OutConn &own = *found->second;
        own.last_use = ++use_clock_;
        if (!own.swap_wanted || !idle(own))
            return own;
        // Crossed connects (see tcp_transport.hpp): everything we wrote on
        // our own connection has been read, so it closes (a Close record)
        // and our messages go on the lower rank's connection from here on.
        evict(own, false);
    }
    if (bidi_) {
        if (OutConn *a = adopt(dest))
            return *a;
    }
    if (!finalizing_)
        make_room();
    auto c = std::make_unique<OutConn>();
    c->rank = dest;
    c->last_use = ++use_clock_;
    c->addr = ctx_.addresses().lookup(dest, AddrKind::Tcp); // on every (re)connect
    // The Hello proves that we belong to the job (see tcp_transport.hpp).
    c->auth = std::make_unique<OutConn::Auth>();
    random_bytes(c->auth->nonce_c.data(), kNonceBytes);
    std::string hello_aux = make_hello_aux(secret_, c->auth->nonce_c, ctx_.rank(), dest, my_addr_);
    c->queue.push_back(OutgoingMessage::make_control(Kind::Hello, ctx_.rank(), 0, hello_aux.data(), hello_aux.size()));
    if (finalizing_) {
        // A handler sends during finalize to a rank whose connection was
        // evicted: the new one needs its Goodbye too (as an open one has it,
        // with this send behind it), or the peer would wait for it.
        c->owed_limit = c->queue.front()->remaining();
        c->queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
    }
    start_connect(*c);
    OutConn &conn = track(dest, std::move(c));
    ctx_.counters().tcp_conns = open_count();
    return conn;
}

// A new sending half goes into out_ (by rank) and out_live_ (polled).
TcpTransport::OutConn &TcpTransport::track(int dest, std::unique_ptr<OutConn> c)
{
    OutConn &conn = *c;
    out_live_.push_back(&conn);
    try {
        out_.emplace(dest, std::move(c));
    } catch (...) {
        out_live_.pop_back();
        throw;
    }
    return conn;
}

// ----------------------------------- both directions on one connection
//
// See tcp_transport.hpp.  The acceptor's sending half: an accepted
// connection from dest, authenticated and not closing, that nobody sends on
// yet.  Null if there is none (then we connect).
TcpTransport::OutConn *TcpTransport::adopt(int dest)
{
    InConn *in = nullptr;
    for (auto &ic : in_)
        if (ic->rank == dest && !ic->closed && !ic->auth && !ic->close_seen && !ic->pair_out && ic->fd.valid()) {
            in = ic.get();
            break;
        }
    if (!in)
        return nullptr;
    auto c = std::make_unique<OutConn>();
    c->rank = dest;
    c->addr = in->addr;
    c->last_use = ++use_clock_;
    c->adopted = true;
    c->state = OutConn::State::Connected;
    if (finalizing_) {
        // As for a connection opened during finalize (out_conn): the Goodbye first.
        c->owed_limit = 0;
        c->queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
    }
    OutConn &conn = track(dest, std::move(c));
    conn.pair_in = in;
    in->pair_out = &conn;
    int one = 1;
    ::setsockopt(in->fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ctx_.counters().tcp_adopted++;
    return &conn;
}

// The connector's receiving half: created when the first record other than
// a StreamAck comes back on its connection.
TcpTransport::InConn &TcpTransport::reverse_half(OutConn &c)
{
    auto r = std::make_unique<InConn>();
    r->rank = c.rank;
    r->addr = c.addr;
    r->pair_out = &c;
    InConn *raw = r.get();
    attach_decoder(*raw);
    in_.push_back(std::move(r));
    c.pair_in = raw;
    return *raw;
}

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
    if (w.seq > o.bytes_acked) {
        o.bytes_acked = w.seq;
        o.waiting_since_us = monotonic_us();
    }
}

// Close an incoming connection or half without reporting anything (the
// caller unpaired it).
void TcpTransport::drop_in(InConn &c)
{
    c.closed = true;
    c.fd.reset();
    c.landing = nullptr;
}

// ------------------------------------------------- eviction (the cap)
//
// See tcp_transport.hpp.  The policy is every capped table's (PeerCap,
// support/peer_cap.hpp).  Only a connection whose peer has read (and so
// delivered) every byte we wrote may go: its Close is the only thing the
// receiver still reads from it, so a message on a new connection to the
// same rank cannot overtake anything.  The victim is the least recently
// sent-to idle connection (LRU).

bool TcpTransport::idle(const OutConn &c) const
{
    return !finalizing_ && !c.adopted && !c.pair_in && c.state == OutConn::State::Connected && !c.auth && c.queue.empty() &&
           c.bytes_acked == c.bytes_written && c.ack_have == 0;
}

size_t TcpTransport::open_count() const
{
    size_t n = 0;
    for (const OutConn *c : out_live_)
        n += is_open(*c) && !c->adopted ? 1 : 0; // outgoing connections we opened
    return n;
}

TcpTransport::OutConn *TcpTransport::lru_idle()
{
    return least_recently_used(
        out_live_, [this](const OutConn &c) { return idle(c); }, [](const OutConn &c) { return c.last_use; });
}

// Called before a new connection is opened.
void TcpTransport::make_room()
{
    auto victim = [this] {
        OutConn *v = lru_idle();
        if (!v) {
            // Acknowledgements are read lazily: look at the ones waiting on the
            // quiet connections (not read within the last millisecond, so that
            // a stream of new destinations costs at most one recv per
            // connection and millisecond), then look again.
            uint64_t now = 0;
            for (OutConn *c : out_live_)
                if (c->queue.empty() && acks_due(*c, now))
                    read_acks(*c);
            v = lru_idle();
        }
        return v;
    };
    if (cap_.make_room(open_count(), victim, [this](OutConn *v) { evict(*v); }) == PeerCap::Room::Overflow)
        ctx_.counters().tcp_cap_overflows++; // none idle: go above the cap, progress trims it later
}

// Above the cap (after overflows): evict idle connections until back at it.
void TcpTransport::trim(size_t open)
{
    cap_.trim(
        open, [this] { return lru_idle(); }, [this](OutConn *v) { evict(*v); });
}

void TcpTransport::evict(OutConn &c, bool for_cap)
{
    auto it = out_.find(c.rank);
    if (it == out_.end() || it->second.get() != &c)
        return; // not ours to evict (cannot happen)
    closing_.push_back(std::move(it->second)); // the pointer in out_live_ stays valid
    out_.erase(it);
    c.evicted = true;
    c.state = OutConn::State::Closing;
    if (for_cap)
        ctx_.counters().tcp_evictions++;
    // The receiver checks that it has read everything before the Close.
    c.queue.push_back(OutgoingMessage::make_control(Kind::Close, ctx_.rank(), c.bytes_written));
    flush(c); // the send buffer is empty (all acknowledged): the 40 bytes go at once
    if (c.state == OutConn::State::Closing && c.queue.empty())
        finish_close(c);
    ctx_.counters().tcp_conns = open_count();
}

// The Close record is written: close our end.  No StreamAck can be waiting
// unread (everything was acknowledged and the receiver acknowledges nothing
// after it), so the kernel sends a FIN, not a reset.
void TcpTransport::finish_close(OutConn &c)
{
    c.fd.reset();
    c.state = OutConn::State::Closed;
}

void TcpTransport::start_connect(OutConn &c)
{
    std::string who = "rank " + std::to_string(c.rank) + " at " + c.addr;
    sockaddr_in sa;
    if (!parse_ip_port(c.addr, sa)) {
        fail_out(c, LLC_ERR_BOOTSTRAP, "rank " + std::to_string(c.rank) + " published a malformed tcp address \"" + c.addr + "\"");
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
        set_user_timeout(c.fd.get());
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
        flush(c);
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

bool TcpTransport::flush(OutConn &c)
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
                fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who, peer_timeout_.ms()));
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
        ctx_.report_error(status, message);
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
        flush(c);
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
            set_user_timeout(c.fd.get());
            flush(c);
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
            did |= flush(c);
        return did;
    }
    }
    return false;
}

// Whether the acknowledgements on c should be read now (and so polled for).
bool TcpTransport::acks_due(const OutConn &c, uint64_t &now) const
{
    if (c.state != OutConn::State::Connected || !owes_ack(c) || c.adopted || c.pair_in)
        return false; // (a receiving half on the socket reads them as they come)
    if (now == 0)
        now = monotonic_us();
    return now - c.last_drain_us >= kAckDrainIntervalUs;
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
                fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who(), peer_timeout_.ms()));
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
                w.src != c.rank || w.hdr_len != 0 || w.aux_len != 0 || w.payload_len != 0 ||
                w.seq < c.bytes_acked || w.seq > c.bytes_written) {
                fail_out(c, LLC_ERR_PEER,
                         "protocol error: " + who() +
                             " sent something other than a valid stream acknowledgement on a send-only connection");
                return true;
            }
            if (w.seq > c.bytes_acked) {
                c.bytes_acked = w.seq;
                c.waiting_since_us = c.last_drain_us;
            }
        }
        c.ack_have = uint32_t(total - off);
        std::memcpy(c.ack_buf, buf + off, c.ack_have);
        if (size_t(n) < sizeof(buf) - have)
            return did; // short read: nothing more is waiting
    }
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

void TcpTransport::set_user_timeout(int fd) const
{
    // The kernel aborts the connection when data it sent stays
    // unacknowledged (host down, network partitioned) this long.
    unsigned int ms = unsigned(peer_timeout_.ms());
    ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

// -------------------------------------------------------------- receiving

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
        set_user_timeout(fd);
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
            throw Error(LLC_ERR_PEER, "protocol error: message before hello or with a wrong source from " + describe(c));
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
            throw Error(LLC_ERR_PEER, "protocol error: switch marker before hello or with a wrong source from " + describe(c));
        events_->on_switch_marker(c.rank);
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) + " from " + describe(c));
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
        ctx_.report_error(status, message);
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
            close_in(c, LLC_ERR_PEER, kernel_timeout_message(describe(c), peer_timeout_.ms()));
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
bool TcpTransport::stage_ack(InConn &c)
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
        return false;
    }
    c.ack_out = make_wire_header(Kind::StreamAck, ctx_.rank(), 0, upto);
    c.ack_unsent = sizeof(WireHeader);
    c.bytes_acked = upto;
    c.ack_held_since_us = 0;
    return true;
}

// Tell the sender how much of its stream has been read (see tcp_transport.hpp).
void TcpTransport::send_ack(InConn &c, bool prompt)
{
    if (c.feeding)
        return; // called from a handler's send: at the end of the progress call instead (or with it, flush)
    // On a connection that carries both directions, a record starts only
    // where one of ours ends (see tcp_transport.hpp).
    if ((c.ack_unsent == 0 || c.ack_unsent == sizeof(WireHeader)) && c.pair_out && !c.pair_out->queue.empty() &&
        c.pair_out->queue.front()->started())
        return;
    if (!stage_ack(c))
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

// ---------------------------------------------------------- authentication
//
// See tcp_transport.hpp.  Connector side first, then the acceptor's.

// The acceptor's proof, the first bytes on the way back.  True if something
// was read or the connection failed; c.auth is reset once the proof checked out.
bool TcpTransport::read_proof(OutConn &c)
{
    std::string who = "rank " + std::to_string(c.rank) + " at " + c.addr;
    OutConn::Auth &a = *c.auth;
    bool did = false;
    while (a.have < sizeof(TcpAuthProof)) {
        ssize_t n = ::recv(c.fd.get(), a.buf + a.have, sizeof(TcpAuthProof) - a.have, MSG_DONTWAIT);
        if (n > 0) {
            a.have += uint32_t(n);
            did = true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return did;
        if (n == 0 || errno == ECONNRESET)
            fail_out(c, LLC_ERR_PEER, unproven_close_message(who));
        else if (errno == ETIMEDOUT)
            fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who, peer_timeout_.ms()));
        else
            fail_out(c, LLC_ERR_PEER, errno_message("the connection to " + who + " broke", errno) +
                                          "; the process probably died");
        return true;
    }
    TcpAuthProof pr;
    std::memcpy(&pr, a.buf, sizeof(pr));
    bool ok = pr.magic == kTcpAuthMagic && pr.version == kTcpAuthVersion && pr.rank == c.rank;
    try {
        if (ok) {
            Mac expect = secret_.mac(MacInput(kMacLabelAccept)
                                         .add(a.nonce_c.data(), kNonceBytes)
                                         .add_int(c.rank)
                                         .add_int(ctx_.rank()));
            ok = same_bytes(expect.data(), pr.mac, kMacBytes);
        }
    } catch (const Error &e) {
        fail_out(c, e.status(), "authenticating the connection to " + who + ": " + e.what());
        return true;
    }
    if (!ok) {
        fail_out(c, LLC_ERR_PEER,
                 "the process at " + c.addr + " (the address rank " + std::to_string(c.rank) +
                     " published) failed to prove that it is rank " + std::to_string(c.rank) +
                     " of this job (wrong job secret or rank in its answer)");
        return true;
    }
    c.auth.reset();
    return true;
}

void TcpTransport::reject(InConn &c, const std::string &why)
{
    if (c.auth) {
        c.auth.reset();
        pending_auth_--;
    }
    c.closed = true;
    c.fd.reset();
    ctx_.counters().auth_rejected++;
    rejects_.note(ctx_.rank(), c.from, why);
}

void TcpTransport::expire_auth(uint64_t now)
{
    const uint64_t limit_us = ctx_.config().tcp_auth_timeout_ms * 1000;
    for (auto &c : in_)
        if (c->auth && !c->closed && now - c->auth->accepted_us > limit_us)
            reject(*c, "did not authenticate within " + std::to_string(ctx_.config().tcp_auth_timeout_ms) +
                           " ms (LLC_TCP_AUTH_TIMEOUT_MS)");
}

// Exact-size reads until the Hello has checked out (see tcp_transport.hpp).
bool TcpTransport::read_auth(InConn &c)
{
    bool did = false;
    while (c.auth && !c.closed) {
        InConn::Auth &a = *c.auth;
        char *dst = a.stage == InConn::Auth::Stage::HelloHeader ? reinterpret_cast<char *>(&a.hello) : a.buf;
        ssize_t n = ::recv(c.fd.get(), dst + a.have, a.need - a.have, MSG_DONTWAIT);
        if (n > 0) {
            did = true;
            a.have += uint32_t(n);
            if (a.have == a.need && !auth_step(c))
                return true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return did;
        reject(c, n == 0 ? "closed before authenticating" : errno_message("broke before authenticating", errno));
        return true;
    }
    return did;
}

// One piece of the Hello is complete; false if the connection was rejected.
bool TcpTransport::auth_step(InConn &c)
{
    InConn::Auth &a = *c.auth;
    const WireHeader &w = a.hello;
    if (a.stage == InConn::Auth::Stage::HelloHeader) {
        if (!hello_header_ok(w, ctx_.size(), ctx_.rank())) {
            reject(c, "its first bytes are not an llc hello record");
            return false;
        }
        a.stage = InConn::Auth::Stage::HelloAux;
        a.have = 0;
        a.need = w.aux_len;
        return true;
    }
    const char *nonce_c = a.buf;
    const char *addr = a.buf + kHelloProofBytes;
    const size_t addr_len = w.aux_len - kHelloProofBytes;
    if (!hello_proof_ok(secret_, w, a.buf, ctx_.rank())) {
        reject(c, "failed to prove that it belongs to this job (wrong HMAC in its hello: another job's secret, or none)");
        return false;
    }
    // Our proof, the first bytes back (the socket's send buffer is empty).
    TcpAuthProof pr{};
    pr.magic = kTcpAuthMagic;
    pr.version = kTcpAuthVersion;
    pr.rank = ctx_.rank();
    Mac mine = secret_.mac(MacInput(kMacLabelAccept).add(nonce_c, kNonceBytes).add_int(ctx_.rank()).add_int(w.src));
    std::memcpy(pr.mac, mine.data(), kMacBytes);
    ssize_t sent;
    do
        sent = ::send(c.fd.get(), &pr, sizeof(pr), MSG_NOSIGNAL | MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent != ssize_t(sizeof(pr))) {
        reject(c, "authenticated, but our proof could not be sent back (the connection broke at once)");
        return false;
    }
    // Authenticated: the rank is known from here on, and only from here.
    c.rank = w.src;
    c.addr.assign(addr, addr_len);
    c.bytes_read = sizeof(WireHeader) + w.aux_len; // the Hello is the first record of the counted stream
    attach_decoder(c);
    c.auth.reset();
    pending_auth_--;
    if (bidi_)
        note_crossed_connect(c);
    return true;
}

// Both ends connected to each other (see tcp_transport.hpp): the lower
// rank's connection is kept for both directions.  The higher rank moves its
// sends onto it once its own connection is idle (out_conn); the lower rank
// acknowledges the higher rank's old stream at once, so that it becomes idle
// soon.
void TcpTransport::note_crossed_connect(InConn &c)
{
    auto own = out_.find(c.rank);
    if (own == out_.end() || own->second->adopted || !is_open(*own->second))
        return;
    if (c.rank < ctx_.rank())
        own->second->swap_wanted = true;
    else
        c.acks_prompt = true;
}

// --------------------------------------------------------------- progress

void TcpTransport::build_pollset(uint64_t &now)
{
    if (!closing_.empty()) {
        // Evicted connections are gone once their Close is written (or
        // failed); progress is not iterating over out_live_ here.
        auto done = [](const OutConn *c) { return c->evicted && c->state != OutConn::State::Closing; };
        out_live_.erase(std::remove_if(out_live_.begin(), out_live_.end(), done), out_live_.end());
        closing_.erase(std::remove_if(closing_.begin(), closing_.end(),
                                      [&done](const std::unique_ptr<OutConn> &c) { return done(c.get()); }),
                       closing_.end());
    }
    pollset_.clear();
    pollset_.push_back({listener_.get(), POLLIN, 0});
    for (OutConn *c : out_live_) {
        short events = 0;
        if (c->state == OutConn::State::Connecting || c->state == OutConn::State::Closing)
            events = POLLOUT;
        else if (c->state == OutConn::State::Connected && (c->adopted || c->pair_in))
            events = c->queue.empty() ? 0 : POLLOUT; // the receiving half reads the socket
        else if (c->state == OutConn::State::Connected)
            events = short(POLLRDHUP | (c->auth || bidi_ || acks_due(*c, now) ? POLLIN : 0) | // the proof: once
                           (c->queue.empty() ? 0 : POLLOUT));
        int fd = sock(*c);
        pollset_.push_back({fd >= 0 ? fd : -1, events, 0});
    }
    for (auto &c : in_)
        pollset_.push_back({c->closed ? -1 : sock(*c), POLLIN, 0});
}

bool TcpTransport::progress_polling(int extra_fd, bool *extra_ready)
{
    auto in = enter();
    uint64_t now = 0; // read when needed
    build_pollset(now);
    if (extra_fd >= 0)
        pollset_.push_back({extra_fd, POLLIN, 0});
    int ready = ::poll(pollset_.data(), nfds_t(pollset_.size()), 0);
    if (ready < 0) {
        if (extra_ready)
            *extra_ready = true; // not known: let the caller look
        if (errno == EINTR)
            return false;
        throw_errno(LLC_ERR_SYSTEM, "poll() on the tcp sockets", errno);
    }
    if (extra_fd >= 0) {
        if (extra_ready)
            *extra_ready = (pollset_.back().revents & (POLLIN | POLLERR)) != 0;
        pollset_.pop_back();
    }
    bool did = false;
    size_t idx = 1;
    // Handlers (run from read_in) may open new out connections: iterate over
    // the ones that were polled only.
    size_t nout = out_live_.size();
    for (size_t i = 0; i < nout; i++)
        did |= check_out(*out_live_[i], pollset_[idx++].revents);
    // (The connector's receiving halves created meanwhile were not polled.)
    size_t nin = pollset_.size() - idx;
    for (size_t i = 0; i < nin; i++, idx++) {
        InConn &c = *in_[i];
        if (c.closed || !(pollset_[idx].revents & (POLLIN | POLLERR | POLLHUP)))
            continue;
        try {
            did |= read_in(c);
        } catch (const Error &e) {
            close_in(c, e.status(), e.what());
            did = true;
        }
    }
    // Liveness (see tcp_transport.hpp): acknowledge what was read, then
    // check the peers that owe us acknowledgements.
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
    for (size_t i = 0; i < nout; i++) {
        OutConn &c = *out_live_[i];
        if (c.state == OutConn::State::Connected && owes_ack(c)) {
            if (now == 0)
                now = monotonic_us();
            did |= check_liveness(c, now);
        }
    }
    if (pending_auth_ > 0) {
        if (now == 0)
            now = monotonic_us();
        expire_auth(now);
    }
    // Above the cap after overflows: evict what has become idle since.
    size_t open = open_count();
    if (!finalizing_ && open > cap_.cap()) {
        trim(open);
        open = open_count();
    }
    ctx_.counters().tcp_conns = open;
    if (pollset_[0].revents & POLLIN)
        did |= accept_all();
    in_.erase(std::remove_if(in_.begin(), in_.end(),
                             [](const std::unique_ptr<InConn> &c) {
                                 if (c->closed && c->pair_out) { // (closing unpairs: cannot happen)
                                     c->pair_out->pair_in = nullptr;
                                     c->pair_out = nullptr;
                                 }
                                 return c->closed;
                             }),
              in_.end());
    return did;
}

void TcpTransport::wait_for_activity(uint64_t us, int extra_fd, int extra_fd2)
{
    uint64_t now = 0;
    {
        auto in = enter(); // (not held while blocked: the flusher may write meanwhile)
        build_pollset(now);
    }
    for (int fd : {extra_fd, extra_fd2})
        if (fd >= 0)
            pollset_.push_back({fd, POLLIN, 0});
    const timespec ts = timespec_of_us(us);
    ::ppoll(pollset_.data(), nfds_t(pollset_.size()), &ts, nullptr);
}

bool TcpTransport::has_pending_sends() const
{
    auto in = enter();
    for (const OutConn *c : out_live_)
        if (c->state != OutConn::State::Failed && !c->queue.empty())
            return true;
    return false;
}

void TcpTransport::say_goodbye()
{
    auto in = enter();
    finalizing_ = true; // no more evictions: the Goodbye goes on the open connections
    for (OutConn *c : out_live_) {
        if (!is_open(*c))
            continue;
        uint64_t offset = c->bytes_written;
        for (const auto &m : c->queue)
            offset += m->remaining();
        c->owed_limit = offset; // liveness waits for the data before the Goodbye only
        c->queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
        if (c->state == OutConn::State::Connected && c->queue.size() == 1)
            flush(*c);
    }
}

bool TcpTransport::incoming_quiet() const
{
    auto in = enter();
    uint64_t now = 0;
    for (const auto &c : in_) {
        if (c->closed || c->goodbye)
            continue;
        if (c->auth) {
            // Maybe a peer about to send (see kAuthQuietGraceUs), maybe a stranger.
            if (now == 0)
                now = monotonic_us();
            if (now - c->auth->accepted_us >= kAuthQuietGraceUs)
                continue;
        }
        return false;
    }
    // Both directions on one connection: bytes waiting on one of our own
    // connections may be the peer's first records on it (its receiving half
    // is created when they are read; then its Goodbye is waited for above).
    if (bidi_)
        for (const OutConn *c : out_live_)
            if (!c->adopted && !c->pair_in && c->state == OutConn::State::Connected && c->fd.valid()) {
                pollfd p{c->fd.get(), POLLIN, 0};
                if (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
                    return false;
            }
    pollfd p{listener_.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) <= 0; // a connection waiting to be accepted is not quiet
}

} // namespace llc
