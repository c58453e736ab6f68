#!/usr/bin/env bash
# Memory per process of the llc build, Debian's MPICH and Open MPI, in one run:
# bench/memory/mem_bench at several job sizes, on one node or spread over
# emulated hosts (maint/llc-netns), and a table of the means plus the growth
# per added peer (slope of the "after all-pairs" figures between the smallest
# and the largest job).  For llc, LLC_MEM_REPORT=1 adds libllc's own count.
#
#   bench/memory/run.sh --llc-prefix DIR [--np "4 8 16 32 64"] [--hosts K | --ppn P]
#                       [--only llc,mpich,ompi] [--peers K] [-o OUTDIR] [-- LLC_VAR=value ...]
#     --hosts K   spread the ranks round-robin over K emulated hosts h0..h(K-1)
#                 (creates them with maint/llc-netns up K, removes them after);
#                 default 1 = one node (shared memory only)
#     --ppn P     P processes per host at every job size: a job of N ranks
#                 runs on N/P hosts (the largest N/P are created once), so
#                 adding ranks adds remote peers and not local ones
#                 (the paper's setting: m processes per node, n nodes grow)
#     --peers K   each rank talks only to the K ranks after and before it
#                 (mem_bench -peers K) instead of to all: the connections
#                 stay fixed as the job grows, so the growth is what the
#                 ranks never talked to cost
#     after --    environment settings for the llc runs (e.g. LLC_NET=udp)
# Writes OUTDIR/<mpi>-np<N>.txt and OUTDIR/summary.md; shows progress.
# OUTDIR (-o|--out) defaults to $BENCH_OUT/memory/<date>_<time>, BENCH_OUT
# to $PWD/bench-out (ignored by git).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
LLC="" NPS="4 8 16 32 64" HOSTS=1 PPN=0 ONLY="llc,mpich,ompi"
OUT=${BENCH_OUT:-$PWD/bench-out}/memory/$(date +%Y-%m-%d_%H%M%S)
LLC_ENV=()
BENCH_ARGS=()
while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) LLC=$(cd "$2" && pwd); shift 2 ;;
        --np) NPS=$2; shift 2 ;;
        --hosts) HOSTS=$2; shift 2 ;;
        --ppn) PPN=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --peers) BENCH_ARGS=(-peers "$2"); shift 2 ;;
        -o|--out) OUT=$2; shift 2 ;;
        --) shift; LLC_ENV=("$@"); break ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT/bin"
declare -A CC LAUNCH
CC[llc]=${LLC:+$LLC/bin/mpicc}; LAUNCH[llc]=${LLC:+$LLC/bin/mpiexec}
CC[mpich]=/usr/bin/mpicc.mpich; LAUNCH[mpich]=/usr/bin/mpiexec.hydra
CC[ompi]=/usr/bin/mpicc.openmpi; LAUNCH[ompi]=/usr/bin/mpirun.openmpi
hostlist=""
if [ "$PPN" -gt 0 ]; then
    HOSTS=0
    for np in $NPS; do
        [ $((np % PPN)) -eq 0 ] || { echo "run.sh: --ppn $PPN does not divide np=$np" >&2; exit 2; }
        [ $((np / PPN)) -gt "$HOSTS" ] && HOSTS=$((np / PPN))
    done
fi
if [ "$HOSTS" -gt 1 ]; then
    "$TOP/maint/llc-netns" up "$HOSTS" > "$OUT/netns.log" 2>&1 ||
        { echo "run.sh: llc-netns up $HOSTS failed (root and iproute2 needed), see $OUT/netns.log" >&2; exit 1; }
    trap '"$TOP/maint/llc-netns" down > /dev/null 2>&1' EXIT
    hostlist=$(seq -s, -f 'h%g' 0 $((HOSTS - 1)))
