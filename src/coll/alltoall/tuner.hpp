// STAR-MPI style selection for one (communicator, message-size class):
// a learning phase, then a monitoring phase.
//
// Learning, one round:
//  * pass 1, one candidate after the other: `warmup` calls that are run and
//    timed but not counted (a candidate's first call is cold: page faults of
//    memory it touches first, connections and receive offers set up on first
//    use, and can cost several times its steady state), then its first
//    counted call.  A candidate whose first counted call and fastest
//    warm-up call are both already `cutoff` times the best candidate so far
//    gets no more calls (one call stretched by a descheduled process does
//    not decide; the faster of the two is its estimate); with predictions,
//    the candidates the model ranks behind it are skipped untried when their
//    estimate is hopeless by a margin (TunerConfig::model_stop).
//    At the end of the pass, a candidate at `cutoff` times the fastest of
//    the whole pass or more (by the same two calls) is cut off too.
//  * passes 2 .. `trials`, interleaved: one counted call of every candidate
//    still in the race, in turn (forwards, then backwards), so that a drift
//    of the machine's load hits all of them alike instead of the ones tried
//    last.  Each turn begins with `settle` calls run but not counted: a call
//    right after another algorithm's is slower by an amount that depends on
//    the algorithm (8 ranks on one node, 256 KiB: a fifth to a half), which
//    single interleaved calls would measure instead of the algorithm as it
//    runs once chosen.  After every pass but
//    the last, a candidate whose median is `race` times the best median or
//    more leaves the race.
//  * each call's time is averaged over the processes; a candidate's learned
//    time is the median of its counted calls, which a call stretched by a
//    descheduled process does not move; the fastest wins.
// Monitoring: the winner runs; every `period` calls the median time of the
// period is compared with the learned time and a relative deviation beyond
// `relearn` starts a new round.
// Challenge: a learning call runs among other algorithms' calls, and some
// algorithms reach their speed only after many calls in a row (across
// emulated hosts under TCP's bbr ring_lb took about ten; then it was 1.5x
// faster than the others, which its race time did not show).  So after the winner's first
// period (its time in a row), the fastest other candidate whose race time
// was within `challenge` x the winner's and which has not run a period yet
// runs `challenge_calls` calls in a row (the first half settles, the median
// of the second half is its time in a row); the one with the smaller time in
// a row is kept, with that time as its learned time.  One challenge per round (and per resumed
// run: a run that starts from a kept decision challenges the next one).
// Times in a row are kept per candidate (steady_times) until a re-learn.
//
// Pure logic: the caller measures the time and runs the reduce/decide/
// broadcast (model::agree) when record() asks for it, so every rank applies
// the same decision.
#pragma once

#include <algorithm>
#include <vector>

#include "alltoall/algorithms.hpp"

namespace llc::coll::alltoall {

struct TunerConfig {
    int warmup = 1;        // LLC_ALLTOALL_WARMUP: first calls of a candidate in a round, not counted
    int trials = 3;        // LLC_ALLTOALL_TRIALS: counted calls after them
    // LLC_ALLTOALL_SETTLE: in passes 2 .., calls of a candidate after the
    // switch to it that are run but not counted (a call right after another
    // algorithm's pays for that one's traces: offers and posting order
    // learned for the other pattern)
    int settle = 1;
    int period = 50;       // LLC_ALLTOALL_MONITOR_PERIOD (0: never re-check)
    double relearn = 0.5;  // LLC_ALLTOALL_RELEARN
    double cutoff = 2.0;   // LLC_ALLTOALL_CUTOFF (0: every candidate gets all its trials)
    // LLC_ALLTOALL_RACE (0: off): after each interleaved pass but the last,
    // a candidate whose median is at least this x the best median gets no
    // more calls.
    double race = 1.25;
    // LLC_ALLTOALL_MODEL_STOP (0: off).  When candidate c is cut off, a later
    // candidate r with a prediction is skipped without a trial if its
    // estimate, c's measured time x predicted(r) / predicted(c), is at least
    // model_stop x cutoff x the best so far: the model ranks, the measurement
    // calibrates, and model_stop is how far the ranking is trusted to be off.
    double model_stop = 2.0;
    // LLC_ALLTOALL_CHALLENGE (0: off): a candidate whose race time is within
    // this x the winner's runs one monitoring period in a row against it.
    double challenge = 1.3;
    // LLC_ALLTOALL_CHALLENGE_CALLS (0: a whole period): the calls of a
    // challenge (at most `period`); its time is the median of the second
    // half, the first half lets it settle into its speed in a row.
    int challenge_calls = 20;
};

class Tuner {
  public:
    enum class Phase { learning, monitoring };

    // predicted: one entry per candidate, in the same order (seconds; <= 0 or
    // missing: no prediction, never skipped by the model)
    Tuner(std::vector<Alg> candidates, TunerConfig cfg, std::vector<double> predicted = {});

    // Skip learning: monitor `winner` (one of the candidates), measured at
    // `learned` seconds by an earlier round (decision_cache.hpp), as if this
    // tuner had learned it.  False, and nothing changes, if it is not a
    // candidate or learned <= 0.
    bool resume(Alg winner, double learned);
    // The same with every candidate's race time and time in a row as an
    // earlier run kept them (one entry per candidate; 0: unknown), so that
    // this run challenges a candidate the earlier ones did not.
    bool resume(Alg winner, double learned, const std::vector<double> &race, const std::vector<double> &steady);

