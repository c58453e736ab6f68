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

typedef struct {
    int dummy;
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
