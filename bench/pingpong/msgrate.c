/*
 * msgrate.c - message rate between two ranks, with the instructions and
 * cycles each side spends per message.
 *
 * Rank 0 posts a window of W MPI_Isend of S bytes and waits for them, then
 * waits for a 4-byte acknowledgement; rank 1 posts W MPI_Irecv, waits for
 * them and sends the acknowledgement (the protocol of the OSU message-rate
 * test and of pingpong.c's `rate`).  The timed loop runs N windows after
 * a warm-up of N/10 windows.  Around the timed loop each rank counts its own
 * user-space instructions and cycles with perf_event_open(2); where the
 * kernel refuses (perf_event_paranoid, no PMU in the VM) the counts print
 * as "-".
 *
 * Output, one line per size on rank 0:
 *   size msgs_per_s instr_per_msg_sender instr_per_msg_receiver
 *        cycles_per_msg_sender cycles_per_msg_receiver windows
 * Every message's first and last byte are checked (a mismatch aborts).
 *
 * --recv-delay US: rank 1 computes (spins without MPI calls) for US
 * microseconds before it posts each window, so that the messages wait
 * unread when their receives are posted (a receiver that runs late); the
 * rate then includes the delay, so compare the instructions in MPI_Irecv
 * and MPI_Waitall (callgrind) rather than the rate.
 *
 * usage: msgrate [--sizes 8,1024] [--window 64] [--windows N] [--target S] [--recv-delay US]
 */
#include <mpi.h>

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct counter {
    int fd;
};

static struct counter counter_open(uint64_t config)
{
    struct perf_event_attr a;
    struct counter c;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    c.fd = (int) syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    return c;
}

static void counter_start(struct counter *c)
{
    if (c->fd >= 0) {
        ioctl(c->fd, PERF_EVENT_IOC_RESET, 0);
        ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0);
    }
}

/* the count since counter_start, or -1 */
static double counter_stop(struct counter *c)
{
    uint64_t v;
    if (c->fd < 0)
        return -1;
    ioctl(c->fd, PERF_EVENT_IOC_DISABLE, 0);
    if (read(c->fd, &v, sizeof(v)) != (ssize_t) sizeof(v))
        return -1;
    return (double) v;
}

static void fail(const char *what)
{
    fprintf(stderr, "msgrate: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static double recv_delay_us;

static void compute_for(double us)
{
    double t0 = MPI_Wtime();
    while ((MPI_Wtime() - t0) * 1e6 < us)
        ;
}

static int window_round(int rank, char *bufs, int size, int window, MPI_Request * reqs,
                        MPI_Status * sts, int seq)
{
    int i, ack = seq;
    if (rank == 0) {
        for (i = 0; i < window; i++) {
            char *b = bufs + (size_t) i * size;
            b[0] = (char) (seq + i);
            b[size - 1] = (char) (seq - i);
            MPI_Isend(b, size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(window, reqs, sts);
        MPI_Recv(&ack, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        if (recv_delay_us > 0)
            compute_for(recv_delay_us);
        for (i = 0; i < window; i++)
            MPI_Irecv(bufs + (size_t) i * size, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
        MPI_Waitall(window, reqs, sts);
        for (i = 0; i < window; i++) {
            const char *b = bufs + (size_t) i * size;
            if (b[0] != (char) (seq + i) || b[size - 1] != (char) (seq - i))
                fail("data mismatch");
        }
        MPI_Send(&ack, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
    return seq + window;
}

int main(int argc, char **argv)
{
    int rank, nprocs, window = 64, i;
    long windows = 0;
    double target = 0.5;
    char sizes_arg[256] = "8,1024";
    char *tok, *save = NULL;
    struct counter instr, cycles;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2)
        fail("needs at least 2 ranks (traffic flows between ranks 0 and 1)");
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            snprintf(sizes_arg, sizeof(sizes_arg), "%s", argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--windows") && i + 1 < argc)
            windows = atol(argv[++i]);
        else if (!strcmp(argv[i], "--target") && i + 1 < argc)
            target = atof(argv[++i]);
        else if (!strcmp(argv[i], "--recv-delay") && i + 1 < argc)
            recv_delay_us = atof(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: msgrate [--sizes 8,1024] [--window 64] [--windows N] "
                        "[--target seconds] [--recv-delay us]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (window < 1 || window > 4096)
        fail("--window must be 1..4096");
    instr = counter_open(PERF_COUNT_HW_INSTRUCTIONS);
    cycles = counter_open(PERF_COUNT_HW_CPU_CYCLES);
    if (rank == 0)
        printf("# size msgs_per_s instr_per_msg_sender instr_per_msg_receiver "
               "cycles_per_msg_sender cycles_per_msg_receiver windows\n");
    for (tok = strtok_r(sizes_arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int size = atoi(tok), seq = 0;
        long n = windows, w;
        double t0, t, mine[2], other[2] = { -1, -1 };
        char *bufs;
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) window);
        MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t) window);
        if (size < 1)
            fail("sizes must be at least 1 byte");
        bufs = malloc((size_t) size * (size_t) window);
        if (!bufs || !reqs || !sts)
            fail("out of memory");
        memset(bufs, 0, (size_t) size * (size_t) window);
        if (rank < 2) {
            /* the probe: how many windows fill the target time */
            t0 = MPI_Wtime();
            for (w = 0; w < 20; w++)
                seq = window_round(rank, bufs, size, window, reqs, sts, seq);
            t = MPI_Wtime() - t0;
            if (n <= 0)
                n = (long) (target / (t / 20 > 1e-9 ? t / 20 : 1e-9));
            if (n < 10)
                n = 10;
            MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank < 2) {
            for (w = 0; w < n / 10; w++)
                seq = window_round(rank, bufs, size, window, reqs, sts, seq);
            counter_start(&instr);
            counter_start(&cycles);
            t0 = MPI_Wtime();
            for (w = 0; w < n; w++)
                seq = window_round(rank, bufs, size, window, reqs, sts, seq);
            t = MPI_Wtime() - t0;
            mine[0] = counter_stop(&instr);
            mine[1] = counter_stop(&cycles);
            if (rank == 1)
                MPI_Send(mine, 2, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
            else
                MPI_Recv(other, 2, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rank == 0) {
                double msgs = (double) n * window;
                char v[4][32];
                double vals[4] = { mine[0], other[0], mine[1], other[1] };
                for (i = 0; i < 4; i++) {
                    if (vals[i] < 0)
                        snprintf(v[i], sizeof(v[i]), "-");
                    else
                        snprintf(v[i], sizeof(v[i]), "%.0f", vals[i] / msgs);
                }
                printf("%d %.0f %s %s %s %s %ld\n", size, msgs / t, v[0], v[1], v[2], v[3], n);
                fflush(stdout);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(bufs);
        free(reqs);
        free(sts);
    }
    MPI_Finalize();
    return 0;
}
