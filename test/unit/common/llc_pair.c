/*
 * llc_pair - two processes, one per (emulated) node, exchanging checked
 * messages over libllc without MPI.  For smoke tests across network
 * namespaces (maint/llc-netns, maint/llc-netns-loss) and a quick ping-pong
 * latency of the inter-node path chosen by LLC_NET.
 *
 *   llc_pair RANK DIR [ITERATIONS] [MAX_SIZE]
 *
 * Both processes must see the directory DIR (the bootstrap is a file
 * key-value store with a file barrier there; namespaces share the file
 * system).  Rank 0 sends ITERATIONS messages of sizes cycling up to MAX_SIZE
 * and rank 1 echoes each one; both check every byte and the order.  Then a
 * 1000-round 8-byte ping-pong measures the round trip.  Prints one summary
 * line per rank with the llc_stats_t counters; exit status 0 on success.
 */
#define _DEFAULT_SOURCE
#include "llc.h"
#include "llc_file_bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int g_rank;

static double now_s(void) { return file_boot_now_s(); }

struct state {
    int rank;
    long received;
    long bad;
    long echo_pending;
    char *echo_buf;
    size_t echo_len;
    unsigned echo_index;
};

struct msg_hdr {
    unsigned index;
    unsigned len;
};

static void fill(char *buf, size_t len, unsigned index)
{
    unsigned x = index * 2654435761u + 12345u;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (char)(x >> 16);
    }
}

static size_t size_of(unsigned index, size_t max)
{
    static const size_t sizes[] = {0, 1, 8, 100, 1000, 4096, 9000, 16384, 40000, 65536, 200000, 1 << 20};
    size_t s = sizes[index % (sizeof(sizes) / sizeof(sizes[0]))];
    return s > max ? max : s;
}

static char *g_check;
static size_t g_check_cap;

static void on_msg(llc_context_t *ctx, void *arg, int src, const void *hdr, size_t hdr_len, const void *data,
                   size_t len)
{
    struct state *s = arg;
    struct msg_hdr h;
    (void)ctx;
    (void)src;
    memcpy(&h, hdr, sizeof(h));
    if (hdr_len != sizeof(h) || h.len != len || h.index != (unsigned)s->received) {
        s->bad++;
    } else {
        if (len > g_check_cap) {
            free(g_check);
            g_check = malloc(len);
            g_check_cap = len;
        }
        fill(g_check, len, h.index);
        if (len && memcmp(g_check, data, len) != 0)
            s->bad++;
    }
    s->received++;
    if (s->rank == 1) { /* echo it back (from llc_progress's caller: keep a copy) */
        free(s->echo_buf);
        s->echo_buf = malloc(len ? len : 1);
        memcpy(s->echo_buf, data, len);
        s->echo_len = len;
        s->echo_index = h.index;
        s->echo_pending = 1;
    }
}

static int progress(llc_context_t *ctx)
{
    int rc = llc_progress(ctx, NULL);
    if (rc != LLC_OK) {
        fprintf(stderr, "rank %d: llc_progress: %s: %s\n", g_rank, llc_strerror(rc), llc_last_error(ctx));
        exit(1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s RANK DIR [ITERATIONS] [MAX_SIZE]\n", argv[0]);
        return 2;
    }
    g_rank = atoi(argv[1]);
    struct file_boot fb = {argv[2], g_rank, 2, 0};
    long iters = argc > 3 ? atol(argv[3]) : 200;
    size_t max = argc > 4 ? (size_t)atol(argv[4]) : (1 << 20);
    const int nodes[2] = {0, 1};
    llc_context_t *ctx = file_boot_init(&fb, nodes, "llc-pair");
    if (!ctx)
        return 1;
    int rc;
    struct state s = {g_rank, 0, 0, 0, NULL, 0, 0};
    llc_am_register(ctx, 1, on_msg, &s);
    char *buf = malloc(max ? max : 1);
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        if (g_rank == 0) {
            size_t len = size_of((unsigned)i, max);
            fill(buf, len, (unsigned)i);
            struct msg_hdr h = {(unsigned)i, (unsigned)len};
            llc_iov_t iov = {buf, len};
            volatile int done = 0;
            rc = llc_am_send(ctx, 1, 1, &h, sizeof(h), &iov, 1, NULL, NULL);
            if (rc == LLC_INPROGRESS) {
                /* no callback given: wait for the echo, which implies the send finished */
            } else if (rc != LLC_OK) {
                fprintf(stderr, "send: %s: %s\n", llc_strerror(rc), llc_last_error(ctx));
                return 1;
            }
            (void)done;
            while (s.received <= i)
                progress(ctx);
        } else {
            while (!s.echo_pending)
                progress(ctx);
            s.echo_pending = 0;
            struct msg_hdr h = {s.echo_index, (unsigned)s.echo_len};
            llc_iov_t iov = {s.echo_buf, s.echo_len};
            rc = llc_am_send(ctx, 0, 1, &h, sizeof(h), &iov, 1, NULL, NULL);
            if (rc < 0) {
                fprintf(stderr, "send: %s: %s\n", llc_strerror(rc), llc_last_error(ctx));
                return 1;
            }
            s.echo_buf = NULL; /* the library may still reference it: leak it (a tool) */
        }
    }
    double t_checked = now_s() - t0;
    /* 8-byte ping-pong */
    long rounds = 1000, base = s.received;
    char small[8] = "pingpong";
    t0 = now_s();
    for (long i = 0; i < rounds; i++) {
        if (g_rank == 0) {
            struct msg_hdr h = {(unsigned)(base + i), 8};
            fill(small, 8, h.index);
            llc_iov_t iov = {small, 8};
            llc_am_send(ctx, 1, 1, &h, sizeof(h), &iov, 1, NULL, NULL);
            while (s.received <= base + i)
                progress(ctx);
        } else {
            while (!s.echo_pending)
                progress(ctx);
            s.echo_pending = 0;
            struct msg_hdr h = {s.echo_index, (unsigned)s.echo_len};
            memcpy(small, s.echo_buf, 8);
            llc_iov_t iov = {small, 8};
            llc_am_send(ctx, 0, 1, &h, sizeof(h), &iov, 1, NULL, NULL);
        }
    }
    double rtt_us = (now_s() - t0) / (double)rounds * 1e6;
    llc_stats_t st;
    llc_get_stats(ctx, &st);
    printf("rank %d: %ld checked messages in %.2f s, %ld bad; 8-byte round trip %.1f us; tcp_msgs %llu udp_msgs %llu "
           "udp_packets %llu retransmits %llu duplicates %llu injected_drops %llu\n",
           g_rank, iters, t_checked, s.bad, rtt_us, (unsigned long long)st.tcp_msgs, (unsigned long long)st.udp_msgs,
           (unsigned long long)st.udp_packets_sent, (unsigned long long)st.udp_retransmits,
           (unsigned long long)st.udp_duplicates, (unsigned long long)st.udp_injected_drops);
    rc = llc_finalize(ctx);
    if (rc != LLC_OK) {
        fprintf(stderr, "rank %d: llc_finalize: %s\n", g_rank, llc_last_error(NULL));
        return 1;
    }
    return s.bad ? 1 : 0;
}
