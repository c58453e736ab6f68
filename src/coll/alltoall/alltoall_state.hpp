// Per-communicator state of the dynamic Alltoall: configuration (from the
// environment at creation), model parameters, topology, and one tuner per
// message-size class (floor(log2(bytes per rank))).
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "../state.hpp"
#include "alltoall/algorithms.hpp"
#include "alltoall/decision_cache.hpp"
#include "alltoall/tuner.hpp"
#include "model/params.hpp"
#include "model/step_links.hpp"
#include "model/topology.hpp"

namespace llc::coll::alltoall {

struct Config {
    enum class Mode { automatic, forced, mpich } mode = Mode::automatic;
    Alg forced = Alg::pairwise;          // LLC_ALLTOALL=<name>
    double prune = 2.0;                  // LLC_ALLTOALL_PRUNE (0: keep all)
    TunerConfig tuner;                   // TRIALS, MONITOR_PERIOD, RELEARN
    model::Kind model = model::Kind::hockney;        // LLC_ALLTOALL_MODEL
    model::BsVariant bs = model::BsVariant::paper;   // LLC_ALLTOALL_BS
    model::SharingMode sharing = model::SharingMode::steps;  // LLC_ALLTOALL_MODEL_SHARING
    int verbose = 0;                     // LLC_ALLTOALL_VERBOSE
    bool native = true;                  // LLC_ALLTOALL_NATIVE: the MPI's own as 10th candidate
    std::string decisions;               // LLC_ALLTOALL_DECISIONS: the file, "" (off)
};
// Reads the LLC_ALLTOALL* variables (unknown values: defaults + warning).
Config config_from_env();

struct SizeClass {
    size_t first_bytes = 0;
    std::vector<double> predicted;  // the modelled nine, empty without pruning
    Tuner tuner;
    DecisionKey key;      // its line in the decision cache (rank 0 only)
    bool resumed = false; // started from a cached decision, without learning
};

}  // namespace llc::coll::alltoall

namespace llc::coll {

struct AlltoallState {
    alltoall::Config cfg;
    bool have_params = false;
    model::Params params;
    bool have_topology = false;
    std::vector<int> node_of_rank;
    model::Fabric fabric;
    model::Analysis analysis;
    std::map<int, alltoall::SizeClass> classes;
    long calls = 0;
    // Kept only while used: Bruck's buffers while calls run Bruck, the copy
    // of the send data while calls are in place; released by the first call
    // that does not need them.
    alltoall::Scratch alg_scratch, in_place_copy;
};

// The state's Alltoall part, created (config from the environment) on first use.
AlltoallState *alltoall_state(llc_coll_state_t *s);
// Message-size class of a call.
int alltoall_size_class(size_t bytes);

}  // namespace llc::coll
