/* Passive target while the target computes outside MPI.  Run with MPICH's
 * progress thread on (MPIR_CVAR_ASYNC_PROGRESS=1, which needs
 * MPI_THREAD_MULTIPLE: MPI_Init raises any level asked for to it; this
 * program asks for it itself so that it also runs without).  Rank 0 locks the window of
 * the last rank exclusively, puts 64 KiB, accumulates 256 ints, gets 256
 * bytes the target wrote before, fetch-and-adds a counter and unlocks; then
 * it puts a flag in a second (shared) epoch.  The last rank makes no MPI
 * call meanwhile: it watches its own window for the flag, for up to
 * --wait seconds (default 60), and then checks every byte.  Without a
 * thread that serves the target's side, MPI_Win_lock of an MPI_Win_create
 * window (and over the network every put and get) waits until the target
 * calls MPI again, and the flag never comes: without MPIR_CVAR_ASYNC_PROGRESS
 * the program then fails after --wait seconds, saying so.  An
 * MPI_Win_allocate window whose processes are all on one node needs no
 * thread: the llc netmod locks it with a lock word in the window's segment
 * and the origin does every operation itself.
 *
 * Rank 0 starts only after 1 s, so the target's process is idle that long
 * with its progress thread running: its CPU time over that second must stay
 * under half of it (the thread sleeps when there is nothing to do; a thread
 * that spun would take a whole CPU).
 *
 * With "stop", the target stops itself instead (SIGSTOP: alive, sockets
 * open, silent, like a host that dropped off the network) and rank 0's
 * passive epoch must end in an error, not wait forever: it prints the
 * error and the time it took and aborts the job with exit code 2.
 *
 * Usage: rma_passive_progress [create] [stop] [--wait SECONDS]
 *   create: a window of MPI_Win_create over malloc'ed memory (default
 *   MPI_Win_allocate). */
#include "check.h"

#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#define PUT_BYTES 65536
#define ACC_INTS 256
#define GET_BYTES 256
/* window layout, in bytes */
#define PUT_OFF 0
#define ACC_OFF PUT_BYTES
#define GET_OFF (ACC_OFF + ACC_INTS * 4)
#define CNT_OFF (GET_OFF + GET_BYTES)
#define FLAG_OFF (CNT_OFF + 8)
#define WIN_BYTES (FLAG_OFF + 8)
#define FLAG 0x5eed
#define COUNTER_START 41

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

/* The target: no MPI call until the flag is in its window. */
static void serve_outside_mpi(unsigned char *base, double wait_s)
{
    int32_t *flag = (int32_t *) (base + FLAG_OFF);
    double t0 = mono_seconds(), c0 = cpu_seconds(), idle_wall = 0, idle_cpu = 0, t;
    int seen = 0;

    for (;;) {
        t = mono_seconds();
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == FLAG) {
            seen = 1;
            break;
        }
        if (idle_wall == 0 && t - t0 >= 0.8) {
            /* rank 0 waits 1 s before its first call: this much was idle */
            idle_wall = t - t0;
            idle_cpu = cpu_seconds() - c0;
        }
        if (t - t0 > wait_s)
            break;
        nap_us(1000);
    }
    CHECK(seen, "the target's window did not get rank 0's flag in %.0f s while the target "
          "stayed outside MPI: passive-target operations made no progress without it "
          "(is MPIR_CVAR_ASYNC_PROGRESS=1 set?)", wait_s);
    CHECK(idle_wall > 0, "rank 0's operations came after %.2f s, before the 1 s it waits: the "
          "idle CPU time could not be measured", mono_seconds() - t0);
    CHECK(idle_cpu < 0.5 * idle_wall, "the target process used %.2f s of CPU in %.2f s with "
          "nothing to do: its progress thread spins instead of sleeping", idle_cpu, idle_wall);
    printf("rma_passive_progress: target idle %.2f s, CPU %.3f s; flag after %.2f s\n",
           idle_wall, idle_cpu, t - t0);
}

static void check_target_memory(const unsigned char *base)
{
    const int32_t *acc = (const int32_t *) (base + ACC_OFF);
    int64_t counter;
    for (int i = 0; i < PUT_BYTES; i++)
        if (base[PUT_OFF + i] != pattern(7, (size_t) i))
            CHECK(0, "put byte %d is %u, expected %u", i, base[PUT_OFF + i], pattern(7, (size_t) i));
    for (int i = 0; i < ACC_INTS; i++)
        CHECK(acc[i] == i + 1000 * (i % 7), "accumulated int %d is %d, expected %d", i, acc[i],
              i + 1000 * (i % 7));
    memcpy(&counter, base + CNT_OFF, sizeof(counter));
    CHECK(counter == COUNTER_START + 1, "the fetch-and-add counter is %lld, expected %d",
          (long long) counter, COUNTER_START + 1);
}

