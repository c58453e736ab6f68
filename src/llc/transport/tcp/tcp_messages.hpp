// tcp_messages.hpp - the error texts that more than one file of the tcp
// transport (tcp_transport.hpp) writes.
#pragma once

#include <cstdint>
#include <string>

namespace llc {

// Part of the timeout message for a peer that read nothing (the
// application-level check).
inline std::string timeout_advice(uint64_t timeout_ms)
{
    return "(LLC_TCP_PEER_TIMEOUT_MS=" + std::to_string(timeout_ms) +
           "; raise it if the network may hold acknowledgements back longer)";
}

// ETIMEDOUT: the kernel's retransmissions went unanswered (its own limit,
// net.ipv4.tcp_retries2; the sockets carry no TCP_USER_TIMEOUT).
inline std::string kernel_timeout_message(const std::string &who)
{
    return "the kernel gave up on the connection with " + who +
           ": its retransmissions went unanswered; the host is unreachable or down";
}

// A connection closed by its acceptor before it proved itself (our Hello was
// rejected, most likely: see tcp_transport.hpp).
inline std::string unproven_close_message(const std::string &who)
{
    return who + " closed the connection before proving that it belongs to this job: it rejected our hello "
                 "(it does not know this job's secret, or we do not: not a process of this job, a stale address?), "
                 "or it died";
}

} // namespace llc
