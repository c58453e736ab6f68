#!/usr/bin/env python3
"""bench/threads/report.py OUT MPI... - the table of bench/threads/run.sh:
median of the repeats per (MPI, mode, threads, size), llc over Debian MPICH
and over the better peer (latency: lower is better; rate: higher is); with
an llc-vci column (the per-VCI build), its figures over Debian MPICH's and
its rates with several threads over llc's with one."""
import glob
import os
import statistics
import sys

out, mpis = sys.argv[1], sys.argv[2:]
vals = {}  # (mpi, mode, threads, size) -> [values]
for m in mpis:
    for path in glob.glob(os.path.join(out, "raw", f"{m}.t*.r*")):
        if path.endswith((".err", ".failed")):
            continue
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5 and p[0] in ("latency", "rate"):
                    vals.setdefault((m, p[0], int(p[1]), int(p[2])), []).append(float(p[3]))

keys = sorted({(k[1], k[2], k[3]) for k in vals})
peers = [m for m in mpis if m not in ("llc", "llc-vci")]
vci = "llc-vci" in mpis
print("| mode | threads | size | " + " | ".join(mpis) + (" | llc / mpich | llc / best |" if "llc" in mpis and peers else " |")
      + (" llc-vci / mpich |" if vci and "mpich" in mpis else ""))
print("|---|---:|---:|" + "---:|" * len(mpis) + ("---:|---:|" if "llc" in mpis and peers else "")
      + ("---:|" if vci and "mpich" in mpis else ""))
med = {}
for mode, t, s in keys:
    row = []
    for m in mpis:
        v = vals.get((m, mode, t, s))
        med[(m, mode, t, s)] = statistics.median(v) if v else None
        unit = "us" if mode == "latency" else "M/s"
        row.append(f"{med[(m, mode, t, s)]:.3f} {unit}" if v else "failed")
    extra = ""
    if "llc" in mpis and peers:
        llc = med[("llc", mode, t, s)]
        got = [med[(p, mode, t, s)] for p in peers if med[(p, mode, t, s)]]
        mp = med.get(("mpich", mode, t, s))
        best = (min(got) if mode == "latency" else max(got)) if got else None
        r1 = f"{llc / mp:.2f}" if llc and mp else "-"
        r2 = f"{llc / best:.2f}" if llc and best else "-"
        extra = f" | {r1} | {r2}"
    if vci and "mpich" in mpis:
        v, mp = med[("llc-vci", mode, t, s)], med.get(("mpich", mode, t, s))
        extra += f" | {v / mp:.2f}" if v and mp else " | -"
    print(f"| {mode} | {t} | {s} | " + " | ".join(row) + extra + " |")
if "llc" in mpis:
    print()
    for s in sorted({k[2] for k in keys}):
        one = med.get(("llc", "rate", 1, s))
        for t in sorted({k[1] for k in keys if k[1] > 1}):
            many = med.get(("llc", "rate", t, s))
            if one and many:
                print(f"llc message rate, {s} B: {t} threads / 1 thread = {many / one:.2f}")
            v = med.get(("llc-vci", "rate", t, s))
            if one and v:
                print(f"llc-vci message rate, {s} B: {t} threads / llc with 1 thread = {v / one:.2f}")
