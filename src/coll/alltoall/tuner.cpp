// Learning / monitoring state machine (see tuner.hpp).
#include "alltoall/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::alltoall {

namespace {
enum Action { kGoOn = 0, kDone = 2 };
}

Tuner::Tuner(std::vector<Alg> candidates, TunerConfig cfg, std::vector<double> predicted)
    : cand_(std::move(candidates)), cfg_(cfg), pred_(std::move(predicted)), chosen_(Alg::pairwise)
{
    if (cand_.empty())
        cand_.push_back(Alg::pairwise);
    pred_.resize(cand_.size(), 0.0);
    cfg_.trials = std::max(cfg_.trials, 1);
    cfg_.warmup = std::max(cfg_.warmup, 0);
    cfg_.settle = std::max(cfg_.settle, 0);
    cfg_.period = std::max(cfg_.period, 0);
    cfg_.race = std::max(cfg_.race, 0.0);
    cfg_.challenge_calls = std::max(cfg_.challenge_calls, 0);
    period_.reserve(static_cast<size_t>(cfg_.period));
    challenger_ = cand_.size();
    start_learning();
}

void Tuner::start_learning()
{
    calls_ = 0;
    idx_ = 0;
    pass_ = 1;
    trial_ = 0;
    pending_ = Pending::none;
    standing_.assign(cand_.size(), kIn);
    // the counted calls (trials slots per candidate), then each candidate's
    // fastest warm-up call (warmup_slot)
    times_.assign(cand_.size() * (static_cast<size_t>(cfg_.trials) + 1), 0.0);
    counts_.assign(cand_.size(), 0);
    steady_.assign(cand_.size(), 0.0); // a new round: conditions changed
    challenger_ = cand_.size();
    if (cand_.size() == 1) { // nothing to learn or to re-learn
        chosen_ = cand_[0];
        start_monitoring();
        return;
    }
    phase_ = Phase::learning;
    learnings_++;
}

bool Tuner::resume(Alg winner, double learned) { return resume(winner, learned, {}, {}); }

bool Tuner::resume(Alg winner, double learned, const std::vector<double> &race, const std::vector<double> &steady)
{
    auto it = std::find(cand_.begin(), cand_.end(), winner);
    if (it == cand_.end() || !(learned > 0))
        return false;
    if (phase_ == Phase::learning && learnings_ > 0)
        learnings_--; // the round start_learning() began is not run
    const size_t w = static_cast<size_t>(it - cand_.begin());
    chosen_ = winner;
    learned_ = learned;
    means_ = race.size() == cand_.size() ? race : std::vector<double>(cand_.size(), 0.0);
    if (!(means_[w] > 0))
        means_[w] = learned;
    steady_ = steady.size() == cand_.size() ? steady : std::vector<double>(cand_.size(), 0.0);
    start_monitoring();
    return true;
}

void Tuner::start_monitoring()
{
    phase_ = Phase::monitoring;
    calls_ = 0;
    period_.clear();
    challenger_ = cand_.size();
    challenged_ = false;
}

size_t Tuner::challenger() const
{
    const size_t n = cand_.size();
    const size_t w = chosen_index();
    if (cfg_.challenge <= 0 || w == n || means_.size() != n || steady_.size() != n || !(means_[w] > 0))
        return n;
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (i != w && steady_[i] == 0 && means_[i] > 0 && means_[i] <= cfg_.challenge * means_[w] &&
            (best == n || means_[i] < means_[best]))
            best = i;
    return best;
}

Alg Tuner::current() const
{
    if (phase_ == Phase::monitoring)
        return challenging() ? cand_[challenger_] : chosen_;
    return cand_[std::min(idx_, cand_.size() - 1)];
}

namespace {
// The first index at or after `from` whose standing is `in`; st.size() if none.
size_t first_in(const std::vector<int> &st, size_t from, int in)
{
    while (from < st.size() && st[from] != in)
        from++;
    return from;
}
} // namespace

size_t Tuner::next_in(size_t from) const { return first_in(standing_, from, kIn); }

size_t Tuner::prev_in(size_t before) const
{
    while (before-- > 0)
        if (standing_[before] == kIn)
            return before;
    return cand_.size();
}

size_t Tuner::pass_next(size_t after) const
{
    if (pass_ % 2 == 0) // even passes run backwards
        return after == cand_.size() ? prev_in(cand_.size()) : prev_in(after);
    return after == cand_.size() ? next_in(0) : next_in(after + 1);
}

