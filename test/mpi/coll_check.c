/* Collectives with results computed independently on every rank: bcast
 * (every root, several sizes), reduce/allreduce, alltoall, allgather,
 * gather/scatter, scan, and the same on a split communicator. */
#include "check.h"
#include <string.h>

static void run(MPI_Comm comm, const char *label)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    /* bcast from every root, 1 B .. 1 MiB */
    for (int root = 0; root < size; root++) {
        for (int n = 1; n <= (1 << 20); n *= 32) {
            unsigned char *b = malloc(n);
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? pattern(root + n, i) : 0;
            CHECK_MPI(MPI_Bcast(b, n, MPI_BYTE, root, comm));
            for (int i = 0; i < n; i++)
                CHECK(b[i] == pattern(root + n, i), "%s bcast root %d n %d byte %d", label,
                      root, n, i);
            free(b);
        }
    }

    /* reduce + allreduce of longs */
    long v[3] = { rank, 2L * rank + 1, -rank }, out[3] = { 0, 0, 0 };
    long s = (long) size * (size - 1) / 2;
    CHECK_MPI(MPI_Allreduce(v, out, 3, MPI_LONG, MPI_SUM, comm));
    CHECK(out[0] == s && out[1] == 2 * s + size && out[2] == -s, "%s allreduce %ld %ld %ld",
          label, out[0], out[1], out[2]);
    long mx = -1;
    CHECK_MPI(MPI_Reduce(&v[0], &mx, 1, MPI_LONG, MPI_MAX, size - 1, comm));
    if (rank == size - 1)
        CHECK(mx == size - 1, "%s reduce max %ld", label, mx);

    /* alltoall: element (i -> j) = i*1000 + j */
    int *sa = malloc(sizeof(int) * size * 4), *ra = malloc(sizeof(int) * size * 4);
    for (int j = 0; j < size; j++)
        for (int k = 0; k < 4; k++)
            sa[j * 4 + k] = rank * 1000 + j + k * 1000000;
    CHECK_MPI(MPI_Alltoall(sa, 4, MPI_INT, ra, 4, MPI_INT, comm));
    for (int i = 0; i < size; i++)
        for (int k = 0; k < 4; k++)
            CHECK(ra[i * 4 + k] == i * 1000 + rank + k * 1000000, "%s alltoall from %d", label,
                  i);

    /* allgather and gather/scatter */
    CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, ra, 1, MPI_INT, comm));
    for (int i = 0; i < size; i++)
        CHECK(ra[i] == i, "%s allgather[%d] = %d", label, i, ra[i]);
    int mine = -1;
    for (int i = 0; i < size; i++)
        sa[i] = 7 * i + 1;
    CHECK_MPI(MPI_Scatter(sa, 1, MPI_INT, &mine, 1, MPI_INT, 0, comm));
    CHECK(mine == 7 * rank + 1 || rank == 0, "%s scatter got %d", label, mine);
    mine *= 2;
    CHECK_MPI(MPI_Gather(&mine, 1, MPI_INT, ra, 1, MPI_INT, 0, comm));
    if (rank == 0)
        for (int i = 0; i < size; i++)
            CHECK(ra[i] == 2 * (7 * i + 1), "%s gather[%d] = %d", label, i, ra[i]);

    /* inclusive scan */
    int one = rank + 1, pre = 0;
    CHECK_MPI(MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, comm));
    CHECK(pre == (rank + 1) * (rank + 2) / 2, "%s scan %d", label, pre);
    CHECK_MPI(MPI_Barrier(comm));
    free(sa);
    free(ra);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm half;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(MPI_COMM_WORLD, "world");
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    run(half, "split");
    MPI_Comm_free(&half);
    if (rank == 0)
        printf("coll_check: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
