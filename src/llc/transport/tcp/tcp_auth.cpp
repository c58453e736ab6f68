// tcp_auth.cpp - TcpTransport's authentication of connections (the
// connector's check of the acceptor's proof, the acceptor's exact-size
// reads of the Hello, rejects and their time limit).
#include "transport/tcp/tcp_transport.hpp"

#include "transport/tcp/tcp_messages.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"

#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace llc {

namespace {
const char kMacLabelAccept[] = "llc-tcp-accept-1";
} // namespace

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
            fail_out(c, LLC_ERR_PEER, kernel_timeout_message(who));
        else
            fail_out(c, LLC_ERR_PEER,
                     errno_message("the connection to " + who + " broke", errno) + "; the process probably died");
        return true;
    }
    TcpAuthProof pr;
    std::memcpy(&pr, a.buf, sizeof(pr));
    bool ok = pr.magic == kTcpAuthMagic && pr.version == kTcpAuthVersion && pr.rank == c.rank;
    try {
        if (ok) {
            Mac expect = secret_.mac(
                MacInput(kMacLabelAccept).add(a.nonce_c.data(), kNonceBytes).add_int(c.rank).add_int(ctx_.rank()));
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
        reject(c,
               "failed to prove that it belongs to this job (wrong HMAC in its hello: another job's secret, or none)");
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

} // namespace llc
