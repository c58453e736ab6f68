#!/usr/bin/env bash
# placement.sh -- Alltoall placement campaign on the emulated cluster
# (maint/llc-netns), imitating the five placement patterns of Kurokawa's report.
#
# Emulated fabric (bench/alltoall/emu8.fabric): 8 hosts h0..h7, one rank
# each.  The hosts get fabric node numbers per pattern (4 leaves x 8 node
# numbers, 4 uplinks per leaf, uplink = destination node mod 4):
#
#   pattern 0  multiples of 4, 2 per leaf : 0 4 | 8 12 | 16 20 | 24 28
#   pattern 1  multiples of 2, 2 per leaf : 0 2 | 8 10 | 16 18 | 24 26
#   pattern 2  first 2 of each leaf       : 0 1 | 8 9  | 16 17 | 24 25
#   pattern 3  first 4 of each leaf       : 0 1 2 3 | 8 9 10 11
#   pattern 4  first 8 of one leaf        : 0 1 2 3 4 5 6 7
#
# (the paper's 4 / 4 / 4 / 8 / 16 nodes per leaf, halved so that 8 hosts
# show all five.)  Shaping, all with tc in the switch namespace / hosts:
#   * node links: tbf $HOST_RATE on each host's eth0 (up) and on its switch
#     port (down);
#   * uplinks: one ifb device per (leaf, uplink) that has receivers; every
#     switch port redirects (ingress, u32 on the destination address) the
#     packets for hosts on other leaves to the destination's uplink ifb,
#     which has a tbf of $UPLINK_RATE, then they continue through the bridge.
#     Only the downward direction is a shared bottleneck (as in the paper's
#     model); the upward one is not emulated.
#   * no latency: the kernel has no sch_netem, so only rates are shaped.
#
# For each pattern and build: alltoall_bench with the nine fixed
# algorithms, auto (pruned), auto-noprune and the MPI's default (mpich).
#
#   bench/alltoall/placement.sh --llc-prefix DIR [--out DIR] [--patterns "4 3 2 1 0"]
#       [--builds "llc mpich"] [--sizes 16384,1048576] [--calls16 200]
#       [--calls1m 5] [--calls1m-dyn 30] [--reps 1] [--trials 2] [--sharing steps]
#       [--split16 R] [--dyn-modes auto,auto-noprune,auto-nine]
#
# --out DIR: default $BENCH_OUT/alltoall/<date>_<time>, BENCH_OUT defaulting
# to $PWD/bench-out (ignored by git).
#
# --split16 R: at 16 KB run the fixed algorithms and the MPI default as R
# interleaved repetitions of calls16/R calls (load drifts hit them alike),
# then the two dynamic modes with calls16 calls each.
#
# 1 MB calls take about a second on these links: the fixed algorithms and
# the MPI default run --calls1m calls each, the two dynamic modes
# --calls1m-dyn calls (they need room for their learning phase).
#
# Builds: llc = the mpich-llc installed in --llc-prefix DIR (required when
# llc is among --builds), with libllccoll.so of this tree's _build through
# LD_LIBRARY_PATH when that exists ($BUILD_LIB); mpich = Debian MPICH +
# libllccoll_pmpi.so of this tree (LD_PRELOAD: $PMPI_LIB).  The script builds
# both benchmark binaries, the PMPI library and the compat shim into
# OUT/bin first (BENCH_LLC, BENCH_MPICH, PMPI_LIB, COMPAT_SHIM in the
# environment name prebuilt ones instead).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
NETNS=$TOP/maint/llc-netns
HOSTS_RUN=$TOP/maint/llc-mpiexec-hosts
FABRIC=$TOP/bench/alltoall/emu8.fabric

OUT=${BENCH_OUT:-$PWD/bench-out}/alltoall/$(date +%Y-%m-%d_%H%M%S)
PATTERNS="4 3 2 1 0"
BUILDS="llc mpich"
SIZES=16384,1048576
CALLS16=200
CALLS1M=5
CALLS1M_DYN=30
SPLIT16=0
FIXED_MODES=bruck,pairwise,pairwise_lb,pairwise_mb,pairwise_ob,ring,ring_lb,ring_mb,ring_ob,mpich
DYN_MODES=auto,auto-noprune,auto-nine
REPS=1
TRIALS=2
SHARING=steps
HOST_RATE=${HOST_RATE:-200mbit}
UPLINK_RATE=${UPLINK_RATE:-100mbit}
LLC_PREFIX=${LLC_PREFIX:-}
BUILD_LIB=${BUILD_LIB:-$TOP/_build/src/coll/.libs}
TIMEOUT=${TIMEOUT:-900}

