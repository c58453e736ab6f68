/* Fault test: the last rank exits abruptly (SIGKILL to itself, or _exit
 * without MPI_Finalize with argv[1] = "exit") while the others wait for a
 * message from it.  The job must end with an error, never hang; the test
 * driver checks the exit status and the time taken.
 *
 * argv[1] = "stop": the last rank stops itself (SIGSTOP: alive, sockets open,
 * but silent, like a host that dropped off the network; the launcher sees
 * nothing) and the others send it 1 MiB.  Only the netmod can notice: with
 * LLC_NET=udp the send must fail after LLC_UDP_PEER_TIMEOUT_MS, with tcp
 * after LLC_TCP_PEER_TIMEOUT_MS; each sender prints the error and the time it
 * took, then aborts the job (exit code 2). */
#include "check.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void send_to_silent_rank(int rank, int dest)
{
    static char big[1 << 20];
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    double t0;
    int err;
    int flag;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Let the last rank stop first, making progress meanwhile: the message
     * that tells it to stop may still be queued behind a connection being
     * set up (a standard send completes once its data is buffered; it moves
     * on only inside MPI calls). */
    t0 = MPI_Wtime();
    err = MPI_SUCCESS;
    while (err == MPI_SUCCESS && MPI_Wtime() - t0 < 1.0) {
        err = MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep(1000);
    }
    t0 = MPI_Wtime();
    if (err == MPI_SUCCESS)
        err = MPI_Send(big, (int) sizeof(big), MPI_CHAR, dest, 0, MPI_COMM_WORLD);
    if (err == MPI_SUCCESS) /* eager: the data may only be buffered; wait for a reply */
        err = MPI_Recv(big, 1, MPI_CHAR, dest, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "fault_rank_dies: rank %d: talking to the silent rank %d failed after %.1f s: %s\n",
            rank, dest, MPI_Wtime() - t0, msg);
    fflush(stderr);
    /* give the launcher time to forward that line: MPI_Abort tears the job
     * down, and a line still in the proxy's pipe was once lost (CI log
     * without the message the driver looks for) */
    usleep(500000);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (argc > 1 && strcmp(argv[1], "stop") == 0) {
        /* The last rank stops only once every other rank has left the
         * barrier (each tells it so): a rank still inside the barrier
         * would wait there on a peer that waits on the stopped rank, which
         * is not the case this checks (the stop of a rank that others
         * then send to). */
        if (rank == size - 1) {
            for (int i = 0; i < size - 1; i++)
                CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            fprintf(stderr, "fault_rank_dies: rank %d stops (SIGSTOP) now\n", rank);
            fflush(stderr);
            raise(SIGSTOP);
            return 1; /* not reached unless someone sends SIGCONT */
        }
        CHECK_MPI(MPI_Send(&v, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD));
        send_to_silent_rank(rank, size - 1);
    }
    if (rank == size - 1) {
        fprintf(stderr, "fault_rank_dies: rank %d is going away now\n", rank);
        fflush(stderr);
        if (argc > 1 && strcmp(argv[1], "exit") == 0)
            _exit(3);
        raise(SIGKILL);
    }
    /* never satisfied: the sender is gone */
    MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "fault_rank_dies: rank %d received from a dead rank?\n", rank);
    MPI_Finalize();
    return 0;
}
