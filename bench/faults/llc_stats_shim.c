/* llc_stats_shim.c - LD_PRELOAD shim for the MPICH suite runs: at
 * llc_finalize, before the real call (what finalizing itself does is not in
 * it), append this process's llc_get_stats counters as one line
 * "pid=<pid> <name>=<value> ..." to $LLC_SHIM_STATS_DIR/stats.  Writes
 * nothing to stdout/stderr, so MPICH's runtests output checks are not
 * disturbed; without LLC_SHIM_STATS_DIR it does nothing.
 *
 * Which counters: LLC_SHIM_STATS, a comma-separated list of llc_stats_t
 * field names, each optionally "label=field" to print it under another
 * name (the lines of the older results, e.g. "pkts=udp_packets_sent");
 * unset or empty, every counter of llc_stats_t under its own name (one
 * appended to llc.h after the list below as "counter<index>").  An unknown
 * name is skipped.
 *
 * Build (from the top of the tree):
 *   gcc -O2 -shared -fPIC -I src/llc/include -o libllcstats.so bench/faults/llc_stats_shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "llc.h"

struct counter {
    const char *name;
    size_t offset;
};

#define COUNTER(f) { #f, offsetof(llc_stats_t, f) }
static const struct counter counters[] = {
    COUNTER(msgs_sent), COUNTER(msgs_received), COUNTER(bytes_sent), COUNTER(bytes_received),
    COUNTER(shm_msgs), COUNTER(tcp_msgs), COUNTER(self_msgs), COUNTER(cma_msgs),
    COUNTER(idle_yields), COUNTER(idle_sleeps),
    COUNTER(udp_msgs), COUNTER(udp_packets_sent), COUNTER(udp_retransmits), COUNTER(udp_duplicates),
    COUNTER(udp_acks_sent), COUNTER(udp_injected_drops), COUNTER(udp_peers),
    COUNTER(rc_promotions), COUNTER(rc_demotions), COUNTER(rc_active),
    COUNTER(rc_requests_sent), COUNTER(rc_requests_received), COUNTER(rc_requests_refused),
    COUNTER(udp_evictions), COUNTER(udp_cap_overflows), COUNTER(udp_peer_restarts),
    COUNTER(rc_sources), COUNTER(rc_slots_cap), COUNTER(rc_out_slots_in_use), COUNTER(rc_in_slots_in_use),
    COUNTER(rc_out_slots_high_water), COUNTER(rc_in_slots_high_water), COUNTER(rc_slots_full),
    COUNTER(tcp_conns), COUNTER(tcp_evictions), COUNTER(tcp_cap_overflows), COUNTER(tcp_closes_received),
    COUNTER(udp_handed_over), COUNTER(udp_handover_waits), COUNTER(udp_handover_drops),
    COUNTER(hybrid_routes), COUNTER(hybrid_sources), COUNTER(hybrid_evictions), COUNTER(hybrid_cap_overflows),
    COUNTER(ring_pool_rings), COUNTER(ring_pool_in_use), COUNTER(ring_pool_high_water), COUNTER(ring_pool_held),
    COUNTER(ring_leases), COUNTER(ring_pool_empty), COUNTER(ring_bytes_landed),
    COUNTER(rc_asks_refused), COUNTER(rc_ask_resends), COUNTER(rc_asks_unanswered),
    COUNTER(verbs_rndv_sends), COUNTER(verbs_rndv_send_errors), COUNTER(verbs_rndv_recvs),
    COUNTER(verbs_rndv_bytes_read), COUNTER(verbs_rndv_fallbacks), COUNTER(verbs_rndv_held_records),
    COUNTER(reg_cache_hits), COUNTER(reg_cache_misses), COUNTER(reg_cache_evictions), COUNTER(reg_cache_overflows),
    COUNTER(reg_cache_entries), COUNTER(reg_cache_pinned),
    COUNTER(dc_rdma_requests_sent), COUNTER(dc_rdma_switches), COUNTER(dc_rdma_exits), COUNTER(dc_rdma_sources),
    COUNTER(dc_rdma_bytes_landed), COUNTER(dc_rdma_requests_accepted), COUNTER(dc_rdma_packets_sent),
    COUNTER(tag_eager_sends), COUNTER(tag_rndv_sends), COUNTER(tag_unexpected), COUNTER(tag_cma_reads),
    COUNTER(tag_truncated), COUNTER(tag_cancelled), COUNTER(auth_rejected), COUNTER(udp_auth_dropped),
    COUNTER(tag_rejected), COUNTER(tag_read_failed),
    COUNTER(udp_timeout_retransmits), COUNTER(udp_timeout_wait_us), COUNTER(tag_data_in_place), COUNTER(tcp_adopted),
};
#undef COUNTER
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))
/* llc_stats_t only grows at its end (llc.h): counters appended after this
 * list was written are printed too, as "counter<index>", until named here. */
