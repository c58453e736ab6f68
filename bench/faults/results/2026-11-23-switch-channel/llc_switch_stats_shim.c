/* LD_PRELOAD shim: at llc_finalize, append this process's hybrid switching
 * counters (llc_get_stats: paths, promotions, switch asks, ring pool) as one
 * line to $LLC_SHIM_STATS_DIR/stats.  Writes nothing to stdout/stderr, so
 * MPICH's runtests output checks are not disturbed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "llc.h"

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
            char path[4096], line[1024];
            snprintf(path, sizeof(path), "%s/stats", dir);
            int n = snprintf(line, sizeof(line),
                             "pid=%d udp_msgs=%llu tcp_msgs=%llu promotions=%llu demotions=%llu asks=%llu asks_received=%llu asks_refused_by_me=%llu refusals_heard=%llu ask_resends=%llu asks_unanswered=%llu ring_leases=%llu ring_pool_empty=%llu ring_bytes_landed=%llu\n",
                             (int)getpid(), (unsigned long long)s.udp_msgs, (unsigned long long)s.tcp_msgs, (unsigned long long)s.rc_promotions, (unsigned long long)s.rc_demotions, (unsigned long long)s.rc_requests_sent, (unsigned long long)s.rc_requests_received, (unsigned long long)s.rc_requests_refused, (unsigned long long)s.rc_asks_refused, (unsigned long long)s.rc_ask_resends, (unsigned long long)s.rc_asks_unanswered, (unsigned long long)s.ring_leases, (unsigned long long)s.ring_pool_empty, (unsigned long long)s.ring_bytes_landed);
            int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
            if (fd >= 0) {
                if (write(fd, line, (size_t)n) < 0) { /* nothing to do */ }
                close(fd);
            }
        }
    }
    return real(ctx);
}
