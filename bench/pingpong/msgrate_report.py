#!/usr/bin/env python3
"""msgrate_report.py OUT INSTR WINDOW CG_WINDOWS MPI... -- the table of
bench/pingpong/msgrate.sh: median message rate per MPI and size over the
repeats (OUT/raw/<mpi>.r<k>), llc over the better of the others, and the
instructions per message (from msgrate.c's counters, or from callgrind
files OUT/raw/cg-<mpi>-<size>.<pid>)."""
import glob
import re
import statistics
import subprocess
import sys

out, instr, window, cg_windows, mpis = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]


def runs(mpi):
    """{size: [(rate, instr_s, instr_r), ...]} over the repeats that did not fail"""
    res = {}
    for path in sorted(glob.glob(f"{out}/raw/{mpi}.r*")):
        if not re.search(r"\.r\d+$", path):
            continue
        for line in open(path):
            p = line.split()
            if len(p) >= 7 and not line.startswith("#"):
                val = lambda x: None if x == "-" else float(x)
                res.setdefault(int(p[0]), []).append((float(p[1]), val(p[2]), val(p[3])))
    return res


def callgrind(mpi, size):
    """(Ir in MPI_Isend per message, in MPI_Irecv per message, loop Ir per message sender, receiver)"""
    msgs = cg_windows * window
    per = {}
    for path in glob.glob(f"{out}/raw/cg-{mpi}-{size}.*"):
        if path.endswith(".txt"):
            continue
        try:
            text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                                  capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        found = {"isend": 0, "irecv": 0, "loop": 0}
        for line in text.splitlines():
            m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line)
            if not m:
                continue
            ir, name = int(m.group(1).replace(",", "")), m.group(2)
            for key, pat in (("isend", r"[:\s]P?MPI_Isend\b"), ("irecv", r"[:\s]P?MPI_Irecv\b"),
                             ("loop", r"[:\s]window_round\b")):
                if re.search(pat, name):
                    found[key] = max(found[key], ir)
        per[path] = found
    if not per:
        return None
    sender = max(per.values(), key=lambda f: f["isend"])
    receiver = max(per.values(), key=lambda f: f["irecv"])
    return (sender["isend"] / msgs, receiver["irecv"] / msgs, sender["loop"] / msgs, receiver["loop"] / msgs)


data = {m: runs(m) for m in mpis}
sizes = sorted(set().union(*[set(d) for d in data.values()]))
fmt = lambda v: f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"
print("# Message rate within a node (bench/pingpong/msgrate.sh)\n")
print(f"Two ranks on one host, windows of {window} MPI_Isend / MPI_Irecv and an acknowledgement;"
      " median of the repeats (runs per MPI: " +
      ", ".join(f"{m} {len(next(iter(data[m].values()), []))}" for m in mpis) + ").\n")
others = [m for m in mpis if m != "llc"]
head = "| size | " + " | ".join(mpis) + (" | llc / best other |" if "llc" in mpis and others else " |")
print(head)
print("|" + "---:|" * (head.count("|") - 1))
for s in sizes:
    med = {m: statistics.median(r[0] for r in data[m][s]) for m in mpis if s in data[m]}
    row = f"| {s} B | " + " | ".join(fmt(med[m]) if m in med else "-" for m in mpis)
    if "llc" in med and any(o in med for o in others):
        best = max(med[o] for o in others if o in med)
        row += f" | **{med['llc'] / best:.2f}** |"
    elif "llc" in mpis and others:
        row += " | - |"
    else:
        row += " |"
    print(row)

print(f"\nInstructions per message ({instr}):\n")
if instr == "perf":
    print("| size | MPI | sender | receiver |\n|---:|---|---:|---:|")
    for s in sizes:
        for m in mpis:
            rows = data[m].get(s, [])
            snd = [r[1] for r in rows if r[1] is not None]
            rcv = [r[2] for r in rows if r[2] is not None]
            if snd and rcv:
                print(f"| {s} B | {m} | {statistics.median(snd):.0f} | {statistics.median(rcv):.0f} |")
elif instr == "callgrind":
    print(f"callgrind, {cg_windows} windows: instructions inside MPI_Isend (sender) and MPI_Irecv"
          " (receiver) per message, and of the whole loop per message (with the waiting side's polling).\n")
    print("| size | MPI | in MPI_Isend | in MPI_Irecv | loop, sender | loop, receiver |\n|---:|---|---:|---:|---:|---:|")
    for s in sizes:
        for m in mpis:
            c = callgrind(m, s)
            if c:
                print(f"| {s} B | {m} | {c[0]:.0f} | {c[1]:.0f} | {c[2]:.0f} | {c[3]:.0f} |")
else:
    print("not measured (no counters, no valgrind)")
