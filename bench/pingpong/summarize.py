#!/usr/bin/env python3
"""bench/pingpong/summarize.py -- statistics and tables of a run.sh output
directory (called by run.sh; can be re-run on an existing directory).

Reads OUT/raw/<mpi>-<mode>-r<k>.txt (lines "test size value aux iters
window" of pingpong.c; .failed files are ignored) and writes

  OUT/<mpi>-<mode>-<test>.dat   size, combined value, number of runs
  OUT/results.md                every test and size, value per MPI and the
                                ratios llc/mpich and llc/ompi
  OUT/summary.md                the targets of doc/bench-pingpong.md (met/missed) and the
                                ratios at a few sizes
"""
import argparse
import glob
import os
import re
import statistics

UNIT = {"lat": "us", "bw": "MB/s", "bibw": "MB/s", "rate": "msgs/s"}
NAME = {"lat": "latency", "bw": "bandwidth", "bibw": "bidirectional bandwidth",
        "rate": "message rate"}
LOWER_IS_BETTER = {"lat"}
MODE_TITLE = {"intra": "Intra-node (2 ranks in emulated host h0)",
              "inter": "Inter-node (rank 0 in h0, rank 1 in h1, tcp over veth + bridge)"}
# the targets (doc/bench-pingpong.md): (mode, test, size, goal for llc/mpich, "<=" or ">=")
TARGETS = [("intra", "lat", 8, 0.9, "<="),
           ("intra", "bw", 4194304, 1.1, ">="),
           ("inter", "lat", 8, 0.9, "<="),
           ("inter", "bw", 4194304, 1.0, ">="),
           ("intra", "rate", 8, 1.0, ">="),
           ("inter", "rate", 8, 1.0, ">=")]
SUMMARY_SIZES = [8, 1024, 65536, 1048576, 4194304]


