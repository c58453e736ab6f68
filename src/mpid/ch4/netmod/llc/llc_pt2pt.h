/*
 * ch4:llc netmod - native point-to-point: MPI send, receive, probe, matched
 * probe and cancel go straight to libllc's tagged messages (llc_tsend ...),
 * which match tags inside libllc.  Inline, as MPICH's ucx netmod does.
 *
 * Match bits: (context id << 32) | MPI tag; the sender's rank in the
 * communicator travels as libllc's source label.  MPICH's error bits (the
 * top of the tag, set by collectives that failed) never take part in
 * matching and reach the receiver in MPI_TAG.
 */
#ifndef LLC_PT2PT_H_INCLUDED
#define LLC_PT2PT_H_INCLUDED

#include "llc_impl.h"

#define MPIDI_LLC_REQ(req) ((req)->dev.ch4.netmod.llc)
#define MPIDI_LLC_TAG_MASK 0xffffffffull

MPL_STATIC_INLINE_PREFIX uint64_t MPIDI_LLC_match_bits(int context_id, int tag)
{
    return ((uint64_t) (uint32_t) context_id << 32) | (uint32_t) tag;
}

/* Tag bits a receive ignores: MPICH's error bits, and the whole MPI tag for MPI_ANY_TAG. */
MPL_STATIC_INLINE_PREFIX uint64_t MPIDI_LLC_ignore_bits(int tag)
{
    uint64_t kept = MPIDI_LLC_TAG_MASK;
    if (tag == MPI_ANY_TAG)
        return MPIDI_LLC_TAG_MASK;
    MPIR_TAG_CLEAR_ERROR_BITS(kept);
    return MPIDI_LLC_TAG_MASK & ~kept;
}

/* The job rank of an address-vector entry (set by MPIDI_LLC_init_world). */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_dest(MPIDI_av_entry_t * addr, int *dest)
{
    int d = addr ? addr->netmod.llc.dest_plus1 - 1 : -1;
    if (unlikely(d < 0)) {
        int mpi_errno = MPI_SUCCESS;
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s",
                      "ch4:llc reaches only the processes of MPI_COMM_WORLD "
                      "(dynamic processes are not supported)");
        return mpi_errno;
    }
    *dest = d;
    return MPI_SUCCESS;
}

void MPIDI_LLC_send_done(llc_treq_t * treq);
void MPIDI_LLC_recv_done(llc_treq_t * treq);
int MPIDI_LLC_isend_noncontig(llc_context_t * ctx, const void *buf, MPI_Aint count, MPI_Datatype datatype,
                              size_t data_sz, int dest, uint32_t source, uint64_t bits,
                              unsigned flags, MPIR_Request * req);
int MPIDI_LLC_irecv_noncontig(llc_context_t * ctx, void *buf, MPI_Aint count, MPI_Datatype datatype, size_t data_sz,
                              int source, int src_rank, uint64_t bits, uint64_t ignore,
                              llc_tmsg_t * msg, MPIR_Request * req);
void MPIDI_LLC_recv_status(MPIR_Request * rreq);

MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                             int rank, int tag, MPIR_Comm * comm,
                                             int context_offset, MPIDI_av_entry_t * addr,
                                             MPIR_Request ** request, unsigned flags)
{
    int mpi_errno, dest, dt_contig, rc;
    size_t data_sz;
    MPI_Aint dt_true_lb;
    MPIR_Datatype *dt_ptr;
    MPIR_Request *req;
    uint64_t bits = MPIDI_LLC_match_bits(comm->context_id + context_offset, tag);
    const int vci = MPIDI_LLC_comm_vci(comm);
    MPIDI_LLC_vci_t *ep = &MPIDI_LLC_global.vci[vci];

    mpi_errno = MPIDI_LLC_dest(addr, &dest);
    if (unlikely(mpi_errno))
        return mpi_errno;
    MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, dt_true_lb);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    /* The fast path: a small contiguous message to a process on this node
     * goes straight into its ring (llc_fast.h) and is complete, so the
     * request is MPICH's pre-completed one, as the ucx netmod does. */
    if (likely(addr->netmod.llc.fast_plus1 && dt_contig && flags == 0) &&
        llc_fast_tsend(ep->fast[addr->netmod.llc.fast_plus1 - 1],
                       (uint32_t) comm->rank, bits, MPIR_get_contig_ptr(buf, dt_true_lb),
                       data_sz)) {
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
        *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__SEND);
        return MPI_SUCCESS;
    }
    req = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__SEND, vci, 2);
    MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    *request = req;
    if (unlikely(!dt_contig)) {
        mpi_errno = MPIDI_LLC_isend_noncontig(ep->ctx, buf, count, datatype, data_sz, dest,
                                              comm->rank, bits, flags, req);
        goto fn_exit;
    }
    MPIDI_LLC_REQ(req).pack_buf = NULL;
    MPIDI_LLC_REQ(req).treq.cb = MPIDI_LLC_send_done;
    MPIDI_LLC_REQ(req).treq.user = req;
    rc = llc_tsend(ep->ctx, dest, (uint32_t) comm->rank, bits,
                   MPIR_get_contig_ptr(buf, dt_true_lb), data_sz, flags, &MPIDI_LLC_REQ(req).treq);
    if (rc == LLC_OK)
        MPIDIU_request_complete(req);
    else if (unlikely(rc != LLC_INPROGRESS)) {
        mpi_errno = MPIDI_LLC_error(ep->ctx, rc);
        goto fn_fail;
    }
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_isend(const void *buf, MPI_Aint count,
                                                MPI_Datatype datatype, int rank, int tag,
                                                MPIR_Comm * comm, int context_offset,
                                                MPIDI_av_entry_t * addr, MPIR_Request ** request)
{
    return MPIDI_LLC_isend(buf, count, datatype, rank, tag, comm, context_offset, addr, request, 0);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_issend(const void *buf, MPI_Aint count,
                                                 MPI_Datatype datatype, int rank, int tag,
                                                 MPIR_Comm * comm, int context_offset,
                                                 MPIDI_av_entry_t * addr, MPIR_Request ** request)
{
    return MPIDI_LLC_isend(buf, count, datatype, rank, tag, comm, context_offset, addr, request,
                           LLC_TSEND_SYNC);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_isend_coll(const void *buf, MPI_Aint count,
                                                 MPI_Datatype datatype, int rank, int tag,
                                                 MPIR_Comm * comm, int context_offset,
                                                 MPIDI_av_entry_t * addr, MPIR_Request ** request,
                                                 MPIR_Errflag_t * errflag)
{
    switch (*errflag) {
        case MPIR_ERR_NONE:
            break;
        case MPIR_ERR_PROC_FAILED:
            MPIR_TAG_SET_PROC_FAILURE_BIT(tag);
            break;
        default:
            MPIR_TAG_SET_ERROR_BIT(tag);
    }
    return MPIDI_LLC_isend(buf, count, datatype, rank, tag, comm, context_offset, addr, request, 0);
}

/* MPI allows a send not to be cancelled: it completes normally. */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_cancel_send(MPIR_Request * sreq)
{
    return MPI_SUCCESS;
}

/* Post a receive into req on the endpoint ctx, under its VCI's lock (msg: a
 * message taken by MPI_Improbe, else NULL).  src_rank: the job rank behind
 * source (libllc may offer the receive to it, an offer), or -1. */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_irecv(llc_context_t * ctx, void *buf, MPI_Aint count, MPI_Datatype datatype,
                                             int source, int src_rank, uint64_t bits,
                                             uint64_t ignore, llc_tmsg_t * msg,
                                             MPIR_Request * req)
{
    int mpi_errno = MPI_SUCCESS, dt_contig, rc;
    size_t data_sz;
    MPI_Aint dt_true_lb;
    MPIR_Datatype *dt_ptr;
    void *recv_buf;

    MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, dt_true_lb);
    if (unlikely(!dt_contig))
        return MPIDI_LLC_irecv_noncontig(ctx, buf, count, datatype, data_sz, source, src_rank,
                                         bits, ignore, msg, req);
    MPIDI_LLC_REQ(req).pack_buf = NULL;
    MPIDI_LLC_REQ(req).treq.cb = MPIDI_LLC_recv_done;
    MPIDI_LLC_REQ(req).treq.user = req;
    recv_buf = MPIR_get_contig_ptr(buf, dt_true_lb);
    if (msg)
        rc = llc_tmrecv(ctx, msg, recv_buf, data_sz, &MPIDI_LLC_REQ(req).treq);
    else
        rc = llc_trecv_from(ctx, source, src_rank, bits, ignore, recv_buf,
                            data_sz, &MPIDI_LLC_REQ(req).treq);
    if (rc == LLC_OK)
        MPIDI_LLC_recv_done(&MPIDI_LLC_REQ(req).treq);
    else if (unlikely(rc != LLC_INPROGRESS))
        mpi_errno = MPIDI_LLC_error(ctx, rc);
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                                int rank, int tag, MPIR_Comm * comm,
                                                int context_offset, MPIDI_av_entry_t * addr,
                                                MPIR_Request ** request, MPIR_Request * partner)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *req = *request;
    const int vci = MPIDI_LLC_comm_vci(comm);

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    if (req == NULL) {
        req = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__RECV, vci, 2);
        MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
    } else {
        MPIR_Request_add_ref(req);
    }
    *request = req;
    mpi_errno = MPIDI_LLC_irecv(MPIDI_LLC_global.vci[vci].ctx, buf, count, datatype,
                                rank == MPI_ANY_SOURCE ? LLC_ANY_SOURCE : rank,
                                rank == MPI_ANY_SOURCE ||
                                !addr ? -1 : addr->netmod.llc.dest_plus1 - 1,
                                MPIDI_LLC_match_bits(comm->recvcontext_id + context_offset,
                                                     tag == MPI_ANY_TAG ? 0 : tag),
                                MPIDI_LLC_ignore_bits(tag), NULL, req);
    MPIDI_REQUEST_SET_LOCAL(req, 0, partner);
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_imrecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                                 MPIR_Request * message)
{
    /* the message's endpoint: MPI_Improbe made its request in the VCI's pool */
    const int vci = MPIDI_Request_get_vci(message);
    int mpi_errno;
    llc_tmsg_t *msg = MPIDI_LLC_REQ(message).msg;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    MPIDI_LLC_REQ(message).msg = NULL;
    mpi_errno = MPIDI_LLC_irecv(MPIDI_LLC_CTX(vci), buf, count, datatype, 0, -1, 0, 0, msg,
                                message);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
}

