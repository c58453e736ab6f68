/*
 * ch4:llc netmod - puts and gets to processes on other nodes by libllc's
 * one-sided operations (llc_put, llc_get: doc/libllc-rma.md).
 *
 * A window whose processes are not all on one node registers each process's
 * part with libllc when it is created (MPI_Win_create, MPI_Win_allocate) and
 * all-gathers the keys, sizes and displacement units.  A contiguous put or
 * get to a process of another node is then one llc_put / llc_get: the
 * target's libllc writes or reads its memory when the request arrives,
 * without MPICH's active-message handlers, and the origin counts what it has
 * in flight per target.  Completion is remote (the bytes are in the target's
 * memory, or in the origin buffer for a get), so the completion hooks that
 * MPIDIG's flush, unlock, fence and complete call (MPIDI_NM_rma_*_cmpl_hook,
 * llc_rma.h) only wait until the counts are zero; MPIDIG's own messages
 * (lock, unlock, the fence's barrier) follow, and so never overtake a put.
 *
 * Everything else stays MPIDIG's: non-contiguous data, accumulates, dynamic
 * windows, post/start epochs (llc_rma.h says why), and windows whose
 * processes are all on this node (they have their own paths).  An operation
 * that fails (outside the target's part, a dead target) reports its error at
 * the next completion hook of the window, naming the target and the bytes.
 */
#include <mpidimpl.h>
#include "llc_impl.h"
#include "llc_pt2pt.h"
#include "llc_rma.h"

/* What each process of the window tells the others, all-gathered. */
typedef struct {
    unsigned char key[LLC_REGION_KEY_BYTES];
    uint64_t size;
    int32_t disp_unit;
    int32_t valid;              /* 0: its part could not be registered: MPIDIG's path */
} net_entry_t;

/* One operation in flight. */
typedef struct {
    llc_treq_t treq;
    MPIR_Win *win;
    MPIR_Request *req;          /* MPI_Rput / MPI_Rget, or NULL */
    int target_rank;
    int is_put;
    MPI_Aint lo, hi;            /* the bytes of the target's part */
} net_op_t;

