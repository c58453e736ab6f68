// Predicted time of each Alltoall algorithm (paper 002: Hockney per message,
// bandwidth divided by the topology's sharing; LogGP and LogPQ variants) and
// the pruning rule.
#pragma once

#include <vector>

#include "alltoall/algorithms.hpp"
#include "model/cost.hpp"
#include "model/params.hpp"

namespace llc::coll::model {

// procs P, bytes M per destination rank, sharing >= 1 (Analysis::sharing).
double predict_alltoall(Kind k, alltoall::Alg a, int procs, double bytes, const Params &p,
                        double sharing);
// All nine, indexed by static_cast<int>(Alg).
std::vector<double> predict_alltoall_all(Kind k, int procs, double bytes, const Params &p,
                                         double sharing);
// Keeps the algorithms predicted < threshold x the best (the best is always
// kept); threshold <= 0 keeps all.  Result in Alg order.
std::vector<alltoall::Alg> prune(const std::vector<double> &pred, double threshold);

}  // namespace llc::coll::model
