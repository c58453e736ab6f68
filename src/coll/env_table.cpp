// The table of every environment variable that src/coll reads (libllccoll and
// the PMPI layer), behind llc_coll_env_vars and llc_coll_env_get: llc_info
// prints it with the current values, and a unit test (test/unit/info_test.cpp)
// checks that every "LLC_..." name in the sources of src/coll is listed.
// Defaults and meanings follow the readers (bcast/params.cpp,
// alltoall/alltoall_state.cpp, model/params.cpp, pmpi/) and the tables of
// doc/coll-bcast.md and doc/coll-alltoall.md.
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "llc_coll.h"

namespace {

constexpr llc_coll_env_var_t kVars[] = {
    // virtual-rank broadcast (bcast/params.cpp)
    {"LLC_BCAST", "vrank", "vrank (self-tuning virtual-rank tree), binomial (fixed table) or mpich (the MPI's own broadcast)"},
    {"LLC_BCAST_WEIGHT_I", "2", "profile: New = ((2^i-1) Prev + Wait) / 2^i"},
    {"LLC_BCAST_MEAN3", "0", "1: a profile value is the mean of the last 3 samples when they are stable"},
    {"LLC_BCAST_MEAN3_TOL", "0.0625", "relative spread within which 3 samples count as stable for LLC_BCAST_MEAN3"},
    {"LLC_BCAST_REPORT_THRESHOLD", "0.5", "relative change of a process's wait that makes it report to the optimizer"},
    {"LLC_BCAST_FLOOR", "1e-6", "waits below this many seconds count as zero"},
    {"LLC_BCAST_INTERVAL", "1", "first optimization interval, in broadcasts"},
    {"LLC_BCAST_INTERVAL_MIN", "1", "shortest optimization interval, in broadcasts"},
    {"LLC_BCAST_INTERVAL_MAX", "1024", "longest optimization interval, in broadcasts"},
    {"LLC_BCAST_STABLE", "0.25", "|dTotal|/Total at or below this doubles the interval, above it halves it"},
    {"LLC_BCAST_MIN_GAP", "50e-6", "the optimizer acts only if max - min wait is at least this many seconds"},
    {"LLC_BCAST_NEAR_ZERO", "0.02", "swap candidates: waits <= min + f * (max - min)"},
    {"LLC_BCAST_OUTLIER", "0", "act only if max - median >= f * (median - min); 0: off"},
    {"LLC_BCAST_NEAR_MAX", "0.1", "band for the process to move up: waits >= max - f * (max - min); 0: the plain max"},
    {"LLC_BCAST_ACCEPT_TOL", "0.01", "relative change of the total treated as unchanged"},
    {"LLC_BCAST_NOISE_Z", "2", "a gap or a decrease counts only beyond this many noises; 0: off"},
    {"LLC_BCAST_NOISE_WEIGHT_I", "2", "the noise is a weighted average with weight 2^i (0 .. 20) of one deviation per sample (LLC_BCAST_NOISE)"},
    {"LLC_BCAST_NOISE", "dev", "noise estimator: dev (|sample - value|), diff (|sample - previous sample|) or robust (window median of the differences, and the value's lag)"},
    {"LLC_BCAST_BACKOFF_MAX", "64", "longest pause, in broadcasts, after repeated failed trials"},
    {"LLC_BCAST_KEEP_NEUTRAL", "0", "1: keep a trial swap that did not change the total (the paper); 0: undo it"},
    {"LLC_BCAST_TABU", "16", "optimize phases during which a swap that did not lower the total is not retried; 0: off"},
    {"LLC_BCAST_REPORT_POLL", "1", "1: the optimizer takes the reports that have arrived and never waits for a late process; 0: it waits for every process's report of the previous round"},
    {"LLC_BCAST_MAX_TRIALS", "0", "failed trial swaps of one max-wait process before it rests for LLC_BCAST_TABU optimize phases; 0: try every candidate"},
    {"LLC_BCAST_OPTIMIZER", "-1", "real rank of the optimizer; -1: the root of the first broadcast"},
    {"LLC_BCAST_PACK_MAX", "16384", "up to this many bytes, header and data go in one message"},
    {"LLC_BCAST_TABLE", "(none)", "preset table: a:b,c:d (swaps from the identity) or v0,v1,... (a permutation)"},
    {"LLC_BCAST_VERBOSE", "0", "2: the optimizer prints each decision to stderr; 3: also its view every round"},
    // dynamic Alltoall (alltoall/alltoall_state.cpp)
    {"LLC_ALLTOALL", "auto", "auto (dynamic selection), one of the nine algorithm names (forced) or mpich (the MPI's own)"},
    {"LLC_ALLTOALL_NATIVE", "1", "time the MPI's own Alltoall as a tenth candidate of the dynamic selection (0: only the nine)"},
    {"LLC_ALLTOALL_PRUNE", "2", "drop candidates predicted at least this many times the best; 0: no pruning"},
    {"LLC_ALLTOALL_TRIALS", "3", "calls per candidate in a learning phase"},
    {"LLC_ALLTOALL_MONITOR_PERIOD", "50", "calls per monitoring check of the winner; 0: never re-check"},
    {"LLC_ALLTOALL_RELEARN", "0.5", "relative deviation from the learned time that starts learning again"},
    {"LLC_ALLTOALL_CUTOFF", "2", "learning: a candidate whose first call takes at least this many times the best so far gets no more trials; 0: off"},
    {"LLC_ALLTOALL_MODEL_STOP", "2", "learning: when a candidate is cut off, skip untried the ones the model ranks behind it whose estimate (its time x their predicted / its predicted) is at least this x cutoff x the best so far; 0: off"},
    {"LLC_ALLTOALL_MODEL", "hockney", "performance model for pruning: hockney, loggp or logpq"},
    {"LLC_ALLTOALL_BS", "paper", "reading of the models' BS_ij: paper or process"},
    {"LLC_ALLTOALL_MODEL_SHARING", "steps", "link sharing in the models: steps (per-step link analysis) or paper (one factor B / min BS_ij)"},
    {"LLC_ALLTOALL_VERBOSE", "0", "1: rank 0 prints candidates, predictions and every decision to stderr"},
    // placement and fabric (alltoall/alltoall_state.cpp, pmpi/pmpi_alltoall.cpp)
    {"LLC_COLL_NODES", "(none)", "n0,n1,...: fabric node number of every rank, for communicators of that size (emulation)"},
    {"LLC_COLL_FABRIC", "(none)", "fabric description file for the models; unset: one switch"},
    {"LLC_COLL_PMPI_VERBOSE", "0", "1: libllccoll_pmpi says at rank 0 of each communicator that it runs its collectives"},
    // machine parameters of the models (model/params.cpp)
    {"LLC_MODEL_CACHE", "auto", "parameter cache file (auto: ${XDG_CACHE_HOME:-$HOME/.cache}/mpich-llc/model-params; off: none)"},
    {"LLC_MODEL_L", "measured", "Hockney latency (s); with LLC_MODEL_B set, no ping-pong"},
    {"LLC_MODEL_B", "measured", "Hockney inverse bandwidth (s/byte); with LLC_MODEL_L set, no ping-pong"},
    {"LLC_MODEL_O", "measured", "LogGP per-message overhead o (s)"},
    {"LLC_MODEL_GAP", "measured", "LogGP gap g between messages (s)"},
    {"LLC_MODEL_GBYTE", "derived", "LogGP gap per byte G (s/byte; derived: B)"},
    {"LLC_MODEL_LW", "derived", "LogGP wire latency (s; derived: max(L - 2o, 0))"},
    {"LLC_MODEL_L0", "derived", "LogPQ one-word latency (s; derived: wire latency)"},
    {"LLC_MODEL_O0", "derived", "LogPQ one-word overhead (s; derived: o)"},
    {"LLC_MODEL_G0", "derived", "LogPQ one-word gap (s; derived: B * w)"},
    {"LLC_MODEL_R", "1", "LogPQ word ratio r = wc / wp"},
    {"LLC_MODEL_W", "8", "LogPQ processor word (bytes)"},
    {"LLC_MODEL_N", "derived", "LogPQ fixed per-message overhead n (s; derived: o)"},
    {"LLC_MODEL_SQ", "65536", "LogPQ send queue bound (bytes)"},
    {"LLC_MODEL_TQ", "65536", "LogPQ network queue bound (bytes)"},
    {"LLC_MODEL_RQ", "65536", "LogPQ receive queue bound (bytes)"},
};

}  // namespace

extern "C" size_t llc_coll_env_vars(const llc_coll_env_var_t **vars)
{
    if (vars)
        *vars = kVars;
    return std::size(kVars);
}

extern "C" const char *llc_coll_env_get(const char *name)
{
    for (const llc_coll_env_var_t &v : kVars)
        if (std::strcmp(v.name, name) == 0)
            return std::getenv(name);
    return nullptr;
}
