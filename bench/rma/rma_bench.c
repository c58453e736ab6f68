/* bench/rma/rma_bench.c - one-sided latency and bandwidth between ranks 0
 * and 1 in a passive-target epoch (MPI_Win_lock_all on rank 0; rank 1 waits
 * in MPI_Barrier, so an MPI that needs the target's help gets it there).
 *
 *   rma_bench [--tests put_lat,get_lat,put_bw,get_bw,acc_lat,fop_lat,cas_lat,lock_lat]
 *             [--sizes 8,1024,65536,1048576] [--window 64] [--target 0.2]
 *             [--create]
 *
 *   put_lat / get_lat: MPI_Put / MPI_Get of one message + MPI_Win_flush,
 *                      time per operation (us)
 *   put_bw / get_bw:   --window operations, then one flush (MB/s, 10^6 B)
 *   acc_lat:           MPI_Accumulate (MPI_SUM, MPI_DOUBLE) + flush (us)
 *   fop_lat / cas_lat: MPI_Fetch_and_op (MPI_SUM) / MPI_Compare_and_swap
 *                      on one MPI_LONG + flush (us)
 *   lock_lat:          a passive-target epoch of its own for one put:
 *                      MPI_Win_lock (exclusive), MPI_Put, MPI_Win_unlock (us;
 *                      the other tests run in one MPI_Win_lock_all epoch)
 * The window comes from MPI_Win_allocate (in shared memory within a node
 * where the MPI does so) or, with --create, from MPI_Win_create over
 * malloc'ed memory.  After each size rank 0 reads back what it wrote and
 * checks it, so a broken path cannot produce numbers.
 * Output on rank 0: "test size value iterations" per line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void die(const char *what)
{
    fprintf(stderr, "rma_bench: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* one timed unit of a test (ops operations and their flushes) */
