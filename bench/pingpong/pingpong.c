/* pingpong.c -- MPI point-to-point benchmark between ranks 0 and 1.
 *
 * Four tests (--tests, default all, in this order):
 *
 *   lat   blocking ping-pong (MPI_Send/MPI_Recv); latency = half the mean
 *         round-trip time.
 *   bw    unidirectional bandwidth: rank 0 posts a window of W MPI_Isend
 *         back to back, waits for them, then waits for a 4-byte ack from
 *         rank 1, which pre-posts the W MPI_Irecv of the next window before
 *         it sends the ack.  bandwidth = bytes / time on rank 0.
 *   bibw  bidirectional bandwidth: both ranks post W MPI_Irecv and W
 *         MPI_Isend per window and wait for all of them; bandwidth counts
 *         the bytes of both directions.
 *   rate  message rate: the bw protocol with small messages and its own
 *         window (--rate-window); result in messages per second.
 *
 * Window tests use W = min(--window, max(1, --window-bytes / size)) messages
 * per window, each in its own send and receive buffer, so that large sizes
 * do not need W x 4 MiB buffers per direction.
 *
 * Per test and size: a warm-up (--warmup round trips, default 10, or
 * --wwarmup windows, default 4; at least 2) whose part after the first
 * round trip / window is timed as a probe to choose the iteration count so
 * that the timed part takes about --target seconds (at least 5 round trips
 * / 3 windows, at most --maxiter).  Rank 0 chooses, rank 1 follows.  Output, one line per test
 * and size on rank 0 (MB = 1e6 bytes):
 *
 *     lat  SIZE latency_us   bandwidth_MBps ITERS 1
 *     bw   SIZE bandwidth_MBps msgs_per_s  ITERS W
 *     bibw SIZE bandwidth_MBps msgs_per_s  ITERS W
 *     rate SIZE msgs_per_s   bandwidth_MBps ITERS W
 *
 * Data check: every message carries a byte pattern that depends on its
 * position, a per-message sequence number and the direction.  The first
 * warm-up and the first and last timed round trip / window are written and
 * checked byte by byte, the others at 65 positions (every size/64-th byte
 * and the last one; every byte below 128 B).  A mismatch prints
 * "DATA MISMATCH" and calls MPI_Abort, so a broken transport cannot produce
 * numbers.  Ranks >= 2 only take part in the barriers.
 *
 * Options: --tests LIST  --sizes SPEC  --rate-sizes SPEC  (SPEC: A-B for the
 * powers of two from A to B, or a comma list)  --min B --max B (= --sizes
 * MIN-MAX)  --target S  --warmup N  --wwarmup N  --maxiter N  --window W
 * --rate-window W  --window-bytes B  --settle S (untimed 8-byte ping-pong
 * for S seconds first, so that a transport that adapts to traffic, e.g.
 * LLC_NET=hybrid, is measured settled). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define MAXSIZES 64
#define TAG_LAT 1
#define TAG_ITERS 2
#define TAG_WIN 3
#define TAG_ACK 4
#define TAG_SETTLE 5

enum { T_LAT, T_BW, T_BIBW, T_RATE, NTESTS };
static const char *const tname[NTESTS] = { "lat", "bw", "bibw", "rate" };

static int rank, peer;

static unsigned char pat(size_t i, unsigned long seq, int dir)
{
    return (unsigned char) ((i * 131u + seq * 7u + (unsigned long) dir * 61u + 1u) & 0xffu);
}

static size_t step_of(size_t n)
{
    return n / 64 > 0 ? n / 64 : 1;
}

/* write the pattern: every byte when full, else the sampled positions */
static void stamp(unsigned char *buf, size_t n, unsigned long seq, int dir, int full)
{
    size_t i, step = full ? 1 : step_of(n);
    for (i = 0; i < n; i += step)
        buf[i] = pat(i, seq, dir);
    buf[n - 1] = pat(n - 1, seq, dir);
}

