// The defaults that llc_info prints (src/coll/settings.def) are the ones
// the readers use: setting a variable to its listed default must give the
// same configuration as leaving it unset.  And no variable is listed twice.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "alltoall/alltoall_state.hpp"
#include "bcast/params.hpp"
#include "llc_coll.h"

namespace {

std::vector<llc_coll_env_var_t> table()
{
    const llc_coll_env_var_t *v = nullptr;
    size_t n = llc_coll_env_vars(&v);
    return {v, v + n};
}

bool starts_with(const char *s, const char *prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// a listed default that is a value a reader can be given (not "(none)",
// "measured", "derived", "auto" for paths...)
bool is_value(const char *d) { return d[0] != '(' && std::strcmp(d, "measured") != 0 && std::strcmp(d, "derived") != 0; }

void clear_all()
{
    for (const auto &v : table())
        unsetenv(v.name);
}

auto fields(const llc::coll::bcast::Params &p)
{
    return std::make_tuple(p.mode, p.weight_i, p.mean3, p.mean3_tol, p.report_threshold, p.floor,
                           p.interval, p.interval_min, p.interval_max, p.stable, p.min_gap, p.outlier,
                           p.near_zero, p.near_max, p.noise_z, p.noise_weight_i, p.noise_mode, p.backoff_max,
                           p.keep_neutral, p.accept_tol, p.tabu, p.max_trials, p.optimizer, p.report_poll, p.pack_max, p.table,
                           p.verbose);
}

auto fields(const llc::coll::alltoall::Config &c)
{
    return std::make_tuple(c.mode, c.forced, c.prune, c.tuner.warmup, c.tuner.trials, c.tuner.settle, c.tuner.period,
                           c.tuner.relearn, c.tuner.cutoff, c.tuner.challenge, c.tuner.model_stop, c.model, c.bs,
                           c.sharing, c.verbose, c.native);
}

}  // namespace

TEST(CollEnvTable, NoVariableListedTwice)
{
    std::set<std::string> seen;
    for (const auto &v : table())
        EXPECT_TRUE(seen.insert(v.name).second) << v.name << " is listed twice in src/coll/settings.def";
}

TEST(CollEnvTable, ListedDefaultsAreTheReadersDefaults)
{
    clear_all();
    const auto bcast_default = fields(llc::coll::bcast::Params::from_env());
    const auto a2a_default = fields(llc::coll::alltoall::config_from_env());
    int checked = 0;
    for (const auto &v : table()) {
        if (!is_value(v.default_text))
            continue;
        if (starts_with(v.name, "LLC_BCAST")) {
            setenv(v.name, v.default_text, 1);
            EXPECT_TRUE(fields(llc::coll::bcast::Params::from_env()) == bcast_default)
                << v.name << "=" << v.default_text << " (the listed default) changes the broadcast's parameters";
            checked++;
        } else if (starts_with(v.name, "LLC_ALLTOALL")) {
            setenv(v.name, v.default_text, 1);
            EXPECT_TRUE(fields(llc::coll::alltoall::config_from_env()) == a2a_default)
                << v.name << "=" << v.default_text << " (the listed default) changes the Alltoall configuration";
            checked++;
        }
        unsetenv(v.name);
    }
    EXPECT_GE(checked, 30);  // the broadcast's and the Alltoall's variables, not a vacuous pass
    // and the comparison can fail: a value that is not the default is noticed
    setenv("LLC_ALLTOALL_MODEL_STOP", "3", 1);
    EXPECT_FALSE(fields(llc::coll::alltoall::config_from_env()) == a2a_default);
    setenv("LLC_BCAST_TABU", "17", 1);
    EXPECT_FALSE(fields(llc::coll::bcast::Params::from_env()) == bcast_default);
    clear_all();
}
