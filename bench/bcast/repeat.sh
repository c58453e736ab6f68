#!/bin/sh
# Repeats the max-effect benchmark of the llc build R times for each of
# several settings, interleaved (setting A, B, ... then again A, B, ...), so
# that a slow spell of the machine hits every setting alike, and summarises
# the Opt/Ori ratios per setting with their median and spread
# (bench/bcast/repeat_summary.py).  One run of 100 broadcasts of 40 us is
# far too noisy on an oversubscribed machine to judge a 5 % target.
#
#   bench/bcast/repeat.sh [-np 16] [-r 10] [-o OUTDIR] --llc-prefix DIR \
#       [--set "NAME:VAR=VAL VAR=VAL"]... [-- MAXEFFECT ARGS]
# Default settings: dev (LLC_BCAST_NOISE=dev) and robust (LLC_BCAST_NOISE=robust).
# Default program arguments: -i 100 -w sleep -n 0,160 -s 1,16384 -m Ori,Opt
# Runs every mpiexec at nice -20 (as root); see doc/coll-bcast.md for why
# the scheduler's autogroup should be off while other work runs:
#   echo 0 > /proc/sys/kernel/sched_autogroup_enabled
# Output: OUTDIR/<setting>-<rep>.txt, OUTDIR/summary.md (also printed);
# OUTDIR (-o|--out) defaults to $BENCH_OUT/bcast/<date>_<time>-repeat,
# BENCH_OUT to $PWD/bench-out (ignored by git).
set -e
NP=16
REPS=10
OUT=
LLC=""
SETS=""
while [ $# -gt 0 ]; do
    case "$1" in
        -np) NP=$2; shift 2 ;;
        -r) REPS=$2; shift 2 ;;
        -o|--out) OUT=$2; shift 2 ;;
        --llc-prefix) LLC=$(cd "$2" && pwd); shift 2 ;;
        --set) SETS="$SETS
$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "repeat.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$LLC" ] || { echo "repeat.sh: give --llc-prefix (the installed mpich-llc)" >&2; exit 2; }
[ -n "$SETS" ] || SETS="
dev:LLC_BCAST_NOISE=dev
robust:LLC_BCAST_NOISE=robust"
[ $# -gt 0 ] || set -- -i 100 -w sleep -n 0,160 -s 1,16384 -m Ori,Opt
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "$OUT" ] || OUT=${BENCH_OUT:-$PWD/bench-out}/bcast/$(date +%Y-%m-%d_%H%M%S)-repeat
mkdir -p "$OUT"
BIN=$OUT/maxeffect
nice -n 10 "$LLC/bin/mpicxx" -std=c++17 -O2 -o "$BIN" "$SRC/bench/bcast/bcast_maxeffect.cpp" -ldl
NI=-20
[ "$(id -u)" = 0 ] || NI=0
nsets=$(printf '%s\n' "$SETS" | grep -c .)
total=$((REPS * nsets))
done_runs=0
start=$(date +%s)
rep=1
while [ $rep -le "$REPS" ]; do
    printf '%s\n' "$SETS" | grep . | while IFS= read -r line; do
        name=${line%%:*}
        vars=${line#*:}
        # shellcheck disable=SC2086
        env $vars nice -n $NI "$LLC/bin/mpiexec" -n "$NP" "$BIN" "$@" < /dev/null > "$OUT/$name-$rep.txt" 2>&1 ||
            { echo "repeat.sh: run $name-$rep failed, see $OUT/$name-$rep.txt" >&2; exit 1; }
    done
    done_runs=$((done_runs + nsets))
    echo "repeat.sh: $done_runs/$total runs done ($(( $(date +%s) - start )) s)" >&2
    rep=$((rep + 1))
done
python3 "$SRC/bench/bcast/repeat_summary.py" "$OUT" | tee "$OUT/summary.md"
