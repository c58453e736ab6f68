#include "profile.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::bcast {

double Profile::sample(double wait)
{
    if (wait < 0)
        wait = 0;
    last3_[n_ % 3] = wait;
    if (n_ == 0) {
        value_ = wait;  // no history: the sample itself
        if (!sampled_) {
            noise_ = wait;
            first_dev_ = true;
        }
    } else {
        const double w = std::ldexp(1.0, p_.weight_i);  // 2^i
        const double dev = std::fabs(wait - value_);
        // the first deviation ever replaces the "unknown" of the first sample
        const double wn = std::ldexp(1.0, p_.noise_weight_i);
        noise_ = first_dev_ ? dev : ((wn - 1.0) * noise_ + dev) / wn;
        first_dev_ = false;
        value_ = ((w - 1.0) * value_ + wait) / w;
        if (p_.mean3 && n_ >= 2) {
            double lo = std::min({last3_[0], last3_[1], last3_[2]});
            double hi = std::max({last3_[0], last3_[1], last3_[2]});
            if (hi - lo <= p_.mean3_tol * hi)  // 3 stable samples: their mean
                value_ = (last3_[0] + last3_[1] + last3_[2]) / 3.0;
        }
    }
    n_++;
    sampled_ = true;
    return value_;
}

bool Profile::should_report() const
{
    const double v = value_, r = reported_;
    if (std::max(v, r) < p_.floor)  // both "zero"
        return false;
    return std::fabs(v - r) >= p_.report_threshold * std::max(r, p_.floor);
}

}  // namespace llc::coll::bcast
