#!/usr/bin/env bash
# selection.sh -- does the run-time choice of MPI_Alltoall (LLC_ALLTOALL=auto)
# keep up with the best algorithm forced by hand, and with the MPIs it
# replaces?  One table per run: for each placement and size, auto (its
# learning calls included, amortised over --calls calls), each of the nine
# algorithms forced, the llc build's own MPICH algorithm (LLC_ALLTOALL=mpich),
# Debian MPICH's and Open MPI's MPI_Alltoall, each MPI with its own launcher.
#
#   bench/alltoall/selection.sh --prefix DIR [--out DIR] [--sizes 16384,262144,1048576]
#       [--placements node,2hosts,4hosts] [--ranks 8] [--calls 200] [--reps 2]
#       [--calls-fixed N] [--in-job R] [--mpis llc,mpich,ompi] [--timeout 900]
#       [--llc-env VAR=VAL]...
#
# --calls-fixed N: the nine forced algorithms run N calls (default: --calls),
# auto and the MPIs' own --calls; across emulated hosts a 1 MiB call takes
# a tenth of a second, and the barrier variants three times that.
#
# --in-job R: the llc build's modes (the nine forced, its MPICH algorithm,
# auto-warm, auto) run in one job, --calls calls each, interleaved R times
# (alltoall_bench -r R; the lines are the means over the R), and so do the
# other MPIs' runs.  Without it the forced nine run in one job and auto in
# another, seconds to minutes apart, and on a machine whose speed drifts
# 1.5-2x that distance alone can move auto / best forced by a third.
#
# --llc-env VAR=VAL (repeatable): one more environment variable for the llc
# runs only, e.g. LD_LIBRARY_PATH=/tmp/lib to measure a libllccoll.so.0 built
# from a working tree against the installed MPI (its libmpi has a RUNPATH,
# which LD_LIBRARY_PATH overrides); recorded in setup.txt.
#
# Placements: node = all ranks on this machine (libllc shm); Nhosts = the
# ranks round-robin over N emulated hosts (maint/llc-netns, libllc tcp
# between them, shm within).  Reps are interleaved: rep 1 of every MPI, then
# rep 2, so that a drift of the machine's load hits all of them alike; every
# mode of a rep runs on a fresh communicator, so auto learns again each time.
# The model parameters are measured once per run (LLC_MODEL_CACHE in the
# output directory), never taken from an older run's cache.
#
# Output (--out, default bench-out/alltoall-selection/<date>_<time> under the
# repository top, not in git): raw/<placement>-<mpi>-<size>-rep<r>.{txt,err}
# (the benchmark's lines; auto's decisions, LLC_ALLTOALL_VERBOSE=1, in .err),
# report.md (made by selection_report.py; ratios auto / best forced and
# auto / better peer), setup.txt.  Needs root for the emulated hosts and the
# packages of `maint/install-deps --bench`.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
NETNS=$TOP/maint/llc-netns
HOSTS_RUN=$TOP/maint/llc-mpiexec-hosts
PROG=${0##*/}

prefix="" out="" sizes=16384,262144,1048576 placements=node,2hosts,4hosts
ranks=8 calls=200 calls_fixed="" reps=2 mpis=llc,mpich,ompi timeout_s=900 in_job=0
llc_env=()
FORCED=bruck,pairwise,pairwise_lb,pairwise_mb,pairwise_ob,ring,ring_lb,ring_mb,ring_ob

usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "$PROG: error: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --placements) placements=$2; shift 2 ;;
        --ranks) ranks=$2; shift 2 ;;
        --calls) calls=$2; shift 2 ;;
        --calls-fixed) calls_fixed=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --in-job) in_job=$2; shift 2 ;;
        --mpis) mpis=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --llc-env)
            [[ $2 == [A-Za-z_]*=* ]] || die "--llc-env wants VAR=VAL, got '$2'"
            llc_env+=("$2"); shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
case ",$mpis," in
    *,llc,*) [ -n "$prefix" ] && [ -x "$prefix/bin/mpicc" ] ||
        die "--prefix DIR must name an installed mpich-llc (DIR/bin/mpicc), or leave llc out of --mpis" ;;
esac
[[ $in_job =~ ^[0-9]+$ ]] || die "--in-job takes a number of interleaved repeats, got '$in_job'"
[ -n "$calls_fixed" ] || calls_fixed=$calls
[ "$in_job" = 0 ] || [ "$calls_fixed" = "$calls" ] ||
    die "--in-job runs every mode of a job with --calls calls: leave --calls-fixed out"
[ -n "$out" ] || out=$TOP/bench-out/alltoall-selection/$(date +%Y-%m-%d_%H%M%S)
mkdir -p "$out/raw" "$out/bin"
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$out/progress.log" >&2; }

