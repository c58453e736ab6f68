// Optimize phase: the swap heuristic of the paper, run by one process.
//
// Input: the optimizer's view of every process's evaluation value (the
// values last reported) and the current table.  Output: up to two swaps of
// virtual ranks (undo of a rejected swap + the next try) and the next
// interval.  Tree positions are those of broadcasts rooted at root(); the
// root never takes part in a swap.
#pragma once

#include <vector>

#include "params.hpp"
#include "tree.hpp"

namespace llc::coll::bcast {

struct Swap {
    int a = -1, b = -1;
};

struct Decision {
    int nswaps = 0;
    Swap swaps[2];
    int interval = 1;
    void add(int a, int b) { swaps[nswaps++] = Swap{a, b}; }
};

class Optimizer {
  public:
    Optimizer(const Params &p, int size, int root);
    int root() const { return root_; }
    int interval() const { return interval_; }
    // One optimize phase.  The caller applies the decision's swaps in order.
    // `noise` (optional, one entry per process) is each process's reported
    // wait noise (Profile::noise); with Params::noise_z > 0 a difference
    // counts only when it stands out against it (see doc/coll-bcast.md).
    Decision run(const std::vector<double> &values, const Table &table);
    Decision run(const std::vector<double> &values, const std::vector<double> &noise,
                 const Table &table);

    // statistics
    int tried = 0;   // swaps tried
    int undone = 0;  // swaps undone
    int accepted = 0;

    // candidate order among near-zero processes: most sends, fewest steps,
    // shallowest depth, lowest real rank (exposed for the tests)
    std::vector<int> rank_candidates(std::vector<int> cand, const Table &table) const;
    // order among near-max processes: fewest sends, most steps, deepest,
    // largest value, lowest real rank (the first one is M)
    std::vector<int> rank_max_candidates(std::vector<int> cand, const std::vector<double> &values,
                                         const Table &table) const;

  private:
    enum class State { search, pending, resume, settled };
    Decision decide(const std::vector<double> &values, const Table &table);
    void update_interval(double total);
    // the smallest decrease of the total wait that is not noise
    double gain_threshold(double base, double noise_total) const;
    // swap max_ with its next candidate (state pending), or settle when none is left
    Decision &next_candidate(Decision &d, const std::vector<double> &values);
    // A swap that did not lower the total wait (undone, or kept as
    // "unchanged") is barred for `Params::tabu` optimize phases.  Without
    // this, a max-wait process below a busy one is swapped with the busy
    // one's idle ancestor (more sends), the total stays the same, and the
    // next search swaps the two back: a cycle that never moves the busy
    // process itself.  Any swap that lowers the total clears the list.
    void bar(int a, int b);
    bool barred(int a, int b) const;
    // Params::max_trials: a max-wait process whose last max_trials trial
    // swaps were all undone is not taken as the max-wait process for `tabu`
    // phases.  Its wait is then not caused by its position (on an
    // oversubscribed node a process can wait long wherever it sits), and
    // trying every near-zero candidate in turn costs two broadcasts each.
    bool resting(int r) const;

    const Params &p_;
    int size_, root_;
    int interval_;
    std::vector<int> steps_;  // receive step of each tree position
    State st_ = State::search;
    int max_ = -1;            // the max-wait process of the pending search
    std::vector<int> cand_;   // its candidates, in order
    size_t k_ = 0;            // the candidate currently swapped with max_
    double base_total_ = 0;   // total wait before the pending swap
    std::vector<double> settled_view_;
    std::vector<double> noise_;  // noise of the current run (zeros if none given)
    bool have_prev_ = false;
    double prev_total_ = 0;
    struct Barred {
        int a, b;
        long until;  // last optimize phase in which it is barred
    };
    std::vector<Barred> barred_;
    std::vector<Barred> resting_;  // {process, unused, until}
    long phase_ = 0;  // optimize phases run
    // consecutive trial swaps undone; from the second on, the next candidate
    // waits min(backoff_max, interval_min * 2^(failed_-1)) broadcasts
    int failed_ = 0;
};

}  // namespace llc::coll::bcast
