/*
 * ch4:llc netmod - types embedded in MPICH's objects (request, comm, ...).
 */
#ifndef LLC_PRE_H_INCLUDED
#define LLC_PRE_H_INCLUDED

/* Per-request state of an active-message send. */
typedef struct {
    int handler_id;             /* MPIDIG handler to complete on the origin */
    void *pack_buffer;          /* packed non-contiguous payload, freed at completion */
} MPIDI_LLC_am_request_t;

typedef struct {
    int dummy;
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

typedef struct {
    int dummy;
} MPIDI_LLC_win_t;

typedef struct {
    int dummy;
} MPIDI_LLC_addr_t;

typedef struct {
    int dummy;
} MPIDI_LLC_part_t;

#endif /* LLC_PRE_H_INCLUDED */