while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) LLC_PREFIX=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --patterns) PATTERNS=$2; shift 2 ;;
        --builds) BUILDS=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --calls16) CALLS16=$2; shift 2 ;;
        --calls1m) CALLS1M=$2; shift 2 ;;
        --calls1m-dyn) CALLS1M_DYN=$2; shift 2 ;;
        --split16) SPLIT16=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --trials) TRIALS=$2; shift 2 ;;
        --sharing) SHARING=$2; shift 2 ;;
        --dyn-modes) DYN_MODES=$2; shift 2 ;;
        -h|--help) sed -n '2,52p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done

HOSTS=(h0 h1 h2 h3 h4 h5 h6 h7)
nodes_of() {
    case $1 in
        0) echo "0 4 8 12 16 20 24 28" ;;
        1) echo "0 2 8 10 16 18 24 26" ;;
        2) echo "0 1 8 9 16 17 24 25" ;;
        3) echo "0 1 2 3 8 9 10 11" ;;
        4) echo "0 1 2 3 4 5 6 7" ;;
        *) echo "bad pattern $1" >&2; exit 2 ;;
    esac
}

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/campaign.log" >&2; }
die() { echo "placement.sh: $*" >&2; exit 2; }

case " $BUILDS " in
    *" llc "*) [ -n "$LLC_PREFIX" ] && [ -x "$LLC_PREFIX/bin/mpicc" ] ||
        die "--llc-prefix DIR must name an installed mpich-llc (DIR/bin/mpicc), or leave llc out of --builds" ;;
esac
case " $BUILDS " in
    *" mpich "*) command -v mpicc.mpich >/dev/null && command -v mpicxx.mpich >/dev/null ||
        die "the mpich build needs Debian's MPICH (apt-get install mpich libmpich-dev), or leave mpich out of --builds" ;;
esac
[ -d "$BUILD_LIB" ] || BUILD_LIB=$LLC_PREFIX/lib

# the benchmark binaries, the PMPI library and the shim, built from this tree
# unless the environment names prebuilt ones
build_tools() {
    local bin=$OUT/bin
    mkdir -p "$bin/llc" "$bin/mpich"
    case " $BUILDS " in
        *" llc "*)
            if [ -z "${BENCH_LLC:-}" ]; then
                log "building alltoall_bench with $LLC_PREFIX/bin/mpicc"
                make -s -f "$TOP/bench/alltoall/build.mk" OUT="$bin/llc" MPICC="$LLC_PREFIX/bin/mpicc" \
                    "$bin/llc/alltoall_bench" >&2 || die "building alltoall_bench for llc failed"
                BENCH_LLC=$bin/llc/alltoall_bench
            fi
            if [ -z "${COMPAT_SHIM:-}" ]; then
                cc -shared -fPIC -o "$bin/compat_quiesce.so" "$TOP/bench/alltoall/compat_quiesce.c" ||
                    die "building compat_quiesce.so failed"
                COMPAT_SHIM=$bin/compat_quiesce.so
            fi ;;
    esac
    case " $BUILDS " in
        *" mpich "*)
            if [ -z "${BENCH_MPICH:-}" ]; then
                log "building alltoall_bench with mpicc.mpich"
                make -s -f "$TOP/bench/alltoall/build.mk" OUT="$bin/mpich" MPICC=mpicc.mpich \
                    "$bin/mpich/alltoall_bench" >&2 || die "building alltoall_bench for Debian MPICH failed"
                BENCH_MPICH=$bin/mpich/alltoall_bench
            fi
            if [ -z "${PMPI_LIB:-}" ]; then
                log "building libllccoll_pmpi.so with mpicxx.mpich"
                make -s -f "$TOP/src/coll/pmpi/Makefile.pmpi" MPICXX=mpicxx.mpich \
                    OUT="$bin/mpich/libllccoll_pmpi.so" >&2 || die "building libllccoll_pmpi.so failed"
                PMPI_LIB=$bin/mpich/libllccoll_pmpi.so
            fi ;;
    esac
}

