// Max-effect benchmark of the virtual-rank broadcast (the paper's 5.1),
// as an MPI program over libllccoll_pmpi.so (LD_PRELOAD):
//   repeat `iters` times: barrier; workload only on the real rank that
//   receives first from root 0 (the largest power of two below the size);
//   MPI_Bcast.  Every process records its own broadcast start and end.
// Metrics per (load, size, mode), averaged over the repetitions:
//   overall = last end - first start, average = mean over processes of
//   (end - start), in ms.
// Modes (each on a fresh MPI_Comm_dup, so Opt starts from the identity):
//   Ori  LLC_BCAST=binomial         same tree, never re-optimized
//   MPI  LLC_BCAST=mpich            the MPI's own MPI_Bcast
//   Opt  LLC_BCAST=vrank            dynamically optimized
//   Ide  LLC_BCAST=binomial + LLC_BCAST_TABLE=<loaded>:<size-1> (ideal static table)
// Workload for load N: -w mm: N x N double matrix multiply; -w sleep: N^3 ns.
//
//   bcast_maxeffect [-i 100] [-n 0,30,40,80,160] [-s 1,1024,...] [-w mm|sleep]
//                   [-m Ori,MPI,Opt,Ide] [-W 0|1]
// -W 1: every pair of processes exchanges one message before the first
// measurement (no broadcast then pays for a first contact).
// Prints one line per measurement and a markdown table at the end (rank 0).
#include <dlfcn.h>
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/coll/bcast/tree.hpp"
#include "bench_util.hpp"

using namespace bcast_bench;

namespace {

volatile double sink;

void workload(int n, bool mm)
{
    if (n <= 0)
        return;
    if (!mm) {
        sleep_ns(static_cast<double>(n) * n * n);
        return;
    }
    static std::vector<double> a, b, c;
    const size_t nn = static_cast<size_t>(n) * n;
    if (a.size() < nn) {
        a.assign(nn, 1.0001);
        b.assign(nn, 0.9999);
        c.assign(nn, 0.0);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            const double x = a[i * n + k];
            for (int j = 0; j < n; j++)
                c[i * n + j] += x * b[k * n + j];
        }
    sink = c[0];
}

}  // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = 100;
    std::vector<std::string> loads = split("0,30,40,80,160");
    std::vector<std::string> sizes = split("1,1024,16384,32768,131072,1048576,8388608,16777216");
    std::vector<std::string> modes = split("Ori,MPI,Opt,Ide");
    bool mm = true;
    bool warm = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "-i"))
            iters = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-n"))
            loads = split(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-s"))
            sizes = split(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-m"))
            modes = split(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-w"))
            mm = std::strcmp(argv[i + 1], "sleep") != 0;
        else if (!std::strcmp(argv[i], "-W"))
            warm = std::atoi(argv[i + 1]) != 0;
    }
    if (warm) {
        // every pair exchanges one message first, so that no broadcast pays
        // for a first contact (lazy connection or address lookup)
        int x = rank, y = 0;
        for (int d = 1; d < size; d++)
            MPI_Sendrecv(&x, 1, MPI_INT, (rank + d) % size, 7, &y, 1, MPI_INT,
                         (rank - d + size) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    const int loaded = llc::coll::bcast::top_mask(size);
    // the PMPI layer (preloaded over another MPI), or libllccoll linked into
    // the llc build's libmpi (its MPI_Bcast is the virtual-rank broadcast)
    const bool pmpi = dlsym(RTLD_DEFAULT, "llc_coll_pmpi_bcast_info") != nullptr;
    const bool builtin = !pmpi && dlsym(RTLD_DEFAULT, "llc_coll_env_vars") != nullptr;
    if (rank == 0)
        std::printf("# %d procs, loaded real rank %d, %d repetitions, workload %s, library %s\n",
                    size, loaded, iters, mm ? "matrix multiply" : "sleep N^3 ns",
                    pmpi ? "loaded (PMPI layer)"
                         : builtin ? "built into this MPI (llc build)"
                                   : "NOT loaded (all modes are the MPI's own)");
    char ide[64];
    std::snprintf(ide, sizeof ide, "%d:%d", loaded, size - 1);
    std::map<std::string, std::pair<double, double>> res;  // key load/size/mode
    std::vector<double> mine(2 * iters), all(rank == 0 ? 2 * iters * size : 1);
    std::vector<char> buf;
    for (auto &ls : loads) {
        const int n = std::atoi(ls.c_str());
        for (auto &ss : sizes) {
            const int bytes = std::atoi(ss.c_str());
            buf.assign(bytes > 0 ? bytes : 1, 1);
            for (auto &mode : modes) {
                set_bcast_mode(mode, ide);
                MPI_Comm comm;
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                for (int it = 0; it < iters; it++) {
                    MPI_Barrier(comm);
                    if (rank == loaded)
                        workload(n, mm);
                    mine[2 * it] = MPI_Wtime();
                    MPI_Bcast(buf.data(), bytes, MPI_BYTE, 0, comm);
                    mine[2 * it + 1] = MPI_Wtime();
                }
                MPI_Gather(mine.data(), 2 * iters, MPI_DOUBLE, all.data(), 2 * iters, MPI_DOUBLE, 0,
                           comm);
                MPI_Comm_free(&comm);
                if (rank == 0) {
                    double overall = 0, average = 0;
                    for (int it = 0; it < iters; it++) {
                        double first = 1e300, last = -1e300, sum = 0;
                        for (int r = 0; r < size; r++) {
                            double s = all[r * 2 * iters + 2 * it], e = all[r * 2 * iters + 2 * it + 1];
                            first = std::min(first, s);
                            last = std::max(last, e);
                            sum += e - s;
                        }
                        overall += last - first;
                        average += sum / size;
                    }
                    overall = overall / iters * 1e3;
                    average = average / iters * 1e3;
                    res[ls + "/" + ss + "/" + mode] = {overall, average};
                    std::printf("load %4s bytes %9s %s overall %10.4f ms average %10.4f ms\n",
                                ls.c_str(), ss.c_str(), mode.c_str(), overall, average);
                    std::fflush(stdout);
                }
            }
        }
    }
    if (rank == 0) {
        for (int which = 0; which < 2; which++) {
            std::printf("\n%s time [ms], %d procs\n\n| load | bytes |", which ? "Average" : "Overall", size);
            for (auto &m : modes)
                std::printf(" %s |", m.c_str());
            std::printf("\n|---|---|");
            for (size_t k = 0; k < modes.size(); k++)
                std::printf("---|");
            std::printf("\n");
            for (auto &ls : loads)
                for (auto &ss : sizes) {
                    std::printf("| %s | %s |", ls.c_str(), ss.c_str());
                    for (auto &m : modes) {
                        auto &p = res[ls + "/" + ss + "/" + m];
                        std::printf(" %.4f |", which ? p.second : p.first);
                    }
                    std::printf("\n");
                }
        }
    }
    MPI_Finalize();
    return 0;
}
