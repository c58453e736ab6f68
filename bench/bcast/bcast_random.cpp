// Random-load benchmark of the virtual-rank broadcast (the paper's 5.1,
// second experiment): for each of `patterns` load patterns every process
// gets its own workload of 0 .. max multiplies (drawn from a generator seeded
// by rank and pattern), then runs `iters` times: barrier; its workload;
// MPI_Bcast from root 0.  Each pattern runs once with the fixed binomial
// tree (Ori, LLC_BCAST=binomial) and once optimized (Opt, LLC_BCAST=vrank),
// each on a fresh MPI_Comm_dup so that Opt starts from the identity table.
// Metric per pattern and mode: average time = mean over the processes of
// their own broadcast time, averaged over the iterations.  Rank 0 prints the
// Opt/Ori ratio per pattern and their distribution.
//
//   bcast_random [-p 200] [-i 30] [-s 1024] [-max 1000000] [-w mm|sleep] [-ns 1]
// Workload of k multiplies: -w mm: k double multiply-adds; -w sleep: k * ns
// nanoseconds of sleep (default 1 ns per multiply, about a 1 Gflop/s core),
// which needs no core, so that many processes fit on a few cores.
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_util.hpp"

using namespace bcast_bench;

namespace {

volatile double sink;

void workload(long k, bool mm, double ns_per)
{
    if (k <= 0)
        return;
    if (!mm) {
        sleep_ns(k * ns_per);
        return;
    }
    double a = 1.0000001, s = 0;
    for (long i = 0; i < k; i++)
        s = s * a + 1e-9;
    sink = s;
}

double run_mode(const char *mode, long load, bool mm, double ns_per, int iters, std::vector<char> &buf,
                int rank, int size)
{
    setenv("LLC_BCAST", mode, 1);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double mine = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(comm);
        workload(load, mm, ns_per);
        const double t0 = MPI_Wtime();
        MPI_Bcast(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 0, comm);
        mine += MPI_Wtime() - t0;
    }
    double sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Comm_free(&comm);
    (void) rank;
    return sum / size / iters;
}

}  // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int patterns = 200, iters = 30, bytes = 1024;
    long max_load = 1000000;
    bool mm = false;
    double ns_per = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "-p"))
            patterns = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-i"))
            iters = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-s"))
            bytes = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-max"))
            max_load = std::atol(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-w"))
            mm = std::strcmp(argv[i + 1], "sleep") != 0;
        else if (!std::strcmp(argv[i], "-ns"))
            ns_per = std::atof(argv[i + 1]);
        else {
            if (rank == 0)
                std::fprintf(stderr, "bcast_random: unknown option %s (see the comment at the top of "
                                     "bench/bcast/bcast_random.cpp)\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    std::vector<char> buf(bytes > 0 ? bytes : 1, 1);
    std::vector<double> ratios;
    if (rank == 0)
        std::printf("# %d procs, %d patterns x %d broadcasts of %d B, load 0..%ld multiplies (%s)\n"
                    "# pattern avg_Ori_ms avg_Opt_ms Opt/Ori\n",
                    size, patterns, iters, bytes, max_load,
                    mm ? "multiply-adds" : "sleep");
    for (int p = 0; p < patterns; p++) {
        const long load = static_cast<long>(random_load(p, rank, static_cast<std::uint64_t>(max_load)));
        const double ori = run_mode("binomial", load, mm, ns_per, iters, buf, rank, size);
        const double opt = run_mode("vrank", load, mm, ns_per, iters, buf, rank, size);
        if (rank == 0) {
            ratios.push_back(opt / ori);
            std::printf("%4d %10.4f %10.4f %7.3f\n", p, ori * 1e3, opt * 1e3, opt / ori);
            if ((p + 1) % 20 == 0)
                std::fprintf(stderr, "bcast_random: %d/%d patterns\n", p + 1, patterns);
            std::fflush(stdout);
        }
    }
    if (rank == 0 && !ratios.empty()) {
        std::vector<double> s = ratios;
        std::sort(s.begin(), s.end());
        auto q = [&](double f) { return s[std::min(s.size() - 1, static_cast<size_t>(f * s.size()))]; };
        const double le95 = static_cast<double>(std::count_if(s.begin(), s.end(), [](double r) { return r <= 0.95; }));
        const double le105 = static_cast<double>(std::count_if(s.begin(), s.end(), [](double r) { return r <= 1.05; }));
        double mean = 0;
        for (double r : s)
            mean += r;
        mean /= s.size();
        std::printf("\n| procs | patterns | Opt/Ori <= 0.95 | Opt/Ori <= 1.05 | min | median | mean | 90th pct | max |\n"
                    "|---|---|---|---|---|---|---|---|---|\n"
                    "| %d | %zu | %.1f %% | %.1f %% | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
                    size, s.size(), 100.0 * le95 / s.size(), 100.0 * le105 / s.size(), s.front(), q(0.5),
                    mean, q(0.9), s.back());
    }
    MPI_Finalize();
    return 0;
}
