/* Small assertion helpers shared by mpich-llc's MPI test programs.  A failed
 * check prints where and why, then aborts the whole job with exit code 1. */
#ifndef LLC_TEST_CHECK_H
#define LLC_TEST_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            int r_ = -1;                                                      \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                               \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", r_,        \
                    __FILE__, __LINE__, #cond);                               \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            fflush(stderr);                                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                     \
        }                                                                     \
    } while (0)

#define CHECK_MPI(call)                                                       \
    do {                                                                      \
        int e_ = (call);                                                      \
        if (e_ != MPI_SUCCESS) {                                              \
            char s_[MPI_MAX_ERROR_STRING];                                    \
            int l_ = 0;                                                       \
            MPI_Error_string(e_, s_, &l_);                                    \
            CHECK(0, "%s returned %s", #call, s_);                            \
        }                                                                     \
    } while (0)

/* Add 1 to the MPI_LONG at displacement 0 of target's part of win by get,
 * flush and put under an exclusive lock: a counter that ends right only if
 * the locks exclude each other. */
static inline void locked_add_one(MPI_Win win, int target)
{
    long v = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Get(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    v++;
    CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
}

/* seconds on the monotonic clock */
static inline double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* sleep us microseconds */
static inline void nap_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* deterministic byte pattern for (seed, index) */
static inline unsigned char pattern(unsigned seed, size_t i)
{
    return (unsigned char) ((seed * 2654435761u + i * 40503u + (i >> 8)) & 0xff);
}
#endif
