// The C++ case of test/run-all section 6: MPICH's C++ bindings (MPI::),
// which Debian's mpicxx.mpich links as libmpichcxx.so.12 + libmpich.so.12.
// Prints one line per rank and, on rank 0, "cxx_probe ok" when the
// reduction is right.
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    int sum = 0;
    MPI::COMM_WORLD.Allreduce(&rank, &sum, 1, MPI::INT, MPI::SUM);
    std::printf("cxx_probe rank %d of %d\n", rank, size);
    std::fflush(stdout);
    MPI::COMM_WORLD.Barrier();
    if (rank == 0)
        std::printf("cxx_probe %s: size %d, sum of ranks %d\n",
                    sum == size * (size - 1) / 2 ? "ok" : "FAILED", size, sum);
    MPI::Finalize();
    return 0;
}
