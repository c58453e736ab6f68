/* Fault test: the last rank exits abruptly (SIGKILL to itself, or _exit
 * without MPI_Finalize with argv[1] = "exit") while the others wait for a
 * message from it.  The job must end with an error, never hang; the test
 * driver checks the exit status and the time taken. */
#include "check.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
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
