/* One-sided communication: put/get/accumulate under fence, passive-target
 * lock/unlock, and fetch-and-op, checked on every rank. */
#include "check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Win win;
    long *base;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Win_allocate(sizeof(long) * size * 2, sizeof(long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 2 * size; i++)
        base[i] = -1;

    /* fence epoch: everyone puts its rank into slot `rank` of everyone */
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        long v = rank * 10 + t;
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
    }
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < size; i++)
        CHECK(base[i] == i * 10 + rank, "put slot %d = %ld", i, base[i]);

    /* accumulate into slot size of rank 0 */
    if (rank == 0)
        base[size] = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    long add = rank + 1;
    CHECK_MPI(MPI_Accumulate(&add, 1, MPI_LONG, 0, size, 1, MPI_LONG, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0)
        CHECK(base[size] == (long) size * (size + 1) / 2, "accumulate = %ld", base[size]);

    /* get what the right neighbour holds */
    long got = 0;
    int right = (rank + 1) % size;
    CHECK_MPI(MPI_Get(&got, 1, MPI_LONG, right, rank, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(got == rank * 10 + right, "get from %d = %ld", right, got);

    /* passive target: fetch-and-add on rank 0's slot size+1 */
    if (rank == 0)
        base[size + 1] = 0;
    CHECK_MPI(MPI_Win_fence(0, win));
    long one = 1, old = -5;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, size + 1, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(old >= 0 && old < size, "fetch_and_op old value %ld", old);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK(base[size + 1] == size, "fetch_and_op total %ld", base[size + 1]);
        CHECK_MPI(MPI_Win_unlock(0, win));
        printf("rma_check: %d ranks OK\n", size);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
