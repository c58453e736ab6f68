/*
 * ch4:llc netmod - the out-of-line part of native point-to-point:
 * completions, statuses, and non-contiguous datatypes (packed through
 * MPICH's typerep into a buffer that libllc moves as one block).
 */
#include <mpidimpl.h>
#include "llc_impl.h"
#include "llc_pt2pt.h"

void MPIDI_LLC_send_done(llc_treq_t * treq)
{
    MPIR_Request *sreq = treq->user;

    if (treq->status != LLC_OK)
        sreq->status.MPI_ERROR =
            MPIDI_LLC_error(MPIDI_LLC_CTX(MPIDI_Request_get_vci(sreq)), treq->status);
    MPL_free(MPIDI_LLC_REQ(sreq).pack_buf);
    MPIDI_LLC_REQ(sreq).pack_buf = NULL;
    MPIDIU_request_complete(sreq);
}

void MPIDI_LLC_recv_done(llc_treq_t * treq)
{
    MPIR_Request *rreq = treq->user;
    MPI_Aint received = (MPI_Aint) treq->received;

    if (treq->status == LLC_ERR_CANCELED) {
        /* an offered receive whose offer the sender gave back (MPI_Cancel) */
        MPIR_STATUS_SET_CANCEL_BIT(rreq->status, TRUE);
        MPIR_STATUS_SET_COUNT(rreq->status, 0);
        if (MPIDI_LLC_REQ(rreq).pack_buf) {
            MPL_free(MPIDI_LLC_REQ(rreq).pack_buf);
            MPIDI_LLC_REQ(rreq).pack_buf = NULL;
            MPIR_Datatype_release_if_not_builtin(MPIDI_LLC_REQ(rreq).datatype);
        }
        MPIDIU_request_complete(rreq);
        return;
    }
    rreq->status.MPI_SOURCE = (int) treq->source;
    rreq->status.MPI_TAG = (int) (uint32_t) treq->tag;
    switch (treq->status) {
        case LLC_OK:
            rreq->status.MPI_ERROR = MPI_SUCCESS;
            break;
        case LLC_ERR_TRUNCATE:
            rreq->status.MPI_ERROR =
                MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                     MPI_ERR_TRUNCATE, "**truncate", "**truncate %d %d %d %d",
                                     rreq->status.MPI_SOURCE, rreq->status.MPI_TAG,
                                     (int) received, (int) treq->length);
            break;
        default:
            rreq->status.MPI_ERROR =
                MPIDI_LLC_error(MPIDI_LLC_CTX(MPIDI_Request_get_vci(rreq)), treq->status);
            received = 0;
    }
    MPIR_STATUS_SET_COUNT(rreq->status, received);
    if (MPIDI_LLC_REQ(rreq).pack_buf) {
        MPI_Aint actual = 0;
        int err = MPIR_Typerep_unpack(MPIDI_LLC_REQ(rreq).pack_buf, received,
                                      MPIDI_LLC_REQ(rreq).user_buf,
                                      MPIDI_LLC_REQ(rreq).user_count,
                                      MPIDI_LLC_REQ(rreq).datatype, 0, &actual);
        if (err && rreq->status.MPI_ERROR == MPI_SUCCESS)
            rreq->status.MPI_ERROR = err;
        MPL_free(MPIDI_LLC_REQ(rreq).pack_buf);
        MPIDI_LLC_REQ(rreq).pack_buf = NULL;
        MPIR_Datatype_release_if_not_builtin(MPIDI_LLC_REQ(rreq).datatype);
    }
    MPIDIU_request_complete(rreq);
}

int MPIDI_LLC_isend_noncontig(llc_context_t * ctx, const void *buf, MPI_Aint count, MPI_Datatype datatype,
                              size_t data_sz, int dest, uint32_t source, uint64_t bits,
                              unsigned flags, MPIR_Request * req)
{
    int mpi_errno = MPI_SUCCESS, rc;
    MPI_Aint actual = 0;
    void *pack = MPL_malloc(data_sz ? data_sz : 1, MPL_MEM_BUFFER);

    MPIR_ERR_CHKANDJUMP1(pack == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                         "ch4:llc pack buffer");
    mpi_errno = MPIR_Typerep_pack(buf, count, datatype, 0, pack, data_sz, &actual);
    if (mpi_errno) {
        MPL_free(pack);
        MPIR_ERR_POP(mpi_errno);
    }
    MPIR_Assert(actual == (MPI_Aint) data_sz);
    MPIDI_LLC_REQ(req).pack_buf = pack;
    MPIDI_LLC_REQ(req).treq.cb = MPIDI_LLC_send_done;
    MPIDI_LLC_REQ(req).treq.user = req;
    rc = llc_tsend(ctx, dest, source, bits, pack, data_sz, flags,
                   &MPIDI_LLC_REQ(req).treq);
    if (rc == LLC_OK) {
        MPIDI_LLC_REQ(req).treq.status = LLC_OK;
        MPIDI_LLC_send_done(&MPIDI_LLC_REQ(req).treq);
    } else if (rc != LLC_INPROGRESS) {
        MPL_free(pack);
        MPIDI_LLC_REQ(req).pack_buf = NULL;
        mpi_errno = MPIDI_LLC_error(ctx, rc);
        goto fn_fail;
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_LLC_irecv_noncontig(llc_context_t * ctx, void *buf, MPI_Aint count, MPI_Datatype datatype, size_t data_sz,
                              int source, int src_rank, uint64_t bits, uint64_t ignore,
                              llc_tmsg_t * msg, MPIR_Request * req)
{
    int mpi_errno = MPI_SUCCESS, rc;
    void *pack = MPL_malloc(data_sz ? data_sz : 1, MPL_MEM_BUFFER);

    MPIR_ERR_CHKANDJUMP1(pack == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                         "ch4:llc unpack buffer");
    MPIDI_LLC_REQ(req).pack_buf = pack;
    MPIDI_LLC_REQ(req).user_buf = buf;
    MPIDI_LLC_REQ(req).user_count = count;
    MPIDI_LLC_REQ(req).datatype = datatype;
    MPIR_Datatype_add_ref_if_not_builtin(datatype);
    MPIDI_LLC_REQ(req).treq.cb = MPIDI_LLC_recv_done;
    MPIDI_LLC_REQ(req).treq.user = req;
    if (msg)
        rc = llc_tmrecv(ctx, msg, pack, data_sz, &MPIDI_LLC_REQ(req).treq);
    else
        rc = llc_trecv_from(ctx, source, src_rank, bits, ignore, pack, data_sz,
                            &MPIDI_LLC_REQ(req).treq);
    if (rc == LLC_OK) {
        MPIDI_LLC_recv_done(&MPIDI_LLC_REQ(req).treq);
    } else if (rc != LLC_INPROGRESS) {
        MPL_free(pack);
        MPIDI_LLC_REQ(req).pack_buf = NULL;
        MPIR_Datatype_release_if_not_builtin(datatype);
        mpi_errno = MPIDI_LLC_error(ctx, rc);
        goto fn_fail;
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
