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
#include <stdint.h>

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
    /* Optional (NULL: not available): the MPI's own Alltoall of
     * bytes_per_rank contiguous bytes per rank on this communicator, with
     * non-overlapping buffers.  When present, the dynamic Alltoall times it
     * as a tenth candidate, "mpich" (LLC_ALLTOALL_NATIVE=0 leaves it out). */
    int (*native_alltoall)(void *arg, const void *sendbuf, void *recvbuf,
                           size_t bytes_per_rank);
    /* Optional (NULL: not available): has the request completed?  Makes
     * progress; on *done = 1 the request is finished and released (like a
     * one-request waitall), on *done = 0 it stays valid.  The broadcast's
     * optimizer uses it to take the reports that have arrived without
     * waiting for the others (LLC_BCAST_REPORT_POLL). */
    int (*test)(void *arg, void *req, int *done);
} llc_coll_p2p_t;

/* Per-communicator state (virtual-rank table, profiles, selection state).
 * Create on first use, free with the communicator. */
typedef struct llc_coll_state llc_coll_state_t;

llc_coll_state_t *llc_coll_state_create(int rank, int size);
void llc_coll_state_free(llc_coll_state_t *state);
/* Complete the messages the collectives still have in flight on this
 * communicator (the broadcast's last reports to its optimizer).  Call it on
 * every process, before llc_coll_state_free, while p2p still works, so that
 * no message is left unreceived when the communicator goes away.  Returns 0
 * or a p2p error code. */
int llc_coll_state_quiesce(llc_coll_state_t *state, const llc_coll_p2p_t *p2p);

/* Return codes of the collectives besides 0 and the p2p functions' codes. */
#ifndef LLC_COLL_DECLINED
#define LLC_COLL_DECLINED (-1000)          /* use the MPI's own algorithm */
#endif
#define LLC_COLL_ERR_ARG (-1001)           /* bad argument (root out of range...) */
#define LLC_COLL_ERR_INCONSISTENT (-1002)  /* processes disagree on the tree */
#define LLC_COLL_ERR_SIZE (-1003)          /* processes passed different byte counts (broadcast: the
                                            * root's differs from this process's, here or above it in
                                            * the tree; where the data did not fit, the receive's own
                                            * truncation error is returned instead) */

/* Broadcast of `bytes` contiguous bytes from `root` (virtual-rank binomial
 * tree tuned at run time; LLC_BCAST=vrank|binomial|mpich).  Every process of
 * the communicator calls it with the same bytes and root.  Returns
 * LLC_COLL_DECLINED when LLC_BCAST=mpich. */
int llc_coll_bcast(llc_coll_state_t *state, const llc_coll_p2p_t *p2p, void *buf, size_t bytes,
                   int root);

/* ---- Dynamic Alltoall selection (src/coll/alltoall, doc/coll-alltoall.md) */
#ifndef LLC_COLL_DECLINED
/* Returned when the collective declines the call: the caller must run the
 * MPI's own algorithm instead (e.g. LLC_ALLTOALL=mpich). */
#define LLC_COLL_DECLINED (-1000)
#endif

/* Alltoall of bytes_per_rank contiguous bytes per destination: block j of
 * sendbuf goes to rank j, block j of recvbuf comes from rank j (each buffer
 * p2p->size * bytes_per_rank bytes).  sendbuf == recvbuf means "in place"
 * (the data is taken from recvbuf; MPI_IN_PLACE is mapped to this by the
 * PMPI layer); otherwise the buffers must not overlap.  Collective over the
 * communicator of p2p (rank/size must match the state's).  The algorithm is
 * chosen by LLC_ALLTOALL (auto | one of the nine names | mpich); in auto
 * mode p2p->native_alltoall, if set, is one of the candidates.  Returns 0,
 * LLC_COLL_DECLINED, LLC_COLL_ERR_ARG for invalid arguments, or a p2p
 * error code. */
int llc_coll_alltoall(llc_coll_state_t *state, const llc_coll_p2p_t *p2p, const void *sendbuf,
                      void *recvbuf, size_t bytes_per_rank);

/* Placement and fabric for the performance models (optional; call on every
 * rank with identical arguments before the first collective that uses it).
 * node_of_rank[r] is the fabric's node number of rank r (NULL: every rank on
 * its own node, node number = rank); fabric_file describes the network
 * (NULL: $LLC_COLL_FABRIC, else one switch).  Returns 0, or LLC_COLL_ERR_ARG
 * when the fabric file cannot be read/parsed (the state then uses one
 * switch). */
int llc_coll_set_topology(llc_coll_state_t *state, const int *node_of_rank,
                          const char *fabric_file);

/* Process-wide totals of the dynamic Alltoall's learning phases (all
 * communicators, all size classes, since the library was loaded): local wall
 * time of the calls made in a learning phase (including the decision
 * reduce/broadcast), number of such calls, number of completed learning
 * phases.  Any pointer may be NULL.  For benchmarks (take differences). */
void llc_coll_alltoall_learning(double *seconds, long *calls, long *phases);

/* ---- Counters (src/coll/counters.cpp, doc/counters.md): what the
 * collectives count, for the MPI library's MPI_T performance variables. */
#define LLC_COLL_HAVE_COUNTERS 1
#define LLC_COLL_COUNTER_COUNT 0   /* only grows */
#define LLC_COLL_COUNTER_LEVEL 1   /* a value now */
typedef struct llc_coll_counter_info {
    const char *name;     /* "llc_coll_<collective>_<counter>" (static) */
    const char *help;     /* what it counts, one line (static) */
    int per_comm;         /* 1: one value per communicator (read with its state); 0: process-wide */
    int counter_class;    /* LLC_COLL_COUNTER_COUNT or LLC_COLL_COUNTER_LEVEL */
} llc_coll_counter_info_t;
/* Number of counters (indices 0 .. count-1). */
int llc_coll_counter_count(void);
/* Describe counter `index`: 0, or LLC_COLL_ERR_ARG (index out of range, out NULL). */
int llc_coll_counter_info(int index, llc_coll_counter_info_t *out);
/* Value of counter `index` for the communicator whose state is `state`
 * (ignored for a process-wide counter; NULL for a per-communicator one: no
 * collective has run on it yet, the value is 0): 0, or LLC_COLL_ERR_ARG. */
int llc_coll_counter_read(const llc_coll_state_t *state, int index, uint64_t *value);

/* ---- Environment variables (src/coll/settings.def, env_table.cpp) */
/* One environment variable that src/coll reads: its name, its default as
 * text (a value, or a word such as "measured" or "auto" when the default is
 * found at run time) and a one-line meaning. */
typedef struct llc_coll_env_var {
    const char *name;
    const char *default_text;
    const char *description;
} llc_coll_env_var_t;

/* The table of every environment variable read by libllccoll and the PMPI
 * layer (LLC_BCAST*, LLC_ALLTOALL*, LLC_MODEL_*, LLC_COLL_*), for llc_info.
 * Sets *vars (when vars is not NULL) to the first entry of a static array
 * and returns its number of entries. */
size_t llc_coll_env_vars(const llc_coll_env_var_t **vars);
/* The current value of a variable of that table (getenv); NULL when it is
 * unset or not in the table. */
const char *llc_coll_env_get(const char *name);
/* 1 when LLC_BCAST and LLC_ALLTOALL both select the MPI's own algorithm
 * (mpich), as parsed by libllccoll's settings table (src/coll/settings.def;
 * an invalid value is reported on stderr and counts as not mpich), else 0. */
int llc_coll_native_only(void);

#ifdef __cplusplus
}
#endif
#endif /* LLC_COLL_H_INCLUDED */
