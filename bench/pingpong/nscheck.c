/* nscheck.c -- check that MPI ranks run in the intended network namespaces
 * of the llc-netns emulated cluster and that messages cross between them.
 *
 * Each rank reports its network namespace inode (/proc/self/ns/net), its
 * MPI processor name and the IPv4 address of eth0 (the emulated host's
 * veth), then every rank sends a token to the next one in a ring and
 * checks what it receives.  Rank 0 prints one line per rank and
 * "nscheck: OK (N ranks, M distinct namespaces)" or fails with exit 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#define INFO_LEN 256

static void eth0_addr(char *buf, size_t len)
{
    struct ifaddrs *ifa, *p;
    snprintf(buf, len, "none");
    if (getifaddrs(&ifa) != 0)
        return;
    for (p = ifa; p; p = p->ifa_next) {
        if (p->ifa_addr && p->ifa_addr->sa_family == AF_INET && strcmp(p->ifa_name, "eth0") == 0) {
            inet_ntop(AF_INET, &((struct sockaddr_in *) p->ifa_addr)->sin_addr, buf, len);
            break;
        }
    }
    freeifaddrs(ifa);
}

int main(int argc, char **argv)
{
    int rank, size, namelen, i, ndistinct = 0, errors = 0;
    char proc[MPI_MAX_PROCESSOR_NAME], addr[64], info[INFO_LEN];
    char *all = NULL;
    unsigned long ino = 0, *inos = NULL;
    struct stat st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(proc, &namelen);
    if (stat("/proc/self/ns/net", &st) == 0)
        ino = (unsigned long) st.st_ino;
    eth0_addr(addr, sizeof(addr));
    snprintf(info, sizeof(info), "rank %d/%d netns %lu eth0 %s proc-name %s pid %d",
             rank, size, ino, addr, proc, (int) getpid());

    if (rank == 0) {
        all = malloc((size_t) size * INFO_LEN);
        inos = malloc((size_t) size * sizeof(*inos));
    }
    MPI_Gather(info, INFO_LEN, MPI_CHAR, all, INFO_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(&ino, 1, MPI_UNSIGNED_LONG, inos, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);

    /* ring: send (rank * 1000 + 7) to the right neighbour, check the left's */
    if (size > 1) {
        int token = rank * 1000 + 7, got = -1;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv(&token, 1, MPI_INT, right, 42, &got, 1, MPI_INT, left, 42,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (got != left * 1000 + 7) {
            fprintf(stderr, "nscheck: rank %d got %d from %d, expected %d\n", rank, got, left,
                    left * 1000 + 7);
            errors = 1;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    if (rank == 0) {
        for (i = 0; i < size; i++) {
            int j, seen = 0;
            printf("%s\n", all + (size_t) i * INFO_LEN);
            for (j = 0; j < i; j++)
                if (inos[j] == inos[i])
                    seen = 1;
            if (!seen)
                ndistinct++;
        }
        if (errors)
            printf("nscheck: FAILED (%d ranks saw wrong data)\n", errors);
        else
            printf("nscheck: OK (%d ranks, %d distinct namespaces)\n", size, ndistinct);
        fflush(stdout);
        free(all);
        free(inos);
    }
    MPI_Finalize();
    return errors ? 1 : 0;
}
