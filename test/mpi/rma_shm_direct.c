/* One-sided communication into windows of shared memory (MPI_Win_allocate,
 * MPI_Win_allocate_shared), where the llc netmod copies puts and gets to a
 * process of the same node itself, and into MPI_Win_create windows, where
 * it moves contiguous data of 64 KiB and more by cross-memory attach.  Every byte is checked, in windows whose
 * parts differ in size and displacement unit from rank to rank:
 *   - fence epochs: puts and gets of 1 B .. 64 KiB and of a strided datatype,
 *     to and from every rank;
 *   - lock_all with flush, and an exclusive-lock read-modify-write counter
 *     (get + put under MPI_LOCK_EXCLUSIVE: mutual exclusion is what makes the
 *     total right);
 *   - post/start/complete/wait on a ring;
 *   - an allocate_shared window read by load after other ranks' MPI_Put;
 *   - accesses outside a node-local target's part fail with
 *     MPI_ERR_RMA_RANGE, naming the target, and leave the neighbouring part
 *     untouched; the window stays usable;
 *   - when all ranks are on one node, puts and gets to a target that makes
 *     no MPI call complete (the target reads its own memory until they are
 *     there, and gives up after 60 s).
 * Works across nodes too: there the same operations take the active-message
 * path, and the range checks are made for node-local targets only. */
#include "check.h"

#include <string.h>
#include <time.h>

#define MAX_BYTES 65536

static int rank, size;

static MPI_Aint part_bytes(int r)
{
    return (MPI_Aint) 2 * MAX_BYTES * 1 + 4096 * (r % 3) + 8 * r;
}

static int part_unit(int r)
{
    return r % 2 ? 1 : 4;
}

/* byte offset of origin o's region in a part (each origin its own region) */
static MPI_Aint region(int o)
{
    return (MPI_Aint) o * 64;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(seed, i);
}

static void expect(const unsigned char *p, size_t n, unsigned seed, const char *what, int peer)
{
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == pattern(seed, i), "%s with rank %d: byte %zu of %zu is %u, expected %u", what,
              peer, i, n, p[i], pattern(seed, i));
}

/* 0: windows of MPI_Win_allocate (in the node's shared segment); 1: of
 * MPI_Win_create over MPI_Alloc_mem memory (each process's own, reached
 * by cross-memory attach) */
static int create_flavor;
static const char *flavor_name(void)
{
    return create_flavor ? "MPI_Win_create" : "MPI_Win_allocate";
}

static void win_new(MPI_Aint bytes, int unit, void *baseptr, MPI_Win * win)
{
    if (!create_flavor) {
        CHECK_MPI(MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win));
        return;
    }
    void *p;
    CHECK_MPI(MPI_Alloc_mem(bytes > 0 ? bytes : 1, MPI_INFO_NULL, &p));
    *(void **) baseptr = p;
    CHECK_MPI(MPI_Win_create(p, bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, win));
}

static void win_done(MPI_Win * win)
{
    void *base = NULL;
    int flag = 0;
    if (create_flavor)
        CHECK_MPI(MPI_Win_get_attr(*win, MPI_WIN_BASE, &base, &flag));
    CHECK_MPI(MPI_Win_free(win));
    if (create_flavor)
        CHECK_MPI(MPI_Free_mem(base));
}

/* Passive target without the target: every other rank puts 64 KiB into its
 * region of rank 0's window and reads it back while rank 0 only reads its
 * own memory and makes no MPI call that could serve them (it gives up after
 * 60 s, and the job fails).  Only when all ranks are on one node.  (64 KiB:
 * in MPI_Win_create windows smaller puts take MPICH's active messages, which
 * need the target.) */
