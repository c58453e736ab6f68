// STAR-MPI style selection for one (communicator, message-size class):
// learning phase (every candidate `warmup + trials` times in a row; its first
// `warmup` calls of the round are not counted, since a candidate's first call
// is cold (page faults of memory it touches first, connections and receive
// offers set up on first use) and can cost several times its steady state;
// the mean time over the other calls and over the processes decides, fastest
// wins; a candidate whose first counted call is already `cutoff` times slower
// than the best candidate so far is not tried again; with predictions, the
// candidates the model ranks behind a cut-off one are skipped too when their
// estimated time is hopeless by a margin, see TunerConfig::model_stop) and
// monitoring phase (the winner; every `period` calls the mean time of the
// period is compared with the learned time and a relative deviation beyond
// `relearn` re-enters learning).  Pure logic: the caller measures the time
// and runs the reduce/decide/broadcast (model::agree) when record() asks for
// it, so every rank applies the same decision.
#pragma once

#include <vector>

#include "alltoall/algorithms.hpp"

namespace llc::coll::alltoall {

struct TunerConfig {
    int warmup = 1;        // LLC_ALLTOALL_WARMUP: first calls of a candidate in a round, not counted
    int trials = 3;        // LLC_ALLTOALL_TRIALS: counted calls after them
    int period = 50;       // LLC_ALLTOALL_MONITOR_PERIOD (0: never re-check)
    double relearn = 0.5;  // LLC_ALLTOALL_RELEARN
    double cutoff = 2.0;   // LLC_ALLTOALL_CUTOFF (0: every candidate gets all its trials)
    // LLC_ALLTOALL_MODEL_STOP (0: off).  When candidate c is cut off, a later
    // candidate r with a prediction is skipped without a trial if its
    // estimate, c's measured time x predicted(r) / predicted(c), is at least
    // model_stop x cutoff x the best so far: the model ranks, the measurement
    // calibrates, and model_stop is how far the ranking is trusted to be off.
    double model_stop = 2.0;
};

class Tuner {
  public:
    enum class Phase { learning, monitoring };

    // predicted: one entry per candidate, in the same order (seconds; <= 0 or
    // missing: no prediction, never skipped by the model)
    Tuner(std::vector<Alg> candidates, TunerConfig cfg, std::vector<double> predicted = {});

    Alg current() const;
    // Local time of the call just made with current().  True when the caller
    // must now agree on a decision (same call on every rank): at the end of a
    // learning round, after the first counted trial of every candidate but the
    // first (cutoff check, when trials > 1 and cutoff > 0), and at the end of
    // a monitoring period.
    bool record(double seconds);
    std::vector<double> summary() const;  // local values, summed over the ranks
    size_t decision_len() const;
    // At rank 0, from the sums over the ranks.  Learning: [action (0: go on,
    // 1: skip the rest of this candidate's trials, 2: done), winner index, its
    // mean, the means of all candidates (0: not tried yet, -1: skipped by the
    // model)]; monitoring: [re-learn?, mean of the period].
    std::vector<double> decide(const std::vector<double> &sum, int nprocs) const;
    void apply(const std::vector<double> &decision);

    Phase phase() const { return phase_; }
    Alg chosen() const { return chosen_; }
    double learned_time() const { return learned_; }
    double last_monitored() const { return last_monitored_; }
    int relearns() const { return relearns_; }
    int learnings() const { return learnings_; }
    int skipped() const { return skipped_; }  // candidates cut off, all rounds
    int model_skipped() const { return model_skipped_; }  // skipped untried, all rounds
    const std::vector<Alg> &candidates() const { return cand_; }
    const std::vector<double> &learned_means() const { return means_; }

  private:
    void start_learning();
    void next_candidate();  // learning: the next candidate, or the end of the round
    bool checking() const;  // learning: the pending decision is a cutoff check

    std::vector<Alg> cand_;
    TunerConfig cfg_;
    std::vector<double> pred_;  // per candidate, 0: none
    std::vector<char> model_skip_;  // learning: skipped untried in this round
    Phase phase_ = Phase::learning;
    int calls_ = 0;             // monitoring: calls in the current period
    size_t idx_ = 0;            // learning: candidate being tried
    int trial_ = 0;             // learning: its calls so far, warm-up included
    bool round_done_ = false;   // learning: every candidate tried, final decision due
    std::vector<double> sums_;  // learning: local time sums per candidate
    std::vector<int> counts_;   // learning: counted calls per candidate
    double period_sum_ = 0;     // monitoring
    Alg chosen_;
    double learned_ = 0, last_monitored_ = 0;
    std::vector<double> means_;
    int relearns_ = 0, learnings_ = 0, skipped_ = 0, model_skipped_ = 0;
};

}  // namespace llc::coll::alltoall
