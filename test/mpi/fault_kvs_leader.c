/* Fault test (doc/reliability.md, "The fault campaign"): with LLC_KVS=dist, a KVS node leader is
 * killed (SIGKILL) while the other ranks look peers up (first contact to
 * every other rank, so every rank asks the leaders owning the peers'
 * entries).  Run with one rank per "node" (MPIR_CVAR_NOLOCAL=1, or one rank
 * per emulated host) so that every rank is a node leader and serves a share
 * of the keys.
 *
 * Usage: fault_kvs_leader [-hold] [-others] [VICTIM [DELAY_US]]
 *   -hold     the launcher does not see the death (fault_hold.h): only
 *             libllc can report it
 *   -others   the survivors contact only each other, never the victim: the
 *             only thing that fails is looking up the entries that the
 *             victim's KVS server holds (without it, the first error is
 *             usually the failed connection to the victim itself)
 *   VICTIM    rank to kill; default: the rank other than 0 whose KVS server
 *             owns the most entries "addr/<r>" when every rank is its own
 *             node (the owner of a key is fnv1a64(key) mod nodes, see
 *             src/llc/kvs/kvs.cpp)
 *   DELAY_US  the victim dies this long after the barrier (default: a
 *             random 0..2000 us, so that runs cover lookups before, during
 *             and after the death)
 *
 * Every survivor whose communication fails prints one line
 *   fault_kvs_leader: rank R: error after T s: MESSAGE
 * and aborts the job after 0.5 s (time for the launcher to forward the
 * line).  The driver (test/run-all, test/fault/kvs_leader_campaign) checks
 * the time to the end and that the messages name the victim and no other
 * rank as failed. */
#include "check.h"
#include "fault_hold.h"
#include <stdint.h>
#include <sys/time.h>

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char) *s;
        h *= 1099511628211ull;
    }
    return h;
}

/* rank (!= 0) owning the most keys when each rank is its own node */
static int busiest_leader(int size)
{
    int best = size - 1, best_n = -1;
    for (int owner = 1; owner < size; owner++) {
        int n = 0;
        for (int r = 0; r < size; r++) {
            char key[32];
            snprintf(key, sizeof(key), "addr/%d", r);
            if ((int) (fnv1a64(key) % (uint64_t) size) == owner && r != owner)
                n++;
        }
        if (n > best_n) {
            best_n = n;
            best = owner;
        }
    }
    return best;
}

int main(int argc, char **argv)
{
    int rank, size, victim, others = 0;
    long delay_us;
    fault_hold(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "-others") == 0) {
        others = 1;
        argc--;
        argv++;
    }
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 3, "needs 3 ranks");
    victim = argc > 1 ? atoi(argv[1]) : busiest_leader(size);
    CHECK(victim >= 0 && victim < size, "victim %d out of range", victim);
    if (argc > 2) {
        delay_us = atol(argv[2]);
    } else {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        srand((unsigned) (tv.tv_usec ^ getpid()));
        delay_us = rand() % 2001;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0)
        printf("fault_kvs_leader: %d ranks, victim %d\n", size, victim);
    fflush(stdout);
    /* no barrier: one over MPI_COMM_WORLD would make first contacts
     * already; the fences at the end of MPI_Init line the ranks up */
    if (rank == victim) {
        fprintf(stderr, "fault_kvs_leader: rank %d (a KVS node leader) dies in %ld us\n", rank, delay_us);
        fflush(stderr);
        if (delay_us > 0)
            usleep((useconds_t) delay_us);
        raise(SIGKILL);
    }
    {
        int *out = malloc(sizeof(int) * (size_t) size), *in = malloc(sizeof(int) * (size_t) size);
        MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t) size);
        MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t) size);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0, n = 0, err;
        double t0 = MPI_Wtime();
        /* first contact to every other rank, in a different order on each */
        for (int i = 1; i < size; i++) {
            int to = (rank + i) % size, from = (rank - i + size) % size;
            if (others && (to == victim || from == victim))
                continue; /* (with 2 survivors, pairs stay matched) */
            out[to] = rank;
            err = MPI_Irecv(&in[from], 1, MPI_INT, from, 0, MPI_COMM_WORLD, &req[n]);
            if (err != MPI_SUCCESS)
                goto failed;
            n++;
            err = MPI_Isend(&out[to], 1, MPI_INT, to, 0, MPI_COMM_WORLD, &req[n]);
            if (err != MPI_SUCCESS)
                goto failed;
            n++;
        }
        err = MPI_Waitall(n, req, st);
        if (err == MPI_SUCCESS) { /* the victim's messages were never sent */
            fprintf(stderr, "fault_kvs_leader: rank %d: received from the dead rank %d?\n", rank, victim);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (err == MPI_ERR_IN_STATUS) /* the first failed request's error */
            for (int i = 0; i < n && err == MPI_ERR_IN_STATUS; i++)
                if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
                    err = st[i].MPI_ERROR;
      failed:
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "fault_kvs_leader: rank %d: error after %.2f s: %s\n", rank, MPI_Wtime() - t0, msg);
        fflush(stderr);
        usleep(500000);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return 0;
}
