// Simulator of the virtual-rank broadcast at scale: the library's Profile and
// Optimizer classes (src/coll/bcast) driven by the LogGP-style model of
// src/coll/bcast/sim_model.hpp, with the library's round protocol mirrored
// (optimization rounds every `interval` broadcasts, reports received one
// round late, decisions applied after the round's broadcast, swapped
// processes and every process below them restart their history, skipped
// rounds until those processes have sampled the new tree).
//
// Setup of the paper's max-effect benchmark: root 0, after a barrier a
// workload only on the real rank that receives first from the root, then the
// broadcast; `iters` repetitions.  Ori = identity table, never optimized;
// Opt = dynamic; Ide = loaded rank swapped with the last rank from the start.
// Output: overall time (first enter -> last finish) and average time (mean of
// each process's own broadcast time), averaged over the repetitions, in ms.
//
//   bcast_sim [-p 128,1024,4096] [-n 0,30,40,80,160] [-s 1,1024,16384,131072,1048576]
//             [-i 100] [--flops 1e9] [-L 2e-6] [-o 1e-6] [-g 1e-6] [-G 0.4e-9]
//             [--random PATTERNS [--max-mult 1e6]] [--jitter SECONDS]
// --random: the random-load experiment instead (every process 0..max-mult
// multiplies, seeded by pattern and rank), Opt/Ori of the average time.
// Workload of load N: N^3 multiply-adds at --flops per second.
// --jitter J: scheduling noise; every process enters every broadcast later by
// an exponentially distributed time of mean J (seeded by repetition, rank and
// pattern, so Ori, Opt and Ide see the same noise).  Default 0: noiseless.
// The LLC_BCAST_* environment variables set the optimizer parameters.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bcast/bcast.hpp"
#include "bcast/optimizer.hpp"
#include "bcast/profile.hpp"
#include "bcast/sim_model.hpp"
#include "bench_util.hpp"

using namespace llc::coll::bcast;

namespace {

std::vector<double> parse_list(const char *s)
{
    std::vector<double> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            v.push_back(std::atof(item.c_str()));
    return v;
}

struct Result {
    double overall = 0, average = 0;
    int changes = 0;
};

constexpr size_t kHeader = sizeof(llc::coll::bcast::Header);  // the library's header

struct Jitter {
    double mean = 0;  // [s]; 0 = none
    int salt = 0;     // the random-load pattern
    // the entry times of repetition `it`
    std::vector<double> apply(const std::vector<double> &enter, int it) const
    {
        if (mean <= 0)
            return enter;
        std::vector<double> e = enter;
        for (size_t r = 0; r < e.size(); r++) {
            const std::uint64_t key = (static_cast<std::uint64_t>(salt) << 48) ^
                                      (static_cast<std::uint64_t>(it) << 24) ^ r;
            const double u = static_cast<double>(bcast_bench::mix(key) >> 11) * 0x1.0p-53;
            e[r] += -mean * std::log1p(-u);
        }
        return e;
    }
};

std::vector<double> one_loaded(int p, int loaded, double work)
{
    std::vector<double> enter(p, 0.0);
    enter[loaded] = work;
    return enter;
}

Result run_static(const Table &t, const std::vector<double> &enter, size_t bytes, int iters,
                  const LogGP &m, const Jitter &jit)
{
    Result r;
    for (int it = 0; it < iters; it++) {
        SimBcast s = simulate_bcast(t, 0, jit.apply(enter, it), bytes, m);
        r.overall += s.overall;
        r.average += s.average;
    }
    r.overall /= iters;
    r.average /= iters;
    return r;
}

Result run_opt(const Params &prm, int p, const std::vector<double> &enter, size_t bytes, int iters,
               const LogGP &m, const Jitter &jit)
{
    Table table(p);
    Optimizer opt(prm, p, 0);
    std::vector<Profile> prof(p, Profile(prm));
    std::vector<double> view(p, 0.0), pend_val(p, 0.0), noise(p, 0.0), pend_noise(p, 0.0);
    std::vector<std::uint64_t> view_seq(p, 0), pend_seq(p, 0), sample_seq(p, 0);
    bool reports_due = false;
    std::uint64_t next_opt = 0, change_seq = 0;
    std::vector<int> changed;
    int stale = 0;
    Result r;
    for (int it = 0; it < iters; it++) {
        const std::uint64_t seq = static_cast<std::uint64_t>(it);
        const bool round = seq >= next_opt;
        Decision d;
        d.interval = prm.interval_min;  // as BcastState::run while waiting for fresh reports
        if (round) {
            if (reports_due) {
                view = pend_val;
                noise = pend_noise;
                view_seq = pend_seq;
                reports_due = false;
            }
            view[0] = prof[0].reported();
            noise[0] = prof[0].report_noise();
            bool fresh = true;
            for (int x : changed)
                if (x != 0 && view_seq[x] <= change_seq)
                    fresh = false;
            if (fresh || ++stale >= 4) {
                stale = 0;
                d = opt.run(view, noise, table);
            }
        }
        SimBcast s = simulate_bcast(table, 0, jit.apply(enter, it), bytes + kHeader, m);
        r.overall += s.overall;
        r.average += s.average;
        for (int x = 1; x < p; x++) {
            prof[x].sample(s.wait[x]);
            sample_seq[x] = seq + 1;
        }
        if (round) {
            for (int x = 1; x < p; x++) {
                if (prof[x].should_report())
                    prof[x].take_report();
                pend_val[x] = prof[x].reported();
                pend_noise[x] = prof[x].report_noise();
                pend_seq[x] = sample_seq[x];
            }
            reports_due = true;
            if (d.nswaps > 0) {
                // as BcastState::apply
                std::vector<std::pair<int, int>> swaps;
                for (int k = 0; k < d.nswaps; k++)
                    swaps.emplace_back(d.swaps[k].a, d.swaps[k].b);
                changed = swap_and_list_moved(table, 0, swaps);
                for (int y : changed)
                    prof[y].reset_history();
                change_seq = seq + 1;
                r.changes++;
            }
            next_opt = seq + static_cast<std::uint64_t>(d.interval);
        }
    }
    r.overall /= iters;
    r.average /= iters;
    return r;
}

}  // namespace

