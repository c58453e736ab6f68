/* One-sided puts and gets between every pair of neighbours, of sizes from 1
 * byte to 4 MiB, in MPI_Win_allocate and MPI_Win_create windows, under
 * fence, lock_all + flush, lock/unlock and post/start/complete/wait, with
 * MPI_Rput / MPI_Rget, a strided datatype, and accesses outside the
 * target's part (puts, accumulates of every kind, strided data: each
 * MPI_ERR_RMA_RANGE, nothing written).  Every byte is checked.  Across
 * emulated hosts a neighbour on another node is reached by libllc's
 * one-sided path (llc_put / llc_get): the MPI_T counter llc_rma_puts shows
 * it was taken. */
#include "check.h"

#include <string.h>

#define GUARD 64
#define MAXB (4 << 20)

static const int sizes[] = {1, 8, 1000, 65536, MAXB};
#define NSIZES ((int) (sizeof(sizes) / sizeof(sizes[0])))

enum sync { FENCE, LOCK_ALL, LOCK, PSCW, NSYNC };
static const char *sync_name[] = {"fence", "lock_all", "lock", "pscw"};

static int rank, nprocs, right, left;
static MPI_Group world_group, neighbours;

static void open_epoch(enum sync s, MPI_Win win, int target)
{
    switch (s) {
        case FENCE:
            CHECK_MPI(MPI_Win_fence(0, win));
            break;
        case LOCK_ALL:
            CHECK_MPI(MPI_Win_lock_all(0, win));
            break;
        case LOCK:
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            break;
        default:
            CHECK_MPI(MPI_Win_post(neighbours, 0, win));
            CHECK_MPI(MPI_Win_start(neighbours, 0, win));
    }
}

