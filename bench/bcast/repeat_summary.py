#!/usr/bin/env python3
"""Summarise bench/bcast/repeat.sh output: for each setting, load and size,
the Opt/Ori ratio of the average and of the overall time in every
repetition, as median [min, max], plus the ratio of the medians of the
raw times (Opt median / Ori median), which is less sensitive to one
slow run.

usage: repeat_summary.py OUTDIR   (files OUTDIR/<setting>-<rep>.txt)
"""
import collections
import os
import re
import statistics
import sys

LINE = re.compile(r"^load\s+(\d+)\s+bytes\s+(\d+)\s+(\w+)\s+overall\s+([\d.]+)\s+ms\s+average\s+([\d.]+)\s+ms")
FILE = re.compile(r"^(.+)-(\d+)\.txt$")


def main(outdir):
    # runs[setting][(load, size)] -> list of {mode: (overall, average)}
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    for name in sorted(os.listdir(outdir)):
        m = FILE.match(name)
        if not m:
            continue
        setting = m.group(1)
        cells = collections.defaultdict(dict)
        with open(os.path.join(outdir, name)) as f:
            for line in f:
                lm = LINE.match(line)
                if lm:
                    key = (int(lm.group(1)), int(lm.group(2)))
                    cells[key][lm.group(3)] = (float(lm.group(4)), float(lm.group(5)))
        for key, modes in cells.items():
            runs[setting][key].append(modes)
    if not runs:
        sys.exit("repeat_summary.py: no <setting>-<rep>.txt files with results in " + outdir)

    def spread(xs):
        return "%.2f [%.2f, %.2f]" % (statistics.median(xs), min(xs), max(xs))

    print("| setting | load | bytes | runs | avg Opt/Ori: median [min, max] | overall Opt/Ori | "
          "median avg Ori, Opt (ms) | ratio of medians (avg) | runs with avg Opt/Ori <= 1.05 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for setting in sorted(runs):
        for key in sorted(runs[setting]):
            pairs = [r for r in runs[setting][key] if "Ori" in r and "Opt" in r]
            if not pairs:
                continue
            avg = [r["Opt"][1] / r["Ori"][1] for r in pairs]
            ovl = [r["Opt"][0] / r["Ori"][0] for r in pairs]
            ori = statistics.median(r["Ori"][1] for r in pairs)
            opt = statistics.median(r["Opt"][1] for r in pairs)
            ok = sum(1 for x in avg if x <= 1.05)
            print("| %s | %d | %d | %d | %s | %s | %.3f, %.3f | %.2f | %d of %d |" %
                  (setting, key[0], key[1], len(pairs), spread(avg), spread(ovl), ori, opt,
                   opt / ori, ok, len(pairs)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
