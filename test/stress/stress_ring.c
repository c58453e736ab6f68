/* stress_ring - one short job of test/stress/run (part A).
 *
 * stress_ring JOB: a token with a payload (size depends on JOB: 4 B .. 256 KiB,
 * so both eager and large-message paths come up) goes 3 times around the
 * ring, every rank checking and extending it; then an allreduce of a vector
 * of longs whose sum every rank knows.  Rank 0 prints
 *   stress_ring: job JOB np N OK sum S
 * with S = (JOB + 1) * N * (N + 1) / 2, which the driver checks.
 *
 * Testing the driver's checks (through test/stress/run --env VAR=VAL):
 *   STRESS_RING_WRONG=J   job J prints a wrong sum
 *   STRESS_RING_STRAY=J   in job J rank 0 leaves a process behind (sleep 30 in a
 *                         session of its own, stdio on /dev/null, no other fds)
 *   STRESS_RING_SHM=J     job J leaves a file /dev/shm/llc-stress-selftest-PID
 *   STRESS_RING_STALL=J   in job J rank 0 sleeps 20 s before MPI_Finalize
 */
#include "../mpi/check.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int env_is_job(const char *name, long job)
{
    const char *v = getenv(name);
    return v && *v && atol(v) == job;
}

int main(int argc, char **argv)
{
    int rank, size;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long job = argc > 1 ? atol(argv[1]) : 0;
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

    /* ring: payload of n ints, element i = job + i + (ranks passed so far) */
    int n = 1 << (job % 17); /* 1 .. 65536 ints */
    int *buf = malloc(sizeof(int) * n);
    CHECK(buf != NULL, "out of memory");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                buf[i] = (int) job + i;
            CHECK_MPI(MPI_Send(buf, n, MPI_INT, next, round, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(buf, n, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == (int) job + i + size - 1, "round %d: element %d is %d, expected %d",
                      round, i, buf[i], (int) job + i + size - 1);
        } else {
            CHECK_MPI(MPI_Recv(buf, n, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++) {
                CHECK(buf[i] == (int) job + i + rank - 1, "round %d: element %d is %d, expected %d",
                      round, i, buf[i], (int) job + i + rank - 1);
                buf[i]++;
            }
            CHECK_MPI(MPI_Send(buf, n, MPI_INT, next, round, MPI_COMM_WORLD));
        }
    }
    free(buf);

    /* allreduce: element i of rank r is (job + 1) * (r + 1) + i */
    enum { V = 1000 };
    long in[V], out[V];
    for (int i = 0; i < V; i++)
        in[i] = (job + 1) * (rank + 1) + i;
    CHECK_MPI(MPI_Allreduce(in, out, V, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    long tri = (long) size * (size + 1) / 2;
    for (int i = 0; i < V; i++)
        CHECK(out[i] == (job + 1) * tri + (long) i * size, "allreduce element %d is %ld, expected %ld",
              i, out[i], (job + 1) * tri + (long) i * size);

    if (rank == 0) {
        if (env_is_job("STRESS_RING_STRAY", job) && fork() == 0) {
            /* a daemon of its own session: out of reach of hydra's clean-up */
            setsid();
            if (fork() == 0) {
                int null = open("/dev/null", O_RDWR);
                for (int fd = 0; fd < 3; fd++)
                    dup2(null, fd);
                for (int fd = 3; fd < 1024; fd++)
                    close(fd);
                execlp("sleep", "sleep", "30", (char *) NULL);
            }
            _exit(0);
        }
        if (env_is_job("STRESS_RING_SHM", job)) {
            char name[64];
            snprintf(name, sizeof name, "/dev/shm/llc-stress-selftest-%d", (int) getpid());
            int fd = open(name, O_CREAT | O_WRONLY, 0600);
            if (fd >= 0)
                close(fd);
        }
        if (env_is_job("STRESS_RING_STALL", job))
            sleep(20);
        long sum = out[0] + (env_is_job("STRESS_RING_WRONG", job) ? 1 : 0);
        printf("stress_ring: job %ld np %d OK sum %ld\n", job, size, sum);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
