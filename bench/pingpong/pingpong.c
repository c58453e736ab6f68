/* pingpong.c -- MPI ping-pong latency/bandwidth between ranks 0 and 1.
 *
 * Message sizes 8 B .. 4 MiB by powers of two.  For each size: a few
 * warm-up round trips, then a timed block whose iteration count is chosen
 * so that the size takes roughly --target seconds (default 0.2 s), based on
 * a short probe.  Output, one line per size on rank 0:
 *
 *     size latency_us bandwidth_MBps
 *
 * latency = half the average round-trip time, bandwidth = size / latency
 * (MB = 1e6 bytes).  Every message carries a pattern that depends on size,
 * iteration and direction; the receiver checks it (fully on the first and
 * last iteration, a few sampled words otherwise), so a broken transport
 * fails loudly instead of printing good numbers.  Ranks >= 2 only take part
 * in the barriers.
 *
 * Options: --min BYTES --max BYTES --target SECONDS --warmup N --maxiter N
 * --settle SECONDS: before the first size, ping-pong 8-byte messages for that
 * long (untimed), so that a transport that adapts to traffic (LLC_NET=hybrid
 * promotes a busy peer once per period) is measured in its settled state. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static unsigned char pat(size_t i, long iter, int dir)
{
    return (unsigned char) ((i * 131u + (size_t) iter * 7u + (size_t) dir * 61u + 1u) & 0xffu);
}

static void fill(unsigned char *buf, size_t n, long iter, int dir)
{
    size_t i;
    for (i = 0; i < n; i++)
        buf[i] = pat(i, iter, dir);
}

/* full check when full != 0, else check first/last bytes and a stride */
static int check(const unsigned char *buf, size_t n, long iter, int dir, int full)
{
    size_t i, step = full ? 1 : (n / 64 > 0 ? n / 64 : 1);
    for (i = 0; i < n; i += step)
        if (buf[i] != pat(i, iter, dir))
            return (int) (i + 1 > 0x7fffffff ? 0x7fffffff : i + 1);
    if (n > 0 && buf[n - 1] != pat(n - 1, iter, dir))
        return (int) (n > 0x7fffffff ? 0x7fffffff : n);
    return 0;
}

static void fail(int rank, size_t size, long iter, int dir, int pos)
{
    fprintf(stderr, "pingpong: rank %d: DATA MISMATCH size %zu iter %ld dir %d at byte %d\n",
            rank, size, iter, dir, pos - 1);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    size_t minsz = 8, maxsz = 4194304, size;
    double target = 0.2, settle = 0;
    long warmup = 10, maxiter = 100000;
    int rank, nprocs, i;
    unsigned char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    for (i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--min") == 0)
            minsz = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--max") == 0)
            maxsz = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--target") == 0)
            target = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--warmup") == 0)
            warmup = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--settle") == 0)
            settle = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--maxiter") == 0)
            maxiter = atol(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: pingpong [--min B] [--max B] [--target S] "
                        "[--warmup N] [--maxiter N] [--settle SECONDS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (minsz < 1 || maxsz < minsz || target <= 0 || maxiter < 1 || warmup < 0) {
        if (rank == 0)
            fprintf(stderr, "pingpong: bad arguments\n");
        MPI_Finalize();
        return 2;
    }

    sbuf = malloc(maxsz);
    rbuf = malloc(maxsz);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (rank == 0) {
        printf("# pingpong: %d ranks, sizes %zu..%zu, target %.3f s per size\n",
               nprocs, minsz, maxsz, target);
        printf("# size latency_us bandwidth_MBps\n");
        fflush(stdout);
    }

    if (settle > 0 && rank <= 1) {
        /* rank 0 decides when to stop and says so in the message */
        const int peer = 1 - rank;
        double t_end = MPI_Wtime() + settle;
        for (;;) {
            int go = rank == 0 ? MPI_Wtime() < t_end : 0;
            if (rank == 0) {
                MPI_Send(&go, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
                MPI_Recv(&go, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&go, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&go, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
            }
            if (!go)
                break;
        }
    }

    for (size = minsz; size <= maxsz; size *= 2) {
        long iters = 0, it;
        double t0, t1;
        int pos;

        MPI_Barrier(MPI_COMM_WORLD);
        if (rank <= 1) {
            const int peer = 1 - rank;
            /* warm-up + probe: time a few round trips to pick the count */
            long probe = warmup > 0 ? warmup : 1;
            fill(sbuf, size, -1, rank);
            t0 = MPI_Wtime();
            for (it = 0; it < probe; it++) {
                if (rank == 0) {
                    MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                }
            }
            t1 = MPI_Wtime();
            if ((pos = check(rbuf, size, -1, peer, 1)) != 0)
                fail(rank, size, -1, peer, pos);
            if (rank == 0) {
                double per = (t1 - t0) / (double) probe;
                iters = per > 0 ? (long) (target / per) : maxiter;
                if (iters < 5)
                    iters = 5;
                if (iters > maxiter)
                    iters = maxiter;
            }
            /* rank 0 decides, rank 1 follows */
            if (rank == 0)
                MPI_Send(&iters, 1, MPI_LONG, peer, 2, MPI_COMM_WORLD);
            else
                MPI_Recv(&iters, 1, MPI_LONG, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

            /* timed block: iteration 0 and the last one carry the full
             * pattern and are checked fully; the others stamp and check 65
             * sampled positions (every size/64-th byte and the last one) so
             * that checking does not dominate large-message timings */
            t0 = MPI_Wtime();
            for (it = 0; it < iters; it++) {
                int full = (it == 0 || it == iters - 1);
                if (full) {
                    fill(sbuf, size, it, rank);
                } else {
                    size_t k, step = size / 64 > 0 ? size / 64 : 1;
                    for (k = 0; k < size; k += step)
                        sbuf[k] = pat(k, it, rank);
                    sbuf[size - 1] = pat(size - 1, it, rank);
                }
                if (rank == 0) {
                    MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                }
                if ((pos = check(rbuf, size, it, peer, full)) != 0)
                    fail(rank, size, it, peer, pos);
            }
            t1 = MPI_Wtime();
            if (rank == 0) {
                double half_rtt = (t1 - t0) / (double) iters / 2.0;
                printf("%zu %.3f %.3f\n", size, half_rtt * 1e6, (double) size / half_rtt / 1e6);
                fflush(stdout);
            }
        }
        if (size > maxsz / 2)
            break;      /* avoid overflow when maxsz is near SIZE_MAX */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
