#include "params.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace llc::coll::bcast {
namespace {

void get_int(const char *name, int &v)
{
    if (const char *s = std::getenv(name); s && *s) {
        char *end = nullptr;
        long x = std::strtol(s, &end, 10);
        if (end && *end == '\0')
            v = static_cast<int>(x);
        else
            std::fprintf(stderr, "llc_coll: ignoring %s=%s (not an integer)\n", name, s);
    }
}

void get_double(const char *name, double &v)
{
    if (const char *s = std::getenv(name); s && *s) {
        char *end = nullptr;
        double x = std::strtod(s, &end);
        if (end && *end == '\0')
            v = x;
        else
            std::fprintf(stderr, "llc_coll: ignoring %s=%s (not a number)\n", name, s);
    }
}

}  // namespace

Params Params::from_env()
{
    Params p;
    if (const char *s = std::getenv("LLC_BCAST"); s && *s) {
        if (!std::strcmp(s, "vrank"))
            p.mode = Mode::vrank;
        else if (!std::strcmp(s, "binomial"))
            p.mode = Mode::binomial;
        else if (!std::strcmp(s, "mpich") || !std::strcmp(s, "mpi"))
            p.mode = Mode::mpich;
        else
            std::fprintf(stderr, "llc_coll: ignoring LLC_BCAST=%s (vrank|binomial|mpich)\n", s);
    }
    get_int("LLC_BCAST_WEIGHT_I", p.weight_i);
    int mean3 = p.mean3;
    get_int("LLC_BCAST_MEAN3", mean3);
    p.mean3 = mean3 != 0;
    get_double("LLC_BCAST_MEAN3_TOL", p.mean3_tol);
    get_double("LLC_BCAST_REPORT_THRESHOLD", p.report_threshold);
    get_double("LLC_BCAST_FLOOR", p.floor);
    get_int("LLC_BCAST_INTERVAL", p.interval);
    get_int("LLC_BCAST_INTERVAL_MIN", p.interval_min);
    get_int("LLC_BCAST_INTERVAL_MAX", p.interval_max);
    get_double("LLC_BCAST_STABLE", p.stable);
    get_double("LLC_BCAST_MIN_GAP", p.min_gap);
    get_double("LLC_BCAST_NEAR_ZERO", p.near_zero);
    get_double("LLC_BCAST_OUTLIER", p.outlier);
    get_double("LLC_BCAST_NEAR_MAX", p.near_max);
    get_double("LLC_BCAST_ACCEPT_TOL", p.accept_tol);
    get_double("LLC_BCAST_NOISE_Z", p.noise_z);
    get_int("LLC_BCAST_BACKOFF_MAX", p.backoff_max);
    get_int("LLC_BCAST_NOISE_WEIGHT_I", p.noise_weight_i);
    p.noise_weight_i = std::min(std::max(p.noise_weight_i, 0), 20);
    if (const char *s = std::getenv("LLC_BCAST_NOISE"); s && *s) {
        if (!std::strcmp(s, "dev"))
            p.noise_mode = NoiseMode::dev;
        else if (!std::strcmp(s, "diff"))
            p.noise_mode = NoiseMode::diff;
        else if (!std::strcmp(s, "robust"))
            p.noise_mode = NoiseMode::robust;
        else
            std::fprintf(stderr, "llc_coll: ignoring LLC_BCAST_NOISE=%s (dev|diff|robust)\n", s);
    }
    int keep = p.keep_neutral;
    get_int("LLC_BCAST_KEEP_NEUTRAL", keep);
    p.keep_neutral = keep != 0;
    get_int("LLC_BCAST_TABU", p.tabu);
    get_int("LLC_BCAST_MAX_TRIALS", p.max_trials);
    if (p.max_trials < 0)
        p.max_trials = 0;
    get_int("LLC_BCAST_OPTIMIZER", p.optimizer);
    int poll = p.report_poll;
    get_int("LLC_BCAST_REPORT_POLL", poll);
    p.report_poll = poll != 0;
    int pack = static_cast<int>(p.pack_max);
    get_int("LLC_BCAST_PACK_MAX", pack);
    p.pack_max = pack < 0 ? 0 : static_cast<size_t>(pack);
    if (const char *s = std::getenv("LLC_BCAST_TABLE"))
        p.table = s;
    get_int("LLC_BCAST_VERBOSE", p.verbose);
    // sanitise
    if (p.weight_i < 0)
        p.weight_i = 0;
    if (p.weight_i > 20)
        p.weight_i = 20;
    if (p.backoff_max < 1)
        p.backoff_max = 1;
    if (p.noise_z < 0)
        p.noise_z = 0;
    if (p.interval_min < 1)
        p.interval_min = 1;
    if (p.interval_max < p.interval_min)
        p.interval_max = p.interval_min;
    if (p.interval < p.interval_min)
        p.interval = p.interval_min;
    if (p.interval > p.interval_max)
        p.interval = p.interval_max;
    return p;
}

}  // namespace llc::coll::bcast
