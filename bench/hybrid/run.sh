#!/usr/bin/env bash
# run.sh - bursty source over the receiver-driven hybrid on two emulated
# hosts: does the receiver move the source onto tcp before its bursts?
#
#   bench/hybrid/run.sh --llc-prefix PREFIX [--out DIR] [--cycles N]
#       [--cycle-periods K] [--burst B] [--bytes S] [--period-ms P]
#       [--configs "name=ENV[,ENV...] ..."] [--down]
#
# Builds burst.c against PREFIX's libllc, brings up 2 emulated hosts
# (maint/llc-netns up 2) if needed, and runs burst (rank 0 in h0, rank 1 in
# h1) once per configuration with LLC_NET=hybrid and
# LLC_HYBRID_PERIOD_MS=P.  Default configurations:
#   history1024: the paper's history (1024 periods): the recurrence
#                predictor sees cycles of up to 341 periods
#   history8:    LLC_HYBRID_HISTORY_PERIODS=8: only the short-term load
#                (cycles of 2 periods at most are visible)
# Writes raw/<config>.log per run and summary.md: per configuration, the
# bursts after the first three cycles (learning), their share of messages
# on tcp and the receiver's first-to-last time per burst, into --out DIR
# (default $BENCH_OUT/hybrid/<date>_<time>, BENCH_OUT defaulting to
# $PWD/bench-out, ignored by git).
# Needs root (network namespaces); one emulated cluster at a time: wrap in
#   flock /tmp/llc-bench.lock
set -euo pipefail

PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
NETNS=$TOP/maint/llc-netns

llc_prefix=
out=
cycles=12
cycle_periods=10
burst=2000
bytes=1024
period_ms=100
configs="history1024= history8=LLC_HYBRID_HISTORY_PERIODS=8"
down=0

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "$PROG: error: $*" >&2; exit 2; }
log() { echo "[hybrid-burst $(date +%H:%M:%S)] $*"; }

while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) llc_prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --cycles) cycles=$2; shift 2 ;;
        --cycle-periods) cycle_periods=$2; shift 2 ;;
        --burst) burst=$2; shift 2 ;;
        --bytes) bytes=$2; shift 2 ;;
        --period-ms) period_ms=$2; shift 2 ;;
        --configs) configs=$2; shift 2 ;;
        --down) down=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$llc_prefix" ] || die "--llc-prefix is required (an install of this project, e.g. _install)"
[ -r "$llc_prefix/include/llc.h" ] || die "$llc_prefix/include/llc.h not found: install the project first (make install)"
[ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces)"
for v in "$cycles" "$cycle_periods" "$burst" "$period_ms"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || die "counts and --period-ms must be positive integers"
done
[ "$cycles" -gt 3 ] || die "--cycles must be above 3 (the first three are learning)"

[ -n "$out" ] || out=${BENCH_OUT:-$PWD/bench-out}/hybrid/$(date +%Y-%m-%d_%H%M%S)
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
exe=$(mktemp -d /tmp/llc-burst-bin.XXXXXX)/burst
log "building $exe"
cc -O2 -Wall -Wextra -I"$llc_prefix/include" -I"$TOP/test/unit/common" "$HERE/burst.c" -o "$exe" \
    -L"$llc_prefix/lib" -Wl,-rpath,"$llc_prefix/lib" -lllc

if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1; then
    log "emulated cluster not up: $NETNS up 2"
    "$NETNS" up 2
fi
cleanup() {
    if [ "$down" = 1 ]; then
        "$NETNS" down || true
    fi
}
trap cleanup EXIT

