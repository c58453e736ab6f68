#include "optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace llc::coll::bcast {

Optimizer::Optimizer(const Params &p, int size, int root)
    : p_(p), size_(size), root_(root), interval_(p.interval), steps_(tree_steps(size))
{
}

double Optimizer::gain_threshold(double base, double noise_total) const
{
    return std::max(p_.accept_tol * std::max(base, p_.floor), p_.noise_z * noise_total);
}

Decision &Optimizer::next_candidate(Decision &d, const std::vector<double> &values)
{
    if (++k_ < cand_.size()) {
        st_ = State::pending;
        d.add(max_, cand_[k_]);
        tried++;
    } else {
        st_ = State::settled;  // no candidate left
        settled_view_ = values;
    }
    return d;
}

void Optimizer::update_interval(double total)
{
    if (have_prev_) {
        // the paper's rule, not widened by the noise: while the noise holds
        // swaps back (a young history is noisy), rounds stay frequent, and
        // rounds without a swap cost next to nothing
        const double change = std::fabs(total - prev_total_);
        if (change <= p_.stable * std::max(prev_total_, p_.floor))
            interval_ = std::min(interval_ * 2, p_.interval_max);
        else
            interval_ = std::max(interval_ / 2, p_.interval_min);
    }
    have_prev_ = true;
    prev_total_ = total;
}

std::vector<int> Optimizer::rank_candidates(std::vector<int> cand, const Table &table) const
{
    auto key = [&](int real) {
        int pos = table.position(real, root_);
        return std::make_tuple(-tree_nchildren(pos, size_), steps_[pos], tree_depth(pos), real);
    };
    std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) { return key(a) < key(b); });
    return cand;
}

void Optimizer::bar(int a, int b)
{
    if (p_.tabu <= 0)
        return;
    if (a > b)
        std::swap(a, b);
    for (Barred &x : barred_)
        if (x.a == a && x.b == b) {
            x.until = phase_ + p_.tabu;
            return;
        }
    barred_.push_back(Barred{a, b, phase_ + p_.tabu});
}

bool Optimizer::resting(int r) const
{
    for (const Barred &x : resting_)
        if (x.a == r)
            return true;
    return false;
}

bool Optimizer::barred(int a, int b) const
{
    if (a > b)
        std::swap(a, b);
    for (const Barred &x : barred_)
        if (x.a == a && x.b == b)
            return true;
    return false;
}

std::vector<int> Optimizer::rank_max_candidates(std::vector<int> cand,
                                                const std::vector<double> &values,
                                                const Table &table) const
{
    auto key = [&](int real) {
        int pos = table.position(real, root_);
        return std::make_tuple(tree_nchildren(pos, size_), -steps_[pos], -tree_depth(pos),
                               -values[real], real);
    };
    std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) { return key(a) < key(b); });
    return cand;
}

Decision Optimizer::run(const std::vector<double> &values, const Table &table)
{
    return run(values, std::vector<double>(), table);
}

Decision Optimizer::run(const std::vector<double> &values, const std::vector<double> &noise,
                        const Table &table)
{
    noise_ = noise;
    noise_.resize(size_, 0.0);
    Decision d = decide(values, table);
    // a swap on trial is judged at the next optimize phase that has fresh
    // data, not a whole (possibly long) interval later: a bad trial costs a
    // few broadcasts.  interval_ itself keeps its doubling/halving history.
    if (st_ == State::pending)
        d.interval = std::min(d.interval, p_.interval_min);
    return d;
}

