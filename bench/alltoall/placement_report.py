#!/usr/bin/env python3
"""Tables and plot of a placement campaign (bench/alltoall/placement.sh).

    placement_report.py RESULTS_DIR [--model-sweep PATH]

Reads RESULTS_DIR/raw/<build>-p<pattern>-<bytes>[-fixed|-dyn].txt and the
model parameters the runs measured (RESULTS_DIR/model-params.<build>), runs
model_sweep for the predictions of both sharing modes at each placement, and
writes RESULTS_DIR/report.md, RESULTS_DIR/times.dat, RESULTS_DIR/times.gp
(gnuplot script) and RESULTS_DIR/times.png (if gnuplot is installed).
"""
import math
import os
import re
import subprocess
import sys
from collections import defaultdict

ALGS = ["bruck", "pairwise", "pairwise_lb", "pairwise_mb", "pairwise_ob",
        "ring", "ring_lb", "ring_mb", "ring_ob"]
NODES = {0: "0,4,8,12,16,20,24,28", 1: "0,2,8,10,16,18,24,26",
         2: "0,1,8,9,16,17,24,25", 3: "0,1,2,3,8,9,10,11", 4: "0,1,2,3,4,5,6,7"}
PAT_NAME = {0: "mult. of 4", 1: "mult. of 2", 2: "first 2/leaf", 3: "first 4/leaf",
            4: "first 8, 1 leaf"}


def parse_raw(path):
    rows = {}
    calls = 0
    with open(path) as f:
        for line in f:
            m = re.search(r"calls=(\d+) reps=(\d+)", line)
            if m:
                calls = int(m.group(1)) * int(m.group(2))
            if not line.startswith("  "):
                continue
            w = line.split()
            if len(w) < 4:
                continue
            rows[w[1]] = {"us": float(w[2]), "calls": calls,
                          "lrn_calls": int(w[4]) if len(w) > 4 else 0,
                          "lrn_ms": float(w[5]) if len(w) > 5 else 0.0}
    return rows


def candidates_per_mode(path, rows):
    """Number of candidates of each dynamic mode, from the library's verbose
    log (one "candidates:" line per mode, in the order the modes ran)."""
    err = path + ".err"
    if not os.path.exists(err):
        return
    counts = []
    with open(err) as f:
        for line in f:
            if "candidates:" in line:
                counts.append(len(line.split("candidates:", 1)[1].split()))
    dyn = [m for m in rows if m.startswith("auto")]
    for m, n in zip(dyn, counts):
        rows[m]["cands"] = n


def load(results):
    cells = defaultdict(dict)  # (build, pat, bytes) -> mode -> row
    raw = os.path.join(results, "raw")
    for fn in sorted(os.listdir(raw)):
        m = re.match(r"(\w+)-p(\d)-(\d+)(-fixed|-dyn)?\.txt$", fn)
        if not m:
            continue
        key = (m.group(1), int(m.group(2)), int(m.group(3)))
        rows = parse_raw(os.path.join(raw, fn))
        candidates_per_mode(os.path.join(raw, fn), rows)
        cells[key].update(rows)
    return cells


def params(results, build):
    path = os.path.join(results, "model-params." + build)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        w = f.readline().split()
    kv = dict(x.split("=", 1) for x in w[1:])
    return float(kv["L"]), float(kv["B"])


