/* bench/threads/mt_pingpong.c - multi-threaded latency and message rate
 * between two processes (MPI_THREAD_MULTIPLE), in the manner of the OSU
 * multi-threaded tests: thread t of rank 0 pairs with thread t of rank 1 on
 * tag t of MPI_COMM_WORLD (one communicator shared by all threads, as most
 * hybrid codes do), or with --comm-per-thread on tag t of its own duplicate
 * of MPI_COMM_WORLD (what an MPI with per-VCI critical sections needs to
 * put the threads on different VCIs).
 *
 *   mt_pingpong --threads T [--sizes 8,1024] [--iters N] [--window W] [--target S]
 *               [--waiter] [--compute US] [--comm-per-thread]
 *
 * latency: each pair ping-pongs; the one-way latency is half the mean round
 *   trip of a pair, averaged over the pairs (the figure OSU's latency_mt
 *   prints).
 * rate: each sender thread posts a window of W MPI_Isend, the receiver
 *   thread a window of W MPI_Irecv, then an acknowledgement; the rate is all
 *   messages of all threads over the wall time of the slowest thread.
 * --waiter: one more thread per process waits in MPI_Recv for a message that
 *   comes only at the end (a helper thread blocked in MPI, as hybrid codes
 *   have); --compute US: each latency round trip starts after US
 *   microseconds of work outside MPI (the waiter is then the only thread in
 *   MPI, and idles).
 * Iterations grow until one measurement takes --target seconds.
 * Output, one line per (mode, size): "mode threads size value unit". */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nthreads = 1, window = 64;
static double target = 0.3, compute_us = 0;
static int with_waiter = 0, comm_per_thread = 0;
static pthread_barrier_t barrier;

typedef struct {
    int t;
    MPI_Comm comm; /* MPI_COMM_WORLD, or the thread's own duplicate */
    size_t size;
    long iters;
    int mode; /* 0 latency, 1 rate */
    double elapsed;
    char *buf;
} job_t;

