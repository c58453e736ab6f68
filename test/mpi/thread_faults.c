/* MPI_THREAD_MULTIPLE used wrongly, or peers that die: the job must end with
 * an error that says what happened, within a bounded time, never hang.
 *
 * Usage: thread_faults [-hold] finalize|kill|exit [threads (default 3)]
 *
 * finalize: on rank 0, threads wait in MPI_Recv (from rank 1, and from
 *   MPI_ANY_SOURCE) for messages nobody sends, and another thread calls
 *   MPI_Finalize meanwhile; the other ranks finalize as usual.  MPI says
 *   every thread must have left MPI before MPI_Finalize is called; the
 *   program is erroneous, and the job must end with a message naming that.
 * kill, exit: the last rank SIGKILLs itself (kill) or leaves with _exit
 *   without MPI_Finalize (exit) while the threads of every other rank wait
 *   in MPI_Recv from it (named source, several tags, and MPI_ANY_SOURCE),
 *   with MPI_ERRORS_RETURN.  Each waiting thread prints
 *   "thread_faults: rank R thread T: error after S s: MESSAGE"; when all
 *   have, the rank leaves with MPI_Abort (exit code 2).  With -hold
 *   (fault_hold.h) the launcher does not see a killed rank die, so only the
 *   netmod can end the waits (test/mpi/fault_campaign checks the errors
 *   name the dead rank). */
#include "check.h"
#include "fault_hold.h"
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static int rank, size, nthreads = 3;
static int errors; /* atomic */
static double t_start;

static void *waiter(void *arg)
{
    int t = (int) (intptr_t) arg, v = 0, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    int src = (t == 0) ? MPI_ANY_SOURCE : size - 1;
    int err = MPI_Recv(&v, 1, MPI_INT, src, 10 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS) {
        fprintf(stderr, "thread_faults: rank %d thread %d: received from a rank that is gone?\n", rank, t);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "thread_faults: rank %d thread %d: error after %.2f s: %s\n", rank, t, MPI_Wtime() - t_start,
            msg);
    fflush(stderr);
    __atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void *never_matched(void *arg)
{
    int t = (int) (intptr_t) arg, v = 0;
    int err = MPI_Recv(&v, 1, MPI_INT, (t % 2) ? 1 : MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "thread_faults: rank %d thread %d: MPI_Recv returned %d after MPI_Finalize\n", rank, t, err);
    fflush(stderr);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    fault_hold(&argc, &argv);
    CHECK(argc > 1, "usage: thread_faults [-hold] finalize|kill|exit [threads]");
    const char *mode = argv[1];
    if (argc > 2)
        nthreads = atoi(argv[2]);
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE requested, %d provided", provided);
    CHECK(size >= 2 && nthreads >= 1 && nthreads <= 32, "needs 2 ranks, 1..32 threads");
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t) nthreads);
    CHECK(th, "out of memory");

    if (strcmp(mode, "finalize") == 0) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            for (int t = 0; t < nthreads; t++)
                CHECK(pthread_create(&th[t], NULL, never_matched, (void *) (intptr_t) t) == 0, "pthread_create");
            usleep(300000); /* the threads are inside MPI_Recv by now */
            fprintf(stderr, "thread_faults: rank 0 calls MPI_Finalize while %d threads wait in MPI_Recv\n",
                    nthreads);
            fflush(stderr);
        }
        MPI_Finalize();
        fprintf(stderr, "thread_faults: rank %d: MPI_Finalize returned\n", rank);
        return rank == 0 ? 1 : 0; /* rank 0 should not get here with threads still in MPI */
    }

    CHECK(strcmp(mode, "kill") == 0 || strcmp(mode, "exit") == 0, "mode: finalize, kill or exit");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    t_start = MPI_Wtime();
    if (rank != size - 1)
        for (int t = 0; t < nthreads; t++)
            CHECK(pthread_create(&th[t], NULL, waiter, (void *) (intptr_t) t) == 0, "pthread_create");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        usleep(200000); /* the others' threads are waiting by now */
        fprintf(stderr, "thread_faults: rank %d is going away now (%s)\n", rank, mode);
        fflush(stderr);
        if (strcmp(mode, "exit") == 0)
            _exit(3);
        raise(SIGKILL);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    fprintf(stderr, "thread_faults: rank %d: all %d waiting threads got an error\n", rank,
            __atomic_load_n(&errors, __ATOMIC_RELAXED));
    fflush(stderr);
    usleep(300000); /* let the launcher forward the lines before the abort */
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
}