# one binary per MPI, built with that MPI's compiler wrapper
declare -A cc=([llc]="$prefix/bin/mpicc" [mpich]=mpicc.mpich [ompi]=mpicc.openmpi)
declare -A launcher=([llc]="$prefix/bin/mpiexec" [mpich]=mpiexec.hydra [ompi]=mpirun.openmpi)
IFS=, read -r -a mpi_list <<<"$mpis"
for m in "${mpi_list[@]}"; do
    [ -n "${cc[$m]:-}" ] || die "unknown MPI '$m' (llc, mpich, ompi)"
    command -v "${cc[$m]}" >/dev/null || die "${cc[$m]} not found (maint/install-deps --bench installs Debian's MPICH and Open MPI)"
    "${cc[$m]}" -O2 -o "$out/bin/alltoall_bench-$m" "$HERE/alltoall_bench.c" -ldl
done

cleanup() { [ "${netns_up:-0}" = 0 ] || "$NETNS" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'cleanup; exit 143' INT TERM  # stop here: the loop would run on without the hosts
netns_up=0
hosts_of() { local n=$1 i l=""; for ((i = 0; i < n; i++)); do l+="${l:+,}h$i"; done; echo "$l"; }

{
    echo "date: $(date -Is)"
    echo "git: $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo none) ($(git -C "$TOP" status --porcelain 2>/dev/null | wc -l) files modified)"
    echo "command: $0 --prefix $prefix --sizes $sizes --placements $placements --ranks $ranks --calls $calls --calls-fixed $calls_fixed --reps $reps --in-job $in_job --mpis $mpis"
    echo "machine: $(nproc) cores, $(uptime)"
    echo "llc env: ${llc_env[*]:-(none)}"
} >"$out/setup.txt"

launch() {  # placement mpi: the launcher command of that MPI for that placement
    local pl=$1 m=$2
    if [ "$pl" = node ]; then
        case $m in
            ompi) echo "${launcher[$m]} --allow-run-as-root --oversubscribe -n $ranks" ;;
            *) echo "${launcher[$m]} -n $ranks" ;;
        esac
    else
        echo "$HOSTS_RUN --mpiexec ${launcher[$m]} -hosts $(hosts_of "${pl%hosts}") -n $ranks"
    fi
}

run_one() {  # placement mpi size rep
    local pl=$1 m=$2 size=$3 rep=$4
    local f=$out/raw/$pl-$m-$size-rep$rep
    local envs=(LLC_ALLTOALL_VERBOSE=1 LLC_MODEL_CACHE="$out/model-params")
    # llc: the forced nine (--calls-fixed calls), then its MPICH algorithm,
    # auto-warm (a later run of the job: the decisions of an untimed earlier
    # one) and auto (learning in this run) (--calls); the others: their own
    # MPI_Alltoall
    local jobs=("mpich $calls") rflag=()
    if [ "$m" = llc ]; then
        jobs=("$FORCED $calls_fixed" "mpich,auto-warm,auto $calls")
        [ "$in_job" = 0 ] || jobs=("$FORCED,mpich,auto-warm,auto $calls")
        envs+=(${llc_env[@]+"${llc_env[@]}"})
    fi
    [ "$in_job" = 0 ] || rflag=(-r "$in_job")
    log "$pl $m $size B rep $rep"
    : >"$f.txt"
    : >"$f.err"
    local job modes n rc
    for job in "${jobs[@]}"; do
        read -r modes n <<<"$job"
        rc=0
        # shellcheck disable=SC2046 # the launcher command is split on purpose
        env "${envs[@]}" timeout "$timeout_s" $(launch "$pl" "$m") \
            "$out/bin/alltoall_bench-$m" -n "$n" -s "$size" -m "$modes" ${rflag[@]+"${rflag[@]}"} >>"$f.txt" 2>>"$f.err" || rc=$?
        if [ $rc -ne 0 ]; then
            log "  failed (exit $rc; $f.err): the report leaves these cells empty"
            tail -3 "$f.err" >&2 || true
        fi
    done
    grep -E '^  ' "$f.txt" | sed 's/^/    /' >&2 || true
}

IFS=, read -r -a pl_list <<<"$placements"
IFS=, read -r -a size_list <<<"$sizes"
for pl in "${pl_list[@]}"; do
    case $pl in
        node) ;;
        [0-9]hosts|[0-9][0-9]hosts)
            [ "$(id -u)" -eq 0 ] || die "placement $pl needs root (network namespaces)"
            [ ! -f /run/llc-netns/hosts ] || "$NETNS" down >/dev/null 2>&1 || true
            "$NETNS" up "${pl%hosts}" >>"$out/progress.log" 2>&1
            netns_up=1 ;;
        *) die "placement '$pl': node or Nhosts" ;;
    esac
    for size in "${size_list[@]}"; do
        for ((rep = 1; rep <= reps; rep++)); do
            for m in "${mpi_list[@]}"; do
                run_one "$pl" "$m" "$size" "$rep"
            done
        done
    done
    if [ $netns_up = 1 ]; then "$NETNS" down >/dev/null 2>&1 || true; netns_up=0; fi
done
python3 "$HERE/selection_report.py" "$out" >"$out/report.md"
cat "$out/report.md"
log "done: $out/report.md"
