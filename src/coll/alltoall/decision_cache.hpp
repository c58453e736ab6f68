// decision_cache.hpp - what a learning round of the dynamic Alltoall found,
// kept for later runs of the same shape (LLC_ALLTOALL_DECISIONS).
//
// A job that runs again on the same machines with the same number of
// processes per node learns the same thing again: up to a few dozen calls
// of slower candidates and their agreements, which a short run does not win
// back.  So rank 0 writes each round's winner and learned time to a cache
// file, keyed by the job's shape and the size class and the candidate list
// (which the settings that prune or add candidates change), and a later run
// whose key matches starts that class in monitoring with the winner: no
// learning call.  The monitor still compares every period with the learned
// time and learns again when the machine has changed (LLC_ALLTOALL_RELEARN),
// and the new round's result replaces the line.
//
// A run that starts from a kept decision also challenges (tuner.hpp) a
// close candidate that no earlier run has timed in a row, and the line keeps
// every candidate's race time and time in a row, so that the runs of a job
// go through the close candidates one by one and keep the fastest in a row.
//
// One line per key:
//   a2a1 <host of rank 0> P=<processes> nodes=<n> ppn=<most per node>
//        class=<c> cands=<name,name,...> alg=<winner> t=<learned seconds>
//        [race=<seconds,...> steady=<seconds,...>]
// (race and steady: one entry per candidate, in the order of cands, 0 for
// unknown; lines without them are read as before.)
#pragma once

#include <string>
#include <vector>

#include "alltoall/algorithms.hpp"

namespace llc::coll::alltoall {

struct DecisionKey {
    std::string host;
    int procs = 0;
    int nodes = 0;
    int per_node = 0;
    int size_class = 0;
    std::vector<Alg> candidates;

    // The line up to its result (the part that must match).
    std::string text() const;
    // nodes and per_node from a node number per rank (empty, the placement
    // unknown: 0 and 0).
    static DecisionKey of_job(const std::string &host, int procs, const std::vector<int> &node_of_rank, int size_class,
                              const std::vector<Alg> &candidates);
};

struct Decision {
    Decision() = default;
    Decision(Alg a, double t, std::vector<double> r = {}, std::vector<double> s = {})
        : alg(a), learned(t), race(std::move(r)), steady(std::move(s))
    {
    }
    Alg alg = Alg::pairwise;
    double learned = 0;         // seconds per call, as the learning round (or a challenge) measured it
    std::vector<double> race;   // per candidate of the key: race time (0: unknown); empty: none kept
    std::vector<double> steady; // per candidate of the key: time in a row (0: unknown); empty: none kept
};

// LLC_ALLTOALL_DECISIONS: a path, the default file ("auto"), or "" ("off").
std::string decision_cache_path();
// The decision stored for `key`, if a well-formed line names one of its candidates.
bool load_decision(const std::string &path, const DecisionKey &key, Decision *out);
bool store_decision(const std::string &path, const DecisionKey &key, const Decision &d);

} // namespace llc::coll::alltoall