int MPIDI_LLC_win_net_expose(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS, i, rc;
    MPIR_Comm *comm = win->comm_ptr;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_LLC_win_net_t *net = NULL;
    net_entry_t mine, *all = NULL;
    llc_region_t *region = NULL;
    llc_context_t *ctx = MPIDI_LLC_CTX(MPIDI_LLC_win_vci(win));

    MPIDI_LLC_WIN(win).net = NULL;
    /* every process decides alike: the communicator's placement */
    if (comm->local_size < 2 || !(llc_caps(ctx) & LLC_CAP_RMA) ||
        (comm->node_comm != NULL && comm->node_comm->local_size == comm->local_size))
        goto fn_exit;
    memset(&mine, 0, sizeof(mine));
    rc = llc_mem_register(ctx, win->base, (size_t) win->size, 0, &region);
    if (rc == LLC_OK && llc_region_key(region, mine.key, sizeof(mine.key), NULL) == LLC_OK) {
        mine.size = (uint64_t) win->size;
        mine.disp_unit = win->disp_unit;
        mine.valid = 1;
    }
    all = MPL_malloc(sizeof(*all) * comm->local_size, MPL_MEM_RMA);
    net = MPL_malloc(sizeof(*net) + sizeof(net->targets[0]) * comm->local_size, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(all == NULL || net == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    mpi_errno = MPIR_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, comm,
                               &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    net->region = region;
    region = NULL;
    net->pending = 0;
    net->first_error = MPI_SUCCESS;
    for (i = 0; i < comm->local_size; i++) {
        MPIDI_LLC_win_target_t *t = &net->targets[i];
        memcpy(t->key, all[i].key, sizeof(t->key));
        t->size = (MPI_Aint) all[i].size;
        t->disp_unit = all[i].disp_unit;
        t->valid = all[i].valid;
        t->pending = 0;
    }
    MPIDI_LLC_WIN(win).net = net;
    net = NULL;

  fn_exit:
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    if (region)
        llc_mem_deregister(ctx, region);
    MPL_free(net);
    goto fn_exit;
}

/* MPIDIG's barrier before the free hook: nothing reaches this part any more,
 * and MPI required every epoch (so every operation) to be over. */
void MPIDI_LLC_win_net_free(MPIR_Win * win)
{
    MPIDI_LLC_win_net_t *net = MPIDI_LLC_WIN(win).net;
    if (net == NULL)
        return;
    if (net->region)
        llc_mem_deregister(MPIDI_LLC_CTX(MPIDI_LLC_win_vci(win)), net->region);
    MPL_free(net);
    MPIDI_LLC_WIN(win).net = NULL;
}

static int op_error(const net_op_t * op, int status)
{
    int mpi_errno = MPI_SUCCESS;
    char what[320];
    snprintf(what, sizeof(what), "%s to rank %d of the window: bytes %ld to %ld of its part: %s",
             op->is_put ? "MPI_Put" : "MPI_Get", op->target_rank, (long) op->lo,
             (long) (op->hi - 1), llc_last_error(MPIDI_LLC_CTX(MPIDI_LLC_win_vci(op->win))));
    MPIR_ERR_SET1(mpi_errno, status == LLC_ERR_PEER ? MPIX_ERR_PROC_FAILED :
                  status == LLC_ERR_RANGE ? MPI_ERR_RMA_RANGE : MPI_ERR_OTHER,
                  "**fail", "**fail %s", what);
    return mpi_errno;
}

/* The operation is over: uncount it, complete its MPI request, and return
 * its error (MPI_SUCCESS if none), which is also kept for the window's next
 * completion hook when `keep` is set. */
static int op_finish(net_op_t * op, int status, int keep)
{
    MPIDI_LLC_win_net_t *net = MPIDI_LLC_WIN(op->win).net;
    int mpi_errno = status == LLC_OK ? MPI_SUCCESS : op_error(op, status);

    net->targets[op->target_rank].pending--;
    net->pending--;
    if (keep && mpi_errno != MPI_SUCCESS && net->first_error == MPI_SUCCESS)
        net->first_error = mpi_errno;
    if (op->req) {
        op->req->status.MPI_ERROR = mpi_errno;
        MPIDIU_request_complete(op->req);
    }
    MPL_free(op);
    return mpi_errno;
}

static void op_callback(llc_treq_t * treq)
{
    net_op_t *op = treq->user;
    op_finish(op, treq->status, 1);
}

int MPIDI_LLC_rma_net(int is_put, void *origin_addr, int origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      int target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIR_Request ** request, int *done)
{
    int mpi_errno = MPI_SUCCESS, origin_contig, target_contig, dest, rc;
    size_t origin_sz, target_sz;
    MPI_Aint origin_lb, target_lb, lo, hi;
    MPIR_Datatype *dtp ATTRIBUTE((unused));
    MPIDI_LLC_win_net_t *net = MPIDI_LLC_WIN(win).net;
    MPIDI_LLC_win_target_t *t = &net->targets[target_rank];
    net_op_t *op;
    const int vci = MPIDI_LLC_win_vci(win);

    *done = 0;
    if (!t->valid)
        goto fn_exit;
    MPIDI_Datatype_get_info(origin_count, origin_datatype, origin_contig, origin_sz, dtp,
                            origin_lb);
    MPIDI_Datatype_get_info(target_count, target_datatype, target_contig, target_sz, dtp,
                            target_lb);
    if (!origin_contig || !target_contig || origin_sz != target_sz || origin_sz == 0)
        goto fn_exit;           /* MPIDIG packs, reports the size mismatch, or does nothing */
    /* the range an error names; the caller checked it (MPIDI_LLC_rma_range,
     * against the same keys) */
    MPIDI_LLC_rma_span(target_disp, t->disp_unit, target_count, target_datatype, &lo, &hi);
    *done = 1;
    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    mpi_errno = MPIDI_LLC_dest(addr, &dest);
    MPIR_ERR_CHECK(mpi_errno);
    op = MPL_malloc(sizeof(*op), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(op == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    op->win = win;
    op->req = NULL;
    op->target_rank = target_rank;
    op->is_put = is_put;
    op->lo = lo;
    op->hi = hi;
    op->treq.cb = op_callback;
    op->treq.user = op;
    /* the window's endpoint, whose progress completes the operation */
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    if (request) {
        op->req = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__RMA, vci, 2);
        if (op->req == NULL) {
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
            MPL_free(op);
            MPIR_ERR_SETANDJUMP(mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
        }
        *request = op->req;
    }
    t->pending++;
    net->pending++;
    /* the target's bytes start at target_disp * disp_unit + the datatype's true lower bound */
    if (is_put)
        rc = llc_put(MPIDI_LLC_global.vci[vci].ctx, dest, (char *) origin_addr + origin_lb, origin_sz,
                     t->key, (uint64_t) (target_disp * t->disp_unit + target_lb), &op->treq);
    else
        rc = llc_get(MPIDI_LLC_global.vci[vci].ctx, dest, (char *) origin_addr + origin_lb, origin_sz,
                     t->key, (uint64_t) (target_disp * t->disp_unit + target_lb), &op->treq);
    if (rc == LLC_OK)   /* complete at once: the callback is not called */
        op_finish(op, LLC_OK, 0);
    else if (rc < 0)    /* refused at the call: the error is this call's (or its request's) */
        mpi_errno = request ? (op_finish(op, rc, 0), MPI_SUCCESS) : op_finish(op, rc, 0);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Progress until no operation of the window (target_rank < 0) or none to
 * target_rank is in flight; then the first error of an operation, once. */
int MPIDI_LLC_win_net_wait(MPIR_Win * win, int target_rank)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_LLC_win_net_t *net = MPIDI_LLC_WIN(win).net;
    int vci;

    if (net == NULL || MPIDI_LLC_WIN(win).owner != win)
        return MPI_SUCCESS;
    vci = MPIDI_LLC_win_vci(win);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    MPIDIU_PROGRESS_WHILE(target_rank < 0 ? net->pending > 0 :
                          net->targets[target_rank].pending > 0, vci);
    mpi_errno = net->first_error;
    net->first_error = MPI_SUCCESS;

  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