bool Tuner::record(double seconds)
{
    if (phase_ == Phase::learning) {
        if (pending_ != Pending::none) // a decision is due: never count past a candidate's slots
            return true;
        last_ = idx_;
        // warm-ups (pass 1) and settling calls (later passes): run and timed, not counted
        const bool counted = trial_++ >= (pass_ == 1 ? cfg_.warmup : cfg_.settle);
        if (!counted) {
            if (pass_ == 1) {
                double &w = times_[warmup_slot(idx_)];
                w = w > 0 ? std::min(w, seconds) : seconds;
            }
            return false;
        }
        times_[idx_ * static_cast<size_t>(cfg_.trials) + static_cast<size_t>(counts_[idx_]++)] = seconds;
        // first counted call of a later candidate: is it already hopeless?
        if (pass_ == 1 && idx_ > 0 && cfg_.cutoff > 0 && cfg_.trials > 1) {
            pending_ = Pending::check;
            return true;
        }
        trial_ = 0;
        idx_ = pass_next(idx_);
        if (idx_ < cand_.size())
            return false;
        pending_ = Pending::pass_end;
        return true;
    }
    if (cand_.size() == 1 || cfg_.period == 0)
        return false;
    period_.push_back(seconds);
    return ++calls_ == period_calls();
}

int Tuner::period_calls() const
{
    if (!challenging() || cfg_.challenge_calls == 0)
        return cfg_.period;
    return std::min(cfg_.challenge_calls, cfg_.period);
}

std::vector<double> Tuner::summary() const
{
    if (phase_ == Phase::learning)
        return times_;
    // the period's median: a few calls stretched by a descheduled process
    // (many, with more processes than cores) are not a change of conditions
    // A challenge counts its second half: the first lets it settle into its
    // speed in a row.
    const size_t from = challenging() && cfg_.challenge_calls > 0 ? period_.size() / 2 : 0;
    std::vector<double> v(period_.begin() + static_cast<std::ptrdiff_t>(from), period_.end());
    if (v.empty())
        return {0.0};
    const size_t h = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
    double m = v[h];
    if (v.size() % 2 == 0)
        m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h))) / 2;
    return {m};
}

size_t Tuner::decision_len() const { return phase_ == Phase::learning ? 3 + 2 * cand_.size() : 3; }

double Tuner::median_of(const std::vector<double> &sum, size_t i, int nprocs) const
{
    const size_t c = static_cast<size_t>(counts_[i]);
    if (c == 0)
        return 0;
    const auto first = sum.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(cfg_.trials));
    std::vector<double> v(first, first + static_cast<std::ptrdiff_t>(c));
    std::sort(v.begin(), v.end());
    const double m = c % 2 ? v[c / 2] : (v[c / 2 - 1] + v[c / 2]) / 2;
    return m / nprocs;
}

double Tuner::first_pass_time(const std::vector<double> &sum, size_t i, double median, int nprocs) const
{
    const double warm = sum[warmup_slot(i)] / nprocs;
    return warm > 0 ? std::min(median, warm) : median;
}