def human(size):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return "%d %s" % (size // div, unit)
    return "%d B" % size


def fmt(test, v):
    if v is None:
        return "-"
    if test == "rate":
        return "%.2f M" % (v / 1e6) if v >= 1e6 else "%.1f k" % (v / 1e3) if v >= 1e4 else "%.0f" % v
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fr(r):
    return "-" if r is None else "%.2f" % r if r >= 0.1 else "%.2g" % r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stat", default="median", choices=["median", "best"])
    ap.add_argument("--mpis", default="")
    ap.add_argument("--modes", default="intra inter")
    ap.add_argument("--tests", default="lat bw bibw rate")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    modes, tests = a.modes.split(), a.tests.split()

    runs = {}    # (mpi, mode) -> number of good runs
    vals = {}    # (mpi, mode, test, size) -> [values]
    found = []
    for f in sorted(glob.glob(os.path.join(out, "raw", "*-r*.txt"))):
        m = re.match(r"(.+)-(intra|inter)-r(\d+)\.txt$", os.path.basename(f))
        if not m:
            continue
        mpi, mode = m.group(1), m.group(2)
        if mpi not in found:
            found.append(mpi)
        runs[(mpi, mode)] = runs.get((mpi, mode), 0) + 1
        for line in open(f):
            p = line.split()
            if len(p) >= 3 and p[0] in UNIT and p[1].isdigit():
                vals.setdefault((mpi, mode, p[0], int(p[1])), []).append(float(p[2]))
    mpis = a.mpis.split() if a.mpis else found
    mpis = [m for m in mpis if any(k[0] == m for k in vals)]

    res = {}
    for (mpi, mode, test, size), v in vals.items():
        if a.stat == "median":
            res[(mpi, mode, test, size)] = statistics.median(v)
        else:
            res[(mpi, mode, test, size)] = min(v) if test in LOWER_IS_BETTER else max(v)
    for mpi in mpis:
        for mode in modes:
            for test in tests:
                sizes = sorted(s for (m2, mo, t, s) in res if (m2, mo, t) == (mpi, mode, test))
                if not sizes:
                    continue
                with open(os.path.join(out, "%s-%s-%s.dat" % (mpi, mode, test)), "w") as d:
                    d.write("# size %s(%s) runs\n" % (a.stat, UNIT[test]))
                    for s in sizes:
                        d.write("%d %.6g %d\n" % (s, res[(mpi, mode, test, s)],
                                                   len(vals[(mpi, mode, test, s)])))

    meta = open(os.path.join(out, "meta.txt")).read() if os.path.exists(
        os.path.join(out, "meta.txt")) else ""
    others = [m for m in ("mpich", "ompi") if m in mpis]
    has_llc = "llc" in mpis
    nrep = max(runs.values()) if runs else 0

    # ------------------------------------------------------------ targets
    tgt = ["| target | llc | Debian MPICH | llc/mpich | goal | status |",
           "|---|---:|---:|---:|---:|---|"]
    for mode, test, size, goal, op in TARGETS:
        if mode not in modes or test not in tests:
            continue
        lv, mv = res.get(("llc", mode, test, size)), res.get(("mpich", mode, test, size))
        r = ratio(lv, mv)
        if r is None:
            status = "n/a"
        else:
            status = "met" if (r <= goal if op == "<=" else r >= goal) else "**missed**"
        tgt.append("| %s, %s %s | %s %s | %s %s | %s | %s %.1f | %s |" % (
            mode + "-node", human(size), NAME[test], fmt(test, lv), UNIT[test],
            fmt(test, mv), UNIT[test], fr(r), op, goal, status))

    # ------------------------------------------------ compact ratio tables
    comp = []
    for mode in modes:
        present = [m for m in mpis if any(k[:2] == (m, mode) for k in res)]
        if not present:
            continue
        ratios = [o for o in others if "llc" in present and o in present]
        comp.append("%s:\n" % MODE_TITLE[mode])
        comp.append("| metric | size |" + "".join(" %s |" % m for m in present)
                    + "".join(" llc/%s |" % o for o in ratios))
        comp.append("|---|---:|" + "---:|" * (len(present) + len(ratios)))
        for test in tests:
            sizes = sorted({k[3] for k in res if k[1:3] == (mode, test)})
            pick = [s for s in SUMMARY_SIZES if s in sizes] or sizes[:1]
            if test == "rate":
                pick = sizes[:1]
            for s in pick:
                lv = res.get(("llc", mode, test, s))
                comp.append("| %s (%s) | %s |" % (NAME[test], UNIT[test], human(s))
                            + "".join(" %s |" % fmt(test, res.get((m, mode, test, s)))
                                      for m in present)
                            + "".join(" %s |" % fr(ratio(lv, res.get((o, mode, test, s))))
                                      for o in ratios))
        comp.append("")

    explain = ("llc/X = llc's value / X's value of the same metric and size: "
               "for latency < 1 means llc is faster, for bandwidth and message "
               "rate > 1 means llc is faster.")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("## Summary (%s)\n\n" % os.path.basename(out))
        f.write("%s of %d run(s) per MPI and mode. %s\n\n" % (a.stat, nrep, explain))
        if has_llc and "mpich" in mpis:
            f.write("\n".join(tgt) + "\n\n")
        else:
            f.write("Targets: n/a (needs llc and mpich).\n\n")
        f.write("\n".join(comp))

    # ------------------------------------------------------- full tables
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("# Point-to-point results %s\n\n" % os.path.basename(out))
        f.write("%s of the runs per MPI, mode, test and size (runs per MPI and mode: %s).\n" % (
            a.stat, ", ".join("%s %s %d" % (k[0], k[1], v) for k, v in sorted(runs.items()))))
        f.write("Latency = half round trip (us); bandwidth MB/s (1 MB = 1e6 B; bibw counts both "
                "directions); message rate in messages/s.\n%s\n\n" % explain)
        if meta:
            f.write("".join("    " + l + "\n" for l in meta.splitlines()) + "\n")
        if has_llc and "mpich" in mpis:
            f.write("## Targets\n\n" + "\n".join(tgt) + "\n\n")
        for mode in modes:
            for test in tests:
                present = [m for m in mpis if any(k[:3] == (m, mode, test) for k in res)]
                if not present:
                    continue
                f.write("## %s: %s (%s)\n\n" % (MODE_TITLE[mode], NAME[test], UNIT[test]))
                h = "| size |" + "".join(" %s |" % m for m in present)
                s_ = "|---:|" + "---:|" * len(present)
                if "llc" in present:
                    for o in others:
                        if o in present:
                            h += " llc/%s |" % o
                            s_ += "---:|"
                f.write(h + "\n" + s_ + "\n")
                sizes = sorted({k[3] for k in res if k[1:3] == (mode, test)})
                for s in sizes:
                    row = "| %s |" % human(s)
                    for m in present:
                        row += " %s |" % fmt(test, res.get((m, mode, test, s)))
                    if "llc" in present:
                        for o in others:
                            if o in present:
                                row += " %s |" % fr(ratio(res.get(("llc", mode, test, s)),
                                                          res.get((o, mode, test, s))))
                    f.write(row + "\n")
                f.write("\n")


if __name__ == "__main__":
    main()
