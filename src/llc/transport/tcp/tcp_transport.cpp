// tcp_transport.cpp - the tcp transport's setup, its progress loop and its
// finalize hooks; the rest of TcpTransport is in tcp_peer.cpp, tcp_tx.cpp,
// tcp_rx.cpp, tcp_timers.cpp and tcp_auth.cpp.
#include "transport/tcp/tcp_transport.hpp"

#include "core/clock.hpp"
#include "core/context.hpp"
#include "kvs/kvs.hpp"
#include "core/errors.hpp"
#include "support/inet_address.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

namespace llc {

namespace {
constexpr uint64_t kAckFlushPeriodUs = 10000;
// Computing receivers (tcp_transport.hpp): the flusher tells senders of
// unread bytes that this process is alive every LLC_TCP_PEER_TIMEOUT_MS /
// this much (2.5 s by default), well inside their timeout.
constexpr uint64_t kAlivePerTimeout = 4;
// incoming_quiet: an unauthenticated connection younger than this may be a
// peer of the job that is about to send (its Goodbye too); older ones are
// strangers as far as finalize is concerned.
constexpr uint64_t kAuthQuietGraceUs = 1000000;
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
    start_flusher(alive_period_us());
}

uint64_t TcpTransport::alive_period_us() const
{
    return std::max<uint64_t>(1000, peer_timeout_.us() / kAlivePerTimeout);
}

// The flusher's thread wakes every period_us: the alive period alone, or
// the held acknowledgements' period on connections that carry both
// directions (enable_bidirectional).
void TcpTransport::start_flusher(uint64_t period_us)
{
    flusher_.reset(); // joins the thread of the period before
    flusher_ = std::make_unique<AckFlusher>(
        mu_, period_us, alive_period_us(), [this] { return flush_held_acks(flusher_->period_us()); },
        [this] { keep_alive(); });
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
    const uint64_t held_period_us = std::min(kAckFlushPeriodUs, peer_timeout_.ms() * 1000 / 8);
    if (bidi_ && flusher_->period_us() != held_period_us)
        start_flusher(held_period_us);
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
    send_due_acks(now);
    did |= check_senders(nout, now);
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

bool TcpTransport::flush()
{
    auto in = enter();
    if (finalizing_)
        return true;    // the Goodbyes are queued
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
            write_out(*c);
    }
    return true;
}

Transport::CloseState TcpTransport::close_state(CloseDetail) const
{
    CloseState s;
    s.quiet = incoming_quiet();
    return s;
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
