// tcp_peer.cpp - TcpTransport's per-peer connections: the rank ->
// connection table, both directions on one connection, eviction under the
// cap (PeerCap) and crossed connects.
#include "transport/tcp/tcp_transport.hpp"

#include "core/context.hpp"
#include "kvs/kvs.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace llc {

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
        evict(own); // (not an eviction for the cap: PeerCap counts only its own)
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
    return !finalizing_ && !c.adopted && !c.pair_in && c.state == OutConn::State::Connected && !c.auth &&
           c.queue.empty() && c.bytes_acked == c.bytes_written && c.ack_have == 0;
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
    // None idle: go above the cap (an overflow), progress trims it later.
    cap_.make_room(open_count(), victim, [this](OutConn *v) { evict(*v); });
}

// The cap's counters are PeerCap's: tcp_evictions counts the connections it
// evicted (not the crossed-connect swaps), tcp_cap_overflows the connections
// opened past it.
void TcpTransport::add_stats(llc_stats_t &st) const
{
    st.tcp_evictions = cap_.evictions();
    st.tcp_cap_overflows = cap_.overflows();
}

// Above the cap (after overflows): evict idle connections until back at it.
void TcpTransport::trim(size_t open)
{
    cap_.trim(
        open, [this] { return lru_idle(); }, [this](OutConn *v) { evict(*v); });
}

void TcpTransport::evict(OutConn &c)
{
    auto it = out_.find(c.rank);
    if (it == out_.end() || it->second.get() != &c)
        return;                                // not ours to evict (cannot happen)
    closing_.push_back(std::move(it->second)); // the pointer in out_live_ stays valid
    out_.erase(it);
    c.evicted = true;
    c.state = OutConn::State::Closing;
    // The receiver checks that it has read everything before the Close.
    c.queue.push_back(OutgoingMessage::make_control(Kind::Close, ctx_.rank(), c.bytes_written));
    write_out(c); // the send buffer is empty (all acknowledged): the 40 bytes go at once
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

} // namespace llc
