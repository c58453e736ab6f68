#!/bin/sh
# Runs one broadcast benchmark program on the llc build (its own MPI_Bcast is
# the virtual-rank broadcast) and on Debian's MPICH and Open MPI with
# libllccoll_pmpi.so preloaded, one after the other in one run, and writes
# each output to OUTDIR/<mpi>/<prog>.txt.
#
#   bench/bcast/run.sh [-np 16] [-o OUTDIR] [--llc-prefix DIR] [--prog NAME] [-- ARGS]
#     --prog       maxeffect (default), random or spmm (bench/bcast/bcast_NAME.cpp;
#                  maxeffect is bcast_maxeffect.cpp)
#     --llc-prefix the installed mpich-llc (skipped without it)
#     -o|--out     output directory (default $BENCH_OUT/bcast/<date>_<time>-<prog>,
#                  BENCH_OUT defaulting to $PWD/bench-out, ignored by git)
#     MPIS="llc mpich openmpi" restricts the MPIs.
#     ARGS go to the program (see the comment at the top of its source).
# Examples:
#   bench/bcast/run.sh -np 16 --llc-prefix _install -- -i 100 -w sleep
#   bench/bcast/run.sh -np 16 --llc-prefix _install --prog random -- -p 200 -i 20
#   bench/bcast/run.sh -np 8 --llc-prefix _install --prog spmm -- -N 4000 -R 0.05 -C 0.2
set -e
NP=16
OUT=
LLC=""
PROG=maxeffect
while [ $# -gt 0 ]; do
    case "$1" in
        -np) NP=$2; shift 2 ;;
        -o|--out) OUT=$2; shift 2 ;;
        --llc-prefix) LLC=$(cd "$2" && pwd); shift 2 ;;
        --prog) PROG=$2; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CPP=$SRC/bench/bcast/bcast_$PROG.cpp
[ -f "$CPP" ] || { echo "run.sh: no program $CPP (--prog maxeffect|random|spmm)" >&2; exit 2; }
[ -n "$OUT" ] || OUT=${BENCH_OUT:-$PWD/bench-out}/bcast/$(date +%Y-%m-%d_%H%M%S)-$PROG
mkdir -p "$OUT"
for mpi in ${MPIS:-llc mpich openmpi}; do
    mkdir -p "$OUT/$mpi"
    log=$OUT/$mpi/$PROG.txt
    case $mpi in
    llc)
        [ -n "$LLC" ] || { echo "skip llc: give --llc-prefix"; continue; }
        nice -n 10 "$LLC/bin/mpicxx" -std=c++17 -O2 -o "$OUT/$mpi/$PROG" "$CPP" -ldl
        echo "== llc ($NP procs): $log"
        "$LLC/bin/mpiexec" -n "$NP" "$OUT/$mpi/$PROG" "$@" > "$log" 2>&1 ;;
    mpich|openmpi)
        CXX=/usr/bin/mpicxx.$mpi
        [ -x "$CXX" ] || { echo "skip $mpi: no $CXX (maint/install-deps --bench)"; continue; }
        nice -n 10 make -s -C "$SRC" -f src/coll/pmpi/Makefile.pmpi MPICXX=$CXX OUT="$OUT/$mpi/libllccoll_pmpi.so"
        nice -n 10 $CXX -std=c++17 -O2 -o "$OUT/$mpi/$PROG" "$CPP" -ldl
        echo "== $mpi ($NP procs, libllccoll_pmpi.so preloaded): $log"
        if [ $mpi = mpich ]; then
            UCX_TLS=self,sm,tcp mpiexec.mpich -n "$NP" -env LD_PRELOAD "$OUT/$mpi/libllccoll_pmpi.so" \
                "$OUT/$mpi/$PROG" "$@" > "$log" 2>&1
        else
            mpirun.openmpi --allow-run-as-root --oversubscribe -n "$NP" \
                --mca mpi_yield_when_idle 1 -x LD_PRELOAD="$OUT/$mpi/libllccoll_pmpi.so" \
                "$OUT/$mpi/$PROG" "$@" > "$log" 2>&1
        fi ;;
    *) echo "run.sh: unknown MPI $mpi (llc, mpich, openmpi)" >&2; exit 2 ;;
    esac
    grep -v '^load \|^ *[0-9]* *[0-9.]* *[0-9.]* *[0-9.]*$\|UCX' "$log" || true
done
