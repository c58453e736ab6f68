// transport_rows.hpp - the table of transports the conformance suite
// (conformance_test.cpp) runs its checks against: per row the job layout,
// the children's environment, and what the transport promises.  A check
// runs on the rows whose promise it tests (rows_where); a property a
// transport does not have is an empty field, never a skipped test.
#pragma once

#include "llc.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace llctest {

using Env = std::vector<std::pair<std::string, std::string>>;

// A counter of llc_stats_t, summed over the job: a promise is only tested
// when it shows that the feature took part (the messages went over this
// transport, datagrams were dropped, peers were evicted).
struct StatCounter {
    const char *name;
    uint64_t llc_stats_t::*member;
};
#define LLC_STAT(field) ::llctest::StatCounter{#field, &llc_stats_t::field}

// Reliability under loss the test can inject.
struct LossPromise {
    Env inject;           // the settings that make the transport lose messages
    StatCounter injected; // counts what was lost (> 0 in the job)
};

// How a survivor learns that a peer's process is gone (_exit without llc_finalize).
struct DeathPromise {
    Env env; // shortened liveness timeouts: a missing fast detection still ends, with a message naming the timeout
    std::vector<std::string> reasons; // llc_last_error of the survivor names its mechanism with one of these
    double within_s;                  // from the death to LLC_ERR_PEER at the survivor (below the timeouts of env)
};

// A cap on per-peer state that the transport stays under by evicting.
struct CapPromise {
    Env cap;             // the settings making the cap smaller than the job's peer count
    StatCounter evicted; // counts evictions (> 0 in the job)
};

struct TransportRow {
    const char *name;
    // node_of_rank of the row's jobs: one node (self, shm) or one node per rank (the network rows)
    std::vector<int> nodes;
    Env env; // set in the children of every job of the row
    // Each > 0 in the job after any traffic: the messages took this transport.
    std::vector<StatCounter> path;
    // Each > 0 after the thousands of messages of the ordering check: what a
    // transport does for busy pairs only (the hybrid's promotions to tcp).
    std::vector<StatCounter> busy;
    // Messages of one ordered pair arrive in send order (llc.h promises it of every transport).
    bool ordered;
    std::optional<LossPromise> loss;   // nullopt: nothing to lose (self, shm) or no way to inject it (tcp)
    std::optional<DeathPromise> death; // nullopt: no other process to lose (self)
    std::optional<CapPromise> cap;     // nullopt: no cap on per-peer state
};

inline void PrintTo(const TransportRow &row, std::ostream *os) { *os << row.name; }

template <class T> std::vector<T> joined(std::vector<T> a, const std::vector<T> &b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline const std::vector<TransportRow> &transport_rows()
{
    // Every network row publishes 127.0.0.1 (the auto-detected address may
    // be an interface a sandbox filters; udp takes it too).
    static const Env kLoopback = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    static const Env kDropFivePercent = {{"LLC_UDP_DROP_PERMILLE", "50"}};
    // Liveness timeouts of 4 s: past the bound of the immediate detections
    // the rows promise (a closed socket, a vanished process: 2.5 s, taking
    // 0.1 s at most on an idle machine), so that a detection by timeout
    // fails the bound; well below the child alarm.
    static const Env kShortLiveness = {{"LLC_TCP_PEER_TIMEOUT_MS", "4000"}, {"LLC_UDP_PEER_TIMEOUT_MS", "4000"}};
    // A tcp peer's death: its connection closed or reset ("...; the process
    // probably died"), or closed while ours was still proving itself (a
    // connection opened around the death).
    static const std::vector<std::string> kTcpDeath = {"; the process probably died",
                                                       "closed the connection before proving"};
    static const std::string kUdpDeath = "ICMP port unreachable"; // the dead process's socket is closed
    // Two per-peer contexts for five ranks; idle udp state and hybrid routes
    // may go at once (the default 3.2 s of idleness is longer than a test).
    static const Env kCapTwo = {{"LLC_MAX_CONTEXTS", "2"}, {"LLC_UDP_EVICT_IDLE_MS", "0"}};
    static const std::vector<TransportRow> rows = {
        {"self", {0}, {}, {LLC_STAT(self_msgs)}, {}, true, std::nullopt, std::nullopt, std::nullopt},
        {"shm",
         {0, 0, 0},
         {},
         {LLC_STAT(shm_msgs)},
         {},
         true,
         std::nullopt,
         DeathPromise{{}, {"its process exited without finalizing"}, 2.5},
         std::nullopt},
        {"tcp",
         {0, 1, 2},
         joined(kLoopback, {{"LLC_NET", "tcp"}}),
         {LLC_STAT(tcp_msgs)},
         {},
         true,
         std::nullopt, // tcp has no loss injection: the kernel's retransmission is not ours to test
         DeathPromise{kShortLiveness, kTcpDeath, 2.5},
         // Below 1000 ms the receivers acknowledge at once instead of corked
         // (up to 200 ms late): a connection is evictable only once all it
         // carried is acknowledged, which must happen within the traffic.
         CapPromise{joined(kCapTwo, {{"LLC_TCP_PEER_TIMEOUT_MS", "999"}}), LLC_STAT(tcp_evictions)}},
        {"udp",
         {0, 1, 2},
         // (a retransmission timeout of 3 ms, as udp_test.cpp: the loss check's recovery stays quick)
         joined(kLoopback, {{"LLC_NET", "udp"}, {"LLC_UDP_RTO_US", "3000"}}),
         {LLC_STAT(udp_msgs)},
         {},
         true,
         LossPromise{kDropFivePercent, LLC_STAT(udp_injected_drops)},
         DeathPromise{kShortLiveness, {kUdpDeath}, 2.5},
         CapPromise{kCapTwo, LLC_STAT(udp_evictions)}},
        // Short periods and a low promotion level: busy sources move to tcp
        // (or to ring-addressed udp) within the test, so both paths and the
        // switches between them carry the checked traffic.
        {"hybrid",
         {0, 1, 2},
         joined(kLoopback, {{"LLC_NET", "hybrid"},
                            {"LLC_HYBRID_PERIOD_MS", "5"},
                            {"LLC_HYBRID_PROMOTE_MSGS", "8"},
                            {"LLC_UDP_RTO_US", "3000"}}),
         {LLC_STAT(udp_msgs)},
         {LLC_STAT(rc_promotions)},
         true,
         // a longer first period under loss: sources promoted within 5 ms
         // sometimes left so few datagrams on udp that 5 % dropped none
         LossPromise{joined(kDropFivePercent, {{"LLC_HYBRID_PERIOD_MS", "50"}}), LLC_STAT(udp_injected_drops)},
         DeathPromise{kShortLiveness, joined(kTcpDeath, {kUdpDeath}), 2.5},
         CapPromise{joined(kCapTwo, {{"LLC_MAX_RC_PER_NODE", "1"}}), LLC_STAT(hybrid_evictions)}},
        // verbs gets a row here on a machine with an RDMA device (none can run here).
    };
    return rows;
}

// The rows a check applies to.
template <class Pred> std::vector<TransportRow> rows_where(Pred applies)
{
    std::vector<TransportRow> out;
    for (const TransportRow &row : transport_rows())
        if (applies(row))
            out.push_back(row);
    return out;
}

} // namespace llctest
