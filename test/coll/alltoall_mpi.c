/* MPI check of the PMPI MPI_Alltoall of libllccoll_pmpi.so (run it with
 * LD_PRELOAD=.../libllccoll_pmpi.so): for every forced algorithm, auto (with
 * and without pruning) and mpich, on MPI_COMM_WORLD and a split
 * communicator: contiguous ints, MPI_IN_PLACE, a strided derived datatype on
 * both sides, different send/recv types with the same signature, zero
 * counts.  Every element is checked.  Prints "alltoall_mpi: N checks, F
 * failures" on rank 0 and exits non-zero on failure. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checks, failures;

static int val(int src, int dst, int k, int salt) { return src * 100000 + dst * 1000 + k + salt; }

static void check(const char *what, const char *mode, int rank, int got, int want)
{
    checks++;
    if (got != want && failures++ < 10)
        fprintf(stderr, "FAIL %s mode=%s rank=%d got %d want %d\n", what, mode, rank, got, want);
}

static void run_checks(MPI_Comm comm, const char *mode, int salt)
{
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    const int counts[] = {0, 1, 5, 300, 5000};
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; c++) {
        int n = counts[c];
        int *s = malloc(sizeof(int) * (P * n + 1)), *r = malloc(sizeof(int) * (P * n + 1));
        /* contiguous, several calls (learning + monitoring) */
        for (int rep = 0; rep < 8; rep++) {
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++)
                    s[j * n + k] = val(rank, j, k, salt + rep);
            memset(r, 0xff, sizeof(int) * (P * n + 1));
            MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, comm);
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++)
                    check("contig", mode, rank, r[j * n + k], val(j, rank, k, salt + rep));
            check("contig-end", mode, rank, r[P * n], -1);
        }
        /* in place */
        for (int j = 0; j < P; j++)
            for (int k = 0; k < n; k++)
                r[j * n + k] = val(rank, j, k, salt + 7);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm);
        for (int j = 0; j < P; j++)
            for (int k = 0; k < n; k++)
                check("in-place", mode, rank, r[j * n + k], val(j, rank, k, salt + 7));
        /* send ints, receive one contiguous type of n ints */
        if (n > 0) {
            MPI_Datatype blk;
            MPI_Type_contiguous(n, MPI_INT, &blk);
            MPI_Type_commit(&blk);
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++)
                    s[j * n + k] = val(rank, j, k, salt + 9);
            MPI_Alltoall(s, n, MPI_INT, r, 1, blk, comm);
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++)
                    check("mixed-types", mode, rank, r[j * n + k], val(j, rank, k, salt + 9));
            MPI_Type_free(&blk);
        }
        free(s);
        free(r);
        /* strided derived type: every other int (extent 2 ints, resized) */
        {
            MPI_Datatype v, vr;
            MPI_Type_vector(1, 1, 2, MPI_INT, &v);
            MPI_Type_create_resized(v, 0, 2 * sizeof(int), &vr);
            MPI_Type_commit(&vr);
            int *sv = malloc(sizeof(int) * (2 * P * n + 1)), *rv = malloc(sizeof(int) * (2 * P * n + 1));
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++) {
                    sv[2 * (j * n + k)] = val(rank, j, k, salt + 11);
                    sv[2 * (j * n + k) + 1] = -7;
                }
            for (int i = 0; i < 2 * P * n + 1; i++)
                rv[i] = -3;
            MPI_Alltoall(sv, n, vr, rv, n, vr, comm);
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++) {
                    check("vector", mode, rank, rv[2 * (j * n + k)], val(j, rank, k, salt + 11));
                    check("vector-gap", mode, rank, rv[2 * (j * n + k) + 1], -3);
                }
            /* derived type in place */
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++)
                    rv[2 * (j * n + k)] = val(rank, j, k, salt + 13);
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, rv, n, vr, comm);
            for (int j = 0; j < P; j++)
                for (int k = 0; k < n; k++) {
                    check("vector-in-place", mode, rank, rv[2 * (j * n + k)], val(j, rank, k, salt + 13));
                    check("vector-in-place-gap", mode, rank, rv[2 * (j * n + k) + 1], -3);
                }
            MPI_Type_free(&v);
            MPI_Type_free(&vr);
            free(sv);
            free(rv);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *modes[] = {"bruck", "pairwise", "pairwise_lb", "pairwise_mb", "pairwise_ob",
                           "ring", "ring_lb", "ring_mb", "ring_ob", "auto", "auto-noprune",
                           "mpich"};
    if (rank == 0)
        printf("alltoall_mpi: llc_coll_alltoall %s\n",
               dlsym(RTLD_DEFAULT, "llc_coll_alltoall") ? "interposed" : "NOT loaded");
    setenv("LLC_ALLTOALL_TRIALS", "1", 1);
    setenv("LLC_ALLTOALL_MONITOR_PERIOD", "4", 1);
    for (unsigned m = 0; m < sizeof modes / sizeof *modes; m++) {
        const char *mode = modes[m];
        int noprune = strcmp(mode, "auto-noprune") == 0;
        setenv("LLC_ALLTOALL", noprune ? "auto" : mode, 1);
        setenv("LLC_ALLTOALL_PRUNE", noprune ? "0" : "2", 1);
        /* a new communicator reads the environment at its first Alltoall */
        MPI_Comm dup, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        run_checks(dup, mode, (int)m * 17);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
        run_checks(half, mode, (int)m * 17 + 3);
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
    }
    long tot[2] = {checks, failures}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("alltoall_mpi: %ld checks, %ld failures\n", sum[0], sum[1]);
    MPI_Finalize();
    return failures ? 1 : 0;
}
