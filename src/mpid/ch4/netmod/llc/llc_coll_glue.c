/*
 * ch4:llc netmod - glue between MPICH and src/coll's self-tuning
 * collectives: the point-to-point interface (MPIC_* on a private duplicate
 * of the communicator), per-communicator state, datatype packing, and the
 * fall back to MPICH's own algorithm when src/coll declines.
 */
#include <mpidimpl.h>
#include "llc_impl.h"
#include <llc_coll.h>

#define LLC_COMM(comm) ((comm)->dev.ch4.netmod.llc)

/* ------------------------------------------------------------------ p2p */

static int p2p_send(void *arg, const void *buf, size_t bytes, int dest, int tag)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    return MPIC_Send(buf, (MPI_Aint) bytes, MPI_BYTE, dest, tag, arg, &errflag);
}

static int p2p_recv(void *arg, void *buf, size_t bytes, int src, int tag)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    return MPIC_Recv(buf, (MPI_Aint) bytes, MPI_BYTE, src, tag, arg, MPI_STATUS_IGNORE,
                     &errflag);
}

static int p2p_isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Request *r = NULL;
    int mpi_errno = MPIC_Isend(buf, (MPI_Aint) bytes, MPI_BYTE, dest, tag, arg, &r, &errflag);
    *req = r;
    return mpi_errno;
}

static int p2p_irecv(void *arg, void *buf, size_t bytes, int src, int tag, void **req)
{
    MPIR_Request *r = NULL;
    int mpi_errno = MPIC_Irecv(buf, (MPI_Aint) bytes, MPI_BYTE, src, tag, arg, &r);
    *req = r;
    return mpi_errno;
}

static int p2p_waitall(void *arg, int n, void **reqs)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    return MPIC_Waitall(n, (MPIR_Request **) reqs, MPI_STATUSES_IGNORE, &errflag);
}

static int p2p_test(void *arg, void *req, int *done)
{
    MPI_Request handle = ((MPIR_Request *) req)->handle;
    int flag = 0;
    /* completes and frees the request when it is done */
    int mpi_errno = MPIR_Test(&handle, &flag, MPI_STATUS_IGNORE);
    *done = flag;
    return mpi_errno;
}

static int p2p_barrier(void *arg)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    return MPIR_Barrier(arg, &errflag);
}

static double p2p_wtime(void *arg)
{
    MPL_time_t t;
    double s;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &s);
    return s;
}

/* MPICH's own Alltoall on the shadow: the dynamic selection's tenth
 * candidate (LLC_ALLTOALL_NATIVE) */
static int p2p_native_alltoall(void *arg, const void *sendbuf, void *recvbuf, size_t bytes)
{
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    return MPIR_Alltoall_impl(sendbuf, (MPI_Aint) bytes, MPI_BYTE, recvbuf, (MPI_Aint) bytes,
                              MPI_BYTE, arg, &errflag);
}

static void make_p2p(MPIR_Comm * shadow, llc_coll_p2p_t * p)
{
    p->arg = shadow;
    p->rank = shadow->rank;
    p->size = shadow->local_size;
    p->send = p2p_send;
    p->recv = p2p_recv;
    p->isend = p2p_isend;
    p->irecv = p2p_irecv;
    p->waitall = p2p_waitall;
    p->barrier = p2p_barrier;
    p->wtime = p2p_wtime;
    p->native_alltoall = p2p_native_alltoall;
    p->test = p2p_test;
}

/* ---------------------------------------------------------------- state */

/* The state of `comm`, created on first use (collectively: every process
 * reaches the same first call).  NULL while the private duplicate is being
 * made (its creation runs collectives on `comm` itself), for
 * intercommunicators, and on failure: the caller then uses MPICH's own. */
static struct llc_coll_state *coll_state(MPIR_Comm * comm, int *mpi_errno)
{
    *mpi_errno = MPI_SUCCESS;
    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM || LLC_COMM(comm).coll_setup)
        return NULL;
    if (LLC_COMM(comm).coll_state)
        return LLC_COMM(comm).coll_state;

    LLC_COMM(comm).coll_setup = 1;
    MPIR_Comm *shadow = NULL;
    *mpi_errno = MPIR_Comm_dup_impl(comm, &shadow);
    LLC_COMM(comm).coll_setup = 0;
    if (*mpi_errno)
        return NULL;
    /* the duplicate's own collectives (if any) use MPICH's algorithms */
    LLC_COMM(shadow).coll_setup = 1;

    struct llc_coll_state *st = llc_coll_state_create(comm->rank, comm->local_size);
    if (st == NULL) {
        MPIR_Comm_release(shadow);
        return NULL;
    }
    /* placement for the Alltoall performance model: node of every rank */
    int *nodes = MPL_malloc(sizeof(int) * comm->local_size, MPL_MEM_COLL);
    if (nodes) {
        for (int r = 0; r < comm->local_size; r++) {
            int lpid = 0, avtid = 0;
            MPIDIU_comm_rank_to_pid(comm, r, &lpid, &avtid);
            nodes[r] = avtid == 0 ? MPIR_Process.node_map[lpid] : r;
        }
        llc_coll_set_topology(st, nodes, NULL);
        MPL_free(nodes);
    }
    LLC_COMM(comm).coll_shadow = shadow;
    LLC_COMM(comm).coll_state = st;
    return st;
}

