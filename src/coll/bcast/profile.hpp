// Profile phase of one process: evaluation value of its broadcast wait times
// and the rule that decides when the value is reported to the optimizer.
#pragma once

#include "noise.hpp"
#include "params.hpp"

namespace llc::coll::bcast {

class Profile {
  public:
    explicit Profile(const Params &p) : p_(p), noise_(p) {}
    // add one wait time [s]; returns the new evaluation value
    double sample(double wait);
    double value() const { return value_; }
    // noise of this process's waits (noise.hpp; Params::noise_mode): a
    // history reset keeps it, since it belongs to the process, not to its
    // position
    double noise() const { return noise_.get(); }
    // the noise that goes with the reported value to the optimizer.  With
    // NoiseMode::robust it also covers how far the reported value (kept
    // under the >= 50 % rule) has drifted from the current one: after a
    // hiccup the reported value stays high for a few rounds while the
    // current value and the noise are back down, and the optimizer must
    // not read that stale gap as a busy neighbour.
    double report_noise() const;
    // the last value reported to the optimizer (0 before the first report)
    double reported() const { return reported_; }
    // true when value() moved by >= report_threshold since the last report
    bool should_report() const;
    // marks value() as reported and returns it
    double take_report()
    {
        reported_ = value_;
        return value_;
    }
    // forget the history (the process moved to another tree position);
    // the last reported value is kept so the next sample is compared with it
    void reset_history() { n_ = 0; }
    int samples() const { return n_; }

  private:
    const Params &p_;
    double value_ = 0.0;
    double reported_ = 0.0;
    Noise noise_;
    double last3_[3] = {0, 0, 0};
    int n_ = 0;  // samples since the last reset
};

}  // namespace llc::coll::bcast