static void die(const char *what)
{
    fprintf(stderr, "mt_pingpong: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void latency_loop(job_t *j)
{
    int peer = 1 - rank;
    for (long i = 0; i < j->iters; i++) {
        if (compute_us > 0) {
            double until = MPI_Wtime() + compute_us * 1e-6;
            while (MPI_Wtime() < until)
                ;
        }
        if (rank == 0) {
            MPI_Send(j->buf, (int) j->size, MPI_CHAR, peer, j->t, j->comm);
            MPI_Recv(j->buf, (int) j->size, MPI_CHAR, peer, j->t, j->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(j->buf, (int) j->size, MPI_CHAR, peer, j->t, j->comm, MPI_STATUS_IGNORE);
            MPI_Send(j->buf, (int) j->size, MPI_CHAR, peer, j->t, j->comm);
        }
    }
}

static void rate_loop(job_t *j)
{
    int peer = 1 - rank;
    MPI_Request req[1024];
    char ack = 0;
    for (long i = 0; i < j->iters; i++) {
        for (int w = 0; w < window; w++) {
            char *b = j->buf + (size_t) w * j->size;
            if (rank == 0)
                MPI_Isend(b, (int) j->size, MPI_CHAR, peer, j->t, j->comm, &req[w]);
            else
                MPI_Irecv(b, (int) j->size, MPI_CHAR, peer, j->t, j->comm, &req[w]);
        }
        MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(&ack, 1, MPI_CHAR, peer, 100 + j->t, j->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, peer, 100 + j->t, j->comm);
    }
}

#define TAG_WAITER 999
static void *waiter_main(void *arg)
{
    int v;
    (void) arg;
    MPI_Recv(&v, 1, MPI_INT, 1 - rank, TAG_WAITER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

static void *thread_main(void *arg)
{
    job_t *j = arg;
    pthread_barrier_wait(&barrier);
    double t0 = MPI_Wtime();
    if (j->mode == 0)
        latency_loop(j);
    else
        rate_loop(j);
    j->elapsed = MPI_Wtime() - t0;
    return NULL;
}

/* runs all threads once; returns the slowest thread's time */
static double run_once(job_t *jobs, size_t size, long iters, int mode)
{
    pthread_t th[64];
    double worst = 0;
    for (int t = 0; t < nthreads; t++) {
        jobs[t].size = size;
        jobs[t].iters = iters;
        jobs[t].mode = mode;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, thread_main, &jobs[t]) != 0)
            die("pthread_create failed");
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        if (jobs[t].elapsed > worst)
            worst = jobs[t].elapsed;
    }
    /* both ranks agree on the time and on whether to go on */
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    int provided, size;
    char sizes_arg[256] = "8,1024";
    long fixed_iters = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE)
        die("the MPI did not grant MPI_THREAD_MULTIPLE");
    if (size != 2)
        die("run with 2 processes");
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            nthreads = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--sizes") == 0)
            snprintf(sizes_arg, sizeof sizes_arg, "%s", argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--iters") == 0)
            fixed_iters = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--window") == 0)
            window = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--target") == 0)
            target = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--compute") == 0)
            compute_us = atof(argv[++i]);
        else if (strcmp(argv[i], "--comm-per-thread") == 0)
            comm_per_thread = 1;
        else if (strcmp(argv[i], "--waiter") == 0)
            with_waiter = 1;
        else
            die("usage: mt_pingpong --threads T [--sizes 8,1024] [--iters N] [--window W] [--target S] [--waiter] "
                "[--compute US] [--comm-per-thread]");
    }
    if (nthreads < 1 || nthreads > 64 || window < 1 || window > 1024)
        die("--threads 1..64, --window 1..1024");
    pthread_barrier_init(&barrier, NULL, (unsigned) nthreads);
    pthread_t waiter;
    if (with_waiter && pthread_create(&waiter, NULL, waiter_main, NULL) != 0)
        die("pthread_create failed");
    job_t jobs[64];
    for (int t = 0; t < nthreads; t++) {
        jobs[t].comm = MPI_COMM_WORLD;
        if (comm_per_thread)
            MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (char *tok = strtok(sizes_arg, ","); tok; tok = strtok(NULL, ",")) {
        size_t sz = (size_t) atol(tok);
        for (int t = 0; t < nthreads; t++) {
            jobs[t].t = t;
            jobs[t].buf = calloc((size_t) window, sz ? sz : 1);
            if (!jobs[t].buf)
                die("out of memory");
        }
        for (int mode = 0; mode < 2; mode++) {
            long iters = fixed_iters ? fixed_iters : 16;
            double el = run_once(jobs, sz, iters, mode); /* warm-up */
            while (!fixed_iters && el < target) {
                double scale = el > 0 ? 1.2 * target / el : 8;
                iters = (long) ((double) iters * (scale > 8 ? 8 : scale < 1.5 ? 1.5 : scale));
                el = run_once(jobs, sz, iters, mode);
            }
            el = run_once(jobs, sz, iters, mode);
            if (rank == 0) {
                if (mode == 0)
                    printf("latency %d %zu %.3f us\n", nthreads, sz, el * 1e6 / (2.0 * (double) iters));
                else
                    printf("rate %d %zu %.4f Mmsg/s\n", nthreads, sz,
                           (double) nthreads * (double) iters * window / el / 1e6);
                fflush(stdout);
            }
        }
        for (int t = 0; t < nthreads; t++)
            free(jobs[t].buf);
    }
    if (with_waiter) {
        int v = 0;
        MPI_Send(&v, 1, MPI_INT, 1 - rank, TAG_WAITER, MPI_COMM_WORLD);
        pthread_join(waiter, NULL);
    }
    for (int t = 0; t < nthreads; t++)
        if (jobs[t].comm != MPI_COMM_WORLD)
            MPI_Comm_free(&jobs[t].comm);
    pthread_barrier_destroy(&barrier);
    MPI_Finalize();
    return 0;
}
