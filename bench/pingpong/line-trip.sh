#!/usr/bin/env bash
# bench/pingpong/line-trip.sh BINDIR -- the machine's placement at this
# moment: the median round trip of one cache line between CPUs 0 and 1 in
# nanoseconds (bench/pingpong/cacheline.c, built into BINDIR on first use),
# or "unknown" when it cannot be built or run (one CPU, no compiler).
# run.sh and msgrate.sh record it before and after their runs: on a VM whose
# vCPU placement changes, it says which placement a table was measured in
# (doc/bench-pingpong.md).
set -uo pipefail
bindir=${1:?usage: line-trip.sh BINDIR}
src=$(cd "$(dirname "$0")" && pwd)/cacheline.c
mkdir -p "$bindir"
if [ ! -x "$bindir/cacheline" ]; then
    ${CC:-cc} -O2 -o "$bindir/cacheline" "$src" 2>/dev/null || { echo unknown; exit 0; }
fi
line=$(timeout 20 "$bindir/cacheline" --rounds 50000 --repeat 5 2>/dev/null | tail -1)
read -r _ trip _ <<< "$line"
echo "${trip:-unknown}"
