/* Alltoall benchmark: times N calls of MPI_Alltoall for each of the nine
 * algorithms, the dynamic choice with and without pruning, and the MPI's
 * own, for each message size (bytes per destination rank).  Run with
 * LD_PRELOAD=.../libllccoll_pmpi.so (otherwise every line is the MPI's own
 * algorithm; the header says so).  Like the paper's STAR benchmark, the
 * dynamic modes include their learning calls in the average.
 *   alltoall_bench [-n calls] [-s size[,size...]] [-m mode[,mode...]]
 * Output: one line per (size, mode): avg us per call (max over ranks), and
 * the slowdown against the fastest line of that size. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *all_modes =
    "bruck,pairwise,pairwise_lb,pairwise_mb,pairwise_ob,ring,ring_lb,ring_mb,ring_ob,"
    "auto,auto-noprune,mpich";

int main(int argc, char **argv)
{
    int calls = 20;
    const char *sizes = "16384,1048576", *modes = all_modes;
    int opt;
    while ((opt = getopt(argc, argv, "n:s:m:")) != -1) {
        if (opt == 'n')
            calls = atoi(optarg);
        else if (opt == 's')
            sizes = optarg;
        else if (opt == 'm')
            modes = optarg;
    }
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (rank == 0)
        printf("# alltoall_bench: P=%d calls=%d llc_coll %s\n# %10s %-14s %12s %8s\n", P, calls,
               dlsym(RTLD_DEFAULT, "llc_coll_alltoall") ? "interposed" : "NOT loaded", "bytes",
               "mode", "avg_us", "vs_best");
    char *sz = strdup(sizes);
    for (char *ss = strtok(sz, ","); ss; ss = strtok(NULL, ",")) {
        long bytes = atol(ss);
        char *buf_s = malloc(bytes * P), *buf_r = malloc(bytes * P);
        memset(buf_s, rank, bytes * P);
        char names[32][32];
        double avg[32];
        int nm = 0;
        char *md = strdup(modes), *save = NULL;
        for (char *m = strtok_r(md, ",", &save); m && nm < 32; m = strtok_r(NULL, ",", &save)) {
            int noprune = strcmp(m, "auto-noprune") == 0;
            setenv("LLC_ALLTOALL", noprune ? "auto" : m, 1);
            if (noprune)
                setenv("LLC_ALLTOALL_PRUNE", "0", 1);
            else if (!getenv("LLC_BENCH_KEEP_PRUNE"))
                unsetenv("LLC_ALLTOALL_PRUNE");
            MPI_Comm comm; /* fresh state: reads the environment */
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            for (int i = 0; i < calls; i++)
                MPI_Alltoall(buf_s, (int)bytes, MPI_BYTE, buf_r, (int)bytes, MPI_BYTE, comm);
            double t = (MPI_Wtime() - t0) / calls, tmax;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
            MPI_Comm_free(&comm);
            snprintf(names[nm], sizeof names[nm], "%s", m);
            avg[nm++] = tmax;
        }
        if (rank == 0) {
            double best = 1e30;
            for (int i = 0; i < nm; i++)
                best = avg[i] < best ? avg[i] : best;
            for (int i = 0; i < nm; i++)
                printf("  %10ld %-14s %12.1f %8.2f\n", bytes, names[i], avg[i] * 1e6, avg[i] / best);
        }
        free(md);
        free(buf_s);
        free(buf_r);
    }
    free(sz);
    MPI_Finalize();
    return 0;
}
