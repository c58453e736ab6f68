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
#include "noise.hpp"

#include <cmath>

namespace llc::coll::bcast {
namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
}

void Noise::start(double wait)
{
    if (!started_) {
        noise_ = wait;
        first_dev_ = true;
        started_ = true;
    }
    prev_ = wait;  // no difference across a move: the level changed by design
}

void Noise::add(double wait, double value)
{
    const double dev = p_.noise_mode == NoiseMode::diff ? std::fabs(wait - prev_) * kInvSqrt2
                                                        : std::fabs(wait - value);
    const double wn = std::ldexp(1.0, p_.noise_weight_i);
    // the first deviation ever replaces the "unknown" of the first sample
    noise_ = first_dev_ ? dev : ((wn - 1.0) * noise_ + dev) / wn;
    first_dev_ = false;
    prev_ = wait;
}

}  // namespace llc::coll::bcast