static void origin(MPI_Win win, int target)
{
    unsigned char *put = malloc(PUT_BYTES), got[GET_BYTES];
    int32_t add[ACC_INTS], flag = FLAG;
    int64_t one = 1, fetched = -1;
    CHECK(put != NULL, "malloc");
    for (int i = 0; i < PUT_BYTES; i++)
        put[i] = pattern(7, (size_t) i);
    for (int i = 0; i < ACC_INTS; i++)
        add[i] = 1000 * (i % 7);

    nap_us(1000000);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(put, PUT_BYTES, MPI_BYTE, target, PUT_OFF, PUT_BYTES, MPI_BYTE, win));
    CHECK_MPI(MPI_Accumulate(add, ACC_INTS, MPI_INT32_T, target, ACC_OFF, ACC_INTS, MPI_INT32_T,
                             MPI_SUM, win));
    CHECK_MPI(MPI_Get(got, GET_BYTES, MPI_BYTE, target, GET_OFF, GET_BYTES, MPI_BYTE, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, target, CNT_OFF, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    for (int i = 0; i < GET_BYTES; i++)
        CHECK(got[i] == pattern(9, (size_t) i), "got byte %d is %u, expected %u", i, got[i],
              pattern(9, (size_t) i));
    CHECK(fetched == COUNTER_START, "fetch-and-add returned %lld, expected %d",
          (long long) fetched, COUNTER_START);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Put(&flag, 1, MPI_INT32_T, target, FLAG_OFF, 1, MPI_INT32_T, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    free(put);
}

/* Rank 0 against a target that stopped: lock, put and unlock, errors
 * returned; one of them must fail. */
static void origin_of_stopped_target(MPI_Win win, int target)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    unsigned char byte = 1;
    int err, len = 0;
    double t0;
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    nap_us(500000);
    t0 = mono_seconds();
    err = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    if (err == MPI_SUCCESS)
        err = MPI_Put(&byte, 1, MPI_BYTE, target, PUT_OFF, 1, MPI_BYTE, win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_unlock(target, win);
    CHECK(err != MPI_SUCCESS, "a passive epoch on the window of a stopped process succeeded");
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "rma_passive_progress: rank 0: the epoch on stopped rank %d failed after "
            "%.1f s: %s\n", target, mono_seconds() - t0, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, nprocs, provided, target, create = 0, stop = 0;
    double wait_s = 60;
    unsigned char *base = NULL, *mem = NULL;
    MPI_Win win;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "create") == 0)
            create = 1;
        else if (strcmp(argv[i], "stop") == 0)
            stop = 1;
        else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc)
            wait_s = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: rma_passive_progress [create] [stop] [--wait SECONDS]\n");
            return 2;
        }
    }
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(nprocs >= 2, "needs 2 or more processes");
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided level %d, not "
          "MPI_THREAD_MULTIPLE, which MPICH's progress thread needs", provided);
    target = nprocs - 1;

    if (create) {
        mem = calloc(1, WIN_BYTES);
        CHECK(mem != NULL, "malloc");
        CHECK_MPI(MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        base = mem;
    } else {
        CHECK_MPI(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    memset(base, 0, WIN_BYTES);
    if (rank == target) {
        int64_t c = COUNTER_START;
        for (int i = 0; i < ACC_INTS; i++)
            ((int32_t *) (base + ACC_OFF))[i] = i;
        for (int i = 0; i < GET_BYTES; i++)
            base[GET_OFF + i] = pattern(9, (size_t) i);
        memcpy(base + CNT_OFF, &c, sizeof(c));
    }
    /* the target's window is ready before anybody reaches it */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    if (stop) {
        if (rank == target)
            raise(SIGSTOP);
        else if (rank == 0)
            origin_of_stopped_target(win, target);
        /* the others wait here until rank 0 ends the job */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(0, "the job went on past a stopped process");
    }
    if (rank == target) {
        serve_outside_mpi(base, wait_s);
        check_target_memory(base);
    } else if (rank == 0) {
        origin(win, target);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    if (rank == 0)
        printf("rma_passive_progress: %d processes, %s window: lock, put, accumulate, get, "
               "fetch-and-op and unlock served while the target stayed outside MPI: OK\n",
               nprocs, create ? "MPI_Win_create" : "MPI_Win_allocate");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
