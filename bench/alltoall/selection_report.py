#!/usr/bin/env python3
"""selection_report.py OUT - the table of bench/alltoall/selection.sh.

Reads OUT/raw/<placement>-<mpi>-<size>-rep<r>.txt (alltoall_bench lines:
bytes, mode, avg_us, vs_best, learning calls, learning ms) and the matching
.err (auto's decisions, LLC_ALLTOALL_VERBOSE=1) and prints markdown: per
placement and size, the mean over the reps of every mode, auto / best forced
algorithm and auto / the better of Debian MPICH and Open MPI; the same for
auto-warm (a later run that starts from the decisions an earlier one kept);
and what auto costs once it has learned: its calls after the learning ones
(the challenge included) against the best forced algorithm, which splits
auto / best forced into the price of learning and the price of the choice."""
import collections
import glob
import os
import re
import statistics
import sys

FORCED = ["bruck", "pairwise", "pairwise_lb", "pairwise_mb", "pairwise_ob",
          "ring", "ring_lb", "ring_mb", "ring_ob"]
NAME = re.compile(r"^(?P<pl>[^-]+)-(?P<mpi>[^-]+)-(?P<size>\d+)-rep(?P<rep>\d+)\.txt$")
LEARNED = re.compile(r"class \d+ learned:.* -> (\S+)")


def main(out):
    # times[(placement, size)][(mpi, mode)] = [avg_us per rep]
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    learn = collections.defaultdict(list)   # (pl, size) -> learning calls per rep
    after = collections.defaultdict(list)   # (pl, size) -> auto's us per call after learning, per rep
    chosen = collections.defaultdict(list)  # (pl, size) -> auto's final choice per rep
    for path in sorted(glob.glob(os.path.join(out, "raw", "*.txt"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        key = (m["pl"], int(m["size"]))
        calls = None
        with open(path) as f:
            for line in f:
                c = re.search(r"\bcalls=(\d+)", line) if line.startswith("#") else None
                if c:
                    calls = int(c.group(1))
                if not line.startswith("  "):
                    continue
                fields = line.split()
                if len(fields) < 6:
                    continue
                mode, avg = fields[1], float(fields[2])
                times[key][(m["mpi"], mode)].append(avg)
                if m["mpi"] == "llc" and mode == "auto":
                    learn[key].append(int(fields[4]))
                    lc, lms = int(fields[4]), float(fields[5])
                    if calls and calls > lc:
                        after[key].append((avg * calls - lms * 1000) / (calls - lc))
        err = path[:-4] + ".err"
        if m["mpi"] == "llc" and os.path.exists(err):
            with open(err) as f:
                picks = [x.group(1) for x in map(LEARNED.search, f) if x]
            # the last decision of the run is auto's (its mode runs last)
            chosen[key].append(picks[-1] if picks else "?")

    def mean(key, mpi, mode):
        v = times[key].get((mpi, mode))
        return statistics.mean(v) if v else None

    def fmt(x):
        return "-" if x is None else ("%.0f" % x if x >= 100 else "%.1f" % x)

    print("# Alltoall: run-time selection against forced algorithms and other MPIs\n")
    setup = os.path.join(out, "setup.txt")
    if os.path.exists(setup):
        with open(setup) as f:
            print("```\n" + f.read().rstrip() + "\n```\n")
    print("Microseconds per call, max over ranks, mean over the reps; auto includes its "
          "learning calls (the first run of a job: LLC_ALLTOALL_DECISIONS=off); auto warm is "
          "a later run, which starts from the decisions an earlier run kept.  `llc mpich` is "
          "MPICH's own algorithm inside the llc build (LLC_ALLTOALL=mpich).\n")
    print("| placement | bytes | auto | auto warm | best forced | auto / best forced | "
          "warm / best forced | llc mpich | Debian MPICH | Open MPI | auto / better peer | "
          "warm / better peer | auto learned (per rep) | learning calls | after learning / best forced |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(times, key=lambda k: (k[0] != "node", k[0], k[1])):
        auto = mean(key, "llc", "auto")
        forced = [(mean(key, "llc", a), a) for a in FORCED if mean(key, "llc", a) is not None]
        best = min(forced) if forced else (None, "-")
        peers = [x for x in (mean(key, "mpich", "mpich"), mean(key, "ompi", "mpich")) if x]
        peer = min(peers) if peers else None
        warm = mean(key, "llc", "auto-warm")

        def ratio(x, y):
            return "%.2f" % (x / y) if x and y else "-"
        aft = statistics.mean(after[key]) if after[key] else None
        print("| %s | %d | %s | %s | %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], fmt(auto), fmt(warm), best[1], fmt(best[0]), ratio(auto, best[0]),
            ratio(warm, best[0]), fmt(mean(key, "llc", "mpich")), fmt(mean(key, "mpich", "mpich")),
            fmt(mean(key, "ompi", "mpich")), ratio(auto, peer), ratio(warm, peer),
            " ".join(chosen[key]) or "-", " ".join(map(str, learn[key])) or "-", ratio(aft, best[0])))
    print("\nEvery forced algorithm (llc build):\n")
    print("| placement | bytes | " + " | ".join(FORCED) + " |")
    print("|---|---|" + "---|" * len(FORCED))
    for key in sorted(times, key=lambda k: (k[0] != "node", k[0], k[1])):
        print("| %s | %d | %s |" % (key[0], key[1],
                                   " | ".join(fmt(mean(key, "llc", a)) for a in FORCED)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: selection_report.py OUT (the output directory of selection.sh)")
    main(sys.argv[1])