_Static_assert(sizeof(llc_stats_t) >= NCOUNTERS * sizeof(uint64_t), "a counter listed here left llc_stats_t");
#define NFIELDS (sizeof(llc_stats_t) / sizeof(uint64_t))

static const struct counter *find(const char *name, size_t len)
{
    for (size_t i = 0; i < NCOUNTERS; i++)
        if (strlen(counters[i].name) == len && memcmp(counters[i].name, name, len) == 0)
            return &counters[i];
    return NULL;
}

/* Append " label=value" to line (of size cap, used so far *used); false when full. */
static int append(char *line, size_t cap, size_t *used, const char *label, size_t label_len, uint64_t value)
{
    int n = snprintf(line + *used, cap - *used, " %.*s=%llu", (int)label_len, label, (unsigned long long)value);
    if (n < 0 || (size_t)n >= cap - *used)
        return 0;
    *used += (size_t)n;
    return 1;
}

static uint64_t value_of(const llc_stats_t *s, const struct counter *c)
{
    uint64_t v;
    memcpy(&v, (const char *)s + c->offset, sizeof(v));
    return v;
}

/* The line for s: the chosen counters (LLC_SHIM_STATS) or all of them. */
static size_t format(const llc_stats_t *s, char *line, size_t cap)
{
    size_t used = (size_t)snprintf(line, cap, "pid=%d", (int)getpid());
    const char *list = getenv("LLC_SHIM_STATS");
    if (!list || !*list) {
        for (size_t i = 0; i < NFIELDS; i++) {
            char unnamed[32];
            struct counter c = {unnamed, i * sizeof(uint64_t)};
            if (i < NCOUNTERS)
                c = counters[i];
            else
                snprintf(unnamed, sizeof(unnamed), "counter%zu", i);
            if (!append(line, cap, &used, c.name, strlen(c.name), value_of(s, &c)))
                break;
        }
    } else {
        for (const char *item = list; *item;) {
            size_t len = strcspn(item, ",");
            const char *eq = memchr(item, '=', len);
            const char *field = eq ? eq + 1 : item;
            const struct counter *c = find(field, (size_t)(item + len - field));
            size_t label_len = eq ? (size_t)(eq - item) : len;
            const char *label = label_len > 0 ? item : field; /* "=field": its own name */
            if (label_len == 0)
                label_len = (size_t)(item + len - field);
            if (c && !append(line, cap, &used, label, label_len, value_of(s, c)))
                break;
            item += len;
            if (*item == ',')
                item++;
        }
    }
    if (used + 1 < cap) {
        line[used++] = '\n';
        line[used] = '\0';
    }
    return used;
}

int llc_finalize(llc_context_t *ctx)
{
    static int (*real)(llc_context_t *);
    if (!real)
        real = (int (*)(llc_context_t *))dlsym(RTLD_NEXT, "llc_finalize");
    const char *dir = getenv("LLC_SHIM_STATS_DIR");
    if (dir && ctx) {
        llc_stats_t s;
        memset(&s, 0, sizeof(s));
        if (llc_get_stats(ctx, &s) == 0) {
            char path[4096], line[4096];
            snprintf(path, sizeof(path), "%s/stats", dir);
            size_t n = format(&s, line, sizeof(line));
            int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
            if (fd >= 0) {
                if (write(fd, line, n) < 0) { /* nothing to do: the run goes on without this line */ }
                close(fd);
            }
        }
    }
    return real(ctx);
}