fi
{
    echo "| MPI | procs | hosts | RSS init [kB] | RSS after [kB] | private after [kB] | shared after [kB] | libllc count after [B] |"
    echo "|---|---|---|---|---|---|---|---|"
} > "$OUT/summary.md"
declare -A FIRST LAST
for m in ${ONLY//,/ }; do
    [ -n "${CC[$m]:-}" ] && [ -x "${CC[$m]}" ] || { echo "skip $m: no compiler (${CC[$m]:-give --llc-prefix})"; continue; }
    "${CC[$m]}" -O2 -o "$OUT/bin/mem_$m" "$HERE/mem_bench.c" || { echo "run.sh: build with ${CC[$m]} failed" >&2; continue; }
    for np in $NPS; do
        log=$OUT/$m-np$np.txt
        nh=$HOSTS
        if [ "$PPN" -gt 0 ]; then
            nh=$((np / PPN))
            hostlist=$(seq -s, -f 'h%g' 0 $((nh - 1)))
        fi
        printf 'run.sh: %s np=%s hosts=%s ... ' "$m" "$np" "$nh"
        envs=()
        [ $m = llc ] && envs=(env LLC_MEM_REPORT=1 "${LLC_ENV[@]}")
        [ $m = mpich ] && envs=(env UCX_TLS=self,sm,tcp)
        if [ "$nh" -gt 1 ]; then
            cmd=("${envs[@]}" "$TOP/maint/llc-mpiexec-hosts" --mpiexec "${LAUNCH[$m]}" -hosts "$hostlist" -n "$np")
        else
            cmd=("${envs[@]}" "${LAUNCH[$m]}")
            [ $m = ompi ] && cmd+=(--allow-run-as-root --oversubscribe)
            cmd+=(-n "$np")
        fi
        timeout -k 5 900 "${cmd[@]}" "$OUT/bin/mem_$m" "${BENCH_ARGS[@]}" > "$log" 2>&1
        rc=$?
        s=$(grep '^summary' "$log")
        if [ $rc -ne 0 ] || [ -z "$s" ]; then echo "FAILED (rc $rc, $log)"; continue; fi
        get() { echo "$s" | sed -n "s/.* $1 \([0-9.-]*\).*/\1/p"; }
        llcb=$(sed -n 's/^llc mem rank [0-9]*: total *\([0-9]*\) B.*/\1/p' "$log" | awk '{s+=$1; n++} END {if (n) printf "%.0f", s/n; else print "-"}')
        echo "rss after $(get rss_after_kb) kB, libllc $llcb B"
        echo "| $m | $np | $nh | $(get rss_init_kb) | $(get rss_after_kb) | $(get anon_after_kb) | $(get shmem_after_kb) | $llcb |" >> "$OUT/summary.md"
        [ -z "${FIRST[$m]:-}" ] && FIRST[$m]="$np $(get rss_after_kb) $(get anon_after_kb) $llcb"
        LAST[$m]="$np $(get rss_after_kb) $(get anon_after_kb) $llcb"
    done
done
{
    echo
    if [ ${#BENCH_ARGS[@]} -gt 0 ]; then
        echo "Growth per added peer, after traffic with the ${BENCH_ARGS[1]} ranks after and before each (slope between the smallest and largest job):"
    else
        echo "Growth per added peer, after all-pairs traffic (slope between the smallest and largest job):"
    fi
    echo
    echo "| MPI | procs | RSS [B/peer] | private [B/peer] | libllc count [B/peer] |"
    echo "|---|---|---|---|---|"
    for m in ${ONLY//,/ }; do
        [ -n "${FIRST[$m]:-}" ] || continue
        read -r n1 r1 a1 l1 <<< "${FIRST[$m]}"; read -r n2 r2 a2 l2 <<< "${LAST[$m]}"
        [ "$n2" -gt "$n1" ] || continue
        awk -v m=$m -v n1=$n1 -v n2=$n2 -v r1=$r1 -v r2=$r2 -v a1=$a1 -v a2=$a2 -v l1=$l1 -v l2=$l2 'BEGIN {
            d = n2 - n1; l = (l1 == "-" || l2 == "-") ? "-" : sprintf("%.0f", (l2 - l1) / d)
            printf "| %s | %d -> %d | %.0f | %.0f | %s |\n", m, n1, n2, (r2 - r1) * 1024 / d, (a2 - a1) * 1024 / d, l }'
    done
} >> "$OUT/summary.md"
# libllc's count by component: mean over the ranks at the smallest and the
# largest job, and the growth per added peer
if [ -n "${FIRST[llc]:-}" ]; then
    read -r n1 _ <<< "${FIRST[llc]}"; read -r n2 _ <<< "${LAST[llc]}"
    if [ "$n2" -gt "$n1" ]; then
        {
            echo
            echo "libllc count by component (mean over ranks; [shared] rows are not in the total):"
            echo
            echo "| component | np=$n1 [B] | np=$n2 [B] | growth [B/peer] |"
            echo "|---|---|---|---|"
            awk -v n1="$n1" -v n2="$n2" '
                FNR == 1 { f = (FILENAME ~ ("-np" n1 ".txt$")) ? 1 : 2 }
                /^llc mem rank [0-9]+: / && $5 != "note:" { c = $5; v[f, c] += $6; k[f, c]++; if (!(c in seen)) { seen[c] = 1; order[++nc] = c } }
                END {
                    for (i = 1; i <= nc; i++) {
                        c = order[i]; a = k[1, c] ? v[1, c] / k[1, c] : 0; b = k[2, c] ? v[2, c] / k[2, c] : 0
                        printf "| %s | %.0f | %.0f | %.1f |\n", c, a, b, (b - a) / (n2 - n1)
                    }
                }' "$OUT/llc-np$n1.txt" "$OUT/llc-np$n2.txt"
        } >> "$OUT/summary.md"
    fi
fi
echo "run.sh: results in $OUT/summary.md"
cat "$OUT/summary.md"
