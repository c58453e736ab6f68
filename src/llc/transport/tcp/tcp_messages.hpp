// tcp_messages.hpp - the error texts that more than one file of the tcp
// transport (tcp_transport.hpp) writes.
#pragma once

#include <cstdint>
#include <string>

namespace llc {

// Part of the timeout messages for a peer that read nothing (the
// application-level check) or whose kernel acknowledged nothing
// (TCP_USER_TIMEOUT, ETIMEDOUT).
inline std::string timeout_advice(uint64_t timeout_ms)
{
    return "(LLC_TCP_PEER_TIMEOUT_MS=" + std::to_string(timeout_ms) +
           "; raise it if processes may spend longer without calling into MPI/llc_progress)";
}

// ETIMEDOUT on a socket with TCP_USER_TIMEOUT: "<who>: ... ; the host ...".
inline std::string kernel_timeout_message(const std::string &who, uint64_t timeout_ms)
{
    return "the kernel gave up on the connection with " + who + ": nothing acknowledged for " +
           std::to_string(timeout_ms) + " ms " + timeout_advice(timeout_ms) +
           "; the host is unreachable, or the process stopped or died";
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