/* called from the communicator free hook */
void MPIDI_LLC_coll_comm_free(MPIR_Comm * comm)
{
    if (LLC_COMM(comm).coll_state) {
        if (LLC_COMM(comm).coll_shadow) {
            /* receive what the broadcast still has in flight (its optimizer's
             * last reports) so that nothing is left on the shadow */
            llc_coll_p2p_t p2p;
            make_p2p(LLC_COMM(comm).coll_shadow, &p2p);
            (void) llc_coll_state_quiesce(LLC_COMM(comm).coll_state, &p2p);
        }
        llc_coll_state_free(LLC_COMM(comm).coll_state);
        LLC_COMM(comm).coll_state = NULL;
    }
    if (LLC_COMM(comm).coll_shadow) {
        MPIR_Comm *shadow = LLC_COMM(comm).coll_shadow;
        LLC_COMM(comm).coll_shadow = NULL;
        MPIR_Comm_release(shadow);
    }
}

static int coll_error(int rc, const char *what)
{
    int mpi_errno = MPI_SUCCESS;
    if (rc > 0)
        return rc;      /* an MPI error code from the point-to-point layer */
    MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s %d", what, rc);
    return mpi_errno;
}

/* ---------------------------------------------------------------- bcast */

int MPIDI_LLC_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                        MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, rc;
    int is_contig;
    MPI_Aint type_size, true_lb, true_extent, nbytes;
    void *tmp = NULL;

    struct llc_coll_state *st = coll_state(comm, &mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);
    if (st == NULL)
        return MPIR_Bcast_impl(buffer, count, datatype, root, comm, errflag);

    MPIR_Datatype_get_size_macro(datatype, type_size);
    MPIR_Datatype_is_contig(datatype, &is_contig);
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    nbytes = type_size * count;

    llc_coll_p2p_t p2p;
    make_p2p(LLC_COMM(comm).coll_shadow, &p2p);
    if (is_contig) {
        rc = llc_coll_bcast(st, &p2p, (char *) buffer + true_lb, (size_t) nbytes, root);
    } else {
        MPI_Aint actual;
        tmp = MPL_malloc(nbytes ? nbytes : 1, MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP1(tmp == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                             "bcast pack buffer");
        if (comm->rank == root) {
            mpi_errno = MPIR_Typerep_pack(buffer, count, datatype, 0, tmp, nbytes, &actual);
            MPIR_ERR_CHECK(mpi_errno);
        }
        rc = llc_coll_bcast(st, &p2p, tmp, (size_t) nbytes, root);
        if (rc == 0 && comm->rank != root) {
            mpi_errno = MPIR_Typerep_unpack(tmp, nbytes, buffer, count, datatype, 0, &actual);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (rc == LLC_COLL_DECLINED) {
        mpi_errno = MPIR_Bcast_impl(buffer, count, datatype, root, comm, errflag);
    } else if (rc != 0) {
        mpi_errno = coll_error(rc, "ch4:llc virtual-rank broadcast failed with code");
    }
  fn_exit:
    MPL_free(tmp);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ------------------------------------------------------------- alltoall */

int MPIDI_LLC_mpi_alltoall(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                           MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, rc;
    int in_place = (sendbuf == MPI_IN_PLACE);
    int rcontig, scontig = 1;
    MPI_Aint rsize, ssize = 0, rlb, rext, slb = 0, sext, block;
    char *sbuf, *rbuf, *tmp = NULL;
    int n = comm->local_size;

    struct llc_coll_state *st = coll_state(comm, &mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);
    if (st == NULL)
        goto use_mpich;

    MPIR_Datatype_get_size_macro(recvtype, rsize);
    MPIR_Datatype_is_contig(recvtype, &rcontig);
    MPIR_Type_get_true_extent_impl(recvtype, &rlb, &rext);
    block = rsize * recvcount;
    if (!in_place) {
        MPIR_Datatype_get_size_macro(sendtype, ssize);
        MPIR_Datatype_is_contig(sendtype, &scontig);
        MPIR_Type_get_true_extent_impl(sendtype, &slb, &sext);
        if (ssize * sendcount != block)
            goto use_mpich;     /* let MPICH report the mismatch */
    }

    llc_coll_p2p_t p2p;
    make_p2p(LLC_COMM(comm).coll_shadow, &p2p);
    if (rcontig && scontig) {
        rbuf = (char *) recvbuf + rlb;
        sbuf = in_place ? rbuf : (char *) sendbuf + slb;
        rc = llc_coll_alltoall(st, &p2p, sbuf, rbuf, (size_t) block);
    } else {
        /* pack into one buffer, exchange in place, unpack */
        MPI_Aint actual;
        tmp = MPL_malloc(block * n ? block * n : 1, MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP1(tmp == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                             "alltoall pack buffer");
        if (in_place)
            mpi_errno = MPIR_Typerep_pack(recvbuf, recvcount * n, recvtype, 0, tmp, block * n,
                                          &actual);
        else
            mpi_errno = MPIR_Typerep_pack(sendbuf, sendcount * n, sendtype, 0, tmp, block * n,
                                          &actual);
        MPIR_ERR_CHECK(mpi_errno);
        rc = llc_coll_alltoall(st, &p2p, tmp, tmp, (size_t) block);
        if (rc == 0) {
            mpi_errno = MPIR_Typerep_unpack(tmp, block * n, recvbuf, recvcount * n, recvtype, 0,
                                            &actual);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (rc == LLC_COLL_DECLINED)
        goto use_mpich;
    if (rc != 0)
        mpi_errno = coll_error(rc, "ch4:llc dynamic Alltoall failed with code");
  fn_exit:
    MPL_free(tmp);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
  use_mpich:
    mpi_errno = MPIR_Alltoall_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm, errflag);
    goto fn_exit;
}
