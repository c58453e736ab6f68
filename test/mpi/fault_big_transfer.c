/* Fault test (doc/reliability.md, "The fault campaign"): a rank is killed
 * (SIGKILL) in the middle of a large transfer, as the sender or as the
 * receiver.  The other end must get an error, not hang; the driver checks
 * the time.
 *
 * Usage: fault_big_transfer [-hold] send|recv [MIB [DELAY_MS]]
 *   -hold     the launcher does not see the death (fault_hold.h): only
 *             libllc can report it (without it Hydra ends the job itself)
 *   send      the victim (last rank) sends MIB MiB to rank 0 and dies
 *             DELAY_MS into the transfer
 *   recv      rank 0 sends MIB MiB to the victim, which dies DELAY_MS after
 *             posting the receive
 *   MIB       default 256;  DELAY_MS default 30
 * Other ranks (np > 2) only wait in a barrier after the transfer.
 *
 * Rank 0 prints "fault_big_transfer: rank 0: error after T s (the victim
 * died at D s): MESSAGE" and aborts the job (exit code 2), or "...: the
 * transfer completed before the kill" (exit code 3: the delay was too long
 * for this transport, nothing was tested). */
#include "check.h"
#include "fault_hold.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/time.h>

static long delay_ms = 30;

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double) tv.tv_sec + tv.tv_usec * 1e-6;
}

static void *killer(void *arg)
{
    (void) arg;
    usleep((useconds_t) (delay_ms * 1000));
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, victim, sending, err;
    size_t bytes = (size_t) 256 << 20;
    char *buf, msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    double t0, died_at;
    fault_hold(&argc, &argv);
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    CHECK(argc < 3 || atol(argv[2]) < 2048, "at most 2047 MiB (an int count)");
    CHECK(argc > 1 && (strcmp(argv[1], "send") == 0 || strcmp(argv[1], "recv") == 0),
          "usage: fault_big_transfer [-hold] send|recv [MIB [DELAY_MS]]");
    sending = strcmp(argv[1], "send") == 0;
    if (argc > 2)
        bytes = (size_t) atol(argv[2]) << 20;
    if (argc > 3)
        delay_ms = atol(argv[3]);
    victim = size - 1;
    buf = malloc(bytes);
    CHECK(buf != NULL, "malloc of %zu bytes", bytes);
    memset(buf, rank, bytes); /* touch every page: the transfer itself is timed */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* first contact and a round trip, so that the big transfer is all that is left */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0 || rank == victim)
        CHECK_MPI(MPI_Sendrecv(buf, 1, MPI_CHAR, victim - rank, 1, buf + 1, 1, MPI_CHAR, victim - rank, 1,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    if (rank == victim) {
        pthread_t th;
        fprintf(stderr, "fault_big_transfer: rank %d %s %zu MiB and dies %ld ms into it (at %.3f)\n", rank,
                sending ? "sends" : "receives", bytes >> 20, delay_ms, now() + delay_ms * 1e-3);
        fflush(stderr);
        pthread_create(&th, NULL, killer, NULL);
        if (sending)
            MPI_Send(buf, (int) bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (;;) /* (a transfer that completed before the kill: wait for it) */
            pause();
    }
    if (rank == 0) {
        died_at = now() + delay_ms * 1e-3; /* about: the barrier released both at once */
        if (sending)
            err = MPI_Recv(buf, (int) bytes, MPI_BYTE, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            err = MPI_Send(buf, (int) bytes, MPI_BYTE, victim, 0, MPI_COMM_WORLD);
        if (err == MPI_SUCCESS) {
            fprintf(stderr, "fault_big_transfer: rank 0: the transfer completed before the kill (%.2f s)\n",
                    MPI_Wtime() - t0);
            fflush(stderr);
            usleep(500000);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "fault_big_transfer: rank 0: error after %.2f s (%.2f s after the kill): %s\n",
                MPI_Wtime() - t0, now() - died_at, msg);
        fflush(stderr);
        usleep(500000);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the others: never satisfied */
    return 0;
}
