#!/usr/bin/env bash
# bench/threads/run.sh -- MPI_THREAD_MULTIPLE latency and message rate with
# 1, 2 and 4 threads per process, llc beside Debian's MPICH and Open MPI in
# one run (two processes on this host, each MPI with its own launcher).
#
#   run.sh [--llc-prefix DIR] [--only llc,mpich,ompi] [--threads 1,2,4]
#          [--sizes 8,1024] [--repeat 3] [--target 0.3] [--out DIR]
#          [--comm-per-thread] [--vci-prefix DIR [--vcis N]]
#
# --comm-per-thread: every thread on its own duplicate of MPI_COMM_WORLD
# (passed to mt_pingpong for every MPI).  --vci-prefix: one more column,
# llc-vci, the llc build configured with --enable-thread-cs=per-vci under DIR,
# run with MPIR_CVAR_CH4_NUM_VCIS=N (default 2).
# Runs bench/threads/mt_pingpong.c --repeat times per MPI and thread count,
# the MPIs interleaved; the table (results.md) gives the median of the
# repeats and llc's figure over Debian MPICH's and over the better peer's.
# Output under --out (default bench-out/threads/<date-time>): commands.txt,
# raw/, results.md.  See doc/bench-threads.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" only=llc,mpich,ompi threads=1,2,4 sizes=8,1024 repeat=3 target=0.3 out=""
comm_per_thread=0 vci_prefix="" vcis=2
while [ $# -gt 0 ]; do
    case $1 in
        --comm-per-thread) comm_per_thread=1; shift ;;
        --llc-prefix|--only|--threads|--sizes|--repeat|--target|--out|--vci-prefix|--vcis)
            [ $# -ge 2 ] || { echo "threads: $1 needs a value" >&2; exit 2; }
            v=${1#--}; v=${v//-/_}; [ "$v" = llc_prefix ] && v=prefix
            printf -v "$v" '%s' "$2"; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
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
if [ -n "$vci_prefix" ]; then
    [ -x "$vci_prefix/bin/mpicc" ] || { echo "threads: --vci-prefix $vci_prefix has no bin/mpicc" >&2; exit 2; }
    grep -q 'per-vci' < <("$vci_prefix/bin/mpichversion" 2>/dev/null) ||
        { echo "threads: $vci_prefix is not configured with --enable-thread-cs=per-vci (see its bin/mpichversion)" >&2; exit 2; }
    echo "build llc-vci: $vci_prefix/bin/mpicc -O2 -pthread -o $out/bin/mt_pingpong.llc-vci" >> "$out/commands.txt"
    "$vci_prefix/bin/mpicc" -O2 -pthread -o "$out/bin/mt_pingpong.llc-vci" "$TOP/bench/threads/mt_pingpong.c" \
        2> "$out/raw/build-llc-vci.err" || { echo "threads: building for llc-vci failed, see $out/raw/build-llc-vci.err" >&2; exit 1; }
    RUN[llc-vci]="$vci_prefix/bin/mpiexec -n 2 -genv MPIR_CVAR_CH4_NUM_VCIS $vcis"
    mpis+=(llc-vci)
fi

nt=$(echo "${threads//,/ }" | wc -w)
total=$(( repeat * nt * ${#mpis[@]} )) k=0 start=$(date +%s)
for r in $(seq 1 "$repeat"); do
    for t in ${threads//,/ }; do
        for i in $(seq 0 $(( ${#mpis[@]} - 1 ))); do
            m=${mpis[$(( (i + r - 1) % ${#mpis[@]} ))]}
            k=$((k + 1))
            echo "threads: run $k of $total: $m, $t threads, repeat $r/$repeat ($(( $(date +%s) - start )) s elapsed)" >&2
            args=(--threads "$t" --sizes "$sizes" --target "$target")
            [ $comm_per_thread = 0 ] || args+=(--comm-per-thread)
            echo "$m: ${RUN[$m]} $out/bin/mt_pingpong.$m ${args[*]}" >> "$out/commands.txt"
            # shellcheck disable=SC2086 # the launcher's words
            timeout 300 ${RUN[$m]} "$out/bin/mt_pingpong.$m" "${args[@]}" > "$out/raw/$m.t$t.r$r" 2> "$out/raw/$m.t$t.r$r.err" ||
                { echo "threads: $m failed (see $out/raw/$m.t$t.r$r.err)" >&2; mv "$out/raw/$m.t$t.r$r" "$out/raw/$m.t$t.r$r.failed"; }
        done
    done
done
python3 "$TOP/bench/threads/report.py" "$out" "${mpis[@]}" | tee "$out/results.md"
echo "threads: results in $out/results.md" >&2
