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
        noise_.start(wait);
    } else {
        const double w = std::ldexp(1.0, p_.weight_i);  // 2^i
        const double before = value_;
        value_ = ((w - 1.0) * value_ + wait) / w;
        if (p_.mean3 && n_ >= 2) {
            double lo = std::min({last3_[0], last3_[1], last3_[2]});
            double hi = std::max({last3_[0], last3_[1], last3_[2]});
            if (hi - lo <= p_.mean3_tol * hi)  // 3 stable samples: their mean
                value_ = (last3_[0] + last3_[1] + last3_[2]) / 3.0;
        }
        noise_.add(wait, before, value_);
    }
    n_++;
    return value_;
}

double Profile::report_noise() const
{
    if (p_.noise_mode != NoiseMode::robust)
        return noise();
    return std::max(noise(), std::fabs(reported_ - value_));
}

bool Profile::should_report() const
{
    const double v = value_, r = reported_;
    if (std::max(v, r) < p_.floor)  // both "zero"
        return false;
    return std::fabs(v - r) >= p_.report_threshold * std::max(r, p_.floor);
}

}  // namespace llc::coll::bcast
