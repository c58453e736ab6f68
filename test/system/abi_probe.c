/* A program for the system-MPI tests (test/run-all, section 6): built with
 * another MPI's compiler wrapper (Debian's mpicc.mpich) or with mpich-llc's
 * mpicc, it exchanges messages and a reduction, and reports which MPI
 * library carries it:
 *   - rank 0 prints the first line of MPI_Get_library_version and the
 *     device line of it ("ch4:llc" only in mpich-llc);
 *   - every rank prints whether libllc is mapped into the process (from
 *     /proc/self/maps) and the file that provides MPI_Init.
 * Uses only the C API of the MPI standard, so it builds with any MPI. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    int rank, size, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* a ring of messages of a few sizes, then a reduction */
    int bad = 0;
    for (int n = 1; n <= (1 << 20); n *= 64) {
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            out[i] = rank * 1000 + i;
        MPI_Sendrecv(out, n, MPI_INT, (rank + 1) % size, n, in, n, MPI_INT,
                     (rank + size - 1) % size, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int from = (rank + size - 1) % size;
        for (int i = 0; i < n; i++)
            bad += in[i] != from * 1000 + i;
        free(out);
        free(in);
    }
    int sum = 0, all_bad = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    Dl_info info;
    const char *lib = "unknown";
    if (dladdr((void *) (size_t) &MPI_Init, &info) && info.dli_fname)
        lib = info.dli_fname;
    printf("abi_probe rank %d of %d: libllc mapped=%s MPI_Init from %s\n", rank, size,
           mapped("/libllc.so") > 0 ? "yes" : "no", lib);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        const char *dev = strstr(version, "Device:");
        printf("abi_probe library: %.*s\n", nl ? (int) (nl - version) : len, version);
        if (dev) {
            const char *end = strchr(dev, '\n');
            printf("abi_probe %.*s\n", end ? (int) (end - dev) : (int) strlen(dev), dev);
        }
        int ok = sum == size * (size - 1) / 2 && all_bad == 0;
        printf("abi_probe %s: size %d, sum of ranks %d, %d wrong elements\n",
               ok ? "ok" : "FAILED", size, sum, all_bad);
        fflush(stdout);
        if (!ok)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
