// traffic.hpp - a checked all-to-some message exchange used by several tests.
//
// Every sender sends `msgs_per_pair` messages of pseudo-random sizes (including
// 0 bytes and max_size) to each of its destinations, with deterministic
// contents; receivers check order, sizes, header alignment and every byte.
// The LLC_INPROGRESS/callback contract is checked per message, and buffers are
// scribbled over as soon as the library says it no longer needs them.
#pragma once

#include "common/test_bootstrap.hpp"

#include <cstddef>
#include <functional>

namespace llctest {

struct TrafficPlan {
    int msgs_per_pair = 30;
    size_t max_size = 8u << 20;
    int iov_segments = 1;                       // payload split into this many pieces
    std::function<bool(int src, int dst)> sends; // which ordered pairs exchange messages
    double timeout_s = 50;
};

struct TrafficResult {
    unsigned long long sent = 0, received = 0, inprogress = 0;
};

// Run inside a job child: init, exchange, finalize.  Uses GoogleTest assertions.
TrafficResult run_traffic(TestProcess &proc, const TrafficPlan &plan, llc_stats_t *stats_out = nullptr);

} // namespace llctest
