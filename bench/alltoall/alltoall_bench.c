/* Alltoall benchmark: times N calls of MPI_Alltoall for each of the nine
 * algorithms, the dynamic choice with and without pruning, and the MPI's
 * own, for each message size (bytes per destination rank).  Run with
 * LD_PRELOAD=.../libllccoll_pmpi.so (otherwise every line is the MPI's own
 * algorithm; the header says so).  Like the paper's STAR benchmark, the
 * dynamic modes include their learning calls in the average.  Dynamic modes:
 * auto (pruning, the nine + the MPI's own as tenth candidate), auto-noprune
 * (LLC_ALLTOALL_PRUNE=0), auto-nine (LLC_ALLTOALL_NATIVE=0: the nine only),
 * auto-nostop (LLC_ALLTOALL_MODEL_STOP=0: a cut-off candidate does not take
 * the ones the model ranks behind it along); these learn in this run
 * (LLC_ALLTOALL_DECISIONS=off).  auto-warm: a later run of the same job, which
 * starts from the decisions an earlier run kept (LLC_ALLTOALL_DECISIONS):
 * an untimed run of `calls` calls learns and writes the file
 * ($LLC_BENCH_DECISIONS, else a file under /tmp removed at the end), then the
 * timed calls run on a fresh communicator that reads it.
 *   alltoall_bench [-n calls] [-s size[,size...]] [-m mode[,mode...]]
 * Output: one line per (size, mode): avg us per call (max over ranks), the
 * slowdown against the fastest line of that size and, for the dynamic modes,
 * the learning phase: calls spent learning and their total time (ms, max
 * over ranks), from llc_coll_alltoall_learning() when the library has it.
 * -r R repeats the whole mode list R times (interleaved: drifts of the
 * machine's load hit every mode alike); the line shows the mean over the
 * repetitions.  Before the modes of each size, two untimed calls of the
 * MPI's own Alltoall warm the connections up. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *all_modes =
    "bruck,pairwise,pairwise_lb,pairwise_mb,pairwise_ob,ring,ring_lb,ring_mb,ring_ob,"
    "auto,auto-noprune,auto-nine,auto-nostop,auto-warm,mpich";

int main(int argc, char **argv)
{
    int calls = 20, reps = 1;
    const char *sizes = "16384,1048576", *modes = all_modes;
    int opt;
    while ((opt = getopt(argc, argv, "n:s:m:r:")) != -1) {
        if (opt == 'n')
            calls = atoi(optarg);
        else if (opt == 's')
            sizes = optarg;
        else if (opt == 'm')
            modes = optarg;
        else if (opt == 'r')
            reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
    }
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    /* auto-warm's decision file (only rank 0 reads and writes it) */
    char decisions[4096];
    const char *keep = getenv("LLC_BENCH_DECISIONS");
    snprintf(decisions, sizeof decisions, "%s", keep ? keep : "");
    if (!keep)
        snprintf(decisions, sizeof decisions, "/tmp/alltoall_bench_decisions.%d", (int)getpid());
    typedef void (*learn_fn)(double *, long *, long *);
    learn_fn learning = (learn_fn)dlsym(RTLD_DEFAULT, "llc_coll_alltoall_learning");
    if (rank == 0)
        printf("# alltoall_bench: P=%d calls=%d reps=%d llc_coll %s, learning stats %s\n"
               "# %10s %-14s %12s %8s %8s %10s\n",
               P, calls, reps, dlsym(RTLD_DEFAULT, "llc_coll_alltoall") ? "present" : "NOT loaded",
               learning ? "yes" : "no", "bytes", "mode", "avg_us", "vs_best", "lrn_calls",
               "lrn_ms");
    char *sz = strdup(sizes);
    for (char *ss = strtok(sz, ","); ss; ss = strtok(NULL, ",")) {
        long bytes = atol(ss);
        char *buf_s = malloc(bytes * P), *buf_r = malloc(bytes * P);
        memset(buf_s, rank, bytes * P);
        /* warm-up, not timed: the MPI's own Alltoall on a duplicate for
         * about a quarter of a second (at least 2 calls, at most 200), so
         * that no mode (the first one of the job especially) pays the first
         * contact between the processes or the growth of their pools: with
         * 2 calls only, 8 ranks on 2 CPUs at 16 KiB, the first mode of a
         * job took 1.7-2x the same mode later in the job */
        {
            MPI_Comm w;
            setenv("LLC_ALLTOALL", "mpich", 1);
            MPI_Comm_dup(MPI_COMM_WORLD, &w);
            double t = MPI_Wtime(), tmax;
            for (int i = 0; i < 2; i++)
                MPI_Alltoall(buf_s, (int) bytes, MPI_BYTE, buf_r, (int) bytes, MPI_BYTE, w);
            t = (MPI_Wtime() - t) / 2;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, w);
            int more = tmax > 0 ? (int) (0.25 / tmax) : 198;
            more = more < 0 ? 0 : more > 198 ? 198 : more;
            for (int i = 0; i < more; i++)
                MPI_Alltoall(buf_s, (int) bytes, MPI_BYTE, buf_r, (int) bytes, MPI_BYTE, w);
            MPI_Comm_free(&w);
        }
        char names[32][32];
        double avg[32] = {0}, lrn_ms[32] = {0};
        long lrn_calls[32] = {0};
        int nm = 0;
        for (int rep = 0; rep < reps; rep++) {
            char *md = strdup(modes), *save = NULL;
            nm = 0;
            for (char *m = strtok_r(md, ",", &save); m && nm < 32; m = strtok_r(NULL, ",", &save)) {
                int noprune = strcmp(m, "auto-noprune") == 0;
                int nine = strcmp(m, "auto-nine") == 0; /* without the MPI's own */
                int nostop = strcmp(m, "auto-nostop") == 0;
                int warm = strcmp(m, "auto-warm") == 0;
                setenv("LLC_ALLTOALL", noprune || nine || nostop || warm ? "auto" : m, 1);
                setenv("LLC_ALLTOALL_DECISIONS", warm ? decisions : "off", 1);
                if (nostop)
                    setenv("LLC_ALLTOALL_MODEL_STOP", "0", 1);
                else
                    unsetenv("LLC_ALLTOALL_MODEL_STOP");
                if (nine)
                    setenv("LLC_ALLTOALL_NATIVE", "0", 1);
                else
                    unsetenv("LLC_ALLTOALL_NATIVE");
                if (noprune)
                    setenv("LLC_ALLTOALL_PRUNE", "0", 1);
                else if (!getenv("LLC_BENCH_KEEP_PRUNE"))
                    unsetenv("LLC_ALLTOALL_PRUNE");
                if (warm) { /* the earlier run: learns and writes the file, untimed */
                    MPI_Comm prime;
                    if (rank == 0 && !keep)
                        remove(decisions);
                    MPI_Comm_dup(MPI_COMM_WORLD, &prime);
                    for (int i = 0; i < calls; i++)
                        MPI_Alltoall(buf_s, (int)bytes, MPI_BYTE, buf_r, (int)bytes, MPI_BYTE, prime);
                    MPI_Comm_free(&prime);
                }
                double ls0 = 0, ls1 = 0;
                long lc0 = 0, lc1 = 0;
                if (learning)
                    learning(&ls0, &lc0, NULL);
                MPI_Comm comm; /* fresh state: reads the environment */
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                MPI_Barrier(comm);
                double t0 = MPI_Wtime();
                for (int i = 0; i < calls; i++)
                    MPI_Alltoall(buf_s, (int)bytes, MPI_BYTE, buf_r, (int)bytes, MPI_BYTE, comm);
                double t = (MPI_Wtime() - t0) / calls, tmax;
                MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
                if (learning)
                    learning(&ls1, &lc1, NULL);
                double lt = ls1 - ls0, ltmax;
                MPI_Reduce(&lt, &ltmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
                MPI_Comm_free(&comm);
                snprintf(names[nm], sizeof names[nm], "%s", m);
                avg[nm] += tmax / reps;
                lrn_ms[nm] += ltmax * 1e3 / reps;
                lrn_calls[nm] = lc1 - lc0;
                if (rank == 0) /* progress */
                    fprintf(stderr, "  [rep %d] %ld %s %.1f us\n", rep + 1, bytes, m, tmax * 1e6);
                nm++;
            }
            free(md);
        }
        if (rank == 0) {
            double best = 1e30;
            for (int i = 0; i < nm; i++)
                best = avg[i] < best ? avg[i] : best;
            for (int i = 0; i < nm; i++)
                printf("  %10ld %-14s %12.1f %8.2f %8ld %10.1f\n", bytes, names[i], avg[i] * 1e6,
                       avg[i] / best, lrn_calls[i], lrn_ms[i]);
        }
        fflush(stdout);
        free(buf_s);
        free(buf_r);
    }
    free(sz);
    if (rank == 0 && !keep)
        remove(decisions);
    MPI_Finalize();
    return 0;
}
