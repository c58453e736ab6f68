// Predicted time of each Alltoall algorithm (Kurokawa's report: Hockney per message,
// bandwidth divided by the topology's sharing; LogGP and LogPQ variants) and
// the pruning rule.
#pragma once

#include <vector>

#include "alltoall/algorithms.hpp"
#include "model/cost.hpp"
#include "model/params.hpp"
#include "model/topology.hpp"

namespace llc::coll::model {

// Per-step form: step_sharing[i] is the sharing of data step i (Bruck:
// round i; the others: step i+1), as from alltoall_step_sharing().  Step
// time = the model's message cost with that sharing; algorithm time = sum of
// the steps plus the variant's tokens / barriers.  A shorter vector repeats
// its last element (empty = 1).
double predict_alltoall_steps(Kind k, alltoall::Alg a, int procs, double bytes, const Params &p,
                              const std::vector<double> &step_sharing);
// All nine with the per-step link analysis of `fabric` / `node_of_rank`
// (procs = node_of_rank.size()).
std::vector<double> predict_alltoall_all_steps(Kind k, const Fabric &fabric,
                                               const std::vector<int> &node_of_rank, double bytes,
                                               const Params &p);
// procs P, bytes M per destination rank, sharing >= 1 (Analysis::sharing):
// Kurokawa's report, the same factor for every step.
double predict_alltoall(Kind k, alltoall::Alg a, int procs, double bytes, const Params &p,
                        double sharing);
// All nine, indexed by static_cast<int>(Alg).
std::vector<double> predict_alltoall_all(Kind k, int procs, double bytes, const Params &p,
                                         double sharing);
// Keeps the algorithms predicted < threshold x the best (the best is always
// kept); threshold <= 0 keeps all.  Result in Alg order.
std::vector<alltoall::Alg> prune(const std::vector<double> &pred, double threshold);

}  // namespace llc::coll::model