Decision Optimizer::decide(const std::vector<double> &values, const Table &table)
{
    phase_++;
    auto expired = [&](const Barred &x) { return x.until < phase_; };
    barred_.erase(std::remove_if(barred_.begin(), barred_.end(), expired), barred_.end());
    resting_.erase(std::remove_if(resting_.begin(), resting_.end(), expired), resting_.end());
    double total = 0;
    for (double v : values)
        total += v;
    update_interval(total);
    Decision d;
    d.interval = interval_;

    if (st_ == State::pending) {
        const double delta = total - base_total_;
        // Increased: the paper's rule, not widened by the noise (keeping a
        // harmful swap costs every later broadcast; undoing a neutral one
        // costs nothing).  Decreased: only by more than the noise explains.
        const double rise = p_.accept_tol * std::max(base_total_, p_.floor);
        // the processes' noises are independent: the total's is their root sum of squares
        double noise2 = 0;
        for (double e : noise_)
            noise2 += e * e;
        const double gain = gain_threshold(base_total_, std::sqrt(noise2));
        const bool increased = delta > rise;
        const bool decreased = delta < -gain;
        if (increased || (!decreased && !p_.keep_neutral)) {
            // undo it, try the next candidate
            d.add(max_, cand_[k_]);
            bar(max_, cand_[k_]);
            undone++;
            ++failed_;
            if (p_.max_trials > 0 && static_cast<int>(k_) + 1 >= p_.max_trials) {
                // enough candidates tried for this process: it rests, and
                // the next search (after the back-off pause) looks at others
                resting_.push_back(Barred{max_, -1, phase_ + std::max(p_.tabu, 1)});
                st_ = State::search;
                d.interval = std::min(p_.backoff_max, p_.interval_min << std::min(failed_ - 1, 20));
                d.interval = std::max(d.interval, p_.interval_min);
                return d;
            }
            if (failed_ >= 2 && k_ + 1 < cand_.size()) {
                // repeated failures: pause before the next trial, so that
                // a settled tree under noise is not shaken every few
                // broadcasts (every trial costs while it is in place)
                st_ = State::resume;
                d.interval = std::min(p_.backoff_max, p_.interval_min << std::min(failed_ - 1, 20));
                d.interval = std::max(d.interval, p_.interval_min);
                return d;
            }
            return next_candidate(d, values);
        }
        accepted++;
        if (!decreased) {
            // unchanged (LLC_BCAST_KEEP_NEUTRAL=1): keep it and search again
            // from this profile, as the paper does, but never by swapping
            // the same pair back
            bar(max_, cand_[k_]);
        } else {
            barred_.clear();  // decreased: a new landscape, nothing barred
            failed_ = 0;
        }
        st_ = State::search;
    }
    if (st_ == State::resume) {
        // after a pause: the next candidate of the same search, judged
        // against the total measured on the restored table
        base_total_ = total;
        return next_candidate(d, values);
    }
    if (st_ == State::settled) {
        if (values == settled_view_)
            return d;
        st_ = State::search;
    }

    // search: the max-wait process and the near-zero candidates
    int top = -1;
    for (int r = 0; r < size_; r++)
        if (r != root_ && !resting(r) && (top < 0 || values[r] > values[top]))
            top = r;
    if (top < 0)
        return d;
    double mn = 0;
    int bottom = -1;
    for (int r = 0; r < size_; r++)
        if (r != root_ && r != top && (bottom < 0 || values[r] < mn)) {
            mn = values[r];
            bottom = r;
        }
    if (bottom < 0 || values[top] - mn < p_.min_gap)
        return d;
    // a gap that the two processes' own noise explains is no reason to move:
    // a scheduling hiccup raises one value and its noise alike, a busy
    // neighbour raises the value every time and the noise not at all
    if (values[top] - mn < p_.noise_z * (noise_[top] + noise_[bottom]))
        return d;
    if (p_.outlier > 0) {
        // act only on an outlier: max - median >= outlier * (median - min).
        // Waits that are only scheduling noise spread evenly around their
        // median; processes held up by a busy one stand far above it.
        std::vector<double> rest;
        for (int r = 0; r < size_; r++)
            if (r != root_)
                rest.push_back(values[r]);
        std::nth_element(rest.begin(), rest.begin() + rest.size() / 2, rest.end());
        const double med = rest[rest.size() / 2];
        if (values[top] - med < p_.outlier * (med - mn))
            return d;
    }
    // Processes below one busy process all wait about as long.  The max-wait
    // process gives its position to the chosen candidate, so among the
    // near-max ones take the one at the position with fewest sends (a leaf
    // if there is one), then the deepest, then the largest value.
    const double near_top = std::max(p_.floor, p_.near_max * (values[top] - mn));
    std::vector<int> tops;
    for (int r = 0; r < size_; r++)
        if (r != root_ && !resting(r) && values[r] >= values[top] - near_top)
            tops.push_back(r);
    const int mx = rank_max_candidates(std::move(tops), values, table).front();
    const double near = std::max(p_.floor, p_.near_zero * (values[mx] - mn));
    std::vector<int> cand;
    for (int r = 0; r < size_; r++)
        if (r != root_ && r != mx && values[r] <= mn + near && !barred(mx, r))
            cand.push_back(r);
    if (cand.empty())
        return d;
    cand_ = rank_candidates(std::move(cand), table);
    max_ = mx;
    k_ = 0;
    base_total_ = total;
    st_ = State::pending;
    d.add(max_, cand_[0]);
    tried++;
    return d;
}

}  // namespace llc::coll::bcast
