/*
 * burst - a source that sends a burst every few hybrid periods, to see
 * whether the receiver-driven hybrid moves it onto tcp (the RC class)
 * before its bursts (the recurrence predictor over the long receive
 * history, doc/libllc-hybrid.md, *Two predictors*) or only after them.
 *
 *   burst RANK DIR [CYCLES] [CYCLE_PERIODS] [BURST_MSGS] [MSG_BYTES]
 *
 * Two processes, one per (emulated) node, started by bench/hybrid/run.sh;
 * DIR is a directory both see (file bootstrap).  Rank 1 sends CYCLES
 * bursts of BURST_MSGS messages of MSG_BYTES to rank 0, one burst every
 * CYCLE_PERIODS x LLC_HYBRID_PERIOD_MS, starting half a period into a
 * cycle.  Rank 1 prints, per burst, how many of its messages went on tcp
 * and on udp (llc_get_stats deltas); rank 0 checks every message (order,
 * count, contents) and prints per burst the time from its first to its
 * last message.  Between bursts both only progress (llc_progress sleeps
 * when idle), so the hybrid's periods run.
 */
#define _DEFAULT_SOURCE
#include "llc.h"
#include "llc_file_bootstrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct header {
    unsigned burst; /* CYCLES: the end */
    unsigned index;
};

struct receiver {
    unsigned bursts;
    unsigned expect_burst, expect_index;
    long bad;
    int done;
    double *first, *last; /* per burst: arrival times */
    unsigned *count;
};

static unsigned char pattern(unsigned burst, unsigned index, size_t i)
{
    return (unsigned char)(burst * 131u + index * 7u + (unsigned)i);
}

static void on_message(llc_context_t *ctx, void *arg, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t len)
{
    struct receiver *r = arg;
    struct header h;
    (void)ctx;
    (void)src;
    if (hdr_len != sizeof(h)) {
        r->bad++;
        return;
    }
    memcpy(&h, hdr, sizeof(h));
    if (h.burst >= r->bursts) {
        r->done = 1;
        return;
    }
    double t = file_boot_now_s();
    if (h.burst != r->expect_burst || h.index != r->expect_index) {
        if (h.burst == r->expect_burst + 1 && h.index == 0) {
            r->expect_burst++;
        } else {
            r->bad++;
            return;
        }
    }
    const unsigned char *d = data;
    for (size_t i = 0; i < len; i++)
        if (d[i] != pattern(h.burst, h.index, i)) {
            r->bad++;
            break;
        }
    if (r->count[h.burst]++ == 0)
        r->first[h.burst] = t;
    r->last[h.burst] = t;
    r->expect_index = h.index + 1;
}

static void progress(llc_context_t *ctx, int rank)
{
    int rc = llc_progress(ctx, NULL);
    if (rc != LLC_OK) {
        fprintf(stderr, "burst: rank %d: llc_progress: %s: %s\n", rank, llc_strerror(rc), llc_last_error(ctx));
        exit(1);
    }
}

