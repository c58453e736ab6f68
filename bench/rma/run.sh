#!/usr/bin/env bash
# bench/rma/run.sh -- one-sided latency and bandwidth between two
# processes, on this host or (--hosts) on two emulated hosts: llc beside
# Debian's MPICH and Open MPI in one run, each with its own launcher.
#
#   run.sh [--llc-prefix DIR] [--only llc,mpich,ompi] [--repeat 3]
#          [--tests put_lat,get_lat,put_bw,get_bw,acc_lat,fop_lat,cas_lat,lock_lat]
#          [--sizes 8,1024,65536,1048576] [--target 0.2] [--create] [--hosts]
#          [--llc-before DIR] [--out DIR]
#
# --hosts: the two processes on two hosts of the emulated cluster
# (maint/llc-netns up 2, network namespaces joined by veth pairs: needs
# root), launched by maint/llc-mpiexec-hosts with each MPI's own launcher.
# Runs bench/rma/rma_bench.c --repeat times per MPI, the MPIs interleaved;
# results.md gives the median of the repeats and llc over the better peer
# (latency: lower is better; bandwidth: higher is).  --create measures
# windows of MPI_Win_create instead of MPI_Win_allocate.  --llc-before DIR
# adds a column "llc-before": the same llc binary run against the libraries
# of another llc install (an earlier build, for before/after figures).
# Output under --out (default bench-out/rma/<date-time>): commands.txt,
# raw/, results.md.  See doc/bench-rma.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" only=llc,mpich,ompi repeat=3 tests="" sizes="" target=0.2 create=0 hosts=0 llc_before="" out=""
while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix|--only|--repeat|--tests|--sizes|--target|--llc-before|--out)
            [ $# -ge 2 ] || { echo "rma: $1 needs a value" >&2; exit 2; }
            v=${1#--}; v=${v//-/_}; [ "$v" = llc_prefix ] && v=prefix
            printf -v "$v" '%s' "$2"; shift 2 ;;
        --create) create=1; shift ;;
        --hosts) hosts=1; shift ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "rma: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
out=${out:-$TOP/bench-out/rma/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
echo "# $0 $*" > "$out/commands.txt"
# shellcheck source=../lib/three_mpis.sh
. "$TOP/bench/lib/three_mpis.sh"
three_mpis_build rma "$prefix" "$only" "$TOP/bench/rma/rma_bench.c" "$out"
mpis=("${MPIS[@]}")
if [ -n "$llc_before" ]; then
    [ -d "$llc_before/lib" ] && [ -x "$out/bin/rma_bench.llc" ] ||
        { echo "rma: --llc-before needs an llc install with lib/ and llc in --only" >&2; exit 2; }
    cp "$out/bin/rma_bench.llc" "$out/bin/rma_bench.llc-before"
    RUN[llc-before]="env LD_LIBRARY_PATH=$llc_before/lib $llc_before/bin/mpiexec -n 2"
    mpis+=(llc-before)
fi

if [ "$hosts" = 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "rma: --hosts needs root (network namespaces)" >&2; exit 2; }
    [ ! -f /run/llc-netns/hosts ] || "$TOP/maint/llc-netns" down > /dev/null 2>&1 || true
    "$TOP/maint/llc-netns" up 2 >> "$out/commands.txt" 2>&1 ||
        { echo "rma: maint/llc-netns up 2 failed (see $out/commands.txt)" >&2; exit 1; }
    trap '"$TOP/maint/llc-netns" down > /dev/null 2>&1 || true' EXIT
    [ -z "$llc_before" ] || { echo "rma: --hosts does not take --llc-before" >&2; exit 2; }
    for m in "${mpis[@]}"; do  # the same launcher (it adds its own options), on h0 and h1
        RUN[$m]="$TOP/maint/llc-mpiexec-hosts --mpiexec ${RUN[$m]%% *} -hosts h0,h1 -n 2"
    done
fi

args=(--target "$target")
[ -n "$tests" ] && args+=(--tests "$tests")
[ -n "$sizes" ] && args+=(--sizes "$sizes")
[ "$create" = 1 ] && args+=(--create)
total=$(( repeat * ${#mpis[@]} )) k=0 start=$(date +%s)
for r in $(seq 1 "$repeat"); do
    for i in $(seq 0 $(( ${#mpis[@]} - 1 ))); do
        m=${mpis[$(( (i + r - 1) % ${#mpis[@]} ))]}
        k=$((k + 1))
        echo "rma: run $k of $total: $m, repeat $r/$repeat ($(( $(date +%s) - start )) s elapsed)" >&2
        echo "$m: ${RUN[$m]} $out/bin/rma_bench.$m ${args[*]}" >> "$out/commands.txt"
        # shellcheck disable=SC2086 # the launcher's words
        timeout 600 ${RUN[$m]} "$out/bin/rma_bench.$m" "${args[@]}" > "$out/raw/$m.r$r" 2> "$out/raw/$m.r$r.err" ||
            { echo "rma: $m failed (see $out/raw/$m.r$r.err)" >&2; mv "$out/raw/$m.r$r" "$out/raw/$m.r$r.failed"; }
    done
done
python3 "$TOP/bench/rma/report.py" "$out" "${mpis[@]}" | tee "$out/results.md"
echo "rma: results in $out/results.md" >&2
