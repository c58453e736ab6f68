#!/bin/sh
# The paper's sparse-matrix grid (N = 4000 and 14000; R = 0.1, 0.05, 0.01;
# C = 0.2 and 0.6) with bench/bcast/bcast_spmm.cpp on the llc build, one
# line per cell and mode in OUTDIR/grid.md (the per-cell outputs next to it).
#
#   bench/bcast/spmm_grid.sh --llc-prefix DIR [-np 8] [-o OUTDIR]
#       [--rows4000 1000] [--rows14000 200] [--nice 10] [-m Ori,Opt,Ide]
# --rowsN broadcasts only the first rows of the N matrix (0 = all) so that a
# cell takes seconds to a minute on 2 cores; the paper multiplies all rows.
# OUTDIR (-o|--out) defaults to $BENCH_OUT/bcast/<date>_<time>-spmm-grid,
# BENCH_OUT to $PWD/bench-out (ignored by git).
set -e
NP=8
OUT=
LLC=""
ROWS4=1000
ROWS14=200
NI=10
MODES=Ori,Opt,Ide
while [ $# -gt 0 ]; do
    case "$1" in
        -np) NP=$2; shift 2 ;;
        -o|--out) OUT=$2; shift 2 ;;
        --llc-prefix) LLC=$(cd "$2" && pwd); shift 2 ;;
        --rows4000) ROWS4=$2; shift 2 ;;
        --rows14000) ROWS14=$2; shift 2 ;;
        --nice) NI=$2; shift 2 ;;
        -m) MODES=$2; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "spmm_grid.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$LLC" ] || { echo "spmm_grid.sh: give --llc-prefix (the installed mpich-llc)" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "$OUT" ] || OUT=${BENCH_OUT:-$PWD/bench-out}/bcast/$(date +%Y-%m-%d_%H%M%S)-spmm-grid
mkdir -p "$OUT"
"$LLC/bin/mpicxx" -std=c++17 -O2 -o "$OUT/spmm" "$SRC/bench/bcast/bcast_spmm.cpp" -ldl
printf '| N | R | C | procs | mode | workload [ms] | broadcast [ms] | total [ms] | bcast/Ori | total/Ori | rows |\n|---|---|---|---|---|---|---|---|---|---|---|\n' > "$OUT/grid.md"
cell=0
start=$(date +%s)
for N in 4000 14000; do
    rows=$ROWS4
    [ "$N" = 14000 ] && rows=$ROWS14
    for R in 0.1 0.05 0.01; do
        for C in 0.2 0.6; do
            cell=$((cell + 1))
            f=$OUT/spmm-$NP-N$N-R$R-C$C.txt
            nice -n "$NI" "$LLC/bin/mpiexec" -n "$NP" "$OUT/spmm" -N "$N" -R "$R" -C "$C" -rows "$rows" -m "$MODES" \
                < /dev/null > "$f" 2>&1 || { echo "spmm_grid.sh: cell N=$N R=$R C=$C failed, see $f" >&2; exit 1; }
            grep "^| $N " "$f" | sed "s/\$/ $rows |/" >> "$OUT/grid.md"
            echo "spmm_grid.sh: cell $cell/12 (N=$N R=$R C=$C) done, $(( $(date +%s) - start )) s" >&2
        done
    done
done
cat "$OUT/grid.md"
