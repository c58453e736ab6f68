// PMPI glue: shadow communicator, state lifetime, point-to-point over PMPI.
#include "pmpi_comm.hpp"

#include "coll_settings.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace llc::coll::pmpi {
namespace {

int keyval = MPI_KEYVAL_INVALID;

int p2p_send(void *arg, const void *buf, size_t bytes, int dest, int tag)
{
    auto *c = static_cast<CommContext *>(arg);
    return PMPI_Send(buf, static_cast<int>(bytes), MPI_BYTE, dest, tag, c->shadow);
}

int p2p_recv(void *arg, void *buf, size_t bytes, int src, int tag)
{
    auto *c = static_cast<CommContext *>(arg);
    return PMPI_Recv(buf, static_cast<int>(bytes), MPI_BYTE, src, tag, c->shadow,
                     MPI_STATUS_IGNORE);
}

int p2p_isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req)
{
    auto *c = static_cast<CommContext *>(arg);
    auto *r = new MPI_Request;
    int rc = PMPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, tag, c->shadow, r);
    if (rc != MPI_SUCCESS) {
        delete r;
        return rc;
    }
    *req = r;
    return MPI_SUCCESS;
}

int p2p_irecv(void *arg, void *buf, size_t bytes, int src, int tag, void **req)
{
    auto *c = static_cast<CommContext *>(arg);
    auto *r = new MPI_Request;
    int rc = PMPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, src, tag, c->shadow, r);
    if (rc != MPI_SUCCESS) {
        delete r;
        return rc;
    }
    *req = r;
    return MPI_SUCCESS;
}

int p2p_waitall(void *, int n, void **reqs)
{
    std::vector<MPI_Request> v(n);
    for (int i = 0; i < n; i++)
        v[i] = *static_cast<MPI_Request *>(reqs[i]);
    int rc = PMPI_Waitall(n, v.data(), MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++)
        delete static_cast<MPI_Request *>(reqs[i]);
    return rc;
}

int p2p_test(void *, void *req, int *done)
{
    auto *r = static_cast<MPI_Request *>(req);
    int flag = 0;
    int rc = PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
    *done = flag;
    if (flag)
        delete r;
    return rc;
}

int p2p_barrier(void *arg)
{
    return PMPI_Barrier(static_cast<CommContext *>(arg)->shadow);
}

double p2p_wtime(void *) { return PMPI_Wtime(); }

// The MPI's own Alltoall on the shadow: the dynamic selection's tenth
// candidate.  The caller (pmpi_alltoall.cpp) declines totals beyond INT_MAX.
int p2p_native_alltoall(void *arg, const void *sendbuf, void *recvbuf, size_t bytes)
{
    auto *c = static_cast<CommContext *>(arg);
    const int n = static_cast<int>(bytes);
    return PMPI_Alltoall(sendbuf, n, MPI_BYTE, recvbuf, n, MPI_BYTE, c->shadow);
}

int delete_context(MPI_Comm, int, void *attr, void *)
{
    auto *c = static_cast<CommContext *>(attr);
    int rc = llc_coll_state_quiesce(c->state, &c->p2p);
    llc_coll_state_free(c->state);
    if (c->shadow != MPI_COMM_NULL)
        PMPI_Comm_free(&c->shadow);
    delete c;
    return rc == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

}  // namespace

CommContext *context_for(MPI_Comm comm)
{
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return nullptr;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &keyval, nullptr) !=
            MPI_SUCCESS)
        return nullptr;
    void *attr = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &attr, &found);
    if (found)
        return static_cast<CommContext *>(attr);

    auto *c = new CommContext;
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    if (PMPI_Comm_dup(comm, &c->shadow) != MPI_SUCCESS) {
        delete c;
        return nullptr;
    }
    c->state = llc_coll_state_create(rank, size);
    c->p2p = llc_coll_p2p_t{c, rank, size, p2p_send, p2p_recv, p2p_isend, p2p_irecv,
                            p2p_waitall, p2p_barrier, p2p_wtime, p2p_native_alltoall, p2p_test};
    PMPI_Comm_set_attr(comm, keyval, c);
    // LLC_COLL_PMPI_VERBOSE=1: say (once per communicator, at its rank 0)
    // that its collectives run here, so that an LD_PRELOAD can be checked
    int verbose = 0;
    read_setting(SettingId::LLC_COLL_PMPI_VERBOSE, verbose);
    if (verbose > 0 && rank == 0)
        std::fprintf(stderr, "llc_coll pmpi: communicator of size %d: MPI_Bcast and MPI_Alltoall "
                             "run in libllccoll_pmpi\n", size);
    return c;
}

}  // namespace llc::coll::pmpi