cleanup() {
    "$NETNS" down >/dev/null 2>&1 || true
}

mkdir -p "$OUT"
build_tools
if [ -f /run/llc-netns/hosts ]; then
    echo "placement.sh: a cluster is already up (maint/llc-netns status); not touching it" >&2
    exit 1
fi
trap cleanup EXIT INT TERM
"$NETNS" up 8

SW=llc-sw
clear_shaping() {
    local h
    for h in "${HOSTS[@]}"; do
        tc -n "$h" qdisc del dev eth0 root 2>/dev/null || true
        tc -n $SW qdisc del dev "p-$h" root 2>/dev/null || true
        tc -n $SW qdisc del dev "p-$h" ingress 2>/dev/null || true
    done
    local d
    for d in $(ip -n $SW -o link show type ifb 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
        ip -n $SW link del "$d"
    done
}

# shape for pattern $1
shape() {
    local nodes=($(nodes_of "$1")) i j h leaf up
    clear_shaping
    for i in "${!HOSTS[@]}"; do
        h=${HOSTS[$i]}
        tc -n "$h" qdisc add dev eth0 root tbf rate "$HOST_RATE" burst 64kb latency 200ms
        tc -n $SW qdisc add dev "p-$h" root tbf rate "$HOST_RATE" burst 64kb latency 200ms
        tc -n $SW qdisc add dev "p-$h" handle ffff: ingress
    done
    # one ifb per (leaf, uplink) with receivers
    declare -A made=()
    for j in "${!HOSTS[@]}"; do
        leaf=$((nodes[j] / 8)); up=$((nodes[j] % 4))
        local dev="up$leaf-$up"
        if [ -z "${made[$dev]:-}" ]; then
            ip -n $SW link add "$dev" type ifb
            ip -n $SW link set "$dev" up
            tc -n $SW qdisc add dev "$dev" root tbf rate "$UPLINK_RATE" burst 64kb latency 200ms
            made[$dev]=1
        fi
        # packets from hosts on other leaves to host j go through that uplink
        for i in "${!HOSTS[@]}"; do
            [ $((nodes[i] / 8)) -ne "$leaf" ] || continue
            tc -n $SW filter add dev "p-${HOSTS[$i]}" parent ffff: protocol ip prio 1 u32 \
                match ip dst "$("$NETNS" addr "${HOSTS[$j]}")/32" \
                action mirred egress redirect dev "$dev"
        done
    done
    echo "uplink ifbs: ${!made[*]}"
}

run_bench() {  # build pattern size calls modes tag
    local build=$1 pat=$2 size=$3 calls=$4 modes=$5 tag=$6
    local nodes csv f
    nodes=$(nodes_of "$pat")
    csv=$(tr ' ' ',' <<<"$nodes")
    f=$OUT/raw/$build-p$pat-$size$tag.txt
    mkdir -p "$OUT/raw"
    local common=(LLC_COLL_FABRIC="$FABRIC" LLC_COLL_NODES="$csv" LLC_ALLTOALL_TRIALS="$TRIALS"
                  LLC_ALLTOALL_MODEL_SHARING="$SHARING" LLC_ALLTOALL_VERBOSE=1
                  LLC_MODEL_CACHE="$OUT/model-params.$build")
    log "run $build pattern $pat size $size calls $calls -> $f"
    local t0=$SECONDS rc=0 want
    want=$(awk -F, '{print NF}' <<<"$modes")
    if [ "$build" = llc ]; then
        # the install may need symbols this branch's libllccoll lacks
        # (compat_quiesce.c explains); preload the no-op shim then
        local pre=""
        local need have
        need=$(nm -D "$LLC_PREFIX/lib/libmpi.so" | grep -c ' U llc_coll_state_quiesce' || true)
        have=$(nm -D "$BUILD_LIB/libllccoll.so" | grep -c ' T llc_coll_state_quiesce' || true)
        if [ "$need" -gt 0 ] && [ "$have" -eq 0 ]; then
            pre=$COMPAT_SHIM
        fi
        env "${common[@]}" LD_LIBRARY_PATH="$BUILD_LIB:$LLC_PREFIX/lib" PATH="$LLC_PREFIX/bin:$PATH" \
            ${pre:+LD_PRELOAD=$pre} \
            timeout "$TIMEOUT" "$HOSTS_RUN" --mpiexec "$LLC_PREFIX/bin/mpiexec" \
            -hosts "$(IFS=,; echo "${HOSTS[*]}")" -n 8 \
            "$BENCH_LLC" -n "$calls" -s "$size" -r "$REPS" -m "$modes" >"$f" 2>"$f.err" &
    else
        env "${common[@]}" LD_PRELOAD="$PMPI_LIB" \
            timeout "$TIMEOUT" "$HOSTS_RUN" --mpiexec mpiexec.hydra \
            -hosts "$(IFS=,; echo "${HOSTS[*]}")" -n 8 \
            "$BENCH_MPICH" -n "$calls" -s "$size" -r "$REPS" -m "$modes" >"$f" 2>"$f.err" &
    fi
    # Debian MPICH (ch4:ucx over tcp) sometimes hangs in MPI_Finalize here:
    # once every result line is out, give the job 20 s, then stop it.
    local pid=$! done_at=""
    while kill -0 "$pid" 2>/dev/null; do
        sleep 2
        if [ -z "$done_at" ] && [ "$(grep -c '^  ' "$f" 2>/dev/null || true)" -ge "$want" ]; then
            done_at=$SECONDS
        fi
        if [ -n "$done_at" ] && [ $((SECONDS - done_at)) -ge 20 ]; then
            log "  results complete but the job did not exit (finalize hang?): stopping it"
            kill -TERM "$pid" 2>/dev/null || true
            sleep 5
            kill -KILL "$pid" 2>/dev/null || true
            local h
            for h in "${HOSTS[@]}"; do
                local pids
                pids=$(ip netns pids "$h" 2>/dev/null || true)
                [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
            done
            break
        fi
    done
    wait "$pid" || rc=$?
    log "  done rc=$rc in $((SECONDS - t0)) s: $(grep -c '^  ' "$f" || true) lines"
    grep -E '^  ' "$f" | sed 's/^/    /' >&2 || true
}

log "campaign: patterns [$PATTERNS] builds [$BUILDS] sizes $SIZES calls16 $CALLS16 calls1m $CALLS1M/$CALLS1M_DYN reps $REPS trials $TRIALS sharing $SHARING host $HOST_RATE uplink $UPLINK_RATE"
{
    echo "date: $(date -Is)"
    echo "git: $(git -C "$TOP" rev-parse HEAD) $(git -C "$TOP" status --porcelain | wc -l) modified"
    echo "patterns: $PATTERNS; builds: $BUILDS; sizes: $SIZES; calls 16K: $CALLS16; calls 1M: $CALLS1M fixed, $CALLS1M_DYN dynamic"
    echo "reps: $REPS; LLC_ALLTOALL_TRIALS=$TRIALS; LLC_ALLTOALL_MODEL_SHARING=$SHARING"
    echo "host links: $HOST_RATE; uplinks: $UPLINK_RATE; no latency shaping (no sch_netem)"
    uptime
    echo "llc install: $LLC_PREFIX (libmpi $(stat -c %y "$LLC_PREFIX/lib/libmpi.so" 2>/dev/null))"
    echo
} >>"$OUT/setup.txt"
for pat in $PATTERNS; do
    log "pattern $pat: nodes $(nodes_of "$pat")"
    shape "$pat" | tee -a "$OUT/campaign.log" >&2
    for build in $BUILDS; do
        IFS=, read -r -a sz <<<"$SIZES"
        for s in "${sz[@]}"; do
            if [ "$s" -ge 1048576 ]; then
                run_bench "$build" "$pat" "$s" "$CALLS1M" "$FIXED_MODES" -fixed
                run_bench "$build" "$pat" "$s" "$CALLS1M_DYN" "$DYN_MODES" -dyn
            elif [ "$SPLIT16" -gt 1 ]; then
                REPS=$SPLIT16 run_bench "$build" "$pat" "$s" $((CALLS16 / SPLIT16)) "$FIXED_MODES" -fixed
                REPS=1 run_bench "$build" "$pat" "$s" "$CALLS16" "$DYN_MODES" -dyn
            else
                run_bench "$build" "$pat" "$s" "$CALLS16" "$FIXED_MODES,$DYN_MODES" ""
            fi
        done
    done
done
log "campaign done; load: $(cut -d' ' -f1-3 /proc/loadavg)"
