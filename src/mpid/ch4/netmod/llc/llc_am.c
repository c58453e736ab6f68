/*
 * ch4:llc netmod - moving MPIDIG active messages through libllc.
 */
#include <mpidimpl.h>
#include "llc_impl.h"

/* Headers up to this size are assembled on the stack. */
#define MPIDI_LLC_STACK_HDR 1024

static int comm_rank_to_world(MPIR_Comm * comm, int rank, int *world_rank)
{
    int mpi_errno = MPI_SUCCESS;
    int lpid = -1, avtid = -1;

    MPIDIU_comm_rank_to_pid(comm, rank, &lpid, &avtid);
    MPIR_ERR_CHKANDJUMP2(avtid != 0, mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s %d",
                         "ch4:llc reaches only the processes of MPI_COMM_WORLD "
                         "(dynamic processes are not supported); address table", avtid);
    *world_rank = lpid;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_LLC_error(llc_context_t * ctx, int rc)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, rc == LLC_ERR_PEER ? MPIX_ERR_PROC_FAILED : MPI_ERR_OTHER,
                  "**fail", "**fail %s", llc_last_error(ctx));
    return mpi_errno;
}

/* The endpoint of an active message: MPIDIG holds the lock of src_vci, and
 * the target's handler must run under the lock of dst_vci, so both must be
 * one endpoint (true of MPICH's "communicator" VCI method, the one
 * configure accepts with ch4:llc). */
static int am_endpoint(int src_vci, int dst_vci, MPIDI_LLC_vci_t ** ep)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_CHKANDJUMP2(MPIDI_LLC_vci_index(src_vci) != MPIDI_LLC_vci_index(dst_vci), mpi_errno,
                         MPI_ERR_OTHER, "**fail", "**fail %s %d",
                         "ch4:llc carries an active message on one VCI from end to end, "
                         "but MPIDIG sent one to another VCI from VCI", src_vci);
    *ep = MPIDI_LLC_VCI(src_vci);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Assemble [netmod header | MPIDIG header] in `buf` (size MPIDI_LLC_STACK_HDR)
 * or in a heap buffer returned through *heap. */
static void *build_hdr(char *buf, void **heap, int handler_id, const void *am_hdr,
                       MPI_Aint am_hdr_sz, int src_vci, int dst_vci, size_t * total)
{
    MPIDI_LLC_am_hdr_t h;
    char *out = buf;

    h.handler_id = (uint16_t) handler_id;
    h.src_vci = (uint8_t) src_vci;
    h.dst_vci = (uint8_t) dst_vci;
    h.reserved = 0;
    *total = sizeof(h) + am_hdr_sz;
    *heap = NULL;
    if (*total > MPIDI_LLC_STACK_HDR) {
        out = MPL_malloc(*total, MPL_MEM_BUFFER);
        *heap = out;
    }
    if (out) {
        memcpy(out, &h, sizeof(h));
        if (am_hdr_sz)
            memcpy(out + sizeof(h), am_hdr, am_hdr_sz);
    }
    return out;
}

/* libllc finished with the payload of an am_isend. */
static void am_isend_done(void *cb_arg, int status)
{
    MPIR_Request *sreq = cb_arg;
    int handler_id = MPIDI_LLC_AMREQ(sreq).handler_id;
    MPIDI_LLC_vci_t *ep = MPIDI_LLC_VCI(MPIDI_Request_get_vci(sreq));

    MPL_free(MPIDI_LLC_AMREQ(sreq).pack_buffer);
    MPIDI_LLC_AMREQ(sreq).pack_buffer = NULL;
    if (status != LLC_OK && ep->deferred_errno == MPI_SUCCESS)
        ep->deferred_errno = MPIDI_LLC_error(ep->ctx, status);
    MPIDIG_global.origin_cbs[handler_id] (sreq);
}

