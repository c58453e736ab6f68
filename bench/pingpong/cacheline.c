/* bench/pingpong/cacheline.c -- the hardware's floor for a message within a
 * node: how long one cache line takes to go from one core to the other and
 * back, between two processes that share memory, as every MPI's
 * shared-memory path does at least once per small message.
 *
 *   cacheline [--rounds N] [--repeat R] [--cpus A,B]
 *
 * Two processes (fork) bounce a counter in one 64-byte line of a shared
 * anonymous mapping: the parent writes an odd value and spins until it sees
 * the next even one, the child answers each odd value with the next even
 * one.  One round is one line round trip (two transfers); the program
 * prints the median over --repeat runs of --rounds rounds each, in
 * nanoseconds per round trip and per one-way transfer, and the spread.
 * --cpus pins the two processes (default 0,1; -1,-1 leaves them to the
 * scheduler).  No MPI: it measures the machine, so that a within-node
 * latency or rate can be read as a number of line transfers
 * (doc/bench-pingpong.md). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared_line {
    _Alignas(64) volatile uint64_t value;
    char pad[56];
};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "cacheline: cannot pin to CPU %d (sched_setaffinity); try --cpus -1,-1\n", cpu);
        exit(2);
    }
}

/* The child answers for ever: if it dies, the parent must not spin. */
static void child_gone(int sig)
{
    (void) sig;
    static const char msg[] = "cacheline: the answering process died\n";
    (void) !write(2, msg, sizeof(msg) - 1);
    _exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static void usage(void)
{
    fprintf(stderr, "usage: cacheline [--rounds N] [--repeat R] [--cpus A,B]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long rounds = 200000, repeat = 9;
    int cpu_a = 0, cpu_b = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atol(argv[++i]);
        else if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d", &cpu_a, &cpu_b) != 2)
                usage();
        } else
            usage();
    }
    if (rounds < 1 || repeat < 1 || repeat > 1000)
        usage();

    struct shared_line *line = mmap(NULL, sizeof(*line), PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED) {
        perror("cacheline: mmap");
        return 2;
    }
    line->value = 0;
    double *ns = calloc((size_t) repeat, sizeof(double));
    if (ns == NULL) {
        perror("cacheline: calloc");
        return 2;
    }
    /* both CPUs usable, checked before either process spins */
    pin(cpu_b);
    pin(cpu_a);
    signal(SIGCHLD, child_gone);
    const uint64_t total = (uint64_t) rounds * (uint64_t) repeat;
    pid_t child = fork();
    if (child < 0) {
        perror("cacheline: fork");
        return 2;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* and the child must not outlive the parent */
        if (getppid() == 1)
            _exit(1);
        pin(cpu_b);
        for (uint64_t k = 1; k <= total; k++) {
            while (line->value != 2 * k - 1)
                ;
            line->value = 2 * k;
        }
        _exit(0);
    }
    uint64_t k = 0;
    for (long r = 0; r < repeat; r++) {
        double t0 = now_ns();
        for (long i = 0; i < rounds; i++) {
            k++;
            line->value = 2 * k - 1;
            while (line->value != 2 * k)
                ;
        }
        ns[r] = (now_ns() - t0) / (double) rounds;
    }
    int status = 0;
    signal(SIGCHLD, SIG_DFL);
    waitpid(child, &status, 0);
    qsort(ns, (size_t) repeat, sizeof(double), cmp_double);
    double median = ns[repeat / 2];
    printf("# cpus round_trip_ns_median one_way_ns min_ns max_ns rounds repeat\n");
    printf("%d,%d %.1f %.1f %.1f %.1f %ld %ld\n", cpu_a, cpu_b, median, median / 2, ns[0],
           ns[repeat - 1], rounds, repeat);
    free(ns);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