def predict(sweep, fabric, pat, nbytes, L, B):
    out = subprocess.run([sweep, "--fabric", fabric, "--nodes", NODES[pat], "--L", str(L),
                          "--B", str(B), "--bytes", str(nbytes)],
                         check=True, capture_output=True, text=True).stdout
    pred = {"paper": {}, "steps": {}}
    kept = {}
    sharing = {}
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "pred":
            pred[w[1]][w[2]] = float(w[3])
        elif w and w[0] == "kept":
            kept[w[1]] = w[2:]
        elif w and w[0] == "steps_sharing":
            sharing[w[1]] = [float(x) for x in w[2:]]
        elif line.startswith("#"):
            m = re.search(r"paper_sharing=([\d.]+)", line)
            if m:
                sharing["paper"] = float(m.group(1))
    return pred, kept, sharing


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    results = sys.argv[1]
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sweep = "/tmp/a2a-bench/model_sweep"
    if "--model-sweep" in sys.argv:
        sweep = sys.argv[sys.argv.index("--model-sweep") + 1]
    fabric = os.path.join(top, "bench/alltoall/emu8.fabric")
    cells = load(results)
    md = []
    md.append("# Alltoall placement campaign: %s\n" % os.path.basename(os.path.abspath(results)))
    setup = os.path.join(results, "setup.txt")
    if os.path.exists(setup):
        md.append("```\n" + open(setup).read().strip() + "\n```\n")
    builds = sorted({k[0] for k in cells})
    # main table
    md.append("## Dynamic vs best fixed vs MPI default\n")
    md.append("Times: mean us per call, max over ranks (dynamic modes include their "
              "learning calls).  best = fastest of the nine fixed algorithms; best10 = "
              "fastest of the nine and the MPI default.  auto: pruning, the nine + the MPI's "
              "own as tenth candidate; nine: auto without the tenth (LLC_ALLTOALL_NATIVE=0), "
              "if measured; nostop: auto with LLC_ALLTOALL_MODEL_STOP=0 (a cut-off candidate "
              "does not take the ones the model ranks behind it along), if measured.\n")
    md.append("| build | pattern | bytes | best fixed | best us | auto us | auto/best | "
              "auto/best10 | auto after learning / best10 | noprune/best10 | nine/best | "
              "MPI default us | auto/default | "
              "cand. pruned/all | learn ms pruned | learn ms unpruned | nostop/best10 | learn ms nostop |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    dat = []
    summary = defaultdict(list)
    summary_steady = defaultdict(list)
    summary_def = defaultdict(list)
    summary_b10 = defaultdict(list)
    for key in sorted(cells, key=lambda k: (k[0], k[2], k[1])):
        b, pat, nb = key
        c = cells[key]
        fixed = {a: c[a]["us"] for a in ALGS if a in c}
        if not fixed:
            continue
        best = min(fixed, key=fixed.get)
        bus = fixed[best]
        au = c.get("auto", {}).get("us", float("nan"))
        an = c.get("auto-noprune", {}).get("us", float("nan"))
        mp = c.get("mpich", {}).get("us", float("nan"))
        a9 = c.get("auto-nine", {}).get("us", float("nan"))
        ans = c.get("auto-nostop", {}).get("us", float("nan"))
        b10 = min(bus, mp) if mp == mp else bus
        trials = 2
        lp = c.get("auto", {}).get("lrn_calls", 0)
        lu = c.get("auto-noprune", {}).get("lrn_calls", 0)
        ar = c.get("auto", {})
        steady = float("nan")
        if ar and ar["calls"] > ar["lrn_calls"]:
            # the calls after learning (rank 0's count; learning time max over ranks)
            steady = (ar["us"] * ar["calls"] - ar["lrn_ms"] * 1e3) / (ar["calls"] - ar["lrn_calls"])
        summary_steady[(b, nb)].append(steady / b10)
        summary_def[(b, nb)].append(au / mp)
        summary_b10[(b, nb)].append(au / b10)
        md.append("| %s | %d (%s) | %d | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f | %s/%s | %.0f | %.0f | %.2f | %.0f |" % (
            b, pat, PAT_NAME[pat], nb, best, bus, au, au / bus, au / b10, steady / b10, an / b10,
            a9 / bus, mp, au / mp,
            c.get("auto", {}).get("cands", "?"), c.get("auto-noprune", {}).get("cands", "?"),
            c.get("auto", {}).get("lrn_ms", 0), c.get("auto-noprune", {}).get("lrn_ms", 0),
            ans / b10, c.get("auto-nostop", {}).get("lrn_ms", 0)))
        summary[(b, nb)].append(au / bus)
        dat.append((b, pat, nb, [c.get(a, {}).get("us", float("nan")) / bus
                                 for a in ALGS + ["auto", "auto-noprune", "mpich", "auto-nine",
                                              "auto-nostop"]]))
    md.append("")
    md.append("cand. = candidates with / without pruning (from the library's verbose log).  "
              "learn ms = time of the learning calls, re-learning included (max over ranks).\n")
    for (b, nb), v in sorted(summary.items()):
        st = summary_steady[(b, nb)]
        df = summary_def[(b, nb)]
        b10 = summary_b10[(b, nb)]
        md.append("* %s, %d bytes: auto/best fixed over the placements: max %.2f, geometric "
                  "mean %.2f; auto/best10: max %.2f (<= 1.10 in %d of %d); after learning "
                  "(/best10): max %.2f, geometric mean %.2f; auto/MPI default: %.2f..%.2f" % (
                      b, nb, max(v), gmean(v), max(b10), sum(1 for x in b10 if x <= 1.10),
                      len(b10), max(st), gmean(st), min(df), max(df)))
    md.append("")

    # model check
    md.append("## Model check: predicted / measured per algorithm\n")
    md.append("Hockney with the L, B the runs measured (ping-pong rank 0 - rank 7 "
              "of the first run, pattern 4, cached).  Two numbers per cell: "
              "paper (one system-wide factor) / steps (per-step link analysis).  "
              "`norm err` = geometric mean over the nine of "
              "max(r, 1/r) where r = (pred/pred_best)/(meas/meas_best): how well "
              "the mode ranks the algorithms (what pruning needs).\n")
    for b in builds:
        pr = params(results, b)
        if not pr:
            continue
        L, B = pr
        md.append("### %s (L = %.3g s, B = %.3g s/byte = %.1f Mbit/s)\n" % (b, L, B, 8e-6 / B))
        md.append("| pattern | bytes | s_paper | " + " | ".join(ALGS) +
                  " | norm err paper | norm err steps | kept paper | kept steps |")
        md.append("|---|---|---|" + "---|" * len(ALGS) + "---|---|---|---|")
        errs = {"paper": [], "steps": []}
        ratios = {"paper": defaultdict(list), "steps": defaultdict(list)}
        for key in sorted(k for k in cells if k[0] == b):
            _, pat, nb = key
            c = cells[key]
            if not all(a in c for a in ALGS):
                continue
            pred, kept, sh = predict(sweep, fabric, pat, nb, L, B)
            meas = {a: c[a]["us"] * 1e-6 for a in ALGS}
            mbest = min(meas.values())
            cols = []
            ne = {}
            for mode in ("paper", "steps"):
                pbest = min(pred[mode].values())
                e = [max(x, 1 / x) for x in
                     ((pred[mode][a] / pbest) / (meas[a] / mbest) for a in ALGS)]
                ne[mode] = gmean(e)
                errs[mode].append(ne[mode])
                for a in ALGS:
                    ratios[mode][a].append(pred[mode][a] / meas[a])
            for a in ALGS:
                cols.append("%.2f/%.2f" % (pred["paper"][a] / meas[a], pred["steps"][a] / meas[a]))

            def kshort(k):
                return "all" if len(k) == 9 else "all but " + ",".join(
                    a for a in ALGS if a not in k) if len(k) >= 5 else ",".join(k)
            md.append("| %d | %d | %.2f | %s | %.2f | %.2f | %s | %s |" % (
                pat, nb, sh.get("paper", 0), " | ".join(cols), ne["paper"], ne["steps"],
                kshort(kept.get("paper", [])), kshort(kept.get("steps", []))))
        md.append("")
        for mode in ("paper", "steps"):
            if errs[mode]:
                md.append("* %s: norm err geometric mean %.3f; pred/meas per algorithm "
                          "(geometric mean over cells): %s" % (
                              mode, gmean(errs[mode]),
                              ", ".join("%s %.2f" % (a, gmean(ratios[mode][a])) for a in ALGS)))
        md.append("")

    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    # plot data: one block per (build, bytes), rows = patterns
    names = ALGS + ["auto", "auto-noprune", "mpich", "auto-nine", "auto-nostop"]
    with open(os.path.join(results, "times.dat"), "w") as f:
        f.write("# time / best fixed; columns: pattern " + " ".join(names) + "\n")
        blocks = sorted({(d[0], d[2]) for d in dat})
        for (b, nb) in blocks:
            f.write("# %s %d\n" % (b, nb))
            for d in sorted(x for x in dat if (x[0], x[2]) == (b, nb)):
                f.write("%d %s\n" % (d[1], " ".join("%.4f" % x for x in d[3])))
            f.write("\n\n")
    gp = ["set terminal pngcairo size 1400,%d font ',9'" % (420 * max(1, len(blocks))),
          "set output '%s'" % os.path.join(results, "times.png"),
          "set multiplot layout %d,1" % max(1, len(blocks)),
          "set style data histograms", "set style histogram clustered gap 1",
          "set termoption noenhanced",
          "set style fill solid 0.8 border -1", "set logscale y 2", "set yrange [0.25:*]",
          "set ylabel 'time / best fixed'", "set key outside right",
          "set xlabel 'placement pattern'", "set grid y"]
    for i, (b, nb) in enumerate(blocks):
        gp.append("set title '%s, %d bytes per rank, 8 ranks'" % (b, nb))
        colors = ["#9467bd", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#1f77b4",
                  "#aec7e8", "#8c564b", "#c49c94", "#000000", "#7f7f7f", "#ff7f0e",
                  "#17becf", "#bcbd22"]
        rows = [x for x in dat if (x[0], x[2]) == (b, nb)]
        # a mode not measured at this size has no bar (gnuplot refuses an empty column)
        shown = [j for j in range(len(names)) if any(r[3][j] == r[3][j] for r in rows)]
        gp.append("plot " + ", ".join(
            "'%s' index %d using %d:xtic(1) title '%s' lc rgb '%s'%s" % (
                os.path.join(results, "times.dat"), i, j + 2, n, colors[j],
                " fill pattern 4" if n.startswith("auto") else "")
            for j, n in ((j, names[j]) for j in shown)))
    gp.append("unset multiplot")
    with open(os.path.join(results, "times.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        subprocess.run(["gnuplot", os.path.join(results, "times.gp")], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("gnuplot failed:", e, file=sys.stderr)
    print(open(os.path.join(results, "report.md")).read())


if __name__ == "__main__":
    main()
