// tcp_transport.cpp - lazy connections, non-blocking writev queues, reassembly.
#include "tcp_transport.hpp"

#include "clock.hpp"
#include "context.hpp"
#include "kvs.hpp"
#include "errors.hpp"
#include "tcp_address.hpp"

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

} // namespace

TcpTransport::TcpTransport(Context &ctx) : ctx_(ctx)
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
    out_.resize(ctx_.size());
}

TcpTransport::~TcpTransport() = default;

void TcpTransport::publish_address() { ctx_.addresses().publish(AddrKind::Tcp, my_addr_); }

// ---------------------------------------------------------------- sending

TcpTransport::OutConn &TcpTransport::out_conn(int dest)
{
    if (!out_[dest]) {
        auto c = std::make_unique<OutConn>();
        c->rank = dest;
        c->addr = ctx_.addresses().lookup(dest, AddrKind::Tcp); // first contact only
        c->queue.push_back(OutgoingMessage::make_control(Kind::Hello, ctx_.rank(), 0, my_addr_.data(), my_addr_.size()));
        start_connect(*c);
        out_live_.push_back(c.get());
        out_[dest] = std::move(c);
    }
    return *out_[dest];
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
    } else if (errno == EINPROGRESS || errno == EINTR) {
        c.state = OutConn::State::Connecting;
    } else {
        fail_out(c, LLC_ERR_PEER, errno_message("cannot connect to " + who, errno));
    }
}

