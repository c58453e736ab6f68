// Learning / monitoring state machine (see tuner.hpp).
#include "alltoall/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::alltoall {

Tuner::Tuner(std::vector<Alg> candidates, TunerConfig cfg)
    : cand_(std::move(candidates)), cfg_(cfg), chosen_(Alg::pairwise)
{
    if (cand_.empty())
        cand_.push_back(Alg::pairwise);
    cfg_.trials = std::max(cfg_.trials, 1);
    cfg_.period = std::max(cfg_.period, 0);
    start_learning();
}

void Tuner::start_learning()
{
    calls_ = 0;
    sums_.assign(cand_.size(), 0.0);
    if (cand_.size() == 1) {  // nothing to learn or to re-learn
        phase_ = Phase::monitoring;
        chosen_ = cand_[0];
        return;
    }
    phase_ = Phase::learning;
    learnings_++;
}

Alg Tuner::current() const
{
    if (phase_ == Phase::monitoring)
        return chosen_;
    return cand_[calls_ / cfg_.trials];
}

bool Tuner::record(double seconds)
{
    if (phase_ == Phase::learning) {
        sums_[calls_ / cfg_.trials] += seconds;
        return ++calls_ == static_cast<int>(cand_.size()) * cfg_.trials;
    }
    if (cand_.size() == 1 || cfg_.period == 0)
        return false;
    period_sum_ += seconds;
    return ++calls_ == cfg_.period;
}

std::vector<double> Tuner::summary() const
{
    if (phase_ == Phase::learning) {
        std::vector<double> v(sums_);
        for (double &x : v)
            x /= cfg_.trials;
        return v;
    }
    return {period_sum_ / std::max(calls_, 1)};
}

size_t Tuner::decision_len() const
{
    return phase_ == Phase::learning ? 2 + cand_.size() : 2;
}

std::vector<double> Tuner::decide(const std::vector<double> &sum, int nprocs) const
{
    if (phase_ == Phase::learning) {
        // [index of the winner, its mean, means of all candidates...]
        std::vector<double> d(2 + cand_.size());
        size_t best = 0;
        for (size_t i = 0; i < cand_.size(); i++) {
            d[2 + i] = sum[i] / nprocs;
            if (d[2 + i] < d[2 + best])
                best = i;
        }
        d[0] = static_cast<double>(best);
        d[1] = d[2 + best];
        return d;
    }
    // [relearn?, mean of the period]
    double m = sum[0] / nprocs;
    bool off = learned_ > 0 ? std::fabs(m / learned_ - 1) > cfg_.relearn : false;
    return {off ? 1.0 : 0.0, m};
}

void Tuner::apply(const std::vector<double> &d)
{
    if (phase_ == Phase::learning) {
        size_t best = std::min(static_cast<size_t>(d[0]), cand_.size() - 1);
        chosen_ = cand_[best];
        learned_ = d[1];
        means_.assign(d.begin() + 2, d.end());
        phase_ = Phase::monitoring;
        calls_ = 0;
        period_sum_ = 0;
        return;
    }
    last_monitored_ = d[1];
    calls_ = 0;
    period_sum_ = 0;
    if (d[0] != 0) {
        relearns_++;
        start_learning();
    }
}

}  // namespace llc::coll::alltoall
