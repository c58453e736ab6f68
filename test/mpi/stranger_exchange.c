/* A checked exchange that runs while strangers fire garbage at the ranks'
 * ports (test/run-all, "strangers"; doc/reliability.md).  Waits a little
 * after MPI_Init without communicating (the attack starts on ports whose
 * connections do not exist yet), then for SECONDS (argv[1], default 20)
 * repeats: point-to-point to every other rank (sizes 1 B .. 256 KiB, content
 * checked), MPI_Alltoall and MPI_Bcast (checked), MPI_Allreduce of the error
 * count.  Prints "stranger_exchange: ok ..." on rank 0. */
#include "check.h"
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    double seconds = argc > 1 ? atof(argv[1]) : 20;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sleep(3); /* no connection yet: strangers get there first */

    const size_t max = 256 * 1024;
    unsigned char *out = malloc(max), *in = malloc(max);
    int *a2a_out = malloc(sizeof(int) * size * 64), *a2a_in = malloc(sizeof(int) * size * 64);
    long iterations = 0, bad = 0;
    double end = MPI_Wtime() + seconds;
    int go = 1;
    while (go) {
        size_t len = (size_t) 1 << (iterations % 19);
        for (int d = 1; d < size; d++) {
            int to = (rank + d) % size, from = (rank - d + size) % size;
            for (size_t i = 0; i < len; i++)
                out[i] = pattern((unsigned) (rank * 7919 + iterations), i);
            CHECK_MPI(MPI_Sendrecv(out, (int) len, MPI_BYTE, to, (int) (iterations % 1000), in, (int) len,
                                   MPI_BYTE, from, (int) (iterations % 1000), MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (size_t i = 0; i < len; i++)
                if (in[i] != pattern((unsigned) (from * 7919 + iterations), i)) {
                    bad++;
                    break;
                }
        }
        for (int r = 0; r < size; r++)
            for (int k = 0; k < 64; k++)
                a2a_out[r * 64 + k] = (int) (rank * 1000000 + r * 1000 + k + iterations);
        CHECK_MPI(MPI_Alltoall(a2a_out, 64, MPI_INT, a2a_in, 64, MPI_INT, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            for (int k = 0; k < 64; k++)
                if (a2a_in[r * 64 + k] != (int) (r * 1000000 + rank * 1000 + k + iterations))
                    bad++;
        long b = rank == (int) (iterations % size) ? iterations * 31 + 7 : -1;
        CHECK_MPI(MPI_Bcast(&b, 1, MPI_LONG, (int) (iterations % size), MPI_COMM_WORLD));
        if (b != iterations * 31 + 7)
            bad++;
        iterations++;
        /* everyone stops at the same iteration: rank 0's clock decides */
        go = rank == 0 ? MPI_Wtime() < end : 0;
        CHECK_MPI(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    long total_bad = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total_bad == 0, "%ld corrupted exchanges", total_bad);
    if (rank == 0)
        printf("stranger_exchange: ok, %ld checked iterations on %d ranks\n", iterations, size);
    free(out);
    free(in);
    free(a2a_out);
    free(a2a_in);
    MPI_Finalize();
    return 0;
}
