// Two estimators, both a weighted average (weight 2^Params::noise_weight_i)
// of one deviation per sample:
//   dev:  |sample - value|, the value before the sample.  After a step to a
//         new steady level the value lags for several samples and every
//         deviation is large, although the samples themselves are steady.
//   diff: |sample - previous sample| / sqrt(2).  A step counts once;
//         steady samples add nothing, jittery or alternating ones add their
//         swing.  For independent samples of spread sigma the difference of
//         two has spread sqrt(2) sigma: divided by sqrt(2), its mean is the
//         mean absolute deviation from the level, 0.80 sigma for normal
//         samples (dev: about 0.85 sigma, since the value itself scatters),
//         so LLC_BCAST_NOISE_Z means the same for both.
//   robust: the larger of
//         - the median of the last kWindow |successive differences| / sqrt(2),
//           scaled by 1.18 so that for normal samples it is the mean
//           absolute deviation like the others (median |d| = 0.674 sigma
//           sqrt 2, mean absolute deviation 0.798 sigma), and
//         - |value - median of the last 3 samples|: how far the smoothed
//           value lags behind what the process waits now.
//         A step to a new level is one large difference out of five (the
//         median ignores it) and the lag term shrinks as the value
//         catches up: the step stands out after about 4 samples (dev: 8,
//         diff: 2).  A hiccup, one or two slow samples, raises the value
//         but the recent samples are back at the old level, so the lag term
//         is as large as the gap the hiccup made: never significant.  No
//         weighted average: the window is the memory.
#include "noise.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::bcast {
namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
// mean absolute deviation / median absolute deviation for normal samples
constexpr double kMedianToMeanDev = 0.79788456 / 0.67448975;

// median of the first n (1 <= n <= N) entries; insertion sort, N is tiny
template <size_t N>
double median_of(std::array<double, N> a, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a[j - 1] > a[j]; j--)
            std::swap(a[j - 1], a[j]);
    return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}
}  // namespace

void Noise::start(double wait)
{
    if (!started_) {
        noise_ = wait;
        first_dev_ = true;
        started_ = true;
    }
    prev_ = wait;  // no difference across a move: the level changed by design
    recent_[0] = wait;
    nrecent_ = 1;
}

double Noise::robust(double wait, double value_after)
{
    diffs_[ndiffs_ % kWindow] = std::fabs(wait - prev_);
    ndiffs_++;
    if (nrecent_ < 3)
        recent_[nrecent_++] = wait;
    else {
        recent_[0] = recent_[1];
        recent_[1] = recent_[2];
        recent_[2] = wait;
    }
    const double spread =
        kMedianToMeanDev * kInvSqrt2 * median_of(diffs_, std::min(ndiffs_, kWindow));
    const double lag = std::fabs(value_after - median_of(recent_, nrecent_));
    return std::max(spread, lag);
}

void Noise::add(double wait, double value, double value_after)
{
    if (p_.noise_mode == NoiseMode::robust) {
        noise_ = robust(wait, value_after);
        first_dev_ = false;
        prev_ = wait;
        return;
    }
    const double dev = p_.noise_mode == NoiseMode::diff ? std::fabs(wait - prev_) * kInvSqrt2
                                                        : std::fabs(wait - value);
    const double wn = std::ldexp(1.0, p_.noise_weight_i);
    // the first deviation ever replaces the "unknown" of the first sample
    noise_ = first_dev_ ? dev : ((wn - 1.0) * noise_ + dev) / wn;
    first_dev_ = false;
    prev_ = wait;
}

}  // namespace llc::coll::bcast
