// MPI_Bcast through the PMPI profiling interface: the virtual-rank binomial
// broadcast of src/coll/bcast over the communicator's shadow duplicate.
// Derived datatypes are packed (PMPI_Pack/Unpack) unless the buffer is one
// contiguous run of bytes.  Falls back to PMPI_Bcast for intercommunicators,
// LLC_BCAST=mpich, counts that do not fit an int, and invalid roots (so the
// MPI reports the error as usual).
#include <mpi.h>

#include <climits>
#include <vector>

#include "bcast/bcast.hpp"
#include "pmpi_comm.hpp"

namespace {

int to_mpi_error(int rc)
{
    if (rc == 0)
        return MPI_SUCCESS;
    if (rc == LLC_COLL_ERR_ARG)
        return MPI_ERR_ROOT;
    if (rc < 0)
        return MPI_ERR_INTERN;
    return rc;  // an MPI error code from the PMPI point-to-point calls
}

}  // namespace

extern "C" int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    using namespace llc::coll;
    if (count <= 0 || comm == MPI_COMM_NULL)
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    pmpi::CommContext *c = pmpi::context_for(comm);
    if (!c)
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    BcastState *b = bcast::state_of(c->state);
    if (!b || b->params.mode == bcast::Mode::mpich || root < 0 || root >= c->p2p.size)
        return PMPI_Bcast(buffer, count, datatype, root, comm);

    int tsize = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    if (PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS ||
        PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(datatype, &tlb, &textent) != MPI_SUCCESS)
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    const long long total = static_cast<long long>(count) * tsize;
    if (total > INT_MAX)  // the same on every process: all fall back together
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    const size_t bytes = static_cast<size_t>(total);
    const bool contiguous = textent == tsize && (count == 1 || extent == tsize);

    int rc;
    if (contiguous) {
        rc = llc_coll_bcast(c->state, &c->p2p, static_cast<char *>(buffer) + tlb, bytes, root);
    } else {
        std::vector<char> packed(bytes);
        const bool is_root = c->p2p.rank == root;
        rc = 0;
        if (is_root) {
            int pos = 0;
            rc = PMPI_Pack(buffer, count, datatype, packed.data(), static_cast<int>(bytes), &pos,
                           comm);
        }
        // the root must take part even if packing failed: the others wait
        int rc2 = llc_coll_bcast(c->state, &c->p2p, packed.data(), bytes, root);
        if (!rc)
            rc = rc2;
        if (!rc && !is_root && rc != LLC_COLL_DECLINED) {
            int pos = 0;
            rc = PMPI_Unpack(packed.data(), static_cast<int>(bytes), &pos, buffer, count, datatype,
                             comm);
        }
    }
    if (rc == LLC_COLL_DECLINED)
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    int err = to_mpi_error(rc);
    if (err != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, err);
    return err;
}

// Introspection for tests and benchmarks (found with dlsym): the broadcast
// state of `comm`: out[0] table checksum, out[1] broadcasts done, out[2]
// table version, out[3] table changes by the optimizer.  Returns 0, or -1 if
// `comm` has no broadcast state.
extern "C" int llc_coll_pmpi_bcast_info(MPI_Comm comm, unsigned long long out[4])
{
    using namespace llc::coll;
    pmpi::CommContext *c = pmpi::context_for(comm);
    if (!c || !c->state || !c->state->bcast)
        return -1;
    const BcastState *b = c->state->bcast.get();
    out[0] = b->table.checksum();
    out[1] = b->seq;
    out[2] = b->table.version();
    out[3] = b->stats.decisions;
    return 0;
}
