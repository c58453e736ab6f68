/* Every rank passes a token around the ring; checks rank/size agreement and
 * prints where each rank runs (host name, for the emulated-host tests). */
#include "check.h"
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, len, token;
    char name[MPI_MAX_PROCESSOR_NAME];

    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    /* emulated hosts share a host name: tell them apart by network namespace */
    char ns[64] = "unknown";
    ssize_t nl = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
    if (nl > 0)
        ns[nl] = '\0';
    snprintf(name + strlen(name), MPI_MAX_PROCESSOR_NAME - strlen(name), " netns %s", ns);

    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            token = round * 1000;
            if (size > 1) {
                CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, round, MPI_COMM_WORLD));
                CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, size - 1, round, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
            }
            CHECK(token == round * 1000 + size - 1, "token %d after round %d", token, round);
        } else {
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, rank - 1, round, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            CHECK(token == round * 1000 + rank - 1, "got token %d", token);
            token++;
            CHECK_MPI(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, round, MPI_COMM_WORLD));
        }
    }
    /* gather the host names so the driver can check placement */
    char *all = rank == 0 ? malloc((size_t) size * MPI_MAX_PROCESSOR_NAME) : NULL;
    CHECK_MPI(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("rank %d on %s\n", r, all + (size_t) r * MPI_MAX_PROCESSOR_NAME);
        printf("hello_ring: %d ranks OK\n", size);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