std::vector<double> Tuner::decide(const std::vector<double> &sum, int nprocs) const
{
    if (phase_ == Phase::monitoring) { // [action, mean of the period, candidate]
        const double m = sum[0] / nprocs;
        const size_t n = cand_.size();
        const size_t w = chosen_index();
        if (challenging()) { // the challenger's period: the faster in a row stays
            const size_t keep = w < n && steady_[w] > 0 && steady_[w] <= m ? w : challenger_;
            return {static_cast<double>(kChallengeOver), m, static_cast<double>(keep)};
        }
        if (learned_ > 0 && std::fabs(m / learned_ - 1) > cfg_.relearn)
            return {static_cast<double>(kRelearn), m, 0.0};
        const size_t c = challenged_ ? n : challenger();
        return {static_cast<double>(c < n ? kChallenge : kKeep), m, static_cast<double>(c < n ? c : 0)};
    }
    const size_t n = cand_.size();
    std::vector<double> d(3 + 2 * n, 0.0);
    double *time = d.data() + 3;
    std::vector<int> st = standing_;
    for (size_t i = 0; i < n; i++)
        time[i] = st[i] == kModelSkipped ? -1 : median_of(sum, i, nprocs);
    // the fastest candidate with counted calls, among those still in (in_only)
    // or among all tried, `except` left out; n if none
    auto fastest = [&](bool in_only, size_t except) {
        size_t b = n;
        for (size_t i = 0; i < n; i++)
            if (i != except && counts_[i] > 0 && st[i] != kModelSkipped && (!in_only || st[i] == kIn) &&
                (b == n || time[i] < time[b]))
                b = i;
        return b;
    };
    bool pass_over = pending_ == Pending::pass_end;
    if (pending_ == Pending::check) {
        const size_t b = fastest(true, idx_);
        // judged on the faster of its counted call and its warm-up: one call
        // stretched by a descheduled process neither cuts it off nor, through
        // the model, the candidates ranked behind it
        const double judged = first_pass_time(sum, idx_, time[idx_], nprocs);
        if (b < n && judged >= cfg_.cutoff * time[b]) {
            // cut off; the later ones the model ranks as hopeless go with it
            st[idx_] = kCutOff;
            const double bar = cfg_.model_stop * cfg_.cutoff * time[b];
            for (size_t r = idx_ + 1; r < n; r++)
                if (st[r] == kIn && cfg_.model_stop > 0 && pred_[idx_] > 0 && pred_[r] > 0 &&
                    judged * (pred_[r] / pred_[idx_]) >= bar) {
                    st[r] = kModelSkipped;
                    time[r] = -1;
                }
        }
        pass_over = first_in(st, idx_ + 1, kIn) == n; // nothing left to try in the first pass
    }
    int action = kGoOn;
    if (pass_over) {
        // Out of the next passes: after the first (one call each), what is
        // `cutoff` x the fastest of the whole pass (the checks compared with
        // the fastest so far); after a later one, `race` x the fastest median.
        const size_t b = fastest(true, n);
        const double factor = pass_ == 1 ? cfg_.cutoff : cfg_.race;
        if (factor > 0 && pass_ < cfg_.trials && b < n)
            for (size_t i = 0; i < n; i++)
                if (st[i] == kIn && i != b &&
                    (pass_ == 1 ? first_pass_time(sum, i, time[i], nprocs) : time[i]) >= factor * time[b])
                    st[i] = pass_ == 1 ? kCutOff : kRacedOut;
        const auto in = std::count(st.begin(), st.end(), static_cast<int>(kIn));
        if (pass_ >= cfg_.trials || in <= 1)
            action = kDone;
    }
    // the winner: the fastest of all tried (a cut-off one too, should it be
    // the fastest with a cutoff below 1)
    size_t w = fastest(false, n);
    if (w == n)
        w = 0;
    d[0] = action;
    d[1] = static_cast<double>(w);
    d[2] = time[w];
    for (size_t i = 0; i < n; i++)
        d[3 + n + i] = st[i];
    return d;
}

void Tuner::finish(const std::vector<double> &d)
{
    const size_t n = cand_.size();
    chosen_ = cand_[std::min(static_cast<size_t>(d[1]), n - 1)];
    learned_ = d[2];
    means_.assign(d.begin() + 3, d.begin() + 3 + static_cast<std::ptrdiff_t>(n));
    start_monitoring();
}

void Tuner::apply(const std::vector<double> &d)
{
    if (phase_ == Phase::monitoring) {
        last_monitored_ = d[1];
        calls_ = 0;
        period_.clear();
        const size_t n = cand_.size();
        const size_t w = chosen_index();
        switch (static_cast<int>(d[0])) {
        case kRelearn:
            relearns_++;
            start_learning();
            return;
        case kChallengeOver: {
            steady_[challenger_] = d[1];
            const size_t keep = std::min(static_cast<size_t>(d[2]), n - 1);
            chosen_ = cand_[keep];
            learned_ = steady_[keep];
            challenger_ = n;
            challenges_++;
            return;
        }
        case kChallenge:
            challenger_ = std::min(static_cast<size_t>(d[2]), n - 1);
            challenged_ = true;
            break;
        default:
            break;
        }
        if (w < n)
            steady_[w] = d[1]; // the chosen one's latest time in a row
        return;
    }
    const size_t n = cand_.size();
    for (size_t i = 0; i < n; i++) {
        const int s = static_cast<int>(d[3 + n + i]);
        if (s == standing_[i])
            continue;
        standing_[i] = s;
        if (s == kCutOff)
            skipped_++;
        else if (s == kRacedOut)
            raced_out_++;
        else if (s == kModelSkipped)
            model_skipped_++;
    }
    const Pending was = pending_;
    pending_ = Pending::none;
    if (static_cast<int>(d[0]) == kDone) {
        finish(d);
        return;
    }
    trial_ = 0;
    const size_t next = was == Pending::check ? next_in(idx_ + 1) : n;
    if (next < n) {
        idx_ = next;
        return;
    }
    pass_++; // the next pass, interleaved, over those still in
    idx_ = pass_next(n);
    if (idx_ == last_) // it opens the pass it closed the last one with: settled already
        trial_ = cfg_.settle;
}

}  // namespace llc::coll::alltoall