int main(int argc, char **argv)
{
    std::vector<double> procs{128}, loads{0, 30, 40, 80, 160}, sizes{1, 1024, 16384, 131072, 1048576};
    int iters = 100;
    int random_patterns = 0;
    double flops = 1e9, max_mult = 1e6;
    LogGP m;
    Jitter jit;
    for (int i = 1; i < argc; i++) {
        auto arg = [&](const char *name) { return !std::strcmp(argv[i], name) && i + 1 < argc; };
        if (arg("-p"))
            procs = parse_list(argv[++i]);
        else if (arg("-n"))
            loads = parse_list(argv[++i]);
        else if (arg("-s"))
            sizes = parse_list(argv[++i]);
        else if (arg("-i"))
            iters = std::atoi(argv[++i]);
        else if (arg("--random"))
            random_patterns = std::atoi(argv[++i]);
        else if (arg("--max-mult"))
            max_mult = std::atof(argv[++i]);
        else if (arg("--flops"))
            flops = std::atof(argv[++i]);
        else if (arg("--jitter"))
            jit.mean = std::atof(argv[++i]);
        else if (arg("-L"))
            m.L = std::atof(argv[++i]);
        else if (arg("-o"))
            m.o = std::atof(argv[++i]);
        else if (arg("-g"))
            m.g = std::atof(argv[++i]);
        else if (arg("-G"))
            m.G = std::atof(argv[++i]);
        else {
            std::fprintf(stderr, "usage: see the comment at the top of bench/bcast/bcast_sim.cpp\n");
            return 2;
        }
    }
    Params prm = Params::from_env();
    if (random_patterns > 0) {
        // the paper's random-load experiment: every process gets 0..max_mult
        // multiplies, seeded by pattern and rank (the formula of
        // bench/bcast/bcast_random.cpp); Opt/Ori of the average time
        std::printf("# random loads: %d patterns, 0..%g multiplies at %g flop/s, LogGP L=%g o=%g g=%g "
                    "G=%g, jitter %g, %d broadcasts each\n# procs bytes pattern avg_Ori_ms avg_Opt_ms Opt/Ori\n",
                    random_patterns, max_mult, flops, m.L, m.o, m.g, m.G, jit.mean, iters);
        for (double pd : procs)
            for (double sd : sizes) {
                const int p = static_cast<int>(pd);
                std::vector<double> ratios;
                for (int pat = 0; pat < random_patterns; pat++) {
                    std::vector<double> enter(p, 0.0);
                    for (int r = 0; r < p; r++) {
                        enter[r] = static_cast<double>(bcast_bench::random_load(
                                       pat, r, static_cast<std::uint64_t>(max_mult))) / flops;
                    }
                    const size_t bytes = static_cast<size_t>(sd);
                    jit.salt = pat;
                    Result ori = run_static(Table(p), enter, bytes, iters, m, jit);
                    Result opr = run_opt(prm, p, enter, bytes, iters, m, jit);
                    ratios.push_back(opr.average / ori.average);
                    std::printf("%6d %9zu %4d %10.4f %10.4f %7.3f\n", p, bytes, pat, ori.average * 1e3,
                                opr.average * 1e3, opr.average / ori.average);
                }
                std::sort(ratios.begin(), ratios.end());
                size_t le95 = 0;
                for (double x : ratios)
                    le95 += x <= 0.95;
                std::printf("# summary procs %d bytes %g: Opt/Ori <= 0.95 in %.1f %% of %zu patterns, "
                            "median %.3f, max %.3f\n",
                            p, sd, 100.0 * le95 / ratios.size(), ratios.size(),
                            ratios[ratios.size() / 2], ratios.back());
            }
        return 0;
    }
    std::printf("# LogGP L=%g o=%g g=%g G=%g, jitter %g, %d repetitions, load N: N^3 at %g flop/s, "
                "times in ms\n",
                m.L, m.o, m.g, m.G, jit.mean, iters, flops);
    std::printf("%6s %5s %9s | %9s %9s %9s | %9s %9s %9s | %s\n", "procs", "load", "bytes",
                "ovl_Ori", "ovl_Opt", "ovl_Ide", "avg_Ori", "avg_Opt", "avg_Ide", "changes");
    for (double pd : procs) {
        const int p = static_cast<int>(pd);
        const int loaded = top_mask(p);  // first receiver from root 0
        Table ide(p);
        ide.swap(loaded, p - 1);
        for (double n : loads) {
            const double work = n * n * n / flops;
            for (double sd : sizes) {
                const size_t bytes = static_cast<size_t>(sd);
                const std::vector<double> enter = one_loaded(p, loaded, work);
                Result ori = run_static(Table(p), enter, bytes, iters, m, jit);
                Result idr = run_static(ide, enter, bytes, iters, m, jit);
                Result opr = run_opt(prm, p, enter, bytes, iters, m, jit);
                std::printf("%6d %5g %9zu | %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f | %d\n", p, n,
                            bytes, ori.overall * 1e3, opr.overall * 1e3, idr.overall * 1e3,
                            ori.average * 1e3, opr.average * 1e3, idr.average * 1e3, opr.changes);
            }
        }
    }
    return 0;
}
