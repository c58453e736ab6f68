// Small collectives over llc_coll_p2p_t used by the tuning machinery (not by
// the data path): binomial broadcast from rank 0, binomial sum-reduce to
// rank 0, and "reduce, decide at rank 0, broadcast the decision", so that all
// ranks take the same decision.  Shared by the Alltoall and the broadcast.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "llc_coll.h"

namespace llc::coll::model {

// Tags 990..999 are reserved for these helpers.
constexpr int kTagParams = 990;
constexpr int kTagPing = 991;
constexpr int kTagReduce = 992;
constexpr int kTagDecide = 993;
constexpr int kTagDecisions = 994;

int bcast_bytes(const llc_coll_p2p_t *p, void *buf, size_t bytes, int tag);
// Element-wise sum of v over all ranks; the result is valid at rank 0 only.
int reduce_sum(const llc_coll_p2p_t *p, std::vector<double> *v, int tag);
// Sums `local` over all ranks, calls decide(sum) on rank 0 and returns its
// result (of the same length on every rank: `decision_len`) on every rank.
int agree(const llc_coll_p2p_t *p, const std::vector<double> &local, size_t decision_len,
          const std::function<std::vector<double>(const std::vector<double> &)> &decide,
          std::vector<double> *decision);

}  // namespace llc::coll::model
