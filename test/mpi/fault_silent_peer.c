/* Fault test (doc/reliability.md, "The fault campaign"): a rank dies while
 * the others wait for something from it that is not a message in flight,
 * so that no transport has anything of theirs outstanding to it, nor a
 * message from it half received:
 *   recv   rank 0 waits in MPI_Recv for a message the victim never sends;
 *   lock   (3 ranks or more) rank 1 holds an exclusive lock on the victim's
 *          window (MPI_Win_create: between nodes the grant is the target's
 *          message), and rank 0 waits in MPI_Win_lock for a grant the
 *          victim has queued and never sends.
 * The victim (the last rank) stays in MPI progress for 500 ms, so that it
 * has read and acknowledged everything (rank 0's lock request queued), and
 * then raises SIGKILL.  Run with -hold (fault_hold.h) so that only the MPI
 * library can report the death.  udp used to leave rank 0 waiting until
 * the job was killed: it watched only peers it had data outstanding to.
 *
 * Usage: fault_silent_peer [-hold] recv|lock
 * Rank 0 prints "fault_silent_peer: rank 0: error after T s: MESSAGE" and
 * aborts the job (exit code 2); a wait that returned success is a failure
 * (exit code 1). */
#include "check.h"
#include "fault_hold.h"

#define VICTIM_PROGRESS_S 0.5

int main(int argc, char **argv)
{
    int rank, size, victim, err, lock_mode, token = 0, *base = NULL;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    double t0;
    MPI_Win win = MPI_WIN_NULL;
    fault_hold(&argc, &argv);
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1 && (strcmp(argv[1], "recv") == 0 || strcmp(argv[1], "lock") == 0),
          "usage: fault_silent_peer [-hold] recv|lock");
    lock_mode = strcmp(argv[1], "lock") == 0;
    CHECK(size >= (lock_mode ? 3 : 2), "needs %d ranks", lock_mode ? 3 : 2);
    victim = size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (lock_mode) {
        CHECK_MPI(MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &base));
        *base = 0;
        CHECK_MPI(MPI_Win_create(base, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    }
    /* first contact between every pair, so that the wait below is all that is left */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &token, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == victim) {
        double until = MPI_Wtime() + VICTIM_PROGRESS_S;
        int flag;
        while (MPI_Wtime() < until) {
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        fprintf(stderr, "fault_silent_peer: rank %d dies now (SIGKILL)\n", rank);
        fflush(stderr);
        kill(getpid(), SIGKILL);
        for (;;)
            pause();
    }
    if (lock_mode && rank == 1) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, victim, 0, win));
        CHECK_MPI(MPI_Put(&rank, 1, MPI_INT, victim, 0, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(victim, win));
        CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD)); /* "I hold it" */
        /* then wait for rank 0's abort: a message from it that never comes
         * (the library may fail this receive too once it knows the victim
         * died; either way rank 0 alone reports) */
        MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (;;)
            pause();
    }
    if (rank == 0) {
        if (lock_mode)
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        t0 = MPI_Wtime();
        if (lock_mode)
            err = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, victim, 0, win);
        else
            err = MPI_Recv(&token, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(err != MPI_SUCCESS, "%s returned success, but rank %d never %s", lock_mode ? "MPI_Win_lock" : "MPI_Recv",
              victim, lock_mode ? "released its lock to us" : "sent");
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "fault_silent_peer: rank 0: error after %.2f s: %s\n", MPI_Wtime() - t0, msg);
        fflush(stderr);
        /* give the launcher time to forward that line: MPI_Abort ends the job */
        usleep(500000);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the others (np > 3): wait for rank 0's abort */
    for (;;)
        pause();
    return 0;
}