int TcpTransport::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
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
    while (!c.queue.empty()) {
        struct iovec iov[kMaxIovPerWrite];
        int n = 0;
        for (auto &m : c.queue) {
            n += m->fill_iovec(iov + n, kMaxIovPerWrite - n);
            if (n == kMaxIovPerWrite)
                break;
        }
        msghdr mh{};
        mh.msg_iov = iov;
        mh.msg_iovlen = size_t(n);
        ssize_t w = ::sendmsg(c.fd.get(), &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            fail_out(c, LLC_ERR_PEER,
                     errno_message("connection to rank " + std::to_string(c.rank) + " (host " + c.addr +
                                       ") broke while sending", errno) + "; the process probably died");
            return true;
        }
        did = true;
        size_t left = size_t(w);
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

void TcpTransport::fail_out(OutConn &c, int status, const std::string &message)
{
    c.state = OutConn::State::Failed;
    c.fd.reset();
    c.failure_status = status;
    c.failure = message;
    for (auto &m : c.queue)
        ctx_.defer_completion(*m, LLC_ERR_PEER);
    c.queue.clear();
    ctx_.report_error(status, message);
}

bool TcpTransport::check_out(OutConn &c, short revents)
{
    switch (c.state) {
    case OutConn::State::Failed:
        return false;
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
    case OutConn::State::Connected:
        if (revents & (POLLIN | POLLERR | POLLHUP)) {
            // Nothing is ever sent back on a connection we initiated: readable
            // means the peer closed it or reset it.
            char byte;
            ssize_t n = ::recv(c.fd.get(), &byte, 1, MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return false;
            std::string who2 = "rank " + std::to_string(c.rank) + " (host " + c.addr + ")";
            if (n > 0)
                fail_out(c, LLC_ERR_PEER, "protocol error: " + who2 + " sent data on a send-only connection");
            else
                fail_out(c, LLC_ERR_PEER, who2 + " closed the connection unexpectedly; the process probably died");
            return true;
        }
        if (!c.queue.empty() && (revents & POLLOUT))
            return flush(c);
        return false;
    }
    return false;
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
        c->from = format_ip_port(sa);
        InConn *raw = c.get();
        c->decoder = std::make_unique<StreamDecoder>([this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
        in_.push_back(std::move(c));
        did = true;
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
    case Kind::Hello:
        if (c.rank >= 0 || w.src < 0 || w.src >= ctx_.size())
            throw Error(LLC_ERR_PEER, "protocol error: bad hello from " + describe(c));
        c.rank = w.src;
        c.addr.assign(rec.aux, w.aux_len);
        break;
    case Kind::Am:
        if (c.rank < 0 || w.src != c.rank)
            throw Error(LLC_ERR_PEER, "protocol error: message before hello or with a wrong source from " + describe(c));
        ctx_.deliver(c.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    case Kind::Goodbye:
        c.goodbye = true;
        break;
    case Kind::Switch:
        if (c.rank < 0 || w.src != c.rank)
            throw Error(LLC_ERR_PEER, "protocol error: switch marker before hello or with a wrong source from " + describe(c));
        ctx_.on_switch_marker(c.rank);
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) + " from " + describe(c));
    }
}

void TcpTransport::close_in(InConn &c, int status, const std::string &message)
{
    c.closed = true;
    c.fd.reset();
    if (status != LLC_OK)
        ctx_.report_error(status, message);
}

bool TcpTransport::read_in(InConn &c)
{
    bool did = false;
    size_t budget = kReadBudgetPerCall;
    while (!c.closed && budget > 0) {
        ssize_t n;
        StreamDecoder &d = *c.decoder;
        if (d.wants_payload() && d.payload_missing() >= kDirectReadMin) {
            n = ::recv(c.fd.get(), d.payload_cursor(), d.payload_missing(), MSG_DONTWAIT);
            if (n > 0)
                d.payload_received(size_t(n));
        } else {
            char *buf = staging_.reserve(kStagingBytes);
            n = ::recv(c.fd.get(), buf, kStagingBytes, MSG_DONTWAIT);
            if (n > 0)
                d.feed(buf, size_t(n));
        }
        if (n > 0) {
            did = true;
            budget -= std::min(budget, size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        std::string why = n == 0 ? "closed the connection unexpectedly"
                                 : errno_message("'s connection broke", errno);
        if (c.goodbye)
            close_in(c, LLC_OK, "");
        else
            close_in(c, LLC_ERR_PEER, describe(c) + (n == 0 ? " " : "") + why + "; the process probably died");
        return true;
    }
    return did;
}

// --------------------------------------------------------------- progress

void TcpTransport::build_pollset()
{
    pollset_.clear();
    pollset_.push_back({listener_.get(), POLLIN, 0});
    for (OutConn *c : out_live_) {
        short events = 0;
        if (c->state == OutConn::State::Connecting)
            events = POLLOUT;
        else if (c->state == OutConn::State::Connected)
            events = short(POLLIN | (c->queue.empty() ? 0 : POLLOUT));
        pollset_.push_back({c->state == OutConn::State::Failed ? -1 : c->fd.get(), events, 0});
    }
    for (auto &c : in_)
        pollset_.push_back({c->closed ? -1 : c->fd.get(), POLLIN, 0});
}

bool TcpTransport::progress()
{
    build_pollset();
    int ready = ::poll(pollset_.data(), nfds_t(pollset_.size()), 0);
    if (ready < 0) {
        if (errno == EINTR)
            return false;
        throw_errno(LLC_ERR_SYSTEM, "poll() on the tcp sockets", errno);
    }
    bool did = false;
    size_t idx = 1;
    // Handlers (run from read_in) may open new out connections: iterate over
    // the ones that were polled only.
    size_t nout = out_live_.size();
    for (size_t i = 0; i < nout; i++)
        did |= check_out(*out_live_[i], pollset_[idx++].revents);
    size_t nin = in_.size();
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
    if (pollset_[0].revents & POLLIN)
        did |= accept_all();
    in_.erase(std::remove_if(in_.begin(), in_.end(), [](const std::unique_ptr<InConn> &c) { return c->closed; }),
              in_.end());
    return did;
}

void TcpTransport::wait_for_activity(uint64_t us, int extra_fd)
{
    build_pollset();
    if (extra_fd >= 0)
        pollset_.push_back({extra_fd, POLLIN, 0});
    timespec ts{time_t(us / 1000000), long(us % 1000000) * 1000};
    ::ppoll(pollset_.data(), nfds_t(pollset_.size()), &ts, nullptr);
}

bool TcpTransport::has_pending_sends() const
{
    for (const OutConn *c : out_live_)
        if (c->state != OutConn::State::Failed && !c->queue.empty())
            return true;
    return false;
}

void TcpTransport::say_goodbye()
{
    for (OutConn *c : out_live_) {
        if (c->state == OutConn::State::Failed)
            continue;
        c->queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
        if (c->state == OutConn::State::Connected && c->queue.size() == 1)
            flush(*c);
    }
}

bool TcpTransport::incoming_quiet() const
{
    for (const auto &c : in_)
        if (!c->closed && !c->goodbye)
            return false;
    pollfd p{listener_.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) <= 0; // a connection waiting to be accepted is not quiet
}

} // namespace llc
