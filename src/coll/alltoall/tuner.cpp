// Learning / monitoring state machine (see tuner.hpp).
#include "alltoall/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::alltoall {

namespace {
enum Action { kGoOn = 0, kSkip = 1, kDone = 2 };
}

Tuner::Tuner(std::vector<Alg> candidates, TunerConfig cfg, std::vector<double> predicted)
    : cand_(std::move(candidates)), cfg_(cfg), pred_(std::move(predicted)), chosen_(Alg::pairwise)
{
    if (cand_.empty())
        cand_.push_back(Alg::pairwise);
    pred_.resize(cand_.size(), 0.0);
    cfg_.trials = std::max(cfg_.trials, 1);
    cfg_.warmup = std::max(cfg_.warmup, 0);
    cfg_.period = std::max(cfg_.period, 0);
    start_learning();
}

void Tuner::start_learning()
{
    calls_ = 0;
    idx_ = 0;
    trial_ = 0;
    round_done_ = false;
    sums_.assign(cand_.size(), 0.0);
    counts_.assign(cand_.size(), 0);
    model_skip_.assign(cand_.size(), 0);
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
    return cand_[std::min(idx_, cand_.size() - 1)];
}

void Tuner::next_candidate()
{
    trial_ = 0;
    do
        ++idx_;
    while (idx_ < cand_.size() && model_skip_[idx_]);
    if (idx_ == cand_.size())
        round_done_ = true;
}

bool Tuner::checking() const
{
    return phase_ == Phase::learning && !round_done_ && trial_ == cfg_.warmup + 1;
}

bool Tuner::record(double seconds)
{
    if (phase_ == Phase::learning) {
        if (idx_ >= cand_.size())  // round over, decision pending: never index past the end
            return true;
        if (trial_++ >= cfg_.warmup) {  // a warm-up call is run and timed, not counted
            sums_[idx_] += seconds;
            counts_[idx_]++;
        }
        if (trial_ == cfg_.warmup + cfg_.trials) {
            next_candidate();
            return round_done_;
        }
        // first counted call of a later candidate: is it already hopeless?
        return checking() && idx_ > 0 && cfg_.cutoff > 0;
    }
    if (cand_.size() == 1 || cfg_.period == 0)
        return false;
    period_sum_ += seconds;
    return ++calls_ == cfg_.period;
}

std::vector<double> Tuner::summary() const
{
    if (phase_ == Phase::learning) {
        std::vector<double> v(cand_.size(), 0.0);
        for (size_t i = 0; i < v.size(); i++)
            if (counts_[i])
                v[i] = sums_[i] / counts_[i];
        return v;
    }
    return {period_sum_ / std::max(calls_, 1)};
}

size_t Tuner::decision_len() const
{
    return phase_ == Phase::learning ? 3 + cand_.size() : 2;
}

std::vector<double> Tuner::decide(const std::vector<double> &sum, int nprocs) const
{
    if (phase_ == Phase::learning) {
        std::vector<double> d(3 + cand_.size(), 0.0);
        // the best among the candidates tried so far (the current one excluded
        // while checking it)
        const size_t tried = round_done_ ? cand_.size() : idx_ + 1;
        const size_t judged = checking() ? idx_ : tried;
        size_t best = 0;
        for (size_t i = 0; i < tried; i++) {
            if (model_skip_[i]) {  // never tried (i > 0: the first is never skipped)
                d[3 + i] = -1;
                continue;
            }
            d[3 + i] = sum[i] / nprocs;
            if (i < judged && d[3 + i] < d[3 + best])
                best = i;
        }
        int action = round_done_ ? kDone : kGoOn;
        if (checking() && d[3 + idx_] >= cfg_.cutoff * d[3 + best]) {
            // cut off; the later ones the model ranks as hopeless go with it
            const double bar = cfg_.model_stop * cfg_.cutoff * d[3 + best];
            bool left = false;
            for (size_t r = idx_ + 1; r < cand_.size(); r++) {
                if (model_skip_[r]) {  // skipped behind an earlier cut-off: not left
                    d[3 + r] = -1;
                    continue;
                }
                const bool hopeless = cfg_.model_stop > 0 && pred_[idx_] > 0 && pred_[r] > 0 &&
                                      d[3 + idx_] * (pred_[r] / pred_[idx_]) >= bar;
                if (hopeless)
                    d[3 + r] = -1;
                else
                    left = true;
            }
            action = left ? kSkip : kDone;  // nothing left to try: round over
        }
        if (action == kDone && judged < tried && d[3 + idx_] < d[3 + best])
            best = idx_;  // the cut-off last candidate, if ever the fastest (cutoff < 1)
        d[0] = action;
        d[1] = static_cast<double>(best);
        d[2] = d[3 + best];
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
        const int action = static_cast<int>(d[0]);
        if (action == kGoOn)
            return;
        for (size_t r = idx_ + 1; r < cand_.size(); r++)
            if (d[3 + r] < 0 && !model_skip_[r]) {
                model_skip_[r] = 1;
                model_skipped_++;
            }
        if (action == kSkip) {
            skipped_++;
            next_candidate();
            // decide() counts only candidates still to try, so one is left;
            // should none be, the round ends here rather than run past them
            if (!round_done_)
                return;
        } else if (!round_done_) {  // the last candidate was cut off
            skipped_++;
        }
        size_t best = std::min(static_cast<size_t>(d[1]), cand_.size() - 1);
        chosen_ = cand_[best];
        learned_ = d[2];
        means_.assign(d.begin() + 3, d.end());
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
