#!/usr/bin/env python3
"""bench/rma/report.py OUT MPI... - the table of bench/rma/run.sh: median
of the repeats per (MPI, test, size), and llc over the better of Debian
MPICH and Open MPI (latency: lower is better; bandwidth: higher is)."""
import glob
import os
import statistics
import sys

out, mpis = sys.argv[1], sys.argv[2:]
vals = {}  # (mpi, test, size) -> [values]
order = []
for m in mpis:
    for path in sorted(glob.glob(os.path.join(out, "raw", f"{m}.r*"))):
        if path.endswith((".err", ".failed")):
            continue
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and not p[0].startswith("#"):
                    key = (p[0], int(p[1]))
                    if key not in order:
                        order.append(key)
                    vals.setdefault((m,) + key, []).append(float(p[2]))

peers = [m for m in mpis if m in ("mpich", "ompi")]
ratio = "llc" in mpis and peers
print("| test | size | " + " | ".join(mpis) + (" | llc / best peer |" if ratio else " |"))
print("|---|---:|" + "---:|" * len(mpis) + ("---:|" if ratio else ""))
for test, size in order:
    lat = test.endswith("_lat")
    unit = "us" if lat else "MB/s"
    med = {m: statistics.median(vals[(m, test, size)]) for m in mpis if (m, test, size) in vals}
    row = [f"{med[m]:.3f} {unit}" if lat and m in med else f"{med[m]:.0f} {unit}" if m in med else "failed"
           for m in mpis]
    extra = ""
    if ratio:
        got = [med[p] for p in peers if p in med]
        best = (min(got) if lat else max(got)) if got else None
        extra = f" | {med['llc'] / best:.2f}" if best and "llc" in med else " | -"
    print(f"| {test} | {size} | " + " | ".join(row) + extra + " |")
