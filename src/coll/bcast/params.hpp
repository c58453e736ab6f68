// Parameters of the virtual-rank broadcast, read from the environment when a
// communicator's broadcast state is created (see doc/coll-bcast.md).
#pragma once

#include <cstddef>
#include <string>

namespace llc::coll::bcast {

enum class Mode { vrank, binomial, mpich };
// the noise estimator (noise.cpp): |sample - value|, |sample - previous sample|,
// or a window median of the latter together with the value's lag
enum class NoiseMode { dev, diff, robust };

struct Params {
    Mode mode = Mode::vrank;
    // profile phase
    int weight_i = 2;              // LLC_BCAST_WEIGHT_I: New = ((2^i-1) Prev + Wait) / 2^i
    bool mean3 = false;            // LLC_BCAST_MEAN3: arithmetic mean of 3 stable samples
    double mean3_tol = 0.0625;     // LLC_BCAST_MEAN3_TOL
    double report_threshold = 0.5; // LLC_BCAST_REPORT_THRESHOLD (relative change)
    double floor = 1e-6;           // LLC_BCAST_FLOOR: waits below this count as zero [s]
    // optimize phase
    int interval = 1;              // LLC_BCAST_INTERVAL (initial)
    int interval_min = 1;          // LLC_BCAST_INTERVAL_MIN
    int interval_max = 1024;       // LLC_BCAST_INTERVAL_MAX
    double stable = 0.25;          // LLC_BCAST_STABLE: |dTotal|/Total <= stable doubles
    double min_gap = 50e-6;        // LLC_BCAST_MIN_GAP: act only if max-min wait >= [s]
    double outlier = 0.0;          // LLC_BCAST_OUTLIER: act only if max-median >= f*(median-min); 0 = off
    double near_zero = 0.02;       // LLC_BCAST_NEAR_ZERO: candidates <= min + f*(max-min)
    double near_max = 0.1;         // LLC_BCAST_NEAR_MAX: M among values >= max - f*(max-min)
    double noise_z = 2.0;          // LLC_BCAST_NOISE_Z: differences must exceed z x reported noise; 0 = off
    int noise_weight_i = 2;        // LLC_BCAST_NOISE_WEIGHT_I: the noise's weighted average uses 2^i
    NoiseMode noise_mode = NoiseMode::dev;  // LLC_BCAST_NOISE: dev | diff | robust
    int backoff_max = 64;          // LLC_BCAST_BACKOFF_MAX: longest pause after repeated failed trials
    bool keep_neutral = false;     // LLC_BCAST_KEEP_NEUTRAL: keep a swap that did not lower the total (paper)
    double accept_tol = 0.01;      // LLC_BCAST_ACCEPT_TOL: |dTotal| within: "unchanged"
    int tabu = 16;                 // LLC_BCAST_TABU: optimize phases a useless swap stays barred
    int max_trials = 0;            // LLC_BCAST_MAX_TRIALS: failed trials per max-wait process, then it rests (tabu phases); 0 = all candidates
    int optimizer = -1;            // LLC_BCAST_OPTIMIZER: real rank; -1 = first root
    bool report_poll = true;       // LLC_BCAST_REPORT_POLL: O takes the reports that arrived (1) or waits for all (0)
    // transport
    size_t pack_max = 16384;       // LLC_BCAST_PACK_MAX: header+data in one message
    std::string table;             // LLC_BCAST_TABLE: preset table
    int verbose = 0;               // LLC_BCAST_VERBOSE

    static Params from_env();
};

}  // namespace llc::coll::bcast