expected_s=$(( (cycles * cycle_periods + 1) * period_ms / 1000 + 1 ))
{
    echo "# Bursty source over the receiver-driven hybrid"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) cores; llc: $llc_prefix"
    echo
    echo "Command: \`bench/hybrid/run.sh --llc-prefix $llc_prefix --cycles $cycles --cycle-periods $cycle_periods" \
         "--burst $burst --bytes $bytes --period-ms $period_ms\`"
    echo
    echo "Rank 1 (host h1) sends a burst of $burst messages of $bytes B to rank 0 (host h0) every" \
         "$cycle_periods periods of $period_ms ms, $cycles bursts; LLC_NET=hybrid, receiver driver."
    echo "Bursts 0-2 are learning (three cycles before a recurrence can be seen); the table is over bursts 3 and later."
    echo
    echo "| configuration | bursts | messages on tcp | mean first-to-last (ms) | promotions | demotions |"
    echo "|---|---|---|---|---|---|"
} > "$out/summary.md"

for cfg in $configs; do
    name=${cfg%%=*}
    envs=${cfg#*=}
    envargs=()
    [ -n "$envs" ] && IFS=, read -r -a envargs <<< "$envs"
    dir=$(mktemp -d /tmp/llc-burst.XXXXXX)
    log "$name: ${envargs[*]:-(defaults)}; about ${expected_s} s"
    run() {
        local host=$1 rank=$2
        "$NETNS" exec "$host" env LLC_NET=hybrid LLC_HYBRID_DRIVER=receiver LLC_HYBRID_PERIOD_MS="$period_ms" \
            "${envargs[@]}" timeout $((expected_s + 60)) "$exe" "$rank" "$dir" "$cycles" "$cycle_periods" "$burst" "$bytes"
    }
    set +e
    run h0 0 > "$out/raw/$name.rank0.log" 2>&1 &
    pid0=$!
    run h1 1 > "$out/raw/$name.rank1.log" 2>&1
    rc1=$?
    wait $pid0
    rc0=$?
    set -e
    rm -rf "$dir"
    cat "$out/raw/$name.rank1.log" "$out/raw/$name.rank0.log" > "$out/raw/$name.log"
    if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
        log "$name FAILED (exit $rc0 / $rc1): see $out/raw/$name.log"
        echo "| $name | failed (exit $rc0 / $rc1) | | | | |" >> "$out/summary.md"
        continue
    fi
    awk -v name="$name" '
        /^source burst/ { b = $3 + 0; if (b >= 3) { n++; tcp += $8; all += $8 + $10 } }
        /^receiver burst/ { b = $3 + 0; sub(":", "", $3); if (b >= 3) { span += $(NF - 1); m++ } }
        /^source totals/ { prom = $4; dem = $6 }
        END {
            printf "| %s | %d | %d of %d (%.0f %%) | %.1f | %s | %s |\n", name, n, tcp, all,
                   all ? 100 * tcp / all : 0, m ? span / m : 0, prom, dem
        }' "$out/raw/$name.log" >> "$out/summary.md"
    grep -E "^source burst|^receiver burst" "$out/raw/$name.log" | sed "s/^/  $name: /" | tail -4
done
# Plot: share of each burst on tcp, per configuration (gnuplot, if installed).
if command -v gnuplot >/dev/null 2>&1; then
    plot_cmds=()
    for cfg in $configs; do
        name=${cfg%%=*}
        [ -f "$out/raw/$name.log" ] || continue
        awk '/^source burst/ { t = $8; u = $10; if (t + u > 0) print $3, 100 * t / (t + u) }' \
            "$out/raw/$name.log" > "$out/raw/$name.tcp-share.dat"
        plot_cmds+=("'$out/raw/$name.tcp-share.dat' using 1:2 with linespoints title '$name'")
    done
    if [ ${#plot_cmds[@]} -gt 0 ]; then
        joined=$(IFS=,; echo "${plot_cmds[*]}")
        gnuplot <<GP
set terminal pngcairo size 900,450 font ',10'
set output '$out/tcp-share.png'
set title 'Bursts of $burst x $bytes B every $cycle_periods periods of $period_ms ms: share sent on tcp'
set xlabel 'burst'
set ylabel 'messages on tcp (%)'
set yrange [-5:105]
set key bottom right
set grid
plot $joined
GP
        echo >> "$out/summary.md"
        echo "![share of each burst on tcp](tcp-share.png)" >> "$out/summary.md"
    fi
fi
log "summary: $out/summary.md"
cat "$out/summary.md"
