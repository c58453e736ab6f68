/* Passive-target locks: MPI_Win_lock (shared and exclusive) and
 * MPI_Win_lock_all, in windows of MPI_Win_allocate, MPI_Win_allocate_shared
 * and MPI_Win_create.  When every process of a window is on one node, the
 * llc netmod takes a lock word in a segment of the window's instead of
 * asking the target; elsewhere MPICH's active messages ask the target.
 * Checked, for each kind of window:
 *   - exclusion: every rank, the target too, adds 1 to a counter by get,
 *     flush and put under an exclusive lock, many times; a lost update
 *     (two holders at once) leaves the counter short;
 *   - shared against exclusive: writers put one value into two places
 *     under an exclusive lock, with a flush between the two; readers under
 *     a shared lock (MPI_Win_lock or MPI_Win_lock_all) must never see the
 *     two differ;
 *   - wrong calls: a second lock of a target already locked and an unlock
 *     of one not locked fail with MPI_ERR_RMA_SYNC, and leave the lock
 *     usable (no word taken or given back by mistake);
 *   - the target outside MPI (windows of one node only): the last rank
 *     makes no MPI call while the others lock its window exclusively and
 *     add to its counter (MPI_Win_create: put 64 KiB each, the size from
 *     which puts there go by cross-memory attach); it waits for the total
 *     for up to 60 s.
 * Usage: rma_lock [allocate|shared|create] (default: all three). */
#include "check.h"

#include <string.h>

#define ADDS 150
#define PAIRS 100

static int rank, size;

