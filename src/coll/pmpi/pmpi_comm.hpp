// PMPI glue shared by the collectives of libllccoll_pmpi.so: for a user
// communicator, a private duplicate that carries the collectives' own
// point-to-point traffic (so it can never match user messages), the
// per-communicator state (freed with the communicator through an attribute
// delete callback), and the llc_coll_p2p_t over PMPI calls.
#pragma once

#include <mpi.h>

#include "llc_coll.h"

namespace llc::coll::pmpi {

struct CommContext {
    MPI_Comm shadow = MPI_COMM_NULL;  // PMPI_Comm_dup of the user communicator
    llc_coll_state_t *state = nullptr;
    llc_coll_p2p_t p2p{};
};

// The context of `comm`, created on first use.  nullptr for
// intercommunicators (the caller then falls back to the MPI's own version).
CommContext *context_for(MPI_Comm comm);

}  // namespace llc::coll::pmpi
