/* LD_PRELOAD shim: at llc_finalize, append this process's udp counters
 * (llc_get_stats) as one line to $LLC_SHIM_STATS_DIR/stats.  Writes nothing
 * to stdout/stderr, so MPICH's runtests output checks are not disturbed. */
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
            char path[4096], line[512];
            snprintf(path, sizeof(path), "%s/stats", dir);
            int n = snprintf(line, sizeof(line),
                             "pid=%d udp_msgs=%llu pkts=%llu retx=%llu dups=%llu peers=%llu evictions=%llu overflows=%llu restarts=%llu\n",
                             (int)getpid(), (unsigned long long)s.udp_msgs, (unsigned long long)s.udp_packets_sent,
                             (unsigned long long)s.udp_retransmits, (unsigned long long)s.udp_duplicates,
                             (unsigned long long)s.udp_peers, (unsigned long long)s.udp_evictions,
                             (unsigned long long)s.udp_cap_overflows, (unsigned long long)s.udp_peer_restarts);
            int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
            if (fd >= 0) {
                if (write(fd, line, (size_t)n) < 0) { /* nothing to do */ }
                close(fd);
            }
        }
    }
    return real(ctx);
}