static void close_epoch(enum sync s, MPI_Win win, int target)
{
    switch (s) {
        case FENCE:
            CHECK_MPI(MPI_Win_fence(0, win));
            break;
        case LOCK_ALL:
            CHECK_MPI(MPI_Win_flush(target, win));
            CHECK_MPI(MPI_Win_unlock_all(win));
            break;
        case LOCK:
            CHECK_MPI(MPI_Win_unlock(target, win));
            break;
        default:
            CHECK_MPI(MPI_Win_complete(win));
            CHECK_MPI(MPI_Win_wait(win));
    }
    /* passive target: the target learns of the data by this barrier */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* bytes [0, n) of the window of `owner` after a put of size n by owner's left neighbour */
static void check_put(const unsigned char *base, int n, unsigned seed, const char *what)
{
    for (int i = 0; i < n; i++)
        if (base[GUARD + i] != pattern(seed, (size_t) i))
            CHECK(0, "%s: put byte %d of %d is %u, expected %u", what, i, n, base[GUARD + i],
                  pattern(seed, (size_t) i));
    for (int i = 0; i < GUARD; i++)
        CHECK(base[i] == 0xee && base[GUARD + n + i] == 0xee, "%s: guard byte %d changed", what,
              i);
}

static void run(MPI_Win win, unsigned char *base, unsigned char *buf, const char *kind)
{
    char what[128];
    for (int s = 0; s < NSYNC; s++) {
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            unsigned seed = (unsigned) (rank * 131 + k * 7 + s);
            unsigned seed_from_left = (unsigned) (left * 131 + k * 7 + s);
            snprintf(what, sizeof(what), "%s %s %d B", kind, sync_name[s], n);
            memset(base, 0xee, MAXB + 2 * GUARD);
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < n; i++)
                buf[i] = pattern(seed, (size_t) i);
            open_epoch(s, win, right);
            CHECK_MPI(MPI_Put(buf, n, MPI_BYTE, right, GUARD, n, MPI_BYTE, win));
            close_epoch(s, win, right);
            check_put(base, n, seed_from_left, what);

            /* get it back from the right neighbour: what this rank put there */
            memset(buf, 0, n);
            open_epoch(s, win, right);
            CHECK_MPI(MPI_Get(buf, n, MPI_BYTE, right, GUARD, n, MPI_BYTE, win));
            close_epoch(s, win, right);
            for (int i = 0; i < n; i++)
                if (buf[i] != pattern(seed, (size_t) i))
                    CHECK(0, "%s: got byte %d of %d is %u, expected %u", what, i, n, buf[i],
                          pattern(seed, (size_t) i));
        }
    }

    /* request-based, several in flight: 8 puts of 1000 bytes, then 8 gets */
    {
        MPI_Request r[8];
        memset(base, 0xee, MAXB + 2 * GUARD);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < 8000; i++)
            buf[i] = pattern((unsigned) rank + 99, (size_t) i);
        CHECK_MPI(MPI_Win_lock_all(0, win));
        for (int j = 0; j < 8; j++)
            CHECK_MPI(MPI_Rput(buf + 1000 * j, 1000, MPI_BYTE, right, GUARD + 1000 * j, 1000,
                               MPI_BYTE, win, &r[j]));
        CHECK_MPI(MPI_Waitall(8, r, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Win_flush(right, win));
        memset(buf + 8000, 0, 8000);
        for (int j = 0; j < 8; j++)
            CHECK_MPI(MPI_Rget(buf + 8000 + 1000 * j, 1000, MPI_BYTE, right, GUARD + 1000 * j,
                               1000, MPI_BYTE, win, &r[j]));
        CHECK_MPI(MPI_Waitall(8, r, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(what, sizeof(what), "%s rput", kind);
        check_put(base, 8000, (unsigned) left + 99, what);
        CHECK(memcmp(buf, buf + 8000, 8000) == 0, "%s rget: not what was put", kind);
    }

    /* a strided datatype: every other int of 1000 */
    {
        MPI_Datatype every_other;
        int *ints = (int *) buf, *got = (int *) (buf + 8000);
        memset(base, 0xee, MAXB + 2 * GUARD);
        CHECK_MPI(MPI_Type_vector(500, 1, 2, MPI_INT, &every_other));
        CHECK_MPI(MPI_Type_commit(&every_other));
        for (int i = 0; i < 1000; i++)
            ints[i] = rank * 100000 + i;
        CHECK_MPI(MPI_Win_fence(0, win));
        CHECK_MPI(MPI_Put(ints, 1, every_other, right, GUARD, 1, every_other, win));
        CHECK_MPI(MPI_Win_fence(0, win));
        memcpy(got, base + GUARD, 1000 * sizeof(int));
        for (int i = 0; i < 1000; i += 2)
            CHECK(got[i] == left * 100000 + i, "%s vector: int %d is %d", kind, i, got[i]);
        CHECK(base[GUARD + 4] == 0xee, "%s vector: a gap was written", kind);
        CHECK_MPI(MPI_Type_free(&every_other));
    }

    /* outside the target's part: an error of class MPI_ERR_RMA_RANGE, and
     * nothing written; the window stays usable */
    {
        int err, cls;
        memset(base, 0xee, MAXB + 2 * GUARD);
        CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        CHECK_MPI(MPI_Win_lock_all(0, win));
        err = MPI_Put(buf, 128, MPI_BYTE, right, MAXB + 2 * GUARD - 64, 128, MPI_BYTE, win);
        if (err == MPI_SUCCESS)
            err = MPI_Win_flush(right, win);
        CHECK(err != MPI_SUCCESS, "%s: a put past the end of the target's part succeeded", kind);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_RMA_RANGE, "%s: a put past the end gave error class %d", kind, cls);
        /* the caller's own part too (MPICH's local copy checks no bounds) */
        err = MPI_Put(buf, 128, MPI_BYTE, rank, MAXB + 2 * GUARD - 64, 128, MPI_BYTE, win);
        if (err == MPI_SUCCESS)
            err = MPI_Win_flush(rank, win);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_RMA_RANGE, "%s: a put past the end of its own part gave class %d",
              kind, cls);
        /* the accesses MPICH's active messages carry (accumulates to a
         * window that spans nodes or was not allocated, non-contiguous data)
         * are checked at the origin too: MPIDIG checks no bounds */
        {
            const MPI_Aint end = MAXB + 2 * GUARD;
            int ints[32] = {0}, res[32], one = 1, cmp = 0, old = 0;
            MPI_Datatype every_other;
            CHECK_MPI(MPI_Type_vector(16, 1, 2, MPI_INT, &every_other));
            CHECK_MPI(MPI_Type_commit(&every_other));
            for (int op = 0; op < 5; op++) {
                static const char *const op_name[] = {"MPI_Accumulate", "MPI_Get_accumulate",
                                                      "MPI_Fetch_and_op", "MPI_Compare_and_swap",
                                                      "a strided MPI_Put"};
                switch (op) {
                    case 0:
                        err = MPI_Accumulate(ints, 32, MPI_INT, right, end - 64, 32, MPI_INT,
                                             MPI_SUM, win);
                        break;
                    case 1:
                        err = MPI_Get_accumulate(ints, 32, MPI_INT, res, 32, MPI_INT, right,
                                                 end - 64, 32, MPI_INT, MPI_SUM, win);
                        break;
                    case 2:
                        err = MPI_Fetch_and_op(&one, &old, MPI_INT, right, end - 2, MPI_SUM, win);
                        break;
                    case 3:
                        err = MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT, right, end, win);
                        break;
                    default:
                        err = MPI_Put(ints, 1, every_other, right, end - 64, 1, every_other, win);
                }
                if (err == MPI_SUCCESS)
                    err = MPI_Win_flush(right, win);
                CHECK(err != MPI_SUCCESS, "%s: %s past the end of the target's part succeeded",
                      kind, op_name[op]);
                MPI_Error_class(err, &cls);
                CHECK(cls == MPI_ERR_RMA_RANGE, "%s: %s past the end gave error class %d", kind,
                      op_name[op], cls);
            }
            CHECK_MPI(MPI_Type_free(&every_other));
        }
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < MAXB + 2 * GUARD; i++)
            if (base[i] != 0xee)
                CHECK(0, "%s: byte %d changed by a put outside the part", kind, i);
    }
}

