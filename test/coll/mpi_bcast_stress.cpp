// MPI test of MPI_Bcast through libllccoll_pmpi.so (LD_PRELOAD):
//   random roots, lengths and datatypes (contiguous, vector, mixed type maps
//   with the same signature), load patterns that change every 100 broadcasts,
//   every byte checked, and after every broadcast all processes compare the
//   broadcast table checksum + sequence number (via llc_coll_pmpi_bcast_info,
//   found with dlsym; the check is skipped when the library is not loaded).
//   Also: split communicators of odd sizes, created and freed repeatedly.
// Usage: mpi_bcast_stress [iterations]     prints "PASS" or "FAIL ..." (rank 0)
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

typedef int (*info_fn)(MPI_Comm, unsigned long long *);

static int check_tables(MPI_Comm comm, info_fn info)
{
    if (!info)
        return 0;
    unsigned long long mine[4] = {0, 0, 0, 0};
    int have = info(comm, mine) == 0;
    int size;
    MPI_Comm_size(comm, &size);
    std::vector<unsigned long long> all(2 * size);
    unsigned long long two[2] = {have ? mine[0] : 0, have ? mine[1] : 0};
    MPI_Allgather(two, 2, MPI_UNSIGNED_LONG_LONG, all.data(), 2, MPI_UNSIGNED_LONG_LONG, comm);
    int bad = 0;
    for (int r = 1; r < size; r++)
        if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
            bad++;
    return bad;
}

static int run(MPI_Comm comm, int iters, unsigned seed, info_fn info, unsigned long long *changes)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::mt19937 shared(seed), local(seed * 31 + rank);
    MPI_Datatype vec0, vec;  // every other int, extent 128 ints
    MPI_Type_vector(64, 1, 2, MPI_INT, &vec0);
    MPI_Type_create_resized(vec0, 0, 128 * sizeof(int), &vec);
    MPI_Type_free(&vec0);
    MPI_Type_commit(&vec);
    int errors = 0, loaded = -1;
    std::vector<int> ibuf;
    std::vector<char> cbuf;
    for (int it = 0; it < iters; it++) {
        if (it % 100 == 0)
            loaded = static_cast<int>(shared() % size);
        int root = shared() % 4 ? 0 : static_cast<int>(shared() % size);
        int kind = shared() % 4;
        int us = static_cast<int>(local() % 20) + (rank == loaded ? 400 : 0);
        usleep(us);
        if (kind <= 1) {  // bytes, length 0..~70000
            int n = static_cast<int>(kind == 0 ? shared() % 100 : shared() % 70000);
            cbuf.assign(n, 0);
            if (rank == root)
                for (int i = 0; i < n; i++)
                    cbuf[i] = static_cast<char>(i * 7 + it);
            MPI_Bcast(cbuf.data(), n, MPI_CHAR, root, comm);
            for (int i = 0; i < n; i++)
                if (cbuf[i] != static_cast<char>(i * 7 + it)) {
                    errors++;
                    break;
                }
        } else {  // 64*k ints: root sends a vector type, others receive contiguous or vector
            int k = 1 + static_cast<int>(shared() % 3);
            bool recv_vec = (local() % 2) == 0;
            if (rank == root || recv_vec) {
                ibuf.assign(128 * k, -1);
                if (rank == root)
                    for (int i = 0; i < 64 * k; i++)
                        ibuf[2 * i] = i + it;
                MPI_Bcast(ibuf.data(), k, vec, root, comm);
                for (int i = 0; i < 64 * k; i++)
                    if (ibuf[2 * i] != i + it || ibuf[2 * i + 1] != -1) {
                        errors++;
                        break;
                    }
            } else {
                ibuf.assign(64 * k, -1);
                MPI_Bcast(ibuf.data(), 64 * k, MPI_INT, root, comm);
                for (int i = 0; i < 64 * k; i++)
                    if (ibuf[i] != i + it) {
                        errors++;
                        break;
                    }
            }
        }
        errors += check_tables(comm, info);
    }
    MPI_Type_free(&vec);
    unsigned long long st[4] = {0, 0, 0, 0};
    if (info && info(comm, st) == 0)
        *changes += st[3];
    return errors;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? std::atoi(argv[1]) : 1000;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    info_fn info = reinterpret_cast<info_fn>(dlsym(RTLD_DEFAULT, "llc_coll_pmpi_bcast_info"));
    unsigned long long changes = 0;
    int errors = run(MPI_COMM_WORLD, iters, 42, info, &changes);
    // odd-sized sub-communicators, created and freed (state freed with them)
    for (int rep = 0; rep < 3; rep++) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &sub);
        errors += run(sub, iters / 10, 7 + rep, info, &changes);
        MPI_Comm_free(&sub);
    }
    int total = 0;
    unsigned long long all_changes = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&changes, &all_changes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            std::printf("PASS %d procs, %d iterations, library %s, table changes %llu\n", size,
                        iters, info ? "loaded" : "NOT loaded", all_changes);
        else
            std::printf("FAIL %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}
