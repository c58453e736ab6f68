/*
 * ch4:llc netmod - inline active-message entry points called by MPIDIG.
 */
#ifndef LLC_AM_H_INCLUDED
#define LLC_AM_H_INCLUDED

#include "llc_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                                               const void *am_hdr, MPI_Aint am_hdr_sz,
                                               const void *data, MPI_Aint count,
                                               MPI_Datatype datatype, int src_vci, int dst_vci,
                                               MPIR_Request * sreq)
{
    return MPIDI_LLC_do_am_isend(rank, comm, handler_id, am_hdr, am_hdr_sz, data, count,
                                 datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm * comm, int src_rank,
                                                     int handler_id, const void *am_hdr,
                                                     MPI_Aint am_hdr_sz, const void *data,
                                                     MPI_Aint count, MPI_Datatype datatype,
                                                     int src_vci, int dst_vci,
                                                     MPIR_Request * sreq)
{
    return MPIDI_LLC_do_am_isend(src_rank, comm, handler_id, am_hdr, am_hdr_sz, data, count,
                                 datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                                                  const void *am_hdr, MPI_Aint am_hdr_sz,
                                                  int src_vci, int dst_vci)
{
    return MPIDI_LLC_do_am_send_hdr(rank, comm, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm * comm, int rank,
                                                        int handler_id, const void *am_hdr,
                                                        MPI_Aint am_hdr_sz, int src_vci,
                                                        int dst_vci)
{
    return MPIDI_LLC_do_am_send_hdr(rank, comm, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
    return LLC_AM_HDR_MAX - sizeof(MPIDI_LLC_am_hdr_t);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_limit(void)
{
    return MPIDI_LLC_EAGER_BUF_LIMIT - sizeof(MPIDI_LLC_am_hdr_t);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_buf_limit(void)
{
    return MPIDI_LLC_EAGER_BUF_LIMIT;
}

MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz,
                                                      const void *data, MPI_Aint count,
                                                      MPI_Datatype datatype, MPIR_Request * sreq)
{
    return (am_hdr_sz + data_sz) <= MPIDI_NM_am_eager_limit();
}

MPL_STATIC_INLINE_PREFIX MPIDIG_recv_data_copy_cb MPIDI_NM_am_get_data_copy_cb(uint32_t attr)
{
    /* payloads are delivered whole and contiguous: MPIDIG copies them itself */
    return NULL;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request * req)
{
    MPIDI_LLC_AMREQ(req).pack_buffer = NULL;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request * req)
{
    MPL_free(MPIDI_LLC_AMREQ(req).pack_buffer);
    MPIDI_LLC_AMREQ(req).pack_buffer = NULL;
}

/* A poll that finds nothing new in this process's rings from the node (one
 * load per local peer, llc_fast.h) leaves libllc out; llc_fast_poll_skip
 * still lets every LLC_FAST_POLL_PERIOD-th poll through, for everything
 * else libllc does, and libllc counts the polls left out for its idle
 * backoff, unless one-sided copies of ours came between them (a loop of
 * puts and flushes into shared memory is not a wait: its polls must not
 * go on to yield and sleep). */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
    MPIDI_LLC_vci_t *ep = &MPIDI_LLC_global.vci[MPIDI_LLC_vci_index(vci)];
    llc_fast_poll_t *poll = ep->poll;

    if (likely(poll != NULL)) {
        if (unlikely(ep->copied)) {
            ep->copied = 0;
            poll->busy = 1;
        }
        if (llc_fast_poll_skip(poll))
            return MPI_SUCCESS;
    }
    return MPIDI_LLC_do_progress(vci, blocking);
}

#endif /* LLC_AM_H_INCLUDED */
