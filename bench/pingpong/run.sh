#!/usr/bin/env bash
# bench/pingpong/run.sh -- point-to-point benchmark (latency, unidirectional
# and bidirectional bandwidth, message rate) of our "llc" MPICH build, Debian's
# MPICH and Open MPI side by side: intra-node (2 ranks in one emulated host)
# and inter-node (one rank in each of two emulated hosts, maint/llc-netns),
# repeats interleaved.  Writes raw output, per-size statistics, ratio tables,
# the targets of doc/bench-pingpong.md (met/missed) and gnuplot PNGs to an output directory
# outside git.  See doc/bench-pingpong.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
NETNS=$TOP/maint/llc-netns
MPIEXEC_HOSTS=$TOP/maint/llc-mpiexec-hosts
PROG=${0##*/}
invocation=$(printf '%q ' "$0" "$@")

quick=0
for a in "$@"; do [ "$a" != --quick ] || quick=1; done

llc_prefix=""
out=""
only="llc,mpich,ompi"
modes="intra,inter"
tests="lat,bw,bibw,rate"
repeat=3
target=0.2
sizes="8-4194304"
rate_sizes="8-1024"
window=64
rate_window=128
settle=0
run_timeout=300
down=0
plots=1
nice_level=-15
stat=median
lock=/tmp/llc-bench.lock
if [ $quick -eq 1 ]; then
    repeat=1 target=0.05 sizes="8,1024,65536,4194304" rate_sizes="8" run_timeout=120
fi

usage() {
    cat <<EOF
Usage: $PROG [options]
  --llc-prefix DIR   install prefix of our llc build (DIR/bin/mpicc, DIR/bin/mpiexec);
                     without it (or if missing) the llc runs are skipped
  --only LIST        MPIs, comma list (default $only): llc, mpich, ompi, and the
                     llc build with other transports: llc-udp, llc-hybrid
                     (LLC_NET=udp / hybrid), llc-hybrid-receiver, llc-hybrid-sender
                     (LLC_NET=hybrid, LLC_HYBRID_DRIVER=receiver / sender)
  --modes LIST       intra,inter (default: both)
  --tests LIST       lat,bw,bibw,rate (default: all)
  --repeat R         runs per MPI and mode, interleaved (default $repeat)
  --stat median|best how the R results of a size are combined (default $stat;
                     best = lowest latency / highest bandwidth and rate)
  --target S         seconds of timed traffic per test and size (default $target)
  --sizes SPEC       message sizes of lat, bw, bibw: A-B (powers of two) or a
                     comma list (default $sizes)
  --max BYTES        same as --sizes 8-BYTES
  --rate-sizes SPEC  message sizes of the rate test (default $rate_sizes)
  --window W         messages per window of bw and bibw (default $window; at most
                     64 MiB per window, so 16 at 4 MiB)
  --rate-window W    messages per window of rate (default $rate_window)
  --settle S         untimed 8-byte ping-pong for S seconds before the first test
                     (default 0; use > 2 x LLC_HYBRID_PERIOD_MS with llc-hybrid)
  --timeout S        kill any single run after S seconds (default $run_timeout)
  --quick            smoke test: sizes 8,1024,65536,4194304, rate size 8,
                     target 0.05 s, 1 repeat (later options override these)
  --out DIR          output directory (default bench-out/pingpong/<date-time>
                     under the repository top)
  --down             tear the emulated cluster down at the end if this script
                     brought it up (default: leave it up)
  --nice N           run every job under "nice -n N" (default $nice_level; 0 = off)
  --lock FILE        hold flock FILE while the cluster is used (default $lock;
                     skipped when an ancestor process already holds it)
  --no-lock          do not take the lock
  --no-plots         skip gnuplot
  -h, --help         this text

MPIs:   llc   = DIR/bin/mpicc + DIR/bin/mpiexec (hydra)
        mpich = /usr/bin/mpicc.mpich + /usr/bin/mpiexec.mpich (Debian, ch4:ucx)
        ompi  = /usr/bin/mpicc.openmpi + /usr/bin/mpirun.openmpi (Debian)
Modes:  intra = 2 ranks in emulated host h0 (plain launcher inside h0)
        inter = rank 0 in h0, rank 1 in h1 (maint/llc-mpiexec-hosts; tcp)
Needs root (network namespaces), python3, gnuplot for the plots.
EOF
}

die() { echo "$PROG: error: $*" >&2; exit 2; }
log() { echo "[p2p $(date +%H:%M:%S)] $*"; }

while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) llc_prefix=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --stat) stat=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --max) sizes="8-$2"; shift 2 ;;
        --rate-sizes) rate_sizes=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --rate-window) rate_window=$2; shift 2 ;;
        --settle) settle=$2; shift 2 ;;
        --timeout) run_timeout=$2; shift 2 ;;
        --quick) shift ;;
        --out) out=$2; shift 2 ;;
        --down) down=1; shift ;;
        --nice) nice_level=$2; shift 2 ;;
        --lock) lock=$2; shift 2 ;;
        --no-lock) lock=""; shift ;;
        --no-plots) plots=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option $1" ;;
    esac
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer"
[[ $stat == median || $stat == best ]] || die "--stat must be median or best"
for t in ${tests//,/ }; do [[ $t =~ ^(lat|bw|bibw|rate)$ ]] || die "unknown test '$t'"; done
for mode in ${modes//,/ }; do [[ $mode == intra || $mode == inter ]] || die "unknown mode '$mode'"; done
[ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces)"
command -v python3 >/dev/null || die "python3 is needed for the tables"

[ -n "$out" ] || out=$TOP/bench-out/pingpong/$(date +%Y-%m-%d_%H%M%S)
mkdir -p "$out/raw" "$out/bin"
out=$(cd "$out" && pwd)
: >"$out/commands.txt"
echo "# $invocation" >>"$out/commands.txt"

# ---------------------------------------------------------------- MPIs ---
declare -A CC LAUNCH LABEL NETENV DRIVERENV
LABEL[llc]="llc (our MPICH ch4:llc)"
LABEL[mpich]="Debian MPICH 4.0.2 (ch4:ucx)"
LABEL[ompi]="Open MPI 4.1 (Debian)"
LABEL[llc-udp]="llc, LLC_NET=udp"
LABEL[llc-hybrid]="llc, LLC_NET=hybrid"
LABEL[llc-hybrid-receiver]="llc, hybrid, receiver-driven"
LABEL[llc-hybrid-sender]="llc, hybrid, sender-driven"
NETENV[llc-udp]=udp
NETENV[llc-hybrid]=hybrid
NETENV[llc-hybrid-receiver]=hybrid
NETENV[llc-hybrid-sender]=hybrid
DRIVERENV[llc-hybrid-receiver]=receiver
DRIVERENV[llc-hybrid-sender]=sender
mpis=()
for m in ${only//,/ }; do
    case $m in
        llc|llc-udp|llc-hybrid|llc-hybrid-receiver|llc-hybrid-sender)
            if [ -z "$llc_prefix" ]; then
                log "SKIP $m: no --llc-prefix given"
                continue
            fi
            CC[$m]=$llc_prefix/bin/mpicc
            LAUNCH[$m]=$llc_prefix/bin/mpiexec
            ;;
        mpich)
            CC[mpich]=/usr/bin/mpicc.mpich
            LAUNCH[mpich]=/usr/bin/mpiexec.mpich
            ;;
        ompi)
            CC[ompi]=/usr/bin/mpicc.openmpi
            LAUNCH[ompi]=/usr/bin/mpirun.openmpi
            ;;
        *) die "unknown MPI '$m' in --only" ;;
    esac
    if [ ! -x "${CC[$m]}" ] || [ ! -x "${LAUNCH[$m]}" ]; then
        log "SKIP $m: ${CC[$m]} or ${LAUNCH[$m]} not found (Debian's: maint/install-deps --bench)"
        continue
    fi
    mpis+=("$m")
