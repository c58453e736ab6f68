// STAR-MPI style selection for one (communicator, message-size class):
// learning phase (every candidate `trials` times in a row, mean time over
// the calls and over the processes, fastest wins) and monitoring phase (the
// winner; every `period` calls the mean time of the period is compared with
// the learned time and a relative deviation beyond `relearn` re-enters
// learning).  Pure logic: the caller measures the time and runs the
// reduce/decide/broadcast (model::agree) when record() asks for it, so every
// rank applies the same decision.
#pragma once

#include <vector>

#include "alltoall/algorithms.hpp"

namespace llc::coll::alltoall {

struct TunerConfig {
    int trials = 3;        // LLC_ALLTOALL_TRIALS
    int period = 50;       // LLC_ALLTOALL_MONITOR_PERIOD (0: never re-check)
    double relearn = 0.5;  // LLC_ALLTOALL_RELEARN
};

class Tuner {
  public:
    enum class Phase { learning, monitoring };

    Tuner(std::vector<Alg> candidates, TunerConfig cfg);

    Alg current() const;
    // Local time of the call just made with current().  True when the caller
    // must now agree on a decision (same call on every rank).
    bool record(double seconds);
    std::vector<double> summary() const;  // local values, summed over the ranks
    size_t decision_len() const;
    std::vector<double> decide(const std::vector<double> &sum, int nprocs) const;  // at rank 0
    void apply(const std::vector<double> &decision);

    Phase phase() const { return phase_; }
    Alg chosen() const { return chosen_; }
    double learned_time() const { return learned_; }
    double last_monitored() const { return last_monitored_; }
    int relearns() const { return relearns_; }
    int learnings() const { return learnings_; }
    const std::vector<Alg> &candidates() const { return cand_; }
    const std::vector<double> &learned_means() const { return means_; }

  private:
    void start_learning();

    std::vector<Alg> cand_;
    TunerConfig cfg_;
    Phase phase_ = Phase::learning;
    int calls_ = 0;             // calls in the current learning round / period
    std::vector<double> sums_;  // learning: local time sums per candidate
    double period_sum_ = 0;     // monitoring
    Alg chosen_;
    double learned_ = 0, last_monitored_ = 0;
    std::vector<double> means_;
    int relearns_ = 0, learnings_ = 0;
};

}  // namespace llc::coll::alltoall
