// Sparse matrix multiply benchmark of the virtual-rank broadcast (the
// paper's 5.2): C = A x A with A stored by columns (CCS).  Extracting a row
// from CCS is slow, so the root extracts row i and broadcasts it (MPI_Bcast);
// every process then multiplies it with the columns it owns (equal blocks of
// columns).  The work per process follows the non-zeros of its columns, so
// the load is unbalanced the same way at every broadcast.
//
// The matrix (generated identically on every process): size N, non-zero
// ratio R, slope C: column i holds NZ(i) non-zeros, linear from C*NZ(N/2) at
// columns 1 and N up to NZ(N/2) in the middle, scaled so that the total is
// R*N*N; row indices drawn from a generator seeded by the column.
//
// Modes, each on a fresh MPI_Comm_dup: Ori (LLC_BCAST=binomial), MPI (the
// MPI's own MPI_Bcast, LLC_BCAST=mpich), Opt (LLC_BCAST=vrank; interval 16
// and the 3-sample mean as in the paper, unless LLC_BCAST_INTERVAL /
// LLC_BCAST_MEAN3 are set), Ide (binomial with a static table that puts
// the processes with the most work on the leaves).
// Reported per mode (ms, means over processes): workload time, broadcast
// time, total time; and Opt/Ori, Ide/Ori.
//
//   bcast_spmm [-N 4000] [-R 0.1] [-C 0.2] [-rows 0 (all)] [-m Ori,MPI,Opt,Ide]
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/coll/bcast/tree.hpp"
#include "bench_util.hpp"

using namespace bcast_bench;