/* An offered receive is not cancelled at once: llc_tcancel
 * returns LLC_INPROGRESS and MPIDI_LLC_recv_done later completes it,
 * cancelled or with the message its sender had already written.  ch4
 * holds the lock of the request's VCI (MPIDI_cancel_recv_safe). */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_cancel_recv(MPIR_Request * rreq)
{
    int cancelled = 0;

    if (!MPIR_Request_is_complete(rreq) &&
        llc_tcancel(MPIDI_LLC_CTX(MPIDI_Request_get_vci(rreq)), &MPIDI_LLC_REQ(rreq).treq,
                    &cancelled) == LLC_OK &&
        cancelled) {
        MPIR_STATUS_SET_CANCEL_BIT(rreq->status, TRUE);
        MPIR_STATUS_SET_COUNT(rreq->status, 0);
        MPL_free(MPIDI_LLC_REQ(rreq).pack_buf);
        MPIDI_LLC_REQ(rreq).pack_buf = NULL;
        MPIDIU_request_complete(rreq);
    }
    return MPI_SUCCESS;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_LLC_probe_status(const llc_treq_t * info, MPI_Status * status)
{
    /* MPI_ERROR is left alone: a probe does not set it (as MPIR_Request_extract_status) */
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = (int) info->source;
        status->MPI_TAG = (int) (uint32_t) info->tag;
        MPIR_STATUS_SET_COUNT(*status, (MPI_Aint) info->length);
    }
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_iprobe(int source, int tag, MPIR_Comm * comm,
                                                 int context_offset, MPIDI_av_entry_t * addr,
                                                 int *flag, MPI_Status * status)
{
    llc_treq_t info;
    const int vci = MPIDI_LLC_comm_vci(comm);
    int mpi_errno = MPI_SUCCESS;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    int rc = llc_tprobe(MPIDI_LLC_global.vci[vci].ctx,
                        source == MPI_ANY_SOURCE ? LLC_ANY_SOURCE : source,
                        MPIDI_LLC_match_bits(comm->recvcontext_id + context_offset,
                                             tag == MPI_ANY_TAG ? 0 : tag),
                        MPIDI_LLC_ignore_bits(tag), flag, &info);
    if (unlikely(rc != LLC_OK))
        mpi_errno = MPIDI_LLC_error(MPIDI_LLC_global.vci[vci].ctx, rc);
    else if (*flag)
        MPIDI_LLC_probe_status(&info, status);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_improbe(int source, int tag, MPIR_Comm * comm,
                                                  int context_offset, MPIDI_av_entry_t * addr,
                                                  int *flag, MPIR_Request ** message,
                                                  MPI_Status * status)
{
    int mpi_errno = MPI_SUCCESS;
    llc_treq_t info;
    llc_tmsg_t *msg = NULL;
    MPIR_Request *req = NULL;
    const int vci = MPIDI_LLC_comm_vci(comm);

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    int rc = llc_tmprobe(MPIDI_LLC_global.vci[vci].ctx,
                         source == MPI_ANY_SOURCE ? LLC_ANY_SOURCE : source,
                         MPIDI_LLC_match_bits(comm->recvcontext_id + context_offset,
                                              tag == MPI_ANY_TAG ? 0 : tag),
                         MPIDI_LLC_ignore_bits(tag), flag, &msg, &info);
    if (unlikely(rc != LLC_OK)) {
        mpi_errno = MPIDI_LLC_error(MPIDI_LLC_global.vci[vci].ctx, rc);
        goto fn_fail;
    }
    if (*flag) {
        /* in the VCI's pool: MPIDI_NM_mpi_imrecv finds the endpoint from it */
        req = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__MPROBE, vci, 2);
        MPIR_ERR_CHKANDJUMP(req == NULL, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
        MPIDI_LLC_REQ(req).msg = msg;
        MPIDI_LLC_probe_status(&info, status);
    }
    *message = req;
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#endif /* LLC_PT2PT_H_INCLUDED */
