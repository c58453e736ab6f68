/* Collectives called with counts that disagree between processes
 * (doc/reliability.md, "Wrong arguments").  With
 * MPI_ERRORS_RETURN:
 *  1. MPI_Bcast, the root sends 10 ints, the others post 1: every non-root
 *     gets an error, at least one (where the data did not fit) of class
 *     MPI_ERR_TRUNCATE;
 *  2. the root sends 1 int, the others post 10: every non-root gets an error;
 *  3. then right broadcasts (several roots and sizes, checked): the
 *     communicator still works;
 *  4. with argument "alltoall" (run with LLC_ALLTOALL=<algorithm>: every
 *     process runs the same one), rank 0 passes twice the others' block:
 *     someone reports MPI_ERR_TRUNCATE, nobody hangs, and a right Alltoall
 *     afterwards delivers the right data;
 *  5. MPI_Finalize returns (before: the job hung in llc_finalize).
 * Prints "coll_wrong_counts: ok" on rank 0. */
#include "check.h"
#include <string.h>

static int error_class(int err)
{
    int c = MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &c);
    return c;
}

int main(int argc, char **argv)
{
    int rank, size, buf[10], err, cls, n;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int round = 0; round < 3; round++) {
        /* 1: long at the root, short elsewhere */
        for (int i = 0; i < 10; i++)
            buf[i] = rank == 0 ? 100 + i : -1;
        err = MPI_Bcast(buf, rank == 0 ? 10 : 1, MPI_INT, 0, MPI_COMM_WORLD);
        cls = error_class(err);
        CHECK(rank == 0 || err != MPI_SUCCESS, "round %d: rank %d was not told of the truncation", round, rank);
        int trunc = cls == MPI_ERR_TRUNCATE, ntrunc = 0;
        CHECK_MPI(MPI_Allreduce(&trunc, &ntrunc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(size == 1 || ntrunc >= 1, "round %d: nobody reported MPI_ERR_TRUNCATE", round);

        /* 2: short at the root, long elsewhere */
        err = MPI_Bcast(buf, rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(rank == 0 || err != MPI_SUCCESS, "round %d: rank %d was not told of the short message", round, rank);

        /* 3: right broadcasts still work */
        for (int root = 0; root < size; root++) {
            for (n = 1; n <= 40000; n *= 20) {
                int *b = malloc(sizeof(int) * (size_t) n);
                for (int i = 0; i < n; i++)
                    b[i] = rank == root ? root * 7 + i + round : -1;
                CHECK_MPI(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
                for (int i = 0; i < n; i++)
                    CHECK(b[i] == root * 7 + i + round, "round %d root %d n %d: b[%d] = %d", round, root, n, i, b[i]);
                free(b);
            }
        }
    }

    if (argc > 1 && strcmp(argv[1], "alltoall") == 0) {
        const int block = 16;
        int mine = rank == 0 ? 2 * block : block;
        int *sb = malloc(sizeof(int) * (size_t) (2 * block * size));
        int *rb = malloc(sizeof(int) * (size_t) (2 * block * size));
        for (int i = 0; i < 2 * block * size; i++)
            sb[i] = rank;
        err = MPI_Alltoall(sb, mine, MPI_INT, rb, mine, MPI_INT, MPI_COMM_WORLD);
        int trunc = error_class(err) == MPI_ERR_TRUNCATE, ntrunc = 0;
        CHECK_MPI(MPI_Allreduce(&trunc, &ntrunc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(size == 1 || ntrunc >= 1, "alltoall: nobody reported MPI_ERR_TRUNCATE");
        for (int d = 0; d < size; d++)
            for (int i = 0; i < block; i++)
                sb[d * block + i] = rank * 1000 + d;
        CHECK_MPI(MPI_Alltoall(sb, block, MPI_INT, rb, block, MPI_INT, MPI_COMM_WORLD));
        for (int s = 0; s < size; s++)
            for (int i = 0; i < block; i++)
                CHECK(rb[s * block + i] == s * 1000 + rank, "alltoall after the wrong call: from %d got %d", s,
                      rb[s * block + i]);
        free(sb);
        free(rb);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_wrong_counts: ok\n");
    MPI_Finalize();
    return 0;
}
