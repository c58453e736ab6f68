/*
 * ch4:llc netmod - internal declarations shared by the netmod's files.
 *
 * The netmod is thin.  Point-to-point is native (llc_pt2pt.h: libllc's
 * tagged messages match inside libllc, the fast path inline); MPICH's
 * generic active-message layer (MPIDIG) still does RMA and partitioned
 * communication, whose active messages this module moves through libllc
 * (llc_am.c).
 */
#ifndef LLC_IMPL_H_INCLUDED
#define LLC_IMPL_H_INCLUDED

#include <mpidimpl.h>
#include "mpidch4r.h"
#include "ch4_impl.h"
#include <llc.h>
#include <llc_fast.h>

/* The one libllc handler the netmod registers; MPIDIG's own handler id
 * travels in MPIDI_LLC_am_hdr_t. */
#define MPIDI_LLC_AM_ID 0

/* Active messages whose header + payload fit here are sent eagerly; larger
 * ones use MPIDIG's rendezvous (which ends in one am_isend_reply carrying
 * the whole payload, so libllc moves messages of any size).  MPICH requires
 * MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE (default 69632) >= this. */
#define MPIDI_LLC_EAGER_BUF_LIMIT 65536

/* Prefix of every active message: 8 bytes, so that MPIDIG's header that
 * follows stays 8-byte aligned. */
typedef struct MPIDI_LLC_am_hdr {
    uint16_t handler_id;
    uint8_t src_vci;
    uint8_t dst_vci;
    uint32_t reserved;
} MPIDI_LLC_am_hdr_t;

/* One VCI's libllc endpoint (doc/threads.md): its own context, rings and
 * matching, used under that VCI's lock only.  With MPICH's global critical
 * section (the default build) there is one. */
typedef struct MPIDI_LLC_vci {
    llc_context_t *ctx;
    int deferred_errno;         /* error seen inside a callback, reported by progress */
    llc_fast_peer_t **fast;     /* the inline paths to the processes on this node (llc_fast.h) */
    llc_fast_poll_t *poll;      /* the inline look at this process's rings (llc_fast.h), or NULL */
    int copied;                 /* puts/gets copied by llc_rma.h since the last progress call */
} MPL_ATTR_ALIGNED(64) MPIDI_LLC_vci_t;

typedef struct {
    MPIDI_LLC_vci_t vci[MPIDI_CH4_MAX_VCIS];
    int nvcis;                  /* endpoints made at init: MPIDI_global.n_vcis */
    int nfast;                  /* entries of each endpoint's fast[] (the same peers in each) */
    /* MPI_THREAD_MULTIPLE (doc/threads.md): threads inside MPIDI_LLC_do_progress
     * (atomic; the finalize hook refuses to finalize under a thread still
     * waiting in MPI), and the first peer failure llc_progress reported: every
     * later progress call of any thread fails with it, so that no thread
     * waits on for a rank that is gone (MPIX_ERR_PROC_FAILED).  peer_failed:
     * 0, then 2 while one thread writes peer_failure, then 1.  finalizing:
     * set by the finalize hook (of the thread `finalizer`) before it reads
     * in_progress, read by every counted progress call after it raised
     * in_progress, so that one of the two sees the other. */
    MPL_atomic_int_t in_progress;
    MPL_atomic_int_t finalizing;
    MPL_thread_id_t finalizer;
    MPL_atomic_int_t peer_failed;
    char peer_failure[512];
} MPIDI_LLC_global_t;

extern MPIDI_LLC_global_t MPIDI_LLC_global;

/* The endpoint of MPICH's VCI `vci`.  VCIs are below MPIDI_global.n_vcis,
 * the number of endpoints; one beyond (a VCI taken from a communicator's
 * sequence number without the modulo) shares an endpoint, as MPICH's ucx
 * netmod does. */
#if MPIDI_CH4_MAX_VCIS == 1
#define MPIDI_LLC_vci_index(vci_) 0
#else
/* (nvcis is 0 before the first endpoint is open and after finalize: a
 * progress call then polls nothing, through endpoint 0's NULL context) */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_vci_index(int vci)
{
    int n = MPIDI_LLC_global.nvcis;
    return vci < n ? vci : n > 0 ? vci % n : 0;
}
#endif
#define MPIDI_LLC_VCI(vci_) (&MPIDI_LLC_global.vci[MPIDI_LLC_vci_index(vci_)])
#define MPIDI_LLC_CTX(vci_) (MPIDI_LLC_VCI(vci_)->ctx)

/* The VCI of a communicator's point-to-point messages: the same at the
 * sender and the receiver (MPICH's "communicator" VCI method; configure
 * refuses the others), and for any source. */
#define MPIDI_LLC_comm_vci(comm) \
    MPIDI_LLC_vci_index(MPIDI_get_vci(SRC_VCI_FROM_SENDER, (comm), 0, 0, 0))

/* The VCI of a window's operations and MPIDIG's active messages for it. */
#define MPIDI_LLC_win_vci(win) MPIDI_LLC_comm_vci((win)->comm_ptr)

#define MPIDI_LLC_AMREQ(req) ((req)->dev.ch4.am.netmod_am.llc)
#define MPIDI_LLC_WIN(win) ((win)->dev.netmod.llc)

/* Where a process of the node keeps its part of an MPI_Win_create window,
 * for puts and gets by cross-memory attach (llc_rma.h); indexed by the
 * process's rank in the node's communicator. */
typedef struct MPIDI_LLC_win_peer {
    uint64_t base;
    MPI_Aint size;
    int pid;
    int disp_unit;
} MPIDI_LLC_win_peer_t;

/* What an origin knows of each process of a window that spans nodes, for
 * puts and gets by libllc (llc_win_net.c); indexed by rank in the window. */
typedef struct MPIDI_LLC_win_target {
    unsigned char key[LLC_REGION_KEY_BYTES];
    MPI_Aint size;
    int disp_unit;
    int valid;                  /* 0: its part is not registered: MPIDIG's path */
    int pending;                /* this process's operations to it not yet complete */
} MPIDI_LLC_win_target_t;

typedef struct MPIDI_LLC_win_net {
    llc_region_t *region;       /* this process's part */
    int pending;                /* operations in flight, all targets */
    int first_error;            /* of an operation that failed, for the next completion hook */
    MPIDI_LLC_win_target_t targets[];
} MPIDI_LLC_win_net_t;

/* llc_win_net.c: register this process's part and learn the others' (a
 * window that spans nodes; else nothing), and undo it. */
int MPIDI_LLC_win_net_expose(MPIR_Win * win);
void MPIDI_LLC_win_net_free(MPIR_Win * win);

int MPIDI_LLC_do_progress(int vci, int blocking);
/* an MPI error code for a libllc status, with the endpoint's last error */
int MPIDI_LLC_error(llc_context_t * ctx, int rc);
int MPIDI_LLC_do_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                          const void *am_hdr, MPI_Aint am_hdr_sz,
                          const void *data, MPI_Aint count, MPI_Datatype datatype,
                          int src_vci, int dst_vci, MPIR_Request * sreq);
int MPIDI_LLC_do_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                             const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
void MPIDI_LLC_am_recv_handler(llc_context_t * ctx, void *arg, int src,
                               const void *hdr, size_t hdr_len, const void *data,
                               size_t data_len);

void MPIDI_LLC_coll_comm_free(MPIR_Comm * comm);

#endif /* LLC_IMPL_H_INCLUDED */