int MPIDI_LLC_do_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                          const void *am_hdr, MPI_Aint am_hdr_sz,
                          const void *data, MPI_Aint count, MPI_Datatype datatype,
                          int src_vci, int dst_vci, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    int dest, rc, dt_contig;
    size_t data_sz, hdr_sz;
    MPI_Aint dt_true_lb;
    MPIR_Datatype *dt_ptr;
    char stack_hdr[MPIDI_LLC_STACK_HDR];
    void *heap_hdr;
    void *hdr;
    llc_iov_t iov;
    MPIDI_LLC_vci_t *ep;

    MPIR_FUNC_ENTER;

    mpi_errno = comm_rank_to_world(comm, rank, &dest);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = am_endpoint(src_vci, dst_vci, &ep);
    MPIR_ERR_CHECK(mpi_errno);

    MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, dt_true_lb);

    MPIDI_LLC_AMREQ(sreq).handler_id = handler_id;
    MPIDI_LLC_AMREQ(sreq).pack_buffer = NULL;
    if (dt_contig) {
        iov.base = MPIR_get_contig_ptr(data, dt_true_lb);
    } else {
        MPI_Aint actual;
        void *pack = MPL_malloc(data_sz ? data_sz : 1, MPL_MEM_BUFFER);
        MPIR_ERR_CHKANDJUMP1(pack == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                             "ch4:llc pack buffer");
        mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0, pack, data_sz, &actual);
        if (mpi_errno) {
            MPL_free(pack);
            MPIR_ERR_POP(mpi_errno);
        }
        MPIR_Assert(actual == (MPI_Aint) data_sz);
        MPIDI_LLC_AMREQ(sreq).pack_buffer = pack;
        iov.base = pack;
    }
    iov.len = data_sz;

    hdr = build_hdr(stack_hdr, &heap_hdr, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci,
                    &hdr_sz);
    MPIR_ERR_CHKANDJUMP1(hdr == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                         "ch4:llc header");
    rc = llc_am_send(ep->ctx, dest, MPIDI_LLC_AM_ID, hdr, hdr_sz, &iov, 1,
                     am_isend_done, sreq);
    MPL_free(heap_hdr);
    if (rc == LLC_OK) {
        /* payload already copied out: complete now */
        MPL_free(MPIDI_LLC_AMREQ(sreq).pack_buffer);
        MPIDI_LLC_AMREQ(sreq).pack_buffer = NULL;
        MPIDIG_global.origin_cbs[handler_id] (sreq);
    } else if (rc != LLC_INPROGRESS) {
        MPL_free(MPIDI_LLC_AMREQ(sreq).pack_buffer);
        MPIDI_LLC_AMREQ(sreq).pack_buffer = NULL;
        mpi_errno = MPIDI_LLC_error(ep->ctx, rc);
        goto fn_fail;
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_LLC_do_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                             const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
    int mpi_errno = MPI_SUCCESS;
    int dest, rc;
    size_t hdr_sz;
    char stack_hdr[MPIDI_LLC_STACK_HDR];
    void *heap_hdr;
    void *hdr;
    MPIDI_LLC_vci_t *ep;

    MPIR_FUNC_ENTER;

    mpi_errno = comm_rank_to_world(comm, rank, &dest);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = am_endpoint(src_vci, dst_vci, &ep);
    MPIR_ERR_CHECK(mpi_errno);

    hdr = build_hdr(stack_hdr, &heap_hdr, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci,
                    &hdr_sz);
    MPIR_ERR_CHKANDJUMP1(hdr == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                         "ch4:llc header");
    /* no payload: libllc copies the header, so the send is complete on return */
    rc = llc_am_send(ep->ctx, dest, MPIDI_LLC_AM_ID, hdr, hdr_sz, NULL, 0, NULL, NULL);
    MPL_free(heap_hdr);
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s",
                         llc_last_error(ep->ctx));
    MPIR_Assert(rc == LLC_OK);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* libllc delivers a whole message: hand it to the MPIDIG handler it names.
 * arg: the endpoint's MPIDI_LLC_vci_t, whose VCI's lock the caller holds. */
void MPIDI_LLC_am_recv_handler(llc_context_t * ctx, void *arg, int src,
                               const void *hdr, size_t hdr_len, const void *data,
                               size_t data_len)
{
    const MPIDI_LLC_am_hdr_t *h = hdr;
    MPIDI_LLC_vci_t *ep = arg;
    uint32_t attr = 0;
    int mpi_errno;

    if (hdr_len < sizeof(*h) || h->handler_id >= MPIDI_AM_HANDLERS_MAX ||
        MPIDIG_global.target_msg_cbs[h->handler_id] == NULL ||
        MPIDI_LLC_VCI(h->dst_vci) != ep) {
        if (ep->deferred_errno == MPI_SUCCESS) {
            MPIR_ERR_SET2(ep->deferred_errno, MPI_ERR_INTERN, "**fail",
                          "**fail %s %d",
                          "ch4:llc received a malformed active message from rank", src);
        }
        return;
    }
    MPIDIG_AM_ATTR_SET_VCIS(attr, h->src_vci, h->dst_vci);
    mpi_errno = MPIDIG_global.target_msg_cbs[h->handler_id] ((char *) hdr + sizeof(*h),
                                                            (void *) data, data_len, attr, NULL);
    if (mpi_errno && ep->deferred_errno == MPI_SUCCESS)
        ep->deferred_errno = mpi_errno;
}

/* What a thread still waiting in MPI says when another has called
 * MPI_Finalize (both checks below). */
static const char finalize_elsewhere_msg[] =
    "ch4:llc: MPI_Finalize was called by one thread while this thread was still "
    "waiting inside MPI (MPI_THREAD_MULTIPLE: every thread must have left MPI before MPI_Finalize)";

/* MPI_THREAD_MULTIPLE: MPI_Finalize does not take MPICH's global lock, and
 * MPII_Finalize clears MPIR_ThreadInfo.isThreaded, which turns every lock
 * operation into nothing: a thread still waiting in MPI when another calls
 * MPI_Finalize would run progress beside the finalizing thread, unlocked,
 * and into a finalized libllc.  Such a thread entered its MPI call under the
 * lock and, with the lock's yields now skipped, still owns it (the
 * finalizing thread never does): it ends the job, saying why. */