static void unit(const char *test, char *buf, size_t size, int window, MPI_Win win)
{
    if (!strcmp(test, "put_lat")) {
        MPI_Put(buf, (int) size, MPI_BYTE, 1, 0, (int) size, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    } else if (!strcmp(test, "get_lat")) {
        MPI_Get(buf, (int) size, MPI_BYTE, 1, 0, (int) size, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    } else if (!strcmp(test, "put_bw") || !strcmp(test, "get_bw")) {
        for (int i = 0; i < window; i++) {
            char *b = buf + (size_t) i * size;
            if (test[0] == 'p')
                MPI_Put(b, (int) size, MPI_BYTE, 1, (MPI_Aint) i * size, (int) size, MPI_BYTE, win);
            else
                MPI_Get(b, (int) size, MPI_BYTE, 1, (MPI_Aint) i * size, (int) size, MPI_BYTE, win);
        }
        MPI_Win_flush(1, win);
    } else if (!strcmp(test, "acc_lat")) {
        MPI_Accumulate(buf, (int) (size / sizeof(double)), MPI_DOUBLE, 1, 0,
                       (int) (size / sizeof(double)), MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_flush(1, win);
    } else if (!strcmp(test, "fop_lat")) {
        long one = 1, old;
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
    } else if (!strcmp(test, "lock_lat")) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(buf, (int) size, MPI_BYTE, 1, 0, (int) size, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
    } else if (!strcmp(test, "cas_lat")) {
        long cmp = 0, val = 0, old;
        MPI_Compare_and_swap(&val, &cmp, &old, MPI_LONG, 1, 0, win);
        MPI_Win_flush(1, win);
    } else {
        die("unknown test (see the comment at the top of rma_bench.c)");
    }
}

int main(int argc, char **argv)
{
    const char *tests = "put_lat,get_lat,put_bw,get_bw,acc_lat,fop_lat,cas_lat,lock_lat";
    const char *sizes_arg = "8,1024,65536,1048576";
    int window = 64, create = 0, size_world;
    double target = 0.2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size_world);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            tests = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes_arg = argv[++i];
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--target") && i + 1 < argc)
            target = atof(argv[++i]);
        else if (!strcmp(argv[i], "--create"))
            create = 1;
        else
            die("unknown argument (see the comment at the top of rma_bench.c)");
    }
    if (size_world < 2 || window < 1)
        die("needs 2 ranks and --window >= 1");

    size_t sizes[32], nsizes = 0, max = 8;
    for (char *copy = strdup(sizes_arg), *t = strtok(copy, ","); t && nsizes < 32; t = strtok(NULL, ","))
        sizes[nsizes++] = strtoul(t, NULL, 0);
    for (size_t i = 0; i < nsizes; i++)
        if (sizes[i] > max)
            max = sizes[i];
    size_t win_bytes = max * (size_t) window;
    char *buf = malloc(win_bytes), *check = malloc(max), *base;
    MPI_Win win;
    if (create) {
        base = calloc(1, win_bytes);
        MPI_Win_create(base, (MPI_Aint) win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate((MPI_Aint) win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 0, win_bytes);
    }
    if (rank == 0)
        printf("# rma_bench: window from %s, %d ranks\n# test size value iterations\n",
               create ? "MPI_Win_create" : "MPI_Win_allocate", size_world);

    static const char *all[] = {"put_lat", "get_lat", "put_bw", "get_bw", "acc_lat", "fop_lat", "cas_lat",
                                "lock_lat"};
    for (size_t a = 0; a < sizeof(all) / sizeof(all[0]); a++) {
        const char *test = all[a];
        if (!has(tests, test))
            continue;
        int atomic = !strcmp(test, "fop_lat") || !strcmp(test, "cas_lat");
        int own_epochs = !strcmp(test, "lock_lat");
        for (size_t s = 0; s < (atomic ? 1 : nsizes); s++) {
            size_t size = atomic ? sizeof(long) : sizes[s];
            if (!strcmp(test, "acc_lat") && size < sizeof(double))
                continue;
            int bw = strstr(test, "_bw") != NULL;
            int iters = 0;
            double t = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                for (size_t i = 0; i < (bw ? win_bytes : size); i++)
                    buf[i] = (char) (i * 7 + size);
                if (!own_epochs)
                    MPI_Win_lock_all(0, win);
                /* warm-up and probe (at least 10 units and a tenth of
                 * `target`): how many units fill `target` seconds */
                double t0 = MPI_Wtime();
                int probe = 0;
                while (probe < 10 || MPI_Wtime() - t0 < target / 10) {
                    unit(test, buf, size, window, win);
                    probe++;
                }
                double per = (MPI_Wtime() - t0) / probe;
                iters = per > 0 ? (int) (target / per) : 100000;
                iters = iters < 5 ? 5 : iters > 200000 ? 200000 : iters;
                t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    unit(test, buf, size, window, win);
                t = MPI_Wtime() - t0;
                if (own_epochs)
                    MPI_Win_lock_all(0, win);
                if (!strcmp(test, "put_lat") || !strcmp(test, "put_bw") || own_epochs) {
                    /* what the last put wrote must be there */
                    for (size_t i = 0; i < size; i++)
                        buf[i] = (char) (i * 7 + size);
                    MPI_Get(check, (int) size, MPI_BYTE, 1, 0, (int) size, MPI_BYTE, win);
                    MPI_Win_flush(1, win);
                    if (memcmp(check, buf, size))
                        die("DATA MISMATCH: the put's bytes are not in the target's window");
                }
                MPI_Win_unlock_all(win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                if (bw)
                    printf("%s %zu %.1f %d\n", test, size, (double) size * window * iters / t / 1e6, iters);
                else
                    printf("%s %zu %.3f %d\n", test, size, t / iters * 1e6, iters);
                fflush(stdout);
            }
        }
    }
    MPI_Win_free(&win);
    if (create)
        free(base);
    free(buf);
    free(check);
    MPI_Finalize();
    return 0;
}