    Alg current() const;
    // Local time of the call just made with current().  True when the caller
    // must now agree on a decision (same call on every rank): after the first
    // counted call of every candidate but the first (cutoff check, when
    // trials > 1 and cutoff > 0), at the end of every pass of a learning
    // round, and at the end of a monitoring period.
    bool record(double seconds);
    // Local values, summed over the ranks.  Learning: the time of every
    // counted call, `trials` slots per candidate; monitoring: the period's median.
    std::vector<double> summary() const;
    size_t decision_len() const;
    // At rank 0, from the sums over the ranks.  Learning: [action (0: go on,
    // 2: round over), winner index, its learned time, the learned time of
    // every candidate (0: not tried yet, -1: skipped by the model), the state
    // of every candidate (Standing)]; monitoring: [action (Monitor), time of
    // the period (the mean over the processes of their medians), candidate
    // (the challenger, or the one a challenge kept)].
    std::vector<double> decide(const std::vector<double> &sum, int nprocs) const;
    void apply(const std::vector<double> &decision);

    Phase phase() const { return phase_; }
    Alg chosen() const { return chosen_; }
    // chosen()'s place among the candidates (their count when it is none of them).
    size_t chosen_index() const
    {
        return static_cast<size_t>(std::find(cand_.begin(), cand_.end(), chosen_) - cand_.begin());
    }
    double learned_time() const { return learned_; }
    double last_monitored() const { return last_monitored_; }
    int relearns() const { return relearns_; }
    int learnings() const { return learnings_; } // rounds begun (not counting a resume)
    int skipped() const { return skipped_; }  // candidates cut off, all rounds
    int raced_out() const { return raced_out_; }          // left the race after a pass, all rounds
    int model_skipped() const { return model_skipped_; }  // skipped untried, all rounds
    const std::vector<Alg> &candidates() const { return cand_; }
    const std::vector<double> &learned_means() const { return means_; }
    // per candidate: its time in a row (a monitoring period), 0 if none yet
    const std::vector<double> &steady_times() const { return steady_; }
    int challenges() const { return challenges_; } // challenges ended, all rounds
    bool challenging() const { return challenger_ < cand_.size(); }

private:
    // A candidate's place in the current learning round.
    enum Standing : int { kIn = 0, kCutOff = 1, kRacedOut = 2, kModelSkipped = 3 };
    enum class Pending { none, check, pass_end };
    // What a monitoring decision does.
    enum Monitor : int { kKeep = 0, kRelearn = 1, kChallenge = 2, kChallengeOver = 3 };

    void start_learning();
    // The first candidate still in at or after `from` / before `before`;
    // cand_.size() if none.
    size_t next_in(size_t from) const;
    size_t prev_in(size_t before) const;
    // The candidate of the current pass after `after` (cand_.size(): the
    // pass's first), cand_.size() at its end.  Odd passes go forwards, even
    // ones backwards, so that no candidate always runs after the others
    // while the machine's load drifts.
    size_t pass_next(size_t after) const;
    // The learned time of candidate i: the median of its counted calls
    // (`sum`: per-call sums over `nprocs` processes), 0 if it has none.
    double median_of(const std::vector<double> &sum, size_t i, int nprocs) const;
    // What the first pass judges candidate i by (cutoff, model stop): the
    // faster of `median` (its one counted call then) and its fastest warm-up
    // call, so that two calls must say it is slow.
    double first_pass_time(const std::vector<double> &sum, size_t i, double median, int nprocs) const;
    // Where times_ (and the summed learning summary) keep candidate i's
    // fastest warm-up call: after every candidate's trials slots.
    size_t warmup_slot(size_t i) const { return cand_.size() * static_cast<size_t>(cfg_.trials) + i; }
    void finish(const std::vector<double> &decision);
    // The candidate to challenge the chosen one with; cand_.size() if none.
    size_t challenger() const;
    void start_monitoring();
    // Calls of the current monitoring period: a challenge's or a period.
    int period_calls() const;

    std::vector<Alg> cand_;
    TunerConfig cfg_;
    std::vector<double> pred_; // per candidate, 0: none
    Phase phase_ = Phase::learning;
    int calls_ = 0;                   // monitoring: calls in the current period
    size_t idx_ = 0;                  // learning: candidate being tried
    size_t last_ = 0;                 // learning: candidate of the call recorded last
    int pass_ = 1;                    // learning: 1 (one after the other), then 2 .. trials (interleaved)
    int trial_ = 0;                   // learning, pass 1: calls of the candidate so far, warm-up included
    Pending pending_ = Pending::none; // learning: the decision record() asked for
    std::vector<int> standing_;       // learning: Standing per candidate
    std::vector<double> times_;       // learning: local time of each counted call, trials slots per candidate,
                                      // then one slot per candidate: its fastest warm-up call (0: none)
    std::vector<int> counts_;         // learning: counted calls per candidate
    std::vector<double> period_;      // monitoring: local time of each call of the period
    Alg chosen_;
    double learned_ = 0, last_monitored_ = 0;
    std::vector<double> means_;  // race times of the last round (or as kept)
    std::vector<double> steady_; // times in a row, 0: unknown
    size_t challenger_ = 0;      // monitoring: the candidate running a challenge period; cand_.size(): none
    bool challenged_ = false;    // monitoring: this round's challenge is over or running
    int challenges_ = 0;
    int relearns_ = 0, learnings_ = 0, skipped_ = 0, raced_out_ = 0, model_skipped_ = 0;
};

}  // namespace llc::coll::alltoall