namespace {

struct Ccs {
    int n = 0;
    std::vector<int> colptr, rowidx;  // sorted row indices per column
    std::vector<double> val;
};

Ccs generate(int n, double r, double c)
{
    // NZ(i) (1-based) rises linearly from c*peak at i=1 to peak at i=n/2 and
    // falls back symmetrically to column n
    std::vector<double> shape(n);
    const int half = std::max(1, n / 2);
    for (int i = 1; i <= n; i++) {
        const int d = i <= half ? i : n + 1 - i;
        shape[i - 1] = c + (d - 1) * (1.0 - c) / std::max(1, half - 1);
    }
    const double total = r * n * static_cast<double>(n);
    const double scale = total / std::accumulate(shape.begin(), shape.end(), 0.0);
    Ccs a;
    a.n = n;
    a.colptr.assign(n + 1, 0);
    std::vector<char> used(n);
    for (int j = 0; j < n; j++) {
        const int nz = std::min(n, std::max(0, static_cast<int>(shape[j] * scale + 0.5)));
        std::fill(used.begin(), used.end(), 0);
        std::uint64_t s = mix(static_cast<std::uint64_t>(j) + 12345);
        int got = 0;
        std::vector<int> rows;
        rows.reserve(nz);
        while (got < nz) {
            s = mix(s);
            const int row = static_cast<int>(s % static_cast<std::uint64_t>(n));
            if (!used[row]) {
                used[row] = 1;
                rows.push_back(row);
                got++;
            }
        }
        std::sort(rows.begin(), rows.end());
        for (int row : rows) {
            a.rowidx.push_back(row);
            a.val.push_back(1.0 + (mix(s ^ row) % 1000) * 1e-3);
        }
        a.colptr[j + 1] = static_cast<int>(a.rowidx.size());
    }
    return a;
}

// row i of `a` as (column, value) pairs, by searching every column (the slow
// extraction that the root does)
int extract_row(const Ccs &a, int i, int *cols, double *vals)
{
    int k = 0;
    for (int j = 0; j < a.n; j++) {
        auto b = a.rowidx.begin() + a.colptr[j], e = a.rowidx.begin() + a.colptr[j + 1];
        auto it = std::lower_bound(b, e, i);
        if (it != e && *it == i) {
            cols[k] = j;
            vals[k] = a.val[it - a.rowidx.begin()];
            k++;
        }
    }
    return k;
}

}  // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = 4000, rows = 0;
    double r = 0.1, c = 0.2;
    std::vector<std::string> modes = split("Ori,MPI,Opt,Ide");
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "-N"))
            n = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-R"))
            r = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-C"))
            c = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-rows"))
            rows = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-m"))
            modes = split(argv[i + 1]);
        else {
            if (rank == 0)
                std::fprintf(stderr, "bcast_spmm: unknown option %s (see bench/bcast/bcast_spmm.cpp)\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (rows <= 0 || rows > n)
        rows = n;
    const Ccs a = generate(n, r, c);
    // my columns and the work of every process (non-zeros of its columns)
    auto lo_of = [&](int p) { return static_cast<int>(static_cast<long long>(n) * p / size); };
    const int lo = lo_of(rank), hi = lo_of(rank + 1);
    std::vector<long> work(size);
    for (int p = 0; p < size; p++)
        work[p] = a.colptr[lo_of(p + 1)] - a.colptr[lo_of(p)];
    int maxrow = 0;
    {
        std::vector<int> cnt(n, 0);
        for (int x : a.rowidx)
            cnt[x]++;
        maxrow = *std::max_element(cnt.begin(), cnt.end());
    }
    // ideal static table: positions with the fewest sends (leaves first,
    // deepest first) go to the processes with the most work
    std::string ide;
    {
        std::vector<int> pos(size - 1), procs(size - 1);
        std::iota(pos.begin(), pos.end(), 1);
        std::iota(procs.begin(), procs.end(), 1);
        std::stable_sort(pos.begin(), pos.end(), [&](int x, int y) {
            const int cx = llc::coll::bcast::tree_nchildren(x, size);
            const int cy = llc::coll::bcast::tree_nchildren(y, size);
            if (cx != cy)
                return cx < cy;
            return __builtin_popcount(x) > __builtin_popcount(y);
        });
        std::stable_sort(procs.begin(), procs.end(), [&](int x, int y) { return work[x] > work[y]; });
        std::vector<int> vr(size, 0);
        for (size_t k = 0; k < pos.size(); k++)
            vr[procs[k]] = pos[k];
        for (int p = 0; p < size; p++)
            ide += (p ? "," : "") + std::to_string(vr[p]);
    }
    if (rank == 0) {
        std::printf("# %d procs, N=%d R=%g C=%g, %d of %d rows broadcast, longest row %d non-zeros\n", size,
                    n, r, c, rows, n, maxrow);
        std::printf("# non-zeros per process:");
        for (int p = 0; p < size; p++)
            std::printf(" %ld", work[p]);
        std::printf("\n# ideal table (vr of each real rank): %s\n", ide.c_str());
    }
    // message: count, then columns, then values
    const size_t msg = sizeof(int) + static_cast<size_t>(maxrow) * (sizeof(int) + sizeof(double));
    std::vector<char> buf(msg);
    std::vector<double> crow(static_cast<size_t>(hi - lo));
    struct Res {
        double work, bcast, total;
    };
    std::vector<Res> res;
    for (auto &mode : modes) {
        set_bcast_mode(mode, ide);
        if (mode == "Opt") {  // the paper's settings for this benchmark
            setenv("LLC_BCAST_INTERVAL", "16", 0);
            setenv("LLC_BCAST_MEAN3", "1", 0);
        }
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Barrier(comm);
        double t_work = 0, t_bcast = 0;
        const double t_start = MPI_Wtime();
        double check = 0;
        for (int i = 0; i < rows; i++) {
            int *cnt = reinterpret_cast<int *>(buf.data());
            int *cols = cnt + 1;
            double *vals = reinterpret_cast<double *>(buf.data() + sizeof(int) + maxrow * sizeof(int));
            const double t0 = MPI_Wtime();
            if (rank == 0)
                *cnt = extract_row(a, i, cols, vals);
            const double t1 = MPI_Wtime();
            MPI_Bcast(buf.data(), static_cast<int>(msg), MPI_BYTE, 0, comm);
            const double t2 = MPI_Wtime();
            // C(i, j) = sum_k A(i, k) A(k, j) for my columns j: merge the row
            // (sorted by column k) with column j (sorted by row k)
            for (int j = lo; j < hi; j++) {
                double s = 0;
                int p = 0, q = a.colptr[j];
                const int qe = a.colptr[j + 1];
                while (p < *cnt && q < qe) {
                    if (cols[p] < a.rowidx[q])
                        p++;
                    else if (cols[p] > a.rowidx[q])
                        q++;
                    else
                        s += vals[p++] * a.val[q++];
                }
                crow[j - lo] = s;
                check += s;
            }
            const double t3 = MPI_Wtime();
            t_work += (t3 - t2) + (t1 - t0);
            t_bcast += t2 - t1;
        }
        const double total = MPI_Wtime() - t_start;
        double mine[3] = {t_work, t_bcast, total}, sum[3] = {0, 0, 0};
        MPI_Reduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, 0, comm);
        double allcheck = 0;
        MPI_Reduce(&check, &allcheck, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        MPI_Comm_free(&comm);
        if (rank == 0) {
            res.push_back({sum[0] / size * 1e3, sum[1] / size * 1e3, sum[2] / size * 1e3});
            std::printf("%s: workload %.1f ms, broadcast %.1f ms, total %.1f ms (checksum %.6e)\n",
                        mode.c_str(), res.back().work, res.back().bcast, res.back().total, allcheck);
            std::fflush(stdout);
        }
    }
    if (rank == 0) {
        std::printf("\n| N | R | C | procs | mode | workload [ms] | broadcast [ms] | total [ms] | bcast/Ori | total/Ori |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n");
        const Res *ori = nullptr;
        for (size_t k = 0; k < modes.size(); k++)
            if (modes[k] == "Ori")
                ori = &res[k];
        for (size_t k = 0; k < modes.size(); k++) {
            std::printf("| %d | %g | %g | %d | %s | %.1f | %.1f | %.1f |", n, r, c, size, modes[k].c_str(),
                        res[k].work, res[k].bcast, res[k].total);
            if (ori)
                std::printf(" %.3f | %.3f |\n", res[k].bcast / ori->bcast, res[k].total / ori->total);
            else
                std::printf(" - | - |\n");
        }
    }
    MPI_Finalize();
    return 0;
}
