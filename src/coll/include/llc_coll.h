/*
 * llc_coll.h - C API of mpich-llc's self-tuning collectives (src/coll).
 *
 * The algorithms are written against a small point-to-point interface
 * (llc_coll_p2p_t) that the caller supplies, so the same code runs
 *   (a) inside the ch4:llc netmod of the mpich-llc build (MPICH's internal
 *       collective point-to-point), and
 *   (b) as a PMPI library (libllccoll_pmpi.so) over any MPI (PMPI_Send ...
 *       on a duplicated communicator),
 * and can be driven by a simulator with a modelled network.
 * Buffers are contiguous bytes: callers pack derived datatypes at the edge.
 */
#ifndef LLC_COLL_H_INCLUDED
#define LLC_COLL_H_INCLUDED

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Point-to-point services for one communicator.  Every function returns 0
 * on success, non-zero on failure (the value is passed back to the caller of
 * the collective).  Tags are small non-negative integers private to src/coll;
 * the supplier maps them so they cannot match user messages. */
typedef struct llc_coll_p2p {
    void *arg;
    int rank;
    int size;
    int (*send)(void *arg, const void *buf, size_t bytes, int dest, int tag);
    int (*recv)(void *arg, void *buf, size_t bytes, int src, int tag);
    /* nonblocking pair + completion of n requests (req is an opaque handle) */
    int (*isend)(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req);
    int (*irecv)(void *arg, void *buf, size_t bytes, int src, int tag, void **req);
    int (*waitall)(void *arg, int n, void **reqs);
    /* the MPI's own barrier on this communicator (for "MPI-barrier" variants) */
    int (*barrier)(void *arg);
    /* seconds, monotonic */
    double (*wtime)(void *arg);
} llc_coll_p2p_t;

/* Per-communicator state (virtual-rank table, profiles, selection state).
 * Create on first use, free with the communicator. */
typedef struct llc_coll_state llc_coll_state_t;

llc_coll_state_t *llc_coll_state_create(int rank, int size);
void llc_coll_state_free(llc_coll_state_t *state);

#ifdef __cplusplus
}
#endif
#endif /* LLC_COLL_H_INCLUDED */
