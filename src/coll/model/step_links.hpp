// Per-step link analysis of the Alltoall algorithms.
//
// The paper's model (topology.hpp, `Analysis::sharing`) uses one system-wide
// sharing factor for every algorithm.  Here each algorithm's schedule is
// walked step by step: the (src, dst) rank pairs of a step are mapped onto
// the fabric (the source node's link, the destination node's link and, for
// traffic between leaves, the destination leaf's downward uplink chosen by
// the routing rule `dest mod uplinks`), the flows on every link are counted,
// and the step's sharing is the largest load of a link that one of the
// step's flows crosses.  The algorithm time is the sum of the step times
// with that sharing (model-specific message cost, alltoall_model.hpp).
#pragma once

#include <string>
#include <vector>

#include "alltoall/algorithms.hpp"
#include "model/params.hpp"
#include "model/topology.hpp"

namespace llc::coll::model {

// LLC_ALLTOALL_MODEL_SHARING: one factor for all (Kurokawa's report) or per step.
enum class SharingMode { paper, steps };
const char *sharing_mode_name(SharingMode m);
bool sharing_mode_from_name(const std::string &s, SharingMode *out);

// One step of an algorithm's schedule: rank r sends `blocks` blocks of M
// bytes to dst[r] (the same number for every rank in a step).
struct StepPattern {
    int blocks = 1;
    std::vector<int> dst;
};
// Data steps of `a` on P ranks (Bruck: ceil(log2 P) rounds to r + 2^k;
// the others: P-1 steps of alltoall::step_partners).  Barriers and tokens
// are not steps here: the cost formulas add them.
std::vector<StepPattern> alltoall_schedule(alltoall::Alg a, int procs);

// Sharing of one step: for every link, the number of flows on it divided by
// the link's relative speed (node links 1, uplinks Fabric::uplink_speed);
// result = max over the step's flows of the max over its links (1 when the
// step has no network flow, e.g. all partners on the same node).
double step_sharing(const Fabric &f, const std::vector<int> &node_of_rank,
                    const StepPattern &s);
// The same for every step of `a`.
std::vector<double> alltoall_step_sharing(const Fabric &f, const std::vector<int> &node_of_rank,
                                          alltoall::Alg a);

}  // namespace llc::coll::model
