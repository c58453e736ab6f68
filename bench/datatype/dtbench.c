/* dtbench: cost of derived datatypes in an MPI library.
 *
 * For each layout below (the same number of doubles moved in each), rank 0
 * times MPI_Pack and MPI_Unpack of one buffer, and ranks 0 and 1 time a
 * ping-pong that sends and receives the derived type directly.  The layouts
 * differ in how deeply their types nest, which is what decides whether yaksa
 * has a generated kernel for them (see maint/graft-mpich) or falls back to
 * its generic path:
 *
 *   contig   MPI_DOUBLE x n                                  (no derived type)
 *   vector   vector(n, 1, 2, double)                         (1 level)
 *   vec2     hvector of vector(16, 1, 2, double)             (2 levels)
 *   vec3     hvector of hvector of vector(4, 1, 2, double)   (3 levels)
 *   struct   contiguous of struct {int; double[3]; char}     (2 levels)
 *   indexed  indexed_block(1 double) at irregular displacements (1 level)
 *
 * Output: one line per layout and size,
 *   layout bytes pack_us unpack_us pingpong_us
 * where bytes is the packed size and pingpong_us is half a round trip.
 * Usage: mpiexec -n 2 dtbench [--sizes B1,B2,...] [--target SECONDS]
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
    int a;
    double b[3];
    char c;
};

enum { N_LAYOUTS = 6 };
static const char *const layout_names[N_LAYOUTS] = {"contig", "vector", "vec2", "vec3", "struct", "indexed"};

static void die(const char *what)
{
    fprintf(stderr, "dtbench: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Builds a type of `doubles` doubles (rounded down to the layout's unit);
 * sets *count_out to the count to pass and *span_out to the bytes the buffer
 * must span. */
static MPI_Datatype make_type(int layout, long doubles, long *count_out, MPI_Aint *span_out)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, inner, mid;
    MPI_Aint lb, ext;
    long count = 1;
    switch (layout) {
    case 0:
        t = MPI_DOUBLE;
        count = doubles;
        break;
    case 1:
        MPI_Type_vector((int) doubles, 1, 2, MPI_DOUBLE, &t);
        break;
    case 2:
        MPI_Type_vector(16, 1, 2, MPI_DOUBLE, &inner);
        MPI_Type_get_extent(inner, &lb, &ext);
        MPI_Type_create_hvector((int) (doubles / 16), 1, 2 * ext, inner, &t);
        MPI_Type_free(&inner);
        break;
    case 3:
        MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &inner);
        MPI_Type_get_extent(inner, &lb, &ext);
        MPI_Type_create_hvector(4, 1, 2 * ext, inner, &mid);
        MPI_Type_get_extent(mid, &lb, &ext);
        MPI_Type_create_hvector((int) (doubles / 16), 1, 2 * ext, mid, &t);
        MPI_Type_free(&inner);
        MPI_Type_free(&mid);
        break;
    case 4: {
        int bl[3] = {1, 3, 1};
        MPI_Aint disp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        MPI_Datatype s;
        MPI_Type_create_struct(3, bl, disp, types, &s);
        MPI_Type_create_resized(s, 0, sizeof(struct rec), &inner);
        MPI_Type_free(&s);
        MPI_Type_contiguous((int) (doubles / 3), inner, &t);
        MPI_Type_free(&inner);
        break;
    }
    case 5: {
        int n = (int) doubles;
        int *displs = malloc(sizeof(int) * (size_t) n);
        if (!displs)
            die("out of memory");
        /* gaps of 1, 2 or 3 doubles in a fixed irregular pattern */
        for (int i = 0, d = 0; i < n; i++) {
            displs[i] = d;
            d += 2 + (i * 7 % 3);
        }
        MPI_Type_create_indexed_block(n, 1, displs, MPI_DOUBLE, &t);
        free(displs);
        break;
    }
    default:
        die("unknown layout");
    }
    if (t != MPI_DOUBLE)
        MPI_Type_commit(&t);
    MPI_Type_get_extent(t, &lb, &ext);
    *count_out = count;
    *span_out = lb + ext * (MPI_Aint) count;
    return t;
}

