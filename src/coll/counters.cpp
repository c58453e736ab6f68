// counters.cpp - llc_coll_counter_*: what the self-tuning collectives count,
// per communicator (read from its state) and process-wide, with a name and
// a description each, for the MPI library's MPI_T performance variables.
#include "alltoall/alltoall_state.hpp"
#include "bcast/bcast.hpp"
#include "state.hpp"

#include <cstdint>

namespace llc::coll {
namespace {

using Read = uint64_t (*)(const llc_coll_state_t *);

struct Counter {
    const char *name;
    int per_comm;
    int counter_class;
    const char *help;
    Read read; // the state is not NULL for a per-communicator counter
};

uint64_t bcast_of(const llc_coll_state_t *s, uint64_t bcast::Stats::*field)
{
    return s->bcast ? s->bcast->stats.*field : 0;
}

uint64_t learning_classes(const llc_coll_state_t *s)
{
    uint64_t n = 0;
    if (s->alltoall)
        for (const auto &kv : s->alltoall->classes)
            n += kv.second.tuner.phase() == alltoall::Tuner::Phase::learning;
    return n;
}

uint64_t learning_totals(int which)
{
    double seconds = 0;
    long calls = 0, phases = 0;
    llc_coll_alltoall_learning(&seconds, &calls, &phases);
    return which == 0 ? uint64_t(calls) : which == 1 ? uint64_t(phases) : uint64_t(seconds * 1e6);
}

constexpr Counter kCounters[] = {
    {"llc_coll_bcast_calls", 1, LLC_COLL_COUNTER_COUNT,
     "broadcasts this process took part in on the communicator (self-tuning MPI_Bcast)",
     [](const llc_coll_state_t *s) -> uint64_t { return s->bcast ? s->bcast->seq : 0; }},
    {"llc_coll_bcast_rounds", 1, LLC_COLL_COUNTER_COUNT,
     "broadcast optimisation rounds seen on the communicator (wait times gathered, virtual ranks reconsidered)",
     [](const llc_coll_state_t *s) { return bcast_of(s, &bcast::Stats::rounds); }},
    {"llc_coll_bcast_decisions", 1, LLC_COLL_COUNTER_COUNT,
     "broadcast optimisation rounds whose decision changed the virtual-rank table (busy processes moved towards the leaves)",
     [](const llc_coll_state_t *s) { return bcast_of(s, &bcast::Stats::decisions); }},
    {"llc_coll_bcast_reports_sent", 1, LLC_COLL_COUNTER_COUNT,
     "wait-time reports this process sent to the broadcast's optimiser (its value moved beyond the threshold)",
     [](const llc_coll_state_t *s) { return bcast_of(s, &bcast::Stats::reports_sent); }},
    {"llc_coll_alltoall_calls", 1, LLC_COLL_COUNTER_COUNT,
     "MPI_Alltoall calls on the communicator handled by the dynamic selection",
     [](const llc_coll_state_t *s) -> uint64_t { return s->alltoall ? uint64_t(s->alltoall->calls) : 0; }},
    {"llc_coll_alltoall_size_classes", 1, LLC_COLL_COUNTER_LEVEL,
     "message-size classes (powers of two of the bytes per rank) the communicator's Alltoall has seen",
     [](const llc_coll_state_t *s) -> uint64_t { return s->alltoall ? s->alltoall->classes.size() : 0; }},
    {"llc_coll_alltoall_size_classes_learning", 1, LLC_COLL_COUNTER_LEVEL,
     "of those, classes still trying candidate algorithms (the rest run their winner and monitor it)",
     learning_classes},
    {"llc_coll_alltoall_learning_calls", 0, LLC_COLL_COUNTER_COUNT,
     "Alltoall calls made while learning, all communicators of the process",
     [](const llc_coll_state_t *) { return learning_totals(0); }},
    {"llc_coll_alltoall_learning_phases", 0, LLC_COLL_COUNTER_COUNT,
     "Alltoall learning phases completed (a winner chosen), all communicators of the process",
     [](const llc_coll_state_t *) { return learning_totals(1); }},
    {"llc_coll_alltoall_learning_us", 0, LLC_COLL_COUNTER_COUNT,
     "wall time (us) of the Alltoall calls made while learning, decisions included, all communicators",
     [](const llc_coll_state_t *) { return learning_totals(2); }},
};
constexpr int kCount = int(sizeof(kCounters) / sizeof(kCounters[0]));

}  // namespace
}  // namespace llc::coll

using llc::coll::kCounters;
using llc::coll::kCount;

extern "C" int llc_coll_counter_count(void) { return kCount; }

extern "C" int llc_coll_counter_info(int index, llc_coll_counter_info_t *out)
{
    if (!out || index < 0 || index >= kCount)
        return LLC_COLL_ERR_ARG;
    const auto &c = kCounters[index];
    *out = llc_coll_counter_info_t{c.name, c.help, c.per_comm, c.counter_class};
    return 0;
}

extern "C" int llc_coll_counter_read(const llc_coll_state_t *state, int index, uint64_t *value)
{
    if (!value || index < 0 || index >= kCount)
        return LLC_COLL_ERR_ARG;
    const auto &c = kCounters[index];
    *value = (c.per_comm && !state) ? 0 : c.read(state);
    return 0;
}
