/* A receiver that computes before it receives is not a dead peer.
 *
 * Ranks pair up (0-1, 2-3, ...; with llc-mpiexec-hosts' round-robin
 * placement the two of a pair are on different hosts).  The even rank of a
 * pair posts COUNT nonblocking sends of SIZE bytes (more than the sockets
 * between them hold) and waits for them; the odd rank first computes
 * SECONDS outside MPI, then receives them all and checks every byte, then
 * answers.  Run with SECONDS several times the peer timeout
 * (LLC_TCP_PEER_TIMEOUT_MS): the job must finish, and the sender must have
 * waited at least SECONDS.
 *
 *   late_receiver SECONDS [COUNT SIZE]     (default 2048 x 8192 B)
 */
#include "check.h"

#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc >= 2, "usage: late_receiver SECONDS [COUNT SIZE]");
    const double seconds = atof(argv[1]);
    const int count = argc >= 4 ? atoi(argv[2]) : 2048;
    const int len = argc >= 4 ? atoi(argv[3]) : 8192;
    CHECK(size % 2 == 0, "needs an even number of ranks, got %d", size);
    CHECK(count > 0 && len > 0, "COUNT and SIZE must be positive");
    const int peer = rank ^ 1;
    unsigned char *buf = malloc((size_t) count * len);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * count);
    MPI_Status *st = malloc(sizeof(MPI_Status) * count);
    CHECK(buf && reqs && st, "out of memory");
    char reply = 0;
    if (rank % 2 == 0) {
        for (int i = 0; i < count; i++) {
            unsigned char *m = buf + (size_t) i * len;
            for (int b = 0; b < len; b++)
                m[b] = pattern((unsigned) (rank * count + i), (size_t) b);
            CHECK_MPI(MPI_Isend(m, len, MPI_BYTE, peer, i, MPI_COMM_WORLD, &reqs[i]));
        }
        const double start = MPI_Wtime();
        CHECK_MPI(MPI_Waitall(count, reqs, st));
        CHECK_MPI(MPI_Recv(&reply, 1, MPI_CHAR, peer, count, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        const double waited = MPI_Wtime() - start;
        CHECK(reply == 'k', "rank %d answered '%c'", peer, reply);
        CHECK(waited >= seconds * 0.9, "the exchange took %.2f s, less than rank %d computed (%.2f s)", waited,
              peer, seconds);
    } else {
        usleep((useconds_t) (seconds * 1e6)); /* compute, outside MPI */
        memset(buf, 0, (size_t) count * len);
        for (int i = 0; i < count; i++)
            CHECK_MPI(MPI_Irecv(buf + (size_t) i * len, len, MPI_BYTE, peer, i, MPI_COMM_WORLD, &reqs[i]));
        CHECK_MPI(MPI_Waitall(count, reqs, st));
        for (int i = 0; i < count; i++)
            for (int b = 0; b < len; b++)
                CHECK(buf[(size_t) i * len + b] == pattern((unsigned) (peer * count + i), (size_t) b),
                      "message %d from rank %d: byte %d wrong", i, peer, b);
        reply = 'k';
        CHECK_MPI(MPI_Send(&reply, 1, MPI_CHAR, peer, count, MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("late_receiver: ok: %d ranks, %d x %d B to receivers that computed %.1f s first\n", size, count, len,
               seconds);
    free(st);
    free(reqs);
    free(buf);
    MPI_Finalize();
    return 0;
}
