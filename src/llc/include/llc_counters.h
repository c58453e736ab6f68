/*
 * llc_counters.h - libllc's counters by index: name, class, description and
 * value, for tools that list what a library counts without knowing its
 * struct (an MPI library's MPI_T performance variables, a profiler).
 *
 * The same values are in llc_stats_t (llc.h); this interface adds a name
 * ("llc_<component>_<counter>"), a class and a one-line description to each,
 * and stays valid as counters are appended: a caller asks how many there are.
 * Added without changing LLC_API_VERSION (LLC_HAVE_COUNTERS tells it is there).
 */
#ifndef LLC_COUNTERS_H_INCLUDED
#define LLC_COUNTERS_H_INCLUDED

#include <stdint.h>

#include "llc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LLC_HAVE_COUNTERS 1

enum llc_counter_class {
    LLC_COUNTER_COUNT = 0,      /* only grows: events or bytes since llc_init */
    LLC_COUNTER_LEVEL = 1,      /* a value now (peers, connections, rings in use) */
    LLC_COUNTER_HIGH_WATER = 2  /* the most a level has been since llc_init */
};

typedef struct llc_counter_info {
    const char *name;       /* "llc_<component>_<counter>", e.g. "llc_tagged_eager_sends" */
    const char *component;  /* "core", "shm", "tcp", "udp", "hybrid", "tagged", ... */
    const char *help;       /* what it counts, one line */
    int counter_class;      /* enum llc_counter_class */
} llc_counter_info_t;

/* Number of counters (indices 0 .. count-1); needs no context. */
int llc_counter_count(void);

/* Describe counter `index` (static strings).  LLC_ERR_INVALID when index is
 * out of range or out is NULL. */
int llc_counter_info(int index, llc_counter_info_t *out);

/* Values of counters first .. first+n-1 of ctx into values[0 .. n-1].
 * LLC_ERR_INVALID (nothing written) when ctx or values is NULL or the range
 * is not within 0 .. llc_counter_count(). */
int llc_counter_read(const llc_context_t *ctx, int first, int n, uint64_t *values);

#ifdef __cplusplus
}
#endif
#endif /* LLC_COUNTERS_H_INCLUDED */
