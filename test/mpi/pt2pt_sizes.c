/* Point-to-point between every pair, sizes 0 B .. 8 MiB, blocking and
 * nonblocking, wildcard receives, probe, synchronous sends, a derived
 * datatype, and cancel of a posted receive.  Every byte is checked. */
#include "check.h"
#include <string.h>

#define MAXSZ (8u << 20)

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(seed, i);
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == pattern(seed, i), "%s: byte %zu of %zu is %u, expected %u", what, i, n,
              b[i], pattern(seed, i));
}

int main(int argc, char **argv)
{
    int rank, size;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *sbuf = malloc(MAXSZ), *rbuf = malloc(MAXSZ);
    CHECK(sbuf && rbuf, "out of memory");

    /* 1. every ordered pair, sizes doubling, blocking send / irecv */
    for (int peer_shift = 1; peer_shift < size; peer_shift++) {
        int to = (rank + peer_shift) % size, from = (rank - peer_shift + size) % size;
        for (size_t n = 0; n <= MAXSZ; n = n ? n * 4 : 1) {
            MPI_Request rq;
            MPI_Status st;
            int cnt;
            unsigned seed_out = (unsigned) (rank * 131 + n), seed_in = (unsigned) (from * 131 + n);
            fill(sbuf, n, seed_out);
            memset(rbuf, 0xee, n);
            CHECK_MPI(MPI_Irecv(rbuf, (int) n, MPI_BYTE, from, 7, MPI_COMM_WORLD, &rq));
            CHECK_MPI(MPI_Send(sbuf, (int) n, MPI_BYTE, to, 7, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Wait(&rq, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == (int) n && st.MPI_SOURCE == from, "count %d source %d", cnt,
                  st.MPI_SOURCE);
            verify(rbuf, n, seed_in, "pairwise");
        }
    }

    /* 2. many outstanding nonblocking messages, received with wildcards */
    if (size > 1) {
        enum { NMSG = 64 };
        if (rank != 0) {
            MPI_Request rq[NMSG];
            for (int i = 0; i < NMSG; i++) {
                int v[4] = { rank, i, rank * i, -i };
                CHECK_MPI(MPI_Isend(v, 4, MPI_INT, 0, i, MPI_COMM_WORLD, &rq[i]));
                CHECK_MPI(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
            }
        } else {
            int *next = calloc(size, sizeof(int));
            for (int k = 0; k < NMSG * (size - 1); k++) {
                int v[4];
                MPI_Status st;
                CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK_MPI(MPI_Recv(v, 4, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
                /* messages from one sender arrive in order (MPI non-overtaking) */
                CHECK(v[0] == st.MPI_SOURCE && v[1] == next[v[0]] && v[1] == st.MPI_TAG &&
                      v[2] == v[0] * v[1] && v[3] == -v[1], "wildcard message %d/%d/%d/%d",
                      v[0], v[1], v[2], v[3]);
                next[v[0]]++;
            }
            free(next);
        }
    }

    /* 3. synchronous send and a strided datatype, rank 0 <-> last */
    if (size > 1 && (rank == 0 || rank == size - 1)) {
        int peer = rank == 0 ? size - 1 : 0;
        double mat[16][16], col[16];
        MPI_Datatype column;
        MPI_Type_vector(16, 1, 16, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        if (rank == 0) {
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++)
                    mat[i][j] = i * 100 + j;
            CHECK_MPI(MPI_Ssend(&mat[0][3], 1, column, peer, 11, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(col, 16, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            for (int i = 0; i < 16; i++)
                CHECK(col[i] == i * 100 + 3, "column element %d is %g", i, col[i]);
        }
        MPI_Type_free(&column);
    }

    /* 4. cancel a receive that nobody will match */
    {
        MPI_Request rq;
        MPI_Status st;
        int flag = 0, dummy;
        CHECK_MPI(MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Cancel(&rq));
        CHECK_MPI(MPI_Wait(&rq, &st));
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "receive was not cancelled");
    }

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("pt2pt_sizes: %d ranks OK\n", size);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