static double now(void)
{
    return MPI_Wtime();
}

/* rounds round trips of one message of (count, t) between ranks 0 and 1 */
static void pingpong(int rank, char *buf, int count, MPI_Datatype t, long rounds, int tag)
{
    int peer = 1 - rank;
    for (long r = 0; r < rounds; r++) {
        if (rank == 0) {
            MPI_Send(buf, count, t, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(buf, count, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, count, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, t, peer, tag, MPI_COMM_WORLD);
        }
    }
}

/* Repeats op until `target` seconds have passed (at least 3 times); returns
 * microseconds per call. */
#define TIME_LOOP(target, body)                                                       \
    ({                                                                                \
        long iters_ = 0;                                                              \
        double t0_ = now(), t_;                                                       \
        do {                                                                          \
            body;                                                                     \
            iters_++;                                                                 \
        } while ((t_ = now() - t0_) < (target) || iters_ < 3);                        \
        1e6 * t_ / (double) iters_;                                                   \
    })

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        die("run with exactly 2 ranks");

    char sizes_text[256] = "65536,4194304";
    double target = 0.2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            snprintf(sizes_text, sizeof sizes_text, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--target") && i + 1 < argc)
            target = atof(argv[++i]);
        else
            die("usage: dtbench [--sizes B1,B2,...] [--target SECONDS]");
    }
    if (rank == 0)
        printf("# layout bytes pack_us unpack_us pingpong_us\n");

    for (char *tok = strtok(sizes_text, ","); tok; tok = strtok(NULL, ",")) {
        long bytes = atol(tok);
        if (bytes < 8 * 48)
            die("sizes must be at least 384 bytes");
        for (int layout = 0; layout < N_LAYOUTS; layout++) {
            long count;
            MPI_Aint span;
            /* struct moves int + 3 doubles + char per record; others doubles only */
            long doubles = bytes / 8;
            if (layout == 4)
                doubles = bytes / (sizeof(int) + 3 * sizeof(double) + 1) * 3;
            doubles -= doubles % 48;
            MPI_Datatype t = make_type(layout, doubles, &count, &span);
            int packed;
            MPI_Pack_size((int) count, t, MPI_COMM_WORLD, &packed);
            char *buf = calloc((size_t) span, 1), *pack = malloc((size_t) packed);
            if (!buf || !pack)
                die("out of memory");
            for (MPI_Aint i = 0; i < span; i++)
                buf[i] = (char) (i * 131);

            double pack_us = 0, unpack_us = 0;
            int pos;
            if (rank == 0) {
                pack_us = TIME_LOOP(target, {
                    pos = 0;
                    MPI_Pack(buf, (int) count, t, pack, packed, &pos, MPI_COMM_WORLD);
                });
                int used = pos;
                unpack_us = TIME_LOOP(target, {
                    pos = 0;
                    MPI_Unpack(pack, used, &pos, buf, (int) count, t, MPI_COMM_WORLD);
                });
            }
            /* ping-pong of the derived type: 5 warm-up rounds, timed on rank 0,
             * fix how many rounds fill target/4 seconds */
            long rounds = 5;
            double t_warm = now();
            pingpong(rank, buf, (int) count, t, rounds, 0);
            if (rank == 0) {
                double per = (now() - t_warm) / (double) rounds;
                rounds = (long) (target / 4 / (per > 0 ? per : 1e-6));
                if (rounds < 3)
                    rounds = 3;
                if (rounds > 100000)
                    rounds = 100000;
            }
            MPI_Bcast(&rounds, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            pingpong(rank, buf, (int) count, t, rounds, 1);
            double pp_us = 1e6 * (now() - t0) / (2.0 * (double) rounds);
            if (rank == 0)
                printf("%-8s %ld %.2f %.2f %.2f\n", layout_names[layout], (long) packed, pack_us,
                       unpack_us, pp_us);
            fflush(stdout);
            if (t != MPI_DOUBLE)
                MPI_Type_free(&t);
            free(buf);
            free(pack);
        }
    }
    MPI_Finalize();
    return 0;
}
