// LogGP-style cost model of one virtual-rank binomial broadcast, used by the
// simulator (bench/bcast/bcast_sim) and the unit tests to produce wait
// profiles for the very same Optimizer/Profile code the library runs.
//
// A sender spends o + bytes*G per message (then may send the next one after
// max(g, o + bytes*G)); the message arrives L later; the receiver spends o
// before it forwards.  wait = max(0, arrival - enter) as measured by the
// library (time from entering the broadcast until the data arrived).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tree.hpp"

namespace llc::coll::bcast {

struct LogGP {
    double L = 2.0e-6;   // latency [s]
    double o = 1.0e-6;   // overhead per message [s]
    double g = 1.0e-6;   // gap between messages [s]
    double G = 0.4e-9;   // per byte [s] (~2.5 GB/s)
};

struct SimBcast {
    std::vector<double> wait;    // per real rank (0 for the root)
    std::vector<double> finish;  // per real rank: absolute finish time
    double overall = 0;          // last finish - first enter
    double average = 0;          // mean over processes of (finish - enter)
};

inline SimBcast simulate_bcast(const Table &t, int root, const std::vector<double> &enter,
                               std::size_t bytes, const LogGP &m)
{
    const int n = t.size();
    SimBcast r;
    r.wait.assign(n, 0.0);
    r.finish.assign(n, 0.0);
    std::vector<double> ready(n, 0.0);  // per position
    ready[0] = enter[root];
    const double cost = m.o + static_cast<double>(bytes) * m.G;
    for (int v = 0; v < n; v++) {  // parents come before their children
        double tnow = ready[v];
        tree_for_children(v, n, [&](int c) {
            const int rc = t.real_at(c, root);
            const double arrival = tnow + cost + m.L;
            r.wait[rc] = std::max(0.0, arrival - enter[rc]);
            ready[c] = std::max(enter[rc], arrival) + m.o;
            tnow += std::max(m.g, cost);
        });
        r.finish[t.real_at(v, root)] = tnow;
    }
    double first = enter[0], last = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        first = std::min(first, enter[i]);
        last = std::max(last, r.finish[i]);
        sum += r.finish[i] - enter[i];
    }
    r.overall = last - first;
    r.average = sum / n;
    return r;
}

}  // namespace llc::coll::bcast
