#include "params.hpp"

#include <algorithm>

#include "coll_settings.hpp"

namespace llc::coll::bcast {

Params Params::from_env()
{
    Params p;
    // a Choice's value is the index of its word: vrank|binomial|mpich|mpi
    if (auto v = setting_value(SettingId::LLC_BCAST))
        p.mode = v->number == 0 ? Mode::vrank : v->number == 1 ? Mode::binomial : Mode::mpich;
    read_setting(SettingId::LLC_BCAST_WEIGHT_I, p.weight_i);
    read_setting(SettingId::LLC_BCAST_MEAN3, p.mean3);
    read_setting(SettingId::LLC_BCAST_MEAN3_TOL, p.mean3_tol);
    read_setting(SettingId::LLC_BCAST_REPORT_THRESHOLD, p.report_threshold);
    read_setting(SettingId::LLC_BCAST_FLOOR, p.floor);
    read_setting(SettingId::LLC_BCAST_INTERVAL, p.interval);
    read_setting(SettingId::LLC_BCAST_INTERVAL_MIN, p.interval_min);
    read_setting(SettingId::LLC_BCAST_INTERVAL_MAX, p.interval_max);
    read_setting(SettingId::LLC_BCAST_STABLE, p.stable);
    read_setting(SettingId::LLC_BCAST_MIN_GAP, p.min_gap);
    read_setting(SettingId::LLC_BCAST_NEAR_ZERO, p.near_zero);
    read_setting(SettingId::LLC_BCAST_OUTLIER, p.outlier);
    read_setting(SettingId::LLC_BCAST_NEAR_MAX, p.near_max);
    read_setting(SettingId::LLC_BCAST_ACCEPT_TOL, p.accept_tol);
    read_setting(SettingId::LLC_BCAST_NOISE_Z, p.noise_z);
    read_setting(SettingId::LLC_BCAST_BACKOFF_MAX, p.backoff_max);
    read_setting(SettingId::LLC_BCAST_NOISE_WEIGHT_I, p.noise_weight_i);
    p.noise_weight_i = std::min(std::max(p.noise_weight_i, 0), 20);
    if (auto v = setting_value(SettingId::LLC_BCAST_NOISE))  // dev|diff|robust, in NoiseMode's order
        p.noise_mode = static_cast<NoiseMode>(v->number);
    read_setting(SettingId::LLC_BCAST_KEEP_NEUTRAL, p.keep_neutral);
    read_setting(SettingId::LLC_BCAST_TABU, p.tabu);
    read_setting(SettingId::LLC_BCAST_MAX_TRIALS, p.max_trials);
    if (p.max_trials < 0)
        p.max_trials = 0;
    read_setting(SettingId::LLC_BCAST_OPTIMIZER, p.optimizer);
    read_setting(SettingId::LLC_BCAST_REPORT_POLL, p.report_poll);
    int pack = static_cast<int>(p.pack_max);
    read_setting(SettingId::LLC_BCAST_PACK_MAX, pack);
    p.pack_max = pack < 0 ? 0 : static_cast<size_t>(pack);
    if (const char *s = setting_text(SettingId::LLC_BCAST_TABLE))
        p.table = s;
    read_setting(SettingId::LLC_BCAST_VERBOSE, p.verbose);
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
