// peer_timeout.hpp - when a silent peer is taken for dead.
//
// The transports that watch their peers (tcp: LLC_TCP_PEER_TIMEOUT_MS, udp:
// LLC_UDP_PEER_TIMEOUT_MS) follow one rule, written here.  A peer is watched
// only while it owes us something (tcp: the acknowledgement of bytes we
// wrote; udp: the acknowledgement of datagrams we sent, or the rest of a
// message it began).  Its silence counts from a moment the transport keeps
// for it: when it began to owe, or when it was last heard from, whichever
// is later.  It is dead once that silence is longer than the timeout; the
// transport then fails it with LLC_ERR_PEER and a message of its own that
// says for how long (silent_ms) and what to do.
//
// A moment after now (a clock read before the peer was last heard from, in
// the same progress call) is no silence at all: never an unsigned wrap.
#pragma once

#include <cstdint>

namespace llc {

class PeerTimeout {
public:
    explicit PeerTimeout(uint64_t timeout_ms) : ms_(timeout_ms) {}

    uint64_t ms() const { return ms_; }
    uint64_t us() const { return ms_ * 1000; }

    // Silent since `since_us` (monotonic microseconds), dead at `now_us`.
    bool expired(uint64_t since_us, uint64_t now_us) const { return now_us > since_us && now_us - since_us > us(); }

    // Whole milliseconds of silence at now_us (0 when since_us is later).
    static uint64_t silent_ms(uint64_t since_us, uint64_t now_us)
    {
        return now_us > since_us ? (now_us - since_us) / 1000 : 0;
    }

private:
    uint64_t ms_;
};

} // namespace llc