#define SOLO_LONGS 8192
static void without_the_target(void)
{
    MPI_Win win;
    long *base;
    win_new((MPI_Aint) size * SOLO_LONGS * sizeof(long), sizeof(long), &base, &win);
    for (long i = 0; i < (long) size * SOLO_LONGS; i++)
        base[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        const time_t give_up = time(NULL) + 60;
        for (int o = 1; o < size; o++) {
            volatile long *last = &base[(long) o * SOLO_LONGS + SOLO_LONGS - 1];
            while (*last != 1000 + o) {
                CHECK(time(NULL) < give_up, "%s: rank %d's put is not in rank 0's window after "
                      "60 s: the puts wait for the target", flavor_name(), o);
                __sync_synchronize();
            }
        }
    } else {
        long *v = malloc(sizeof(long) * SOLO_LONGS), *back = malloc(sizeof(long) * SOLO_LONGS);
        for (int i = 0; i < SOLO_LONGS; i++)
            v[i] = i == SOLO_LONGS - 1 ? 1000 + rank : rank * 100000 + i;
        /* MPI_MODE_NOCHECK: a lock that asks nothing of the target (MPICH's lock
         * requests wait for the target's grant) */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Put(v, SOLO_LONGS, MPI_LONG, 0, (MPI_Aint) rank * SOLO_LONGS, SOLO_LONGS,
                          MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        CHECK_MPI(MPI_Get(back, SOLO_LONGS, MPI_LONG, 0, (MPI_Aint) rank * SOLO_LONGS, SOLO_LONGS,
                          MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        for (int i = 0; i < SOLO_LONGS; i++)
            CHECK(back[i] == v[i], "%s: long %d read back from rank 0 is %ld, expected %ld",
                  flavor_name(), i, back[i], v[i]);
        CHECK_MPI(MPI_Win_unlock(0, win));
        free(v);
        free(back);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    win_done(&win);
}

static void fence_epochs(void)
{
    MPI_Win win;
    /* one origin buffer per target: a put's buffer is not to be touched
     * again before the epoch ends */
    unsigned char *base, *bufs = malloc((size_t) MAX_BYTES * size), *got = malloc(MAX_BYTES);
    const MPI_Aint mine = part_bytes(rank);
    const int unit = part_unit(rank);
    win_new(mine, unit, &base, &win);
    memset(base, 0xee, mine);
    const size_t lens[] = {1, 8, 63, 64, 1000, 4096, MAX_BYTES / 2, MAX_BYTES};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        size_t len = lens[k];
        /* the region of every origin must fit: lengths above 4096 go alone */
        int solo = len > 4096;
        for (int o = 0; o < size; o++) {
            if (solo && o != (int) (k % size))
                continue;
            CHECK_MPI(MPI_Win_fence(0, win));
            if (rank == o) {
                for (int t = 0; t < size; t++) {
                    MPI_Aint at = solo ? 0 : region(o) * (MPI_Aint) (len > 64 ? 65 : 1);
                    if (at + (MPI_Aint) len > part_bytes(t))
                        continue;
                    unsigned char *buf = bufs + (size_t) t * MAX_BYTES;
                    fill(buf, len, 1000u * k + 10u * o + t);
                    CHECK_MPI(MPI_Put(buf, (int) len, MPI_BYTE, t, at / part_unit(t), (int) len,
                                      MPI_BYTE, win));
                }
            }
            CHECK_MPI(MPI_Win_fence(0, win));
            MPI_Aint at = solo ? 0 : region(o) * (MPI_Aint) (len > 64 ? 65 : 1);
            if (at + (MPI_Aint) len <= mine)
                expect(base + at, len, 1000u * k + 10u * o + rank, "put, fence", o);
            /* everyone reads back what o wrote into everyone */
            for (int t = 0; t < size; t++) {
                if (at + (MPI_Aint) len > part_bytes(t))
                    continue;
                memset(got, 0, len);
                CHECK_MPI(MPI_Get(got, (int) len, MPI_BYTE, t, at / part_unit(t), (int) len,
                                  MPI_BYTE, win));
                CHECK_MPI(MPI_Win_fence(0, win));
                expect(got, len, 1000u * k + 10u * o + t, "get, fence", t);
            }
        }
    }

    /* a strided target datatype: 32 blocks of 2 ints, stride 3 ints */
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(32, 2, 3, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int src[64], back[64];
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 64; i++)
        src[i] = rank * 1000 + i;
    memset(base, 0, mine);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(src, 64, MPI_INT, right, 0, 1, vec, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    const int *ints = (const int *) base;
    for (int b = 0; b < 32; b++) {
        CHECK(ints[3 * b] == left * 1000 + 2 * b && ints[3 * b + 1] == left * 1000 + 2 * b + 1,
              "strided put from %d: block %d holds %d %d", left, b, ints[3 * b], ints[3 * b + 1]);
        CHECK(ints[3 * b + 2] == 0, "strided put from %d wrote the gap after block %d", left, b);
    }
    CHECK_MPI(MPI_Get(back, 64, MPI_INT, right, 0, 1, vec, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 64; i++)
        CHECK(back[i] == rank * 1000 + i, "strided get from %d: element %d is %d", right, i, back[i]);
    CHECK_MPI(MPI_Type_free(&vec));
    win_done(&win);
    free(bufs);
    free(got);
}

static void passive_epochs(void)
{
    MPI_Win win;
    long *base;
    const int rounds = 200;
    win_new(64 * sizeof(long), sizeof(long), &base, &win);
    for (int i = 0; i < 64; i++)
        base[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* lock_all: put into the right neighbour, flush, read it back */
    const int right = (rank + 1) % size;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 16; i++) {
        long v = rank * 100 + i, back = -1;
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, right, 8 + i, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        CHECK_MPI(MPI_Get(&back, 1, MPI_LONG, right, 8 + i, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        CHECK(back == v, "lock_all: read back %ld from rank %d, wrote %ld", back, right, v);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));

    /* a counter on every rank, incremented by get + put under an exclusive
     * lock: the total is right only if the locks exclude each other */
    for (int i = 0; i < rounds; i++)
        locked_add_one(win, (rank + i) % size);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(base[0] == rounds, "exclusive-lock counter is %ld after %d increments by %d ranks", base[0],
          rounds, size);
    const int left = (rank + size - 1) % size;
    for (int i = 0; i < 16; i++)
        CHECK(base[8 + i] == left * 100 + i, "lock_all put from %d: slot %d is %ld", left, i,
              base[8 + i]);
    CHECK_MPI(MPI_Win_unlock(rank, win));

    /* post/start/complete/wait: put into the right neighbour */
    MPI_Group world, to_right, from_left;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &right, &to_right));
    CHECK_MPI(MPI_Group_incl(world, 1, &left, &from_left));
    for (int i = 0; i < 20; i++) {
        long v = rank * 7 + i;
        CHECK_MPI(MPI_Win_post(from_left, 0, win));
        CHECK_MPI(MPI_Win_start(to_right, 0, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, right, 40, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
        CHECK(base[40] == left * 7 + i, "PSCW round %d: got %ld from rank %d", i, base[40], left);
    }
    CHECK_MPI(MPI_Group_free(&to_right));
    CHECK_MPI(MPI_Group_free(&from_left));
    CHECK_MPI(MPI_Group_free(&world));
    win_done(&win);
}

static void shared_window(MPI_Comm node)
{
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MPI_Win win;
    int *mine;
    CHECK_MPI(MPI_Win_allocate_shared(256 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
                                      &win));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 256; i++)
        mine[i] = -1;
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(node));
    const int right = (nrank + 1) % nsize;
    int vals[256];
    for (int i = 0; i < 256; i++)
        vals[i] = nrank * 100000 + i;
    CHECK_MPI(MPI_Put(vals, 256, MPI_INT, right, 0, 256, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_sync(win));
    const int left = (nrank + nsize - 1) % nsize;
    for (int i = 0; i < 256; i++)
        CHECK(mine[i] == left * 100000 + i, "shared window: load of element %d is %d after put by %d",
              i, mine[i], left);
    /* and the left neighbour's part, reached by address */
    MPI_Aint sz;
    int unit;
    int *theirs;
    CHECK_MPI(MPI_Win_shared_query(win, left, &sz, &unit, &theirs));
    CHECK(sz == 256 * sizeof(int) && unit == (int) sizeof(int), "shared_query: %ld bytes, unit %d",
          (long) sz, unit);
    const int lleft = (left + nsize - 1) % nsize;
    for (int i = 0; i < 256; i++)
        CHECK(theirs[i] == lleft * 100000 + i, "shared window: element %d of rank %d is %d", i, left,
              theirs[i]);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Win_free(&win));
}

static void range_errors(MPI_Comm node)
{
    MPI_Win win;
    unsigned char *base;
    const MPI_Aint mine = part_bytes(rank);
    win_new(mine, part_unit(rank), &base, &win);
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(base, 0x5a, mine);
    MPI_Group world_group, node_group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    CHECK_MPI(MPI_Comm_group(node, &node_group));
    CHECK_MPI(MPI_Win_fence(0, win));
    unsigned char junk[64] = {0};
    int checked = 0;
    for (int t = 0; t < size; t++) {
        int nt;
        CHECK_MPI(MPI_Group_translate_ranks(world_group, 1, &t, node_group, &nt));
        if (t == rank || nt == MPI_UNDEFINED)
            continue;
        const int unit = part_unit(t);
        const MPI_Aint end = part_bytes(t) / unit;
        struct {
            const char *what;
            MPI_Aint disp;
            int count;
        } bad[] = {{"past the end", end, 1}, {"across the end", end - 1, 16}, {"before the start", -1, 4}};
        for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
            for (int op = 0; op < 2; op++) {
                int e = op == 0 ? MPI_Put(junk, bad[b].count * unit, MPI_BYTE, t, bad[b].disp,
                                          bad[b].count * unit, MPI_BYTE, win)
                                : MPI_Get(junk, bad[b].count * unit, MPI_BYTE, t, bad[b].disp,
                                          bad[b].count * unit, MPI_BYTE, win);
                int cls = MPI_SUCCESS;
                MPI_Error_class(e, &cls);
                char msg[MPI_MAX_ERROR_STRING], want[32];
                int len = 0;
                MPI_Error_string(e, msg, &len);
                snprintf(want, sizeof(want), "rank %d", t);
                /* a negative displacement may already be refused by MPI's
                 * argument checks (MPI_ERR_DISP) */
                CHECK(cls == MPI_ERR_RMA_RANGE || (bad[b].disp < 0 && cls == MPI_ERR_DISP),
                      "%s %s of rank %d's part: error class %d (%s)", op ? "MPI_Get" : "MPI_Put",
                      bad[b].what, t, cls, msg);
                CHECK(cls != MPI_ERR_RMA_RANGE || strstr(msg, want) != NULL,
                      "range error does not name the target: %s", msg);
                checked++;
            }
        }
    }
    CHECK_MPI(MPI_Win_fence(0, win));
    /* nothing was written: every byte of every part is as it was */
    for (MPI_Aint i = 0; i < mine; i++)
        CHECK(base[i] == 0x5a, "byte %ld of this rank's part changed to %u by an access out of range",
              (long) i, base[i]);
    /* and the window still works (the fence: nobody puts before all have looked) */
    CHECK_MPI(MPI_Win_fence(0, win));
    long v = rank, w = -1;
    const int right = (rank + 1) % size;
    CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Get(&w, 1, MPI_LONG, right, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(w == rank, "after the range errors: read %ld back from rank %d", w, right);
    CHECK_MPI(MPI_Group_free(&world_group));
    CHECK_MPI(MPI_Group_free(&node_group));
    win_done(&win);
    int total = 0;
    CHECK_MPI(MPI_Reduce(&checked, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_shm_direct: %d out-of-range accesses refused\n", total);
}

int main(int argc, char **argv)
{
    MPI_Comm node;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int node_size;
    MPI_Comm_size(node, &node_size);
    for (create_flavor = 0; create_flavor < 2; create_flavor++) {
        fence_epochs();
        passive_epochs();
        range_errors(node);
        if (node_size == size && size > 1)
            without_the_target();
        if (rank == 0)
            printf("rma_shm_direct: windows of %s OK\n", flavor_name());
    }
    shared_window(node);
    CHECK_MPI(MPI_Comm_free(&node));
    if (rank == 0)
        printf("rma_shm_direct: %d ranks OK\n", size);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