static void verify(const unsigned char *buf, size_t n, unsigned long seq, int dir, int full,
                   const char *test)
{
    size_t i, step = full ? 1 : step_of(n);
    for (i = 0; i < n; i += step)
        if (buf[i] != pat(i, seq, dir))
            break;
    if (i >= n && buf[n - 1] == pat(n - 1, seq, dir))
        return;
    if (i >= n)
        i = n - 1;
    fprintf(stderr, "pingpong: rank %d: DATA MISMATCH test %s size %zu message %lu from rank %d "
            "at byte %zu: got 0x%02x, expected 0x%02x\n", rank, test, n, seq, dir, i, buf[i],
            pat(i, seq, dir));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---------------------------------------------------------------- lat --- */

/* n round trips with sequence numbers seq0..; round trip 0 and (unless
 * warm) the last one are written and checked fully.  Returns the elapsed
 * time, without round trip 0 when warm (the warm-up probe: round trip 0
 * may include connection setup). */
static double lat_block(unsigned char *sbuf, unsigned char *rbuf, size_t size, long n,
                        unsigned long seq0, int warm)
{
    long it;
    double t0 = MPI_Wtime();
    for (it = 0; it < n; it++) {
        int full = it == 0 || (!warm && it == n - 1);
        if (warm && it == 1)
            t0 = MPI_Wtime();
        stamp(sbuf, size, seq0 + (unsigned long) it, rank, full);
        if (rank == 0) {
            MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD);
        }
        verify(rbuf, size, seq0 + (unsigned long) it, peer, full, "lat");
    }
    return MPI_Wtime() - t0;
}

/* ------------------------------------------------------------ windows --- */

static MPI_Request *reqs;
static MPI_Status *stats;

static void post_recvs(unsigned char *rbuf, size_t size, int w)
{
    int k;
    for (k = 0; k < w; k++)
        MPI_Irecv(rbuf + (size_t) k * size, (int) size, MPI_BYTE, peer, TAG_WIN, MPI_COMM_WORLD,
                  &reqs[k]);
}

static void send_window(unsigned char *sbuf, size_t size, int w, unsigned long seq, int full,
                        MPI_Request *r)
{
    int k;
    for (k = 0; k < w; k++)
        stamp(sbuf + (size_t) k * size, size, seq + (unsigned long) k, rank, full);
    for (k = 0; k < w; k++)
        MPI_Isend(sbuf + (size_t) k * size, (int) size, MPI_BYTE, peer, TAG_WIN, MPI_COMM_WORLD,
                  &r[k]);
}

static void check_window(const unsigned char *rbuf, size_t size, int w, unsigned long seq,
                         int full, const char *test)
{
    int k;
    for (k = 0; k < w; k++)
        verify(rbuf + (size_t) k * size, size, seq + (unsigned long) k, peer, full, test);
}

/* n windows of w messages; message k of window it has sequence number
 * seq0 + it * w + k.  Full checks and the returned time (meaningful on
 * rank 0) as for lat_block. */
