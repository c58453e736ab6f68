#!/usr/bin/env bash
# bench/threads/run.sh -- MPI_THREAD_MULTIPLE latency and message rate with
# 1, 2 and 4 threads per process, llc beside Debian's MPICH and Open MPI in
# one run (two processes on this host, each MPI with its own launcher).
#
#   run.sh [--llc-prefix DIR] [--only llc,mpich,ompi] [--threads 1,2,4]
#          [--sizes 8,1024] [--repeat 3] [--target 0.3] [--out DIR]
#
# Runs bench/threads/mt_pingpong.c --repeat times per MPI and thread count,
# the MPIs interleaved; the table (results.md) gives the median of the
# repeats and llc's figure over Debian MPICH's and over the better peer's.
# Output under --out (default bench-out/threads/<date-time>): commands.txt,
# raw/, results.md.  See doc/bench-threads.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" only=llc,mpich,ompi threads=1,2,4 sizes=8,1024 repeat=3 target=0.3 out=""
while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix|--only|--threads|--sizes|--repeat|--target|--out)
            [ $# -ge 2 ] || { echo "threads: $1 needs a value" >&2; exit 2; }
            v=${1#--}; v=${v//-/_}; [ "$v" = llc_prefix ] && v=prefix
            printf -v "$v" '%s' "$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "threads: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
out=${out:-$TOP/bench-out/threads/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
echo "# $0 $*" > "$out/commands.txt"
# shellcheck source=../lib/three_mpis.sh
. "$TOP/bench/lib/three_mpis.sh"
three_mpis_build threads "$prefix" "$only" "$TOP/bench/threads/mt_pingpong.c" "$out" -pthread
mpis=("${MPIS[@]}")

nt=$(echo "${threads//,/ }" | wc -w)
total=$(( repeat * nt * ${#mpis[@]} )) k=0 start=$(date +%s)
for r in $(seq 1 "$repeat"); do
    for t in ${threads//,/ }; do
        for i in $(seq 0 $(( ${#mpis[@]} - 1 ))); do
            m=${mpis[$(( (i + r - 1) % ${#mpis[@]} ))]}
            k=$((k + 1))
            echo "threads: run $k of $total: $m, $t threads, repeat $r/$repeat ($(( $(date +%s) - start )) s elapsed)" >&2
            args=(--threads "$t" --sizes "$sizes" --target "$target")
            echo "$m: ${RUN[$m]} $out/bin/mt_pingpong.$m ${args[*]}" >> "$out/commands.txt"
            # shellcheck disable=SC2086 # the launcher's words
            timeout 300 ${RUN[$m]} "$out/bin/mt_pingpong.$m" "${args[@]}" > "$out/raw/$m.t$t.r$r" 2> "$out/raw/$m.t$t.r$r.err" ||
                { echo "threads: $m failed (see $out/raw/$m.t$t.r$r.err)" >&2; mv "$out/raw/$m.t$t.r$r" "$out/raw/$m.t$t.r$r.failed"; }
        done
    done
done
python3 "$TOP/bench/threads/report.py" "$out" "${mpis[@]}" | tee "$out/results.md"
echo "threads: results in $out/results.md" >&2
