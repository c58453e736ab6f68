// Per-communicator state of the self-tuning collectives.  Each collective
// keeps its own part, created on first use and freed with the communicator.
#pragma once

#include <memory>

#include "llc_coll.h"

namespace llc::coll {

struct BcastState;
struct AlltoallState;
// Defined by the module that owns the type (bcast/, alltoall/).
struct BcastStateDeleter {
    void operator()(BcastState *s) const;
};
struct AlltoallStateDeleter {
    void operator()(AlltoallState *s) const;
};

}  // namespace llc::coll

struct llc_coll_state {
    int rank = 0;
    int size = 1;
    std::unique_ptr<llc::coll::BcastState, llc::coll::BcastStateDeleter> bcast;
    std::unique_ptr<llc::coll::AlltoallState, llc::coll::AlltoallStateDeleter> alltoall;
};
