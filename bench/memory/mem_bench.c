/* mem_bench - memory per process after MPI_Init and after all-pairs traffic.
 *
 *   mem_bench [-b BYTES] [-rounds R] [-peers K]
 *
 * Every process reads its resident set size (VmRSS, and its parts RssAnon =
 * private memory and RssShmem = shared memory such as libllc's rings, from
 * /proc/self/status) right after MPI_Init, then exchanges
 * one message of BYTES (default 64) with every other process (R rounds of a
 * shifted ring exchange: in round k, send to rank+k, receive from rank-k, so
 * every pair talks; with -peers K only the rounds k = 1..K: every process
 * talks to the K ranks after it and the K before it, whatever the job size),
 * then reads it again.  Rank 0 prints one line per rank
 * and a summary line with the means over the processes; run.sh turns the
 * summaries of several job sizes into the growth per added peer.
 *
 * libllc's own count of its bytes comes from LLC_MEM_REPORT=1 (printed by
 * llc_finalize); bench/memory/run.sh collects both.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, bytes = 64, rounds = 1, peers = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b"))
            bytes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-peers"))
            peers = atoi(argv[i + 1]);
        else {
            if (rank == 0)
                fprintf(stderr, "mem_bench: unknown option %s (usage: mem_bench [-b BYTES] [-rounds R] [-peers K])\n",
                        argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    long m[6];
    m[0] = status_kb("VmRSS");
    m[1] = status_kb("RssAnon");
    m[2] = status_kb("RssShmem");
    char *sbuf = malloc(bytes > 0 ? bytes : 1), *rbuf = malloc(bytes > 0 ? bytes : 1);
    memset(sbuf, rank & 0xff, bytes > 0 ? bytes : 1);
    int bad = 0;
    for (int r = 0; r < rounds; r++)
        for (int k = 1; k < size && (peers < 0 || k <= peers); k++) {
            int to = (rank + k) % size, from = (rank - k + size) % size;
            MPI_Sendrecv(sbuf, bytes, MPI_BYTE, to, k, rbuf, bytes, MPI_BYTE, from, k, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (bytes > 0 && (unsigned char) rbuf[bytes - 1] != (unsigned char) (from & 0xff))
                bad++;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    m[3] = status_kb("VmRSS");
    m[4] = status_kb("RssAnon");
    m[5] = status_kb("RssShmem");
    long *all = rank == 0 ? malloc(sizeof(long) * 6 * size) : NULL;
    MPI_Gather(m, 6, MPI_LONG, all, 6, MPI_LONG, 0, MPI_COMM_WORLD);
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double mean[6] = {0, 0, 0, 0, 0, 0};
        printf("# mem_bench: %d processes, %d-byte all-pairs exchange x %d, %d bad messages\n", size, bytes,
               rounds, allbad);
        printf("# rank rss_init anon_init shmem_init rss_after anon_after shmem_after (kB)\n");
        for (int r = 0; r < size; r++) {
            printf("%d", r);
            for (int k = 0; k < 6; k++) {
                printf(" %ld", all[6 * r + k]);
                mean[k] += (double) all[6 * r + k] / size;
            }
            printf("\n");
        }
        printf("summary procs %d rss_init_kb %.0f anon_init_kb %.0f shmem_init_kb %.0f rss_after_kb %.0f "
               "anon_after_kb %.0f shmem_after_kb %.0f bad %d\n",
               size, mean[0], mean[1], mean[2], mean[3], mean[4], mean[5], allbad);
        free(all);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