static void on_sent(void *arg, int status)
{
    long *pending = arg;
    if (status != LLC_OK) {
        fprintf(stderr, "burst: a send failed: %s\n", llc_strerror(status));
        exit(1);
    }
    (*pending)--;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s RANK DIR [CYCLES] [CYCLE_PERIODS] [BURST_MSGS] [MSG_BYTES]\n", argv[0]);
        return 2;
    }
    const int rank = atoi(argv[1]);
    const unsigned cycles = argc > 3 ? (unsigned)atoi(argv[3]) : 12;
    const unsigned cycle_periods = argc > 4 ? (unsigned)atoi(argv[4]) : 10;
    const unsigned burst_msgs = argc > 5 ? (unsigned)atoi(argv[5]) : 2000;
    const size_t msg_bytes = argc > 6 ? (size_t)atol(argv[6]) : 1024;
    const char *period_env = getenv("LLC_HYBRID_PERIOD_MS");
    const double period_s = (period_env && *period_env ? atof(period_env) : 2000.0) / 1000.0;
    if (rank < 0 || rank > 1 || cycles == 0 || cycle_periods == 0 || burst_msgs == 0 || period_s <= 0) {
        fprintf(stderr, "burst: bad arguments (RANK is 0 or 1; counts and LLC_HYBRID_PERIOD_MS > 0)\n");
        return 2;
    }

    struct file_boot fb = {argv[2], rank, 2, 0};
    const int nodes[2] = {0, 1};
    llc_context_t *ctx = file_boot_init(&fb, nodes, "llc-burst");
    if (!ctx)
        return 1;
    struct receiver r;
    memset(&r, 0, sizeof(r));
    r.bursts = cycles;
    r.first = calloc(cycles, sizeof(double));
    r.last = calloc(cycles, sizeof(double));
    r.count = calloc(cycles, sizeof(unsigned));
    llc_am_register(ctx, 1, on_message, &r);
    if (file_boot_fence(&fb) != 0) {
        fprintf(stderr, "burst: rank %d: start barrier timed out\n", rank);
        return 1;
    }
    const double t0 = file_boot_now_s();
    int status = 0;
    if (rank == 1) {
        char *buf = malloc(msg_bytes ? (size_t)burst_msgs * msg_bytes : 1);
        for (unsigned c = 0; c < cycles; c++) {
            const double start = t0 + (c * cycle_periods + 0.5) * period_s;
            while (file_boot_now_s() < start)
                progress(ctx, rank);
            llc_stats_t before, after;
            llc_get_stats(ctx, &before);
            long pending = 0;
            const double t_first = file_boot_now_s();
            for (unsigned i = 0; i < burst_msgs; i++) {
                char *m = buf + (size_t)i * msg_bytes;
                for (size_t k = 0; k < msg_bytes; k++)
                    m[k] = (char)pattern(c, i, k);
                struct header h = {c, i};
                llc_iov_t iov = {m, msg_bytes};
                pending++;
                int rc = llc_am_send(ctx, 0, 1, &h, sizeof(h), &iov, 1, on_sent, &pending);
                if (rc == LLC_OK)
                    pending--;
                else if (rc != LLC_INPROGRESS) {
                    fprintf(stderr, "burst: send: %s: %s\n", llc_strerror(rc), llc_last_error(ctx));
                    return 1;
                }
                progress(ctx, rank);
            }
            while (pending > 0)
                progress(ctx, rank);
            llc_get_stats(ctx, &after);
            printf("source burst %u at %.3f s: tcp %llu udp %llu msgs, sent in %.3f ms\n", c, t_first - t0,
                   (unsigned long long)(after.tcp_msgs - before.tcp_msgs),
                   (unsigned long long)(after.udp_msgs - before.udp_msgs), (file_boot_now_s() - t_first) * 1e3);
            fflush(stdout);
        }
        struct header end = {cycles, 0};
        if (llc_am_send(ctx, 0, 1, &end, sizeof(end), NULL, 0, NULL, NULL) < 0) {
            fprintf(stderr, "burst: final send: %s\n", llc_last_error(ctx));
            return 1;
        }
        llc_stats_t st;
        llc_get_stats(ctx, &st);
        printf("source totals: promotions %llu demotions %llu switch asks received %llu\n",
               (unsigned long long)st.rc_promotions, (unsigned long long)st.rc_demotions,
               (unsigned long long)st.rc_requests_received);
    } else {
        while (!r.done)
            progress(ctx, rank);
        for (unsigned c = 0; c < cycles; c++) {
            printf("receiver burst %u: %u msgs, first to last %.3f ms\n", c, r.count[c],
                   r.count[c] ? (r.last[c] - r.first[c]) * 1e3 : 0.0);
            if (r.count[c] != burst_msgs)
                status = 1;
        }
        llc_stats_t st;
        llc_get_stats(ctx, &st);
        printf("receiver totals: %ld bad, switch asks sent %llu, ring leases %llu\n", r.bad,
               (unsigned long long)st.rc_requests_sent, (unsigned long long)st.ring_leases);
        if (r.bad)
            status = 1;
    }
    fflush(stdout);
    if (llc_finalize(ctx) != LLC_OK) {
        fprintf(stderr, "burst: rank %d: llc_finalize: %s\n", rank, llc_last_error(NULL));
        return 1;
    }
    return status;
}
