#!/usr/bin/env bash
# bench/pingpong/msgrate.sh -- message rate within a node, llc beside Debian's
# MPICH and Open MPI in one run, with the instructions each MPI spends per
# message.
#
#   msgrate.sh [--llc-prefix DIR] [--only llc,mpich,ompi] [--sizes 8,1024]
#              [--window 64] [--repeat 5] [--target 0.5] [--instr auto|perf|callgrind|none]
#              [--callgrind-windows 2000] [--out DIR]
#
# Each MPI runs bench/pingpong/msgrate.c with two ranks on this host (its own
# launcher; Open MPI with --allow-run-as-root), --repeat times, the MPIs
# interleaved (rotated by one place per round).  Rates are the median of the
# repeats; the table gives llc's rate over the better of the two others.
#
# Instructions per message:
#   perf       hardware counters read by msgrate.c itself around the timed
#              loop (user space, each rank); needs a PMU (not in most VMs);
#   callgrind  a separate run of each MPI under valgrind's callgrind with
#              --callgrind-windows windows: the instructions inside
#              MPI_Isend on the sender and MPI_Irecv on the receiver per
#              message, and everything of the loop per message (which
#              includes the polling of whichever side waits);
#   auto       perf when msgrate.c reports counts, else callgrind when
#              valgrind is installed, else none.
# Output under --out (default bench-out/msgrate/<date-time>): commands.txt,
# raw/, results.md (the table, and the cache-line round trip between the two
# CPUs before and after the runs: the VM's placement, line-trip.sh).  See
# doc/bench-pingpong.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" only=llc,mpich,ompi sizes=8,1024 window=64 repeat=5 target=0.5 instr=auto cg_windows=2000 out=""
while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) prefix=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --instr) instr=$2; shift 2 ;;
        --callgrind-windows) cg_windows=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "msgrate: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $instr in auto|perf|callgrind|none) ;; *) echo "msgrate: --instr auto|perf|callgrind|none" >&2; exit 2 ;; esac
out=${out:-$TOP/bench-out/msgrate/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/bin" "$out/raw"
: > "$out/commands.txt"
echo "# $0 $*" >> "$out/commands.txt"

# mpi -> compiler, launcher
declare -A CC RUN
CC[llc]=$prefix/bin/mpicc;        RUN[llc]="$prefix/bin/mpiexec -n 2"
CC[mpich]=/usr/bin/mpicc.mpich;   RUN[mpich]="/usr/bin/mpiexec.mpich -n 2"
CC[ompi]=/usr/bin/mpicc.openmpi;  RUN[ompi]="/usr/bin/mpirun.openmpi --allow-run-as-root -n 2"
mpis=()
for m in ${only//,/ }; do
    [ -n "${CC[$m]:-}" ] || { echo "msgrate: unknown MPI '$m' (llc, mpich, ompi)" >&2; exit 2; }
    if [ ! -x "${CC[$m]}" ]; then
        echo "msgrate: skipping $m: no compiler ${CC[$m]} (llc needs --llc-prefix; the others: maint/install-deps --bench)" >&2
        continue
    fi
    echo "build $m: ${CC[$m]} -O2 -o $out/bin/msgrate.$m $TOP/bench/pingpong/msgrate.c" >> "$out/commands.txt"
    "${CC[$m]}" -O2 -o "$out/bin/msgrate.$m" "$TOP/bench/pingpong/msgrate.c" 2> "$out/raw/build-$m.err" ||
        { echo "msgrate: building for $m failed, see $out/raw/build-$m.err" >&2; exit 1; }
    mpis+=("$m")
done
[ ${#mpis[@]} -gt 0 ] || { echo "msgrate: no MPI to run" >&2; exit 1; }
args=(--sizes "$sizes" --window "$window" --target "$target")

trip_before=$("$TOP/bench/pingpong/line-trip.sh" "$out/bin")
total=$(( repeat * ${#mpis[@]} )) k=0 start=$(date +%s)
for r in $(seq 1 "$repeat"); do
    for i in $(seq 0 $(( ${#mpis[@]} - 1 ))); do
        m=${mpis[$(( (i + r - 1) % ${#mpis[@]} ))]}
        k=$((k + 1))
        echo "msgrate: run $k of $total: $m, repeat $r/$repeat ($(( $(date +%s) - start )) s elapsed)" >&2
        echo "$m: ${RUN[$m]} $out/bin/msgrate.$m ${args[*]}" >> "$out/commands.txt"
        # shellcheck disable=SC2086 # the launcher's words
        timeout 300 ${RUN[$m]} "$out/bin/msgrate.$m" "${args[@]}" > "$out/raw/$m.r$r" 2> "$out/raw/$m.r$r.err" ||
            { echo "msgrate: $m failed (see $out/raw/$m.r$r.err)" >&2; mv "$out/raw/$m.r$r" "$out/raw/$m.r$r.failed"; }
    done
done

if [ "$instr" = auto ]; then
    if grep -qv '^#' "$out"/raw/*.r1 2>/dev/null && ! awk '!/^#/ && $3 == "-" {bad=1} END {exit !bad}' "$out"/raw/*.r1; then
        instr=perf
    elif command -v valgrind > /dev/null; then
        instr=callgrind
    else
        instr=none
    fi
fi
if [ "$instr" = callgrind ]; then
    command -v valgrind > /dev/null || { echo "msgrate: --instr callgrind needs valgrind (apt-get install valgrind)" >&2; exit 1; }
    for m in "${mpis[@]}"; do
        for s in ${sizes//,/ }; do
            echo "msgrate: callgrind, $m, $s B, $cg_windows windows" >&2
            rm -f "$out/raw/cg-$m-$s".*
            echo "callgrind $m: ${RUN[$m]} valgrind --tool=callgrind --toggle-collect=window_round $out/bin/msgrate.$m --sizes $s --window $window --windows $cg_windows" >> "$out/commands.txt"
            # shellcheck disable=SC2086
            timeout 600 ${RUN[$m]} valgrind --tool=callgrind --toggle-collect=window_round \
                --callgrind-out-file="$out/raw/cg-$m-$s.%p" \
                "$out/bin/msgrate.$m" --sizes "$s" --window "$window" --windows "$cg_windows" \
                > "$out/raw/cg-$m-$s.txt" 2>&1 || echo "msgrate: callgrind run of $m failed (see $out/raw/cg-$m-$s.txt)" >&2
        done
    done
fi
python3 "$TOP/bench/pingpong/msgrate_report.py" "$out" "$instr" "$window" "$cg_windows" "${mpis[@]}" | tee "$out/results.md"
trip_after=$("$TOP/bench/pingpong/line-trip.sh" "$out/bin")
printf '\nCache-line round trip between CPUs 0 and 1 (line-trip.sh; the placement): %s ns before the runs, %s ns after.\n' \
    "$trip_before" "$trip_after" | tee -a "$out/results.md"
echo "msgrate: results in $out/results.md" >&2