static void abort_if_finalize_elsewhere(void)
{
#if defined(MPICH_IS_THREADED) && MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL
    MPID_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;
    MPL_thread_id_t self, owner;
    int same = 0;

    if (MPIR_ThreadInfo.thread_provided != MPI_THREAD_MULTIPLE || MPIR_ThreadInfo.isThreaded)
        return;
    if (MPL_atomic_load_int(&MPIR_Process.mpich_state) != MPICH_MPI_STATE__INITIALIZED)
        return;
    MPL_thread_self(&self);
    owner = m->owner;
    MPL_thread_same(&self, &owner, &same);
    if (!same || m->count <= 0)
        return;
    MPID_Abort(NULL, MPI_SUCCESS, 1, finalize_elsewhere_msg);
#endif
}

/* The first peer failure, for every later progress call (MPIDI_LLC_global.peer_failed). */
static int peer_failure_error(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPIX_ERR_PROC_FAILED, "**fail", "**fail %s",
                  MPIDI_LLC_global.peer_failure);
    return mpi_errno;
}

/* Keep the first peer failure for every VCI's later progress calls: the
 * first thread to see one writes the text (peer_failed 0 -> 2 -> 1). */
static void keep_peer_failure(llc_context_t * ctx)
{
    if (MPL_atomic_cas_int(&MPIDI_LLC_global.peer_failed, 0, 2) != 0)
        return;
    snprintf(MPIDI_LLC_global.peer_failure, sizeof(MPIDI_LLC_global.peer_failure),
             "%s (reported earlier, to another call)", llc_last_error(ctx));
    MPL_atomic_release_store_int(&MPIDI_LLC_global.peer_failed, 1);
}

/* MPI_THREAD_MULTIPLE: the finalize hook has begun (or is done) in another
 * thread while this one is still waiting in MPI.  With per-VCI critical
 * sections this thread holds no lock between its polls, so
 * abort_if_finalize_elsewhere cannot tell; it would otherwise poll endpoints
 * that are gone, or wait for ever once there are none. */
static void abort_if_finalizing_elsewhere(void)
{
    MPL_thread_id_t self;
    int same = 0;

    MPL_thread_self(&self);
    MPL_thread_same(&self, &MPIDI_LLC_global.finalizer, &same);
    if (same)
        return;
    MPID_Abort(NULL, MPI_SUCCESS, 1, finalize_elsewhere_msg);
}

static int progress_endpoint(int vci, int blocking);

/* One poll of the endpoint of `vci`, whose lock MPICH holds.  Counted in
 * in_progress when other threads may be in MPI (two atomic adds per
 * progress call cost a single-threaded process ~40 cycles per message):
 * the finalize hook refuses to finalize under a thread inside. */
int MPIDI_LLC_do_progress(int vci, int blocking)
{
    int mpi_errno;

    if (MPIR_ThreadInfo.thread_provided != MPI_THREAD_MULTIPLE)
        return progress_endpoint(vci, blocking);
    MPL_atomic_fetch_add_int(&MPIDI_LLC_global.in_progress, 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* pairs with the finalize hook's */
    if (unlikely(MPL_atomic_load_int(&MPIDI_LLC_global.finalizing)))
        abort_if_finalizing_elsewhere();
    mpi_errno = progress_endpoint(vci, blocking);
    MPL_atomic_fetch_sub_int(&MPIDI_LLC_global.in_progress, 1);
    return mpi_errno;
}

static int progress_endpoint(int vci, int blocking)
{
    int mpi_errno = MPI_SUCCESS;
    int progressed = 0;
    int rc;
    MPIDI_LLC_vci_t *ep;

    abort_if_finalize_elsewhere();
    if (unlikely(vci >= MPIDI_LLC_global.nvcis))
        return MPI_SUCCESS;     /* none (before init, after finalize) */
    ep = &MPIDI_LLC_global.vci[vci];
    if (unlikely(MPL_atomic_acquire_load_int(&MPIDI_LLC_global.peer_failed) == 1))
        return peer_failure_error();

    /* A loop of copied puts and flushes is not a wait: without this its
     * polls would go on to yield and sleep (llc_note_activity). */
    if (unlikely(ep->copied)) {
        ep->copied = 0;
        llc_note_activity(ep->ctx);
    }
    rc = llc_progress(ep->ctx, &progressed);
    /* a rank is gone: the receives posted for it in other threads (libllc
     * does not complete them) wait in vain; their progress calls fail from
     * now on with this error */
    if (rc == LLC_ERR_PEER)
        keep_peer_failure(ep->ctx);
    if (rc < 0)
        return MPIDI_LLC_error(ep->ctx, rc);
    if (ep->deferred_errno != MPI_SUCCESS) {
        mpi_errno = ep->deferred_errno;
        ep->deferred_errno = MPI_SUCCESS;
    }
    return mpi_errno;
}