static double win_block(int test, unsigned char *sbuf, unsigned char *rbuf, size_t size, int w,
                        long n, unsigned long seq0, int warm)
{
    long it;
    int ack = 0;
    double t0;

    if (test == T_BIBW) {
        t0 = MPI_Wtime();
        for (it = 0; it < n; it++) {
            int full = it == 0 || (!warm && it == n - 1);
            unsigned long seq = seq0 + (unsigned long) it * (unsigned long) w;
            if (warm && it == 1)
                t0 = MPI_Wtime();
            post_recvs(rbuf, size, w);
            send_window(sbuf, size, w, seq, full, reqs + w);
            MPI_Waitall(2 * w, reqs, stats);
            check_window(rbuf, size, w, seq, full, tname[test]);
        }
        return MPI_Wtime() - t0;
    }
    /* bw, rate: rank 0 sends, rank 1 receives and acknowledges each window */
    if (rank == 1)
        post_recvs(rbuf, size, w);
    t0 = MPI_Wtime();
    for (it = 0; it < n; it++) {
        int full = it == 0 || (!warm && it == n - 1);
        unsigned long seq = seq0 + (unsigned long) it * (unsigned long) w;
        if (warm && it == 1)
            t0 = MPI_Wtime();
        if (rank == 0) {
            send_window(sbuf, size, w, seq, full, reqs);
            MPI_Waitall(w, reqs, stats);
            MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Waitall(w, reqs, stats);
            check_window(rbuf, size, w, seq, full, tname[test]);
            if (it + 1 < n)
                post_recvs(rbuf, size, w);
            MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* ---------------------------------------------------------------- main --- */

static int parse_sizes(const char *spec, size_t *out)
{
    int n = 0;
    char *copy = strdup(spec), *tok, *save = NULL;
    const char *dash = strchr(spec, '-');
    if (dash && !strchr(spec, ',')) {
        size_t a = strtoull(spec, NULL, 0), b = strtoull(dash + 1, NULL, 0), s;
        for (s = a; s >= 1 && s <= b && n < MAXSIZES; s *= 2) {
            out[n++] = s;
            if (s > b / 2)
                break;
        }
    } else {
        for (tok = strtok_r(copy, ",", &save); tok && n < MAXSIZES; tok = strtok_r(NULL, ",", &save))
            out[n++] = strtoull(tok, NULL, 0);
    }
    free(copy);
    for (int i = 0; i < n; i++)
        if (out[i] < 1 || out[i] > (size_t) 1 << 30)
            return 0;
    return n;
}

static int window_for(size_t size, int window, size_t window_bytes)
{
    size_t w = window_bytes / size;
    if (w < 1)
        w = 1;
    if (w > (size_t) window)
        w = (size_t) window;
    return (int) w;
}

static long choose_iters(double elapsed, long probe, double target, long lo, long maxiter)
{
    double per = elapsed / (double) probe;
    long iters = per > 0 ? (long) (target / per) : maxiter;
    if (iters < lo)
        iters = lo;
    if (iters > maxiter)
        iters = maxiter;
    return iters;
}

int main(int argc, char **argv)
{
    size_t sizes[MAXSIZES], rsizes[MAXSIZES], window_bytes = (size_t) 64 << 20, bufsz = 0;
    int nsizes, nrsizes, i, t, nprocs, window = 64, rwindow = 128, run[NTESTS] = { 1, 1, 1, 1 };
    double target = 0.2, settle = 0;
    long warmup = 10, wwarmup = 4, maxiter = 100000;
    const char *sizespec = "8-4194304", *rsizespec = "8-1024";
    char minmax[64] = "";
    unsigned char *sbuf, *rbuf;
    unsigned long seq = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        i++;
        if (!strcmp(a, "--tests")) {
            char *copy = strdup(v), *tok, *save = NULL;
            memset(run, 0, sizeof(run));
            for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                for (t = 0; t < NTESTS && strcmp(tok, tname[t]); t++);
                if (t == NTESTS)
                    goto usage;
                run[t] = 1;
            }
            free(copy);
        } else if (!strcmp(a, "--sizes"))
            sizespec = v;
        else if (!strcmp(a, "--rate-sizes"))
            rsizespec = v;
        else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
            /* compatibility: --min A --max B == --sizes A-B */
            size_t lo = 8, hi = 4194304;
            if (minmax[0])
                sscanf(minmax, "%zu-%zu", &lo, &hi);
            if (!strcmp(a, "--min"))
                lo = strtoull(v, NULL, 0);
            else
                hi = strtoull(v, NULL, 0);
            snprintf(minmax, sizeof(minmax), "%zu-%zu", lo, hi);
            sizespec = minmax;
        } else if (!strcmp(a, "--target"))
            target = atof(v);
        else if (!strcmp(a, "--warmup"))
            warmup = atol(v);
        else if (!strcmp(a, "--wwarmup"))
            wwarmup = atol(v);
        else if (!strcmp(a, "--maxiter"))
            maxiter = atol(v);
        else if (!strcmp(a, "--window"))
            window = atoi(v);
        else if (!strcmp(a, "--rate-window"))
            rwindow = atoi(v);
        else if (!strcmp(a, "--window-bytes"))
            window_bytes = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--settle"))
            settle = atof(v);
        else
            goto usage;
    }
    nsizes = parse_sizes(sizespec, sizes);
    nrsizes = parse_sizes(rsizespec, rsizes);
    if (nprocs < 2 || nsizes < 1 || nrsizes < 1 || target <= 0 || maxiter < 1 || warmup < 0
        || wwarmup < 0 || window < 1 || rwindow < 1 || window_bytes < 1) {
        if (rank == 0)
            fprintf(stderr, "pingpong: bad arguments or fewer than 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    /* buffers: the largest window (or single message) of any test */
    for (t = 0; t < NTESTS; t++) {
        const size_t *sz = t == T_RATE ? rsizes : sizes;
        int n = t == T_RATE ? nrsizes : nsizes;
        if (!run[t])
            continue;
        for (i = 0; i < n; i++) {
            size_t need = sz[i];
            if (t == T_BW || t == T_BIBW)
                need *= (size_t) window_for(sz[i], window, window_bytes);
            else if (t == T_RATE)
                need *= (size_t) window_for(sz[i], rwindow, window_bytes);
            if (need > bufsz)
                bufsz = need;
        }
    }
    sbuf = malloc(bufsz);
    rbuf = malloc(bufsz);
    reqs = malloc(sizeof(MPI_Request) * 2 * (size_t) (window > rwindow ? window : rwindow));
    stats = malloc(sizeof(MPI_Status) * 2 * (size_t) (window > rwindow ? window : rwindow));
    if (!sbuf || !rbuf || !reqs || !stats) {
        fprintf(stderr, "pingpong: out of memory (2 x %zu bytes)\n", bufsz);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sbuf, 0, bufsz);
    memset(rbuf, 0, bufsz);
    peer = 1 - rank;

    if (rank == 0) {
        printf("# pingpong: %d ranks, sizes %s, rate sizes %s, target %.3f s per test and size\n",
               nprocs, sizespec, rsizespec, target);
        printf("# window %d (rate %d), at most %zu bytes per window; warm-up %ld round trips, "
               "%ld windows\n", window, rwindow, window_bytes, warmup, wwarmup);
        printf("# test size value aux iters window\n");
        printf("# lat: value = latency us, aux = MB/s; bw, bibw: value = MB/s, aux = msgs/s; "
               "rate: value = msgs/s, aux = MB/s\n");
        fflush(stdout);
    }

    if (settle > 0 && rank <= 1) {
        /* rank 0 decides when to stop and says so in the message */
        double t_end = MPI_Wtime() + settle;
        for (;;) {
            int go = rank == 0 ? MPI_Wtime() < t_end : 0;
            if (rank == 0) {
                MPI_Send(&go, 1, MPI_INT, peer, TAG_SETTLE, MPI_COMM_WORLD);
                MPI_Recv(&go, 1, MPI_INT, peer, TAG_SETTLE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&go, 1, MPI_INT, peer, TAG_SETTLE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&go, 1, MPI_INT, peer, TAG_SETTLE, MPI_COMM_WORLD);
            }
            if (!go)
                break;
        }
    }

    for (t = 0; t < NTESTS; t++) {
        const size_t *sz = t == T_RATE ? rsizes : sizes;
        int n = t == T_RATE ? nrsizes : nsizes;
        if (!run[t])
            continue;
        for (i = 0; i < n; i++) {
            size_t size = sz[i];
            int w = t == T_LAT ? 1 : window_for(size, t == T_RATE ? rwindow : window, window_bytes);
            long probe = t == T_LAT ? (warmup > 1 ? warmup : 2) : (wwarmup > 1 ? wwarmup : 2);
            long iters = 0;
            double el;

            MPI_Barrier(MPI_COMM_WORLD);
            if (rank > 1)
                continue;
            /* warm-up, the first round trip / window checked fully, the
             * others timed as the probe */
            if (t == T_LAT)
                el = lat_block(sbuf, rbuf, size, probe, seq, 1);
            else
                el = win_block(t, sbuf, rbuf, size, w, probe, seq, 1);
            seq += (unsigned long) probe * (unsigned long) w;
            if (rank == 0) {
                iters = choose_iters(el, probe - 1, target, t == T_LAT ? 5 : 3, maxiter);
                MPI_Send(&iters, 1, MPI_LONG, peer, TAG_ITERS, MPI_COMM_WORLD);
            } else
                MPI_Recv(&iters, 1, MPI_LONG, peer, TAG_ITERS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

            if (t == T_LAT)
                el = lat_block(sbuf, rbuf, size, iters, seq, 0);
            else
                el = win_block(t, sbuf, rbuf, size, w, iters, seq, 0);
            seq += (unsigned long) iters * (unsigned long) w;

            if (rank == 0) {
                double msgs = (double) iters * w * (t == T_BIBW ? 2 : 1);
                double bytes = msgs * (double) size;
                if (t == T_LAT) {
                    double half = el / (double) iters / 2.0;
                    printf("lat %zu %.3f %.3f %ld 1\n", size, half * 1e6, (double) size / half / 1e6,
                           iters);
                } else if (t == T_RATE)
                    printf("rate %zu %.1f %.3f %ld %d\n", size, msgs / el, bytes / el / 1e6, iters, w);
                else
                    printf("%s %zu %.3f %.1f %ld %d\n", tname[t], size, bytes / el / 1e6, msgs / el,
                           iters, w);
                fflush(stdout);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(stats);
    MPI_Finalize();
    return 0;

  usage:
    if (rank == 0)
        fprintf(stderr, "usage: pingpong [--tests lat,bw,bibw,rate] [--sizes A-B|LIST] "
                "[--rate-sizes A-B|LIST] [--min B] [--max B] [--target S] [--warmup N] "
                "[--wwarmup N] [--maxiter N] [--window W] [--rate-window W] "
                "[--window-bytes B] [--settle S]\n");
    MPI_Finalize();
    return 2;
}