static long read_counter(MPI_Win win, int target)
{
    long v = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Get(&v, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    return v;
}

static void exclusion(MPI_Win win, const char *what)
{
    const int target = 0;
    for (int i = 0; i < ADDS; i++)
        locked_add_one(win, target);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long v = read_counter(win, target);
    CHECK(v == (long) ADDS * size, "%s: exclusive locks: the counter is %ld after %d ranks added "
          "1 %d times each, expected %ld (two processes held the lock at once)", what, v, size,
          ADDS, (long) ADDS * size);
}

/* elements 1 and 2 of rank 0's window: equal whenever no writer holds it */
static void shared_against_exclusive(MPI_Win win, const char *what)
{
    const int target = 0;
    long pair[2];
    for (int i = 0; i < PAIRS; i++) {
        if (rank % 2 == 0) {
            long v = (long) rank * 1000000 + i;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Win_flush(target, win));
            if (i % 10 == 0)
                nap_us(200);    /* a reader that got in now would see the two differ */
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, target, 2, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Win_unlock(target, win));
        } else {
            int all = i % 2;
            if (all)
                CHECK_MPI(MPI_Win_lock_all(0, win));
            else
                CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            CHECK_MPI(MPI_Get(pair, 2, MPI_LONG, target, 1, 2, MPI_LONG, win));
            CHECK_MPI(MPI_Win_flush(target, win));
            CHECK(pair[0] == pair[1], "%s: a reader under %s saw %ld and %ld: a writer held the "
                  "exclusive lock at the same time", what, all ? "MPI_Win_lock_all" :
                  "a shared lock", pair[0], pair[1]);
            if (all)
                CHECK_MPI(MPI_Win_unlock_all(win));
            else
                CHECK_MPI(MPI_Win_unlock(target, win));
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void wrong_calls(MPI_Win win, const char *what)
{
    int err, cls;
    const int target = (rank + 1) % size;
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    err = MPI_Win_unlock(target, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "%s: MPI_Win_unlock of a target not locked returned class %d, "
          "expected MPI_ERR_RMA_SYNC", what, cls);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    err = MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "%s: a second MPI_Win_lock of a locked target returned class "
          "%d, expected MPI_ERR_RMA_SYNC", what, cls);
    CHECK_MPI(MPI_Win_unlock(target, win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* the lock still excludes and is free again: every rank adds once more */
    locked_add_one(win, 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long v = read_counter(win, 0);
    CHECK(v == (long) (ADDS + 1) * size, "%s: after the wrong calls the counter is %ld, expected "
          "%ld", what, v, (long) (ADDS + 1) * size);
}

/* the last rank stays out of MPI while the others add to its counter */
static void target_outside_mpi(MPI_Win win, long *base, const char *what)
{
    const int target = size - 1;
    const long expected = (long) ADDS * (size - 1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        double t0 = mono_seconds();
        long v;
        while ((v = __atomic_load_n(&base[0], __ATOMIC_ACQUIRE)) != expected &&
               mono_seconds() - t0 < 60)
            nap_us(1000);
        CHECK(v == expected, "%s: the target's counter is %ld after %.0f s outside MPI, "
              "expected %ld: the origins' locks needed the target", what, v, mono_seconds() - t0,
              expected);
    } else {
        for (int i = 0; i < ADDS; i++)
            locked_add_one(win, target);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_Win_create: the last rank stays out of MPI while each other rank, in
 * ROUNDS epochs, locks its window exclusively and puts LARGE bytes into its
 * slot (round k: the byte rank + 1 + k); it waits for every slot's last
 * round for up to 60 s.  (One epoch alone could be granted by a target
 * still in the barrier before it.) */
#define LARGE 65536
#define ROUNDS 20
static void target_outside_mpi_large_puts(const char *what)
{
    const int target = size - 1;
    unsigned char *mem = calloc((size_t) size, LARGE), *mine = malloc(LARGE);
    MPI_Win win;
    CHECK(mem != NULL && mine != NULL, "malloc");
    CHECK(size + ROUNDS < 256, "at most %d ranks (a byte per slot and round)", 255 - ROUNDS);
    CHECK_MPI(MPI_Win_create(mem, (MPI_Aint) size * LARGE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        double t0 = mono_seconds();
        int filled = 0;
        while (mono_seconds() - t0 < 60) {
            filled = 0;
            for (int r = 0; r < target; r++)
                filled += __atomic_load_n(&mem[(size_t) r * LARGE + LARGE - 1], __ATOMIC_ACQUIRE) ==
                          r + ROUNDS;
            if (filled == target)
                break;
            nap_us(1000);
        }
        CHECK(filled == target, "%s: %d of %d slots of %d bytes arrived in %.0f s outside MPI: the "
              "origins' locks or large puts needed the target", what, filled, target, LARGE,
              mono_seconds() - t0);
        for (int r = 0; r < target; r++)
            for (size_t i = 0; i < LARGE; i++)
                CHECK(mem[(size_t) r * LARGE + i] == r + ROUNDS, "%s: byte %zu of rank %d's slot is %d, "
                      "expected %d", what, i, r, mem[(size_t) r * LARGE + i], r + ROUNDS);
    } else {
        for (int k = 0; k < ROUNDS; k++) {
            memset(mine, rank + 1 + k, LARGE);
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CHECK_MPI(MPI_Put(mine, LARGE, MPI_BYTE, target, (MPI_Aint) rank * LARGE, LARGE, MPI_BYTE, win));
            CHECK_MPI(MPI_Win_unlock(target, win));
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    free(mine);
}

static void run(const char *flavor)
{
    MPI_Win win;
    MPI_Comm node;
    long *base = NULL, *mem = NULL;
    int node_size;
    const MPI_Aint bytes = 4 * sizeof(long);

    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &node_size);
    if (strcmp(flavor, "allocate") == 0) {
        CHECK_MPI(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                   &win));
    } else if (strcmp(flavor, "shared") == 0) {
        if (node_size != size) {
            if (rank == 0)
                printf("rma_lock: shared: not every rank is on one node, skipped\n");
            MPI_Comm_free(&node);
            return;
        }
        CHECK_MPI(MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                          &base, &win));
    } else {
        mem = calloc(4, sizeof(long));
        CHECK(mem != NULL, "calloc");
        base = mem;
        CHECK_MPI(MPI_Win_create(base, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(base, 0, bytes);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    exclusion(win, flavor);
    shared_against_exclusive(win, flavor);
    wrong_calls(win, flavor);
    /* a window of one node needs nothing of the target for its locks; nor
     * for puts and gets in an allocated window, and for contiguous ones of
     * at least 64 KiB in a created one (cross-memory attach; smaller ones
     * take MPICH's active messages, which the target serves) */
    if (node_size == size && size > 1 && strcmp(flavor, "create") != 0)
        target_outside_mpi(win, base, flavor);
    else if (node_size == size && size > 1)
        target_outside_mpi_large_puts(flavor);
    else if (rank == 0)
        printf("rma_lock: %s: target outside MPI not checked (%s)\n", flavor,
               size == 1 ? "one process" : "the window spans nodes");

    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    MPI_Comm_free(&node);
    if (rank == 0)
        printf("rma_lock: %s: %d ranks, ok\n", flavor, size);
}

int main(int argc, char **argv)
{
    const char *all[] = {"allocate", "shared", "create"};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) {
        CHECK(strcmp(argv[1], "allocate") == 0 || strcmp(argv[1], "shared") == 0 ||
              strcmp(argv[1], "create") == 0, "usage: rma_lock [allocate|shared|create]");
        run(argv[1]);
    } else {
        for (int i = 0; i < 3; i++)
            run(all[i]);
    }
    MPI_Finalize();
    return 0;
}