done
[ ${#mpis[@]} -gt 0 ] || die "no MPI to run"

# --------------------------------------------------------------- build ---
for m in "${mpis[@]}"; do
    exe=$out/bin/pingpong.$m
    [ -e "$exe" ] && continue
    # the llc variants share one binary
    if [[ $m == llc-* ]] && [ -e "$out/bin/pingpong.llc" ]; then
        ln -s pingpong.llc "$exe"; continue
    fi
    log "build $m with ${CC[$m]}"
    echo "build $m: ${CC[$m]} -O2 -o $exe $HERE/pingpong.c" >>"$out/commands.txt"
    "${CC[$m]}" -O2 -o "$exe" "$HERE/pingpong.c"
done

# ------------------------------------------------------- lock, cluster ---
# One emulated cluster per machine: other jobs that use maint/llc-netns take
# the same lock.  A caller that already holds it (flock FILE run.sh) is
# recognised by its pid among our ancestors, which avoids a self-deadlock.
ancestor_holds_lock() {
    local holders p
    holders=$(lslocks -n -o PID,PATH 2>/dev/null | awk -v f="$(readlink -f "$1")" '$2 == f { print $1 }')
    [ -n "$holders" ] || return 1
    p=$$
    while [ -n "$p" ] && [ "$p" -gt 1 ]; do
        grep -qx "$p" <<<"$holders" && return 0
        p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null || true)
    done
    return 1
}
if [ -n "$lock" ]; then
    if ancestor_holds_lock "$lock"; then
        log "lock $lock already held by a parent process"
    else
        exec 9>>"$lock"
        if ! flock -n 9; then
            log "waiting for $lock (another benchmark uses the emulated cluster) ..."
            flock 9
        fi
        log "holding $lock"
    fi
fi

brought_up=0
if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1; then
    log "emulated cluster not up: $NETNS up 2"
    "$NETNS" up 2
    brought_up=1
else
    log "emulated cluster already up (h0, h1)"
fi
cleanup() {
    if [ $down -eq 1 ] && [ $brought_up -eq 1 ]; then
        log "tearing the emulated cluster down"
        "$NETNS" down || true
    fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- meta ---
{
    echo "date: $(date -Iseconds)"
    echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cache-line round trip before (CPUs 0-1, line-trip.sh): $("$HERE/line-trip.sh" "$out/bin") ns"
    echo "repeat: $repeat ($stat), interleaved  target: $target s per test and size  timeout: $run_timeout s  nice: $nice_level"
    echo "tests: $tests  sizes: $sizes  rate sizes: $rate_sizes  window: $window (rate $rate_window, <= 64 MiB)  settle: $settle s"
    echo "git: $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown) ($(git -C "$TOP" rev-parse --abbrev-ref HEAD 2>/dev/null || echo ?))"
    for m in "${mpis[@]}"; do
        echo "mpi $m: ${LABEL[$m]}: cc=${CC[$m]} launcher=${LAUNCH[$m]}"
    done
    if [ -n "$llc_prefix" ] && [ -d "$llc_prefix" ]; then
        echo "llc prefix: $(cd "$llc_prefix" && pwd)"
    fi
} >"$out/meta.txt"

# ----------------------------------------------------------------- run ---
pp_args=(--tests "$tests" --sizes "$sizes" --rate-sizes "$rate_sizes" --target "$target"
         --window "$window" --rate-window "$rate_window" --settle "$settle")

run_cmd() {  # mpi mode -> the command, one word per line
    local m=$1 mode=$2 exe=$out/bin/pingpong.$1
    # the launcher passes its environment to the ranks (hydra's default)
    if [ -n "${NETENV[$m]:-}" ]; then
        printf '%s\n' env "LLC_NET=${NETENV[$m]}"
        [ -z "${DRIVERENV[$m]:-}" ] || printf '%s\n' "LLC_HYBRID_DRIVER=${DRIVERENV[$m]}"
    fi
    if [ "$mode" = intra ]; then
        if [ "$m" = ompi ]; then
            printf '%s\n' "$NETNS" exec h0 "${LAUNCH[$m]}" --allow-run-as-root -n 2 "$exe" "${pp_args[@]}"
        else
            printf '%s\n' "$NETNS" exec h0 "${LAUNCH[$m]}" -n 2 "$exe" "${pp_args[@]}"
        fi
    else
        printf '%s\n' "$MPIEXEC_HOSTS" --mpiexec "${LAUNCH[$m]}" -hosts h0,h1 -n 2 "$exe" "${pp_args[@]}"
    fi
}

# bytes through h1's veth: proves that inter-node traffic crossed the bridge
h1_bytes() {
    ip netns exec h1 sh -c 'echo $(( $(cat /sys/class/net/eth0/statistics/rx_bytes) + $(cat /sys/class/net/eth0/statistics/tx_bytes) ))' 2>/dev/null || echo 0
}

fmt_dur() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

for mode in ${modes//,/ }; do
    for m in "${mpis[@]}"; do
        echo "$m $mode: $(run_cmd "$m" "$mode" | while IFS= read -r w; do printf '%q ' "$w"; done)" >>"$out/commands.txt"
    done
done

# run order: repeat by repeat; within a repeat every mode, and the MPIs
# rotated by one place per repeat so that none always runs first
order=()
for ((r = 1; r <= repeat; r++)); do
    for mode in ${modes//,/ }; do
        n=${#mpis[@]}
        for ((i = 0; i < n; i++)); do
            order+=("$r ${mpis[$(((i + r - 1) % n))]} $mode")
        done
    done
done
total=${#order[@]}
declare -A DUR
failures=0
start=$(date +%s)
: >"$out/runs.txt"
k=0
for entry in "${order[@]}"; do
    read -r r m mode <<<"$entry"
    k=$((k + 1))
    # ETA: each remaining run is expected to take as long as the last run of
    # the same MPI and mode, or the mean of all runs so far
    now=$(date +%s)
    eta=""
    if [ $k -gt 1 ]; then
        mean=$(((now - start) / (k - 1)))
        left=0
        for e in "${order[@]:$((k - 1))}"; do
            read -r _ em emode <<<"$e"
            left=$((left + ${DUR[$em-$emode]:-$mean}))
        done
        eta=", ETA $(date -d "@$((now + left))" +%H:%M:%S) ($(fmt_dur $left) left)"
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    log "run $k of $total: $m $mode, repeat $r/$repeat (load $load, $(fmt_dur $((now - start))) elapsed$eta)"
    # other jobs on the machine (e.g. test/run-all) may take the emulated
    # cluster down or shape its links meanwhile: bring it back, say so
    if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1 ||
       ! ip netns exec h1 true 2>/dev/null; then
        log "  the emulated cluster is gone (someone ran llc-netns down): up 2 again"
        echo "run $k: cluster was down, brought up again" >>"$out/meta.txt"
        "$NETNS" up 2 || true
    fi
    for h in h0 h1; do
        if ip netns exec $h tc qdisc show dev eth0 2>/dev/null | grep -E 'netem|tbf' > /dev/null; then
            log "  WARNING: $h's eth0 is shaped ($(ip netns exec $h tc qdisc show dev eth0 | head -1))"
            echo "run $k: $h eth0 shaped: $(ip netns exec $h tc qdisc show dev eth0 | head -1)" >>"$out/meta.txt"
        fi
    done
    mapfile -t cmd < <(run_cmd "$m" "$mode")
    raw=$out/raw/$m-$mode-r$r.txt
    b0=$(h1_bytes)
    t0=$(date +%s)
    rc=0
    timeout -k 10 "$run_timeout" nice -n "$nice_level" "${cmd[@]}" >"$raw" 2>"${raw%.txt}.err" </dev/null || rc=$?
    t1=$(date +%s)
    DUR[$m-$mode]=$((t1 - t0))
    nlines=$(grep -cE '^[a-z]+ [0-9]+ ' "$raw" || true)
    moved=$(( ($(h1_bytes) - b0) / 1000000 ))
    echo "$k $m $mode r$r rc=$rc ${DUR[$m-$mode]}s load=$load lines=$nlines h1_eth0_MB=$moved" >>"$out/runs.txt"
    if [ $rc -ne 0 ]; then
        why="exit $rc"
        [ $rc -ne 124 ] || why="timeout after $run_timeout s"
        grep -q "DATA MISMATCH" "${raw%.txt}.err" 2>/dev/null && why="$why, DATA MISMATCH"
        log "  FAILED ($why) after ${DUR[$m-$mode]}s, $nlines results; see ${raw%.txt}.err"
        failures=$((failures + 1))
        mv "$raw" "${raw%.txt}.failed"
    else
        log "  ok in ${DUR[$m-$mode]}s, $nlines results; h1 eth0 moved $moved MB"
        if [ "$mode" = inter ] && [ "$moved" -lt 1 ]; then
            log "  WARNING: less than 1 MB crossed h1's eth0: did the ranks really talk over the emulated link?"
        fi
    fi
    [ -s "${raw%.txt}.err" ] || rm -f "${raw%.txt}.err"
done
{
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "cache-line round trip after: $("$HERE/line-trip.sh" "$out/bin") ns"
    awk '{ sub("load=", "", $7); v = $7 + 0; if (n == 0 || v < lo) lo = v; if (v > hi) hi = v; n++ }
         END { if (n) printf "load at the start of each run (1-min average): min %s, max %s\n", lo, hi }' "$out/runs.txt"
    echo "duration: $(fmt_dur $(($(date +%s) - start))) for $total runs ($failures failed)"
} >>"$out/meta.txt"

# --------------------------------------------- statistics and tables ---
python3 "$HERE/summarize.py" --out "$out" --stat "$stat" --mpis "${mpis[*]}" --modes "${modes//,/ }" \
    --tests "${tests//,/ }"
log "tables: $out/results.md, $out/summary.md"

# --------------------------------------------------------------- plots ---
if [ $plots -eq 1 ]; then
    if ! command -v gnuplot >/dev/null 2>&1; then
        log "SKIP plots: gnuplot not installed (apt-get install gnuplot-nox)"
    else
        for mode in ${modes//,/ }; do
            if [ "$mode" = intra ]; then where="intra-node (2 ranks in one host)"; else where="inter-node (h0 <-> h1, tcp over veth/bridge)"; fi
            for t in ${tests//,/ }; do
                case $t in
                    lat) what="latency (blocking ping-pong)"; ylabel="us (half round trip)"; key="left top" ;;
                    bw) what="unidirectional bandwidth (window $window)"; ylabel="MB/s"; key="left top" ;;
                    bibw) what="bidirectional bandwidth (window $window)"; ylabel="MB/s (both directions)"; key="left top" ;;
                    rate) what="message rate (window $rate_window)"; ylabel="messages/s"; key="right top" ;;
                esac
                if [ "$t" = rate ]; then
                    xaxis="set format y '%.0s%c'; set xrange [6:1400]; set xtics ('8 B' 8, '16 B' 16, '32 B' 32, '64 B' 64, '128 B' 128, '256 B' 256, '512 B' 512, '1 KiB' 1024)"
                else
                    xaxis="set xrange [6:6e6]; set xtics ('8 B' 8, '64 B' 64, '512 B' 512, '4 KiB' 4096, '32 KiB' 32768, '256 KiB' 262144, '4 MiB' 4194304)"
                fi
                plot=""
                for m in "${mpis[@]}"; do
                    f=$out/$m-$mode-$t.dat
                    [ -s "$f" ] || continue
                    plot+="${plot:+, }'$f' using 1:2 with linespoints lw 2 title '${LABEL[$m]}'"
                done
                [ -n "$plot" ] || continue
                gnuplot <<EOF || log "gnuplot failed for $t $mode"
set terminal pngcairo size 900,600 noenhanced
set output '$out/$t-$mode.png'
set title '$what, $where, $stat of $repeat'
set logscale xy
$xaxis
set xlabel 'message size'
set ylabel '$ylabel'
set grid
set key $key
plot $plot
EOF
            done
        done
        log "plots: $(cd "$out" && ls -- *.png 2>/dev/null | tr '\n' ' ')"
    fi
fi

echo
cat "$out/summary.md"
echo
if [ $failures -gt 0 ]; then
    log "done with $failures FAILED run(s) of $total; output in $out"
    exit 1
fi
log "done, $total runs in $(fmt_dur $(($(date +%s) - start))); output in $out"
