/*
 * ch4:llc netmod - types embedded in MPICH's objects (request, comm, ...).
 */
#ifndef LLC_PRE_H_INCLUDED
#define LLC_PRE_H_INCLUDED

#include <llc.h>

/* Per-request state of an active-message send. */
typedef struct {
    int handler_id;             /* MPIDIG handler to complete on the origin */
    void *pack_buffer;          /* packed non-contiguous payload, freed at completion */
} MPIDI_LLC_am_request_t;

/* Per-request state of a native send or receive (llc_pt2pt.h). */
typedef struct {
    llc_treq_t treq;            /* libllc's tagged request (caller-owned) */
    void *pack_buf;             /* non-contiguous datatypes: the packed bytes */
    void *user_buf;             /* receive of a non-contiguous type: where to unpack */
    MPI_Aint user_count;
    MPI_Datatype datatype;
    llc_tmsg_t *msg;            /* MPI_Improbe: the message taken out of matching */
} MPIDI_LLC_request_t;

struct MPIR_Comm;
struct llc_coll_state;

/* Per-communicator state of the self-tuning collectives (src/coll): created
 * at the first MPI_Bcast/MPI_Alltoall on the communicator, freed with it.
 * Their point-to-point traffic runs on a private duplicate (coll_shadow). */
typedef struct {
    struct llc_coll_state *coll_state;
    struct MPIR_Comm *coll_shadow;
    int coll_setup;             /* 1 while the duplicate is being created */
} MPIDI_LLC_comm_t;

typedef struct {
    int dummy;
} MPIDI_LLC_dt_t;

typedef struct {
    int dummy;
} MPIDI_LLC_op_t;

/* Per window: the lock of the node's caller-applied accumulates
 * (llc_rma.h), in a segment shared by the window's processes, or NULL when
 * accumulates take MPIDIG's target-applied path.  MPICH does not clear this
 * part of a new window, and frees a window whose creation failed before the
 * netmod's hook ran: the fields are valid only while owner is the window. */
typedef struct {
    MPL_proc_mutex_t *acc_mutex;
    struct MPIDI_LLC_win_peer *peers;   /* MPI_Win_create: where the node's
                                         * processes' memory is (llc_win.c), or NULL */
    struct MPIDI_LLC_win_net *net;      /* puts and gets to other nodes by libllc
                                         * (llc_win_net.c), or NULL */
    /* passive-target locks of such a window (llc_win.c): one lock word per
     * process of the window, after the accumulate lock in the same segment,
     * or NULL (MPIDIG's lock requests to the target) */
    int *lock_words;
    unsigned char *lock_held;   /* per target: what this process holds of its
                                 * word (0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE) */
    int lock_all_held;          /* MPI_Win_lock_all took every word shared */
    struct MPIR_Win *owner;
} MPIDI_LLC_win_t;

/* Address-vector entry: the job rank + 1 (0: not a process of MPI_COMM_WORLD),
 * and the index + 1 of its inline fast path in every endpoint's fast[]
 * (MPIDI_LLC_vci_t; 0: none: not on this node, this process, or
 * LLC_FAST_PATH=0). */
typedef struct {
    int dest_plus1;
    int fast_plus1;
} MPIDI_LLC_addr_t;

typedef struct {
    int dummy;
} MPIDI_LLC_part_t;

#endif /* LLC_PRE_H_INCLUDED */
