/* fault_hold.h - "-hold" for the fault tests: keep the launcher from seeing
 * a rank's death, so that only libllc can report it.
 *
 * fault_hold(&argc, &argv), first thing in main: with argv[1] == "-hold" the
 * process forks; the child returns (it is the MPI process, argv without
 * "-hold"), the parent (the launcher's child) waits for it and, if it was
 * killed by SIGKILL, stays until the job's cleanup kills it (the child dies
 * with the parent: PR_SET_PDEATHSIG).  That is a node that dropped off the
 * network, or a launcher that is slow to notice.  Without -hold, Hydra sees
 * the SIGKILL and ends the job within a second with "BAD TERMINATION ...
 * EXIT CODE: 9", which names no rank. */
#ifndef LLC_TEST_FAULT_HOLD_H
#define LLC_TEST_FAULT_HOLD_H
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void fault_hold(int *argc, char ***argv)
{
    pid_t child;
    if (*argc < 2 || strcmp((*argv)[1], "-hold") != 0)
        return;
    child = fork();
    if (child < 0) {
        perror("fault_hold: fork");
        _exit(1);
    }
    if (child > 0) {
        int status = 0;
        while (waitpid(child, &status, 0) < 0)
            ;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            for (;;)
                pause(); /* the launcher must not see the death */
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    (*argv)[1] = (*argv)[0];
    (*argc)--;
    (*argv)++;
}
#endif