/* libllc's count of one-sided puts (MPI_T performance variable llc_rma_puts) */
static unsigned long long llc_rma_puts(void)
{
    int index = -1, count = 0, provided;
    unsigned long long v = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle h;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_pvar_get_index("llc_rma_puts", MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS,
          "no MPI_T variable llc_rma_puts");
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "MPI_T_pvar_session_create");
    CHECK(MPI_T_pvar_handle_alloc(session, index, NULL, &h, &count) == MPI_SUCCESS,
          "MPI_T_pvar_handle_alloc");
    CHECK(MPI_T_pvar_read(session, h, &v) == MPI_SUCCESS, "MPI_T_pvar_read");
    MPI_T_pvar_handle_free(session, &h);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    return v;
}

int main(int argc, char **argv)
{
    MPI_Win win;
    unsigned char *base, *buf, *mem;
    int ranks[2];

    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    ranks[0] = left;
    ranks[1] = right;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    CHECK_MPI(MPI_Group_incl(world_group, left == right ? 1 : 2, ranks, &neighbours));
    buf = malloc(MAXB);
    CHECK(buf != NULL, "malloc");

    CHECK_MPI(MPI_Win_allocate(MAXB + 2 * GUARD, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    run(win, base, buf, "allocate");
    CHECK_MPI(MPI_Win_free(&win));

    mem = malloc(MAXB + 2 * GUARD);
    CHECK(mem != NULL, "malloc");
    CHECK_MPI(MPI_Win_create(mem, MAXB + 2 * GUARD, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(win, mem, buf, "create");
    CHECK_MPI(MPI_Win_free(&win));

    /* a right neighbour on another node was reached by llc_put */
    {
        MPI_Comm node;
        int node_size, right_here = 0, world_right;
        MPI_Group node_group;
        CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                      &node));
        CHECK_MPI(MPI_Comm_size(node, &node_size));
        CHECK_MPI(MPI_Comm_group(node, &node_group));
        world_right = right;
        {
            int in_node;
            CHECK_MPI(MPI_Group_translate_ranks(world_group, 1, &world_right, node_group,
                                                &in_node));
            right_here = in_node != MPI_UNDEFINED;
        }
        if (!right_here)
            CHECK(llc_rma_puts() > 0, "the right neighbour is on another node, yet libllc "
                  "counted no one-sided put: the puts took MPICH's active messages");
        MPI_Group_free(&node_group);
        MPI_Comm_free(&node);
    }

    free(mem);
    free(buf);
    MPI_Group_free(&neighbours);
    MPI_Group_free(&world_group);
    if (rank == 0)
        printf("rma_net: %d processes: puts and gets of 1 B to 4 MiB, 4 kinds of epoch, "
               "2 kinds of window: OK\n", nprocs);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
