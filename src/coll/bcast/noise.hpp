// Noise of one process's broadcast waits: how far a sample lies from the
// process's level by chance (scheduling, not a busy neighbour).  The
// optimizer's noise gate (Params::noise_z) compares gaps with it.
#pragma once

#include <array>

#include "params.hpp"

namespace llc::coll::bcast {

class Noise {
  public:
    explicit Noise(const Params &p) : p_(p) {}
    // the first sample of a history (the process is new or moved): the
    // first sample ever sets the noise to the sample itself (one sample says
    // nothing about its spread); after a move the noise is kept, since it
    // belongs to the process, not to its position
    void start(double wait);
    // a further sample; `value` is the profile's value before it,
    // `value_after` the value the sample gave
    void add(double wait, double value, double value_after);
    double get() const { return noise_; }

    // NoiseMode::robust keeps the last kWindow successive differences
    static constexpr int kWindow = 5;

  private:
    const Params &p_;
    double noise_ = 0.0;
    double prev_ = 0.0;       // the previous sample (NoiseMode::diff)
    bool started_ = false;    // any sample since construction
    bool first_dev_ = false;  // the next deviation is the first one
    // NoiseMode::robust: |successive differences| (ring, across moves) and
    // the samples since the last start (at most 3, for their median)
    std::array<double, kWindow> diffs_{};
    int ndiffs_ = 0;
    std::array<double, 3> recent_{};
    int nrecent_ = 0;
    double robust(double wait, double value_after);
};

}  // namespace llc::coll::bcast
