/* Accumulate operations (MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Raccumulate,
 * MPI_Rget_accumulate) in windows of MPI_Win_allocate, MPI_Win_allocate_shared
 * and MPI_Win_create.  In a shared-memory window all of whose processes are
 * on one node the llc netmod applies them itself, under the window's lock;
 * elsewhere MPICH's active messages do.  Checked:
 *   - atomicity: every rank, the target too, fetch-and-adds one counter;
 *     the values fetched are each of 0 .. total-1 exactly once;
 *   - a lock made of compare-and-swap protects a get + put counter;
 *   - MPI_SUM through derived datatypes at the origin and at the target,
 *     MPI_MAXLOC on MPI_2INT, MPI_REPLACE, MPI_NO_OP, the request forms;
 *   - accesses outside a node-local target's part fail with
 *     MPI_ERR_RMA_RANGE naming the target, and change nothing;
 *   - passive target without the target: when the whole window is on one
 *     node, the origins' fetch-and-adds complete while the target only reads
 *     its own memory and makes no MPI call that could serve them (it gives
 *     up after 60 s, and the job fails).
 * Works across nodes too (without the last check: there the target's MPI
 * library applies the operations). */
#include "check.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define FOPS 500

static int rank, size;

/* every rank fetch-and-adds FOPS times at rank target's element 0 */
static void fetch_add_unique(MPI_Win win, long *base, int target, const char *what)
{
    long *got = malloc(sizeof(long) * FOPS), one = 1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < FOPS; i++) {
        CHECK_MPI(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, target, 0, MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(target, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    const long total = (long) FOPS * size;
    long *all = rank == 0 ? malloc(sizeof(long) * total) : NULL;
    CHECK_MPI(MPI_Gather(got, FOPS, MPI_LONG, all, FOPS, MPI_LONG, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        char *seen = calloc(total, 1);
        for (long i = 0; i < total; i++) {
            CHECK(all[i] >= 0 && all[i] < total, "%s: fetched %ld, outside 0..%ld", what, all[i],
                  total - 1);
            CHECK(!seen[all[i]], "%s: value %ld fetched twice: not atomic", what, all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        free(all);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target)
        CHECK(base[0] == total, "%s: counter is %ld, expected %ld", what, base[0], total);
    free(got);
}

/* a lock by compare-and-swap at rank target's element 1 guards a counter at
 * element 2 that is read and written by plain get and put */
static void cas_lock(MPI_Win win, long *base, int target)
{
    const int rounds = 100;
    long mine = rank + 1, free_ = 0, old;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int r = 0; r < rounds; r++) {
        do {
            CHECK_MPI(MPI_Compare_and_swap(&mine, &free_, &old, MPI_LONG, target, 1, win));
            CHECK_MPI(MPI_Win_flush(target, win));
        } while (old != 0);
        long c = -1;
        CHECK_MPI(MPI_Get(&c, 1, MPI_LONG, target, 2, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        c++;
        CHECK_MPI(MPI_Put(&c, 1, MPI_LONG, target, 2, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        CHECK_MPI(MPI_Compare_and_swap(&free_, &mine, &old, MPI_LONG, target, 1, win));
        CHECK_MPI(MPI_Win_flush(target, win));
        CHECK(old == mine, "the CAS lock was held by %ld while rank %d owned it", old, rank);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target)
        CHECK(base[2] == (long) rounds * size, "CAS-locked counter is %ld, expected %ld", base[2],
              (long) rounds * size);
}

#define NDBL 256

/* MPI_SUM of doubles: from every second element of the origin (a vector
 * type) into elements 16.. of the target, and into every third element of a
 * region of the target (a vector type there); then MPI_MAXLOC, MPI_REPLACE,
 * MPI_NO_OP and the request forms */
static void ops_and_types(MPI_Win win, double *dbase, int target)
{
    double src[2 * NDBL];
    for (int i = 0; i < 2 * NDBL; i++)
        src[i] = (i % 2) ? -1e9 : (rank + 1) * 0.5 + i / 2;
    double plain[NDBL];
    for (int k = 0; k < NDBL; k++)
        plain[k] = (rank + 1) * 0.5 + k;
    MPI_Datatype every2;
    CHECK_MPI(MPI_Type_vector(NDBL, 1, 2, MPI_DOUBLE, &every2));
    CHECK_MPI(MPI_Type_commit(&every2));
    /* doubles 16 .. 16+NDBL and 16+NDBL .. 16+3*NDBL of the target */
    const MPI_Aint d1 = 16, d2 = 16 + NDBL;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Accumulate(src, 1, every2, target, d1, NDBL, MPI_DOUBLE, MPI_SUM, win));
    MPI_Request req[2];
    CHECK_MPI(MPI_Raccumulate(plain, NDBL, MPI_DOUBLE, target, d2, 1, every2, MPI_SUM, win,
                              &req[0]));
    CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* plain went into the even doubles of d2 .. d2 + 2*NDBL */
    const double ranks_sum = size * (size + 1) * 0.25;  /* sum over r of (r+1)*0.5 */
    if (rank == target) {
        for (int i = 0; i < NDBL; i++) {
            const double want = ranks_sum + (double) size * i;
            CHECK(dbase[d1 + i] == want, "MPI_SUM through the origin vector: element %d is %g, "
                  "expected %g", i, dbase[d1 + i], want);
        }
        for (int k = 0; k < NDBL; k++) {
            const double want = ranks_sum + (double) size * k;
            CHECK(dbase[d2 + 2 * k] == want, "MPI_SUM into the target vector: element %d is %g, "
                  "expected %g", k, dbase[d2 + 2 * k], want);
            CHECK(dbase[d2 + 2 * k + 1] == 0, "MPI_SUM into the target vector: gap %d is %g", k,
                  dbase[d2 + 2 * k + 1]);
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* MPI_MAXLOC on (value, index) pairs: the largest value wins, ties the
     * lowest index; at displacement 8 (two ints fill one unit of 8 bytes) */
    struct {
        int v, i;
    } pair = {rank % 2 ? 100 : rank, rank}, before;
    /* the origin's type derived from the pair type (MPICH records no basic
     * type for those) */
    MPI_Datatype one_pair;
    CHECK_MPI(MPI_Type_contiguous(1, MPI_2INT, &one_pair));
    CHECK_MPI(MPI_Type_commit(&one_pair));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Get_accumulate(&pair, 1, one_pair, &before, 1, MPI_2INT, target, 8, 1,
                                 MPI_2INT, MPI_MAXLOC, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    struct {
        int v, i;
    } now;
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_2INT, &now, 1, MPI_2INT, target, 8, 1,
                                 MPI_2INT, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    const int want_v = size > 1 ? 100 : 0, want_i = size > 1 ? 1 : 0;
    CHECK(now.v == want_v && now.i == want_i, "MPI_MAXLOC left (%d, %d), expected (%d, %d)", now.v,
          now.i, want_v, want_i);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* MPI_REPLACE by the request form: each rank swaps its id into slot 3
     * (a double), in turn; the chain of old values visits every rank */
    double id = rank + 1, prev = -1;
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CHECK_MPI(MPI_Rget_accumulate(&id, 1, MPI_DOUBLE, &prev, 1, MPI_DOUBLE, target, 3, 1,
                                          MPI_DOUBLE, MPI_REPLACE, win, &req[1]));
            CHECK_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Win_unlock(target, win));
            CHECK(prev == rank, "MPI_REPLACE turn %d: old value %g, expected %d", turn, prev, rank);
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Type_free(&every2));
    CHECK_MPI(MPI_Type_free(&one_pair));
}

static void range_errors(MPI_Win win, long *base, MPI_Aint mine, MPI_Aint part_bytes,
                         int on_one_node)
{
    if (!on_one_node || size < 2)
        return;                 /* the check is the netmod's, for node-local targets */
    const int t = (rank + 1) % size;
    const MPI_Aint end = part_bytes / (MPI_Aint) sizeof(long), my_end = mine / sizeof(long);
    long v = 7, r = 0, c = 0, junk[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (MPI_Aint i = my_end - 8; i < my_end; i++)
        base[i] = 0x5a5a;
    CHECK_MPI(MPI_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int op = 0; op < 4; op++) {
        int e;
        switch (op) {
        case 0:
            e = MPI_Accumulate(junk, 8, MPI_LONG, t, end - 4, 8, MPI_LONG, MPI_SUM, win);
            break;
        case 1:
            e = MPI_Fetch_and_op(&v, &r, MPI_LONG, t, end, MPI_SUM, win);
            break;
        case 2:
            e = MPI_Compare_and_swap(&v, &c, &r, MPI_LONG, t, end + 100, win);
            break;
        default:
            e = MPI_Get_accumulate(junk, 2, MPI_LONG, junk + 2, 2, MPI_LONG, t, end - 1, 2,
                                   MPI_LONG, MPI_SUM, win);
            break;
        }
        int cls = MPI_SUCCESS, len = 0;
        char msg[MPI_MAX_ERROR_STRING], want[32];
        MPI_Error_class(e, &cls);
        MPI_Error_string(e, msg, &len);
        snprintf(want, sizeof(want), "rank %d", t);
        CHECK(cls == MPI_ERR_RMA_RANGE, "operation %d past the end of rank %d's part: class %d (%s)",
              op, t, cls, msg);
        CHECK(strstr(msg, want) != NULL, "range error does not name the target: %s", msg);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (MPI_Aint i = my_end - 8; i < my_end; i++)
        CHECK(base[i] == 0x5a5a, "long %ld of this rank's part changed to %ld by an access out of "
              "range", (long) i, base[i]);
}

/* the target reads its own counter until the origins' adds are all there,
 * without an MPI call that could apply them for it */
static void without_the_target(MPI_Win win, volatile long *base)
{
    const int target = 0;
    const long want = (long) FOPS * (size - 1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        const time_t give_up = time(NULL) + 60;
        while (base[5] != want) {
            CHECK(time(NULL) < give_up, "the target's counter is %ld of %ld after 60 s: the "
                  "accumulates wait for the target", base[5], want);
            __sync_synchronize();
        }
    } else {
        long one = 1, got;
        /* MPI_MODE_NOCHECK: a lock that asks nothing of the target (MPICH's lock
         * requests wait for the target's grant) */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, MPI_MODE_NOCHECK, win));
        for (int i = 0; i < FOPS; i++) {
            CHECK_MPI(MPI_Fetch_and_op(&one, &got, MPI_LONG, target, 5, MPI_SUM, win));
            CHECK_MPI(MPI_Win_flush(target, win));
        }
        CHECK_MPI(MPI_Win_unlock(target, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Comm node;
    int node_size;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &node_size);
    const int on_one_node = node_size == size;

    /* parts of different sizes: longs 0..7 scalars, then doubles */
    const MPI_Aint part = 8 * (16 + 4 * NDBL) + 64 * rank;
    for (int flavor = 0; flavor < 3; flavor++) {
        static const char *names[] = {"MPI_Win_allocate", "MPI_Win_allocate_shared",
                                      "MPI_Win_create"};
        MPI_Win win;
        long *base = NULL;
        if (flavor == 2 || (flavor == 1 && !on_one_node)) {
            CHECK_MPI(MPI_Alloc_mem(part, MPI_INFO_NULL, &base));
            CHECK_MPI(MPI_Win_create(base, part, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else if (flavor == 1) {
            CHECK_MPI(MPI_Win_allocate_shared(part, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        } else {
            CHECK_MPI(MPI_Win_allocate(part, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        }
        CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        memset(base, 0, part);
        CHECK_MPI(MPI_Win_unlock(rank, win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int target = 0; target < size; target += size > 2 ? size - 1 : 1) {
            char what[96];
            snprintf(what, sizeof(what), "%s, target %d", names[flavor], target);
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
            memset(base, 0, part);
            CHECK_MPI(MPI_Win_unlock(rank, win));
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            fetch_add_unique(win, base, target, what);
            cas_lock(win, base, target);
            ops_and_types(win, (double *) base, target);
        }
        range_errors(win, base, part, part + 64 * ((rank + 1) % size) - 64 * rank,
                     on_one_node && flavor < 2);
        if (on_one_node && flavor < 2 && size > 1)
            without_the_target(win, base);
        CHECK_MPI(MPI_Win_free(&win));
        if (flavor == 2 || (flavor == 1 && !on_one_node))
            CHECK_MPI(MPI_Free_mem(base));
        if (rank == 0)
            printf("rma_atomics: %s OK\n", names[flavor]);
    }
    CHECK_MPI(MPI_Comm_free(&node));
    if (rank == 0)
        printf("rma_atomics: %d ranks%s OK\n", size, on_one_node ? " on one node" : "");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
