#!/bin/sh
# Runs the max-effect benchmark over Debian's MPICH and Open MPI with
# libllccoll_pmpi.so preloaded, and writes the tables to OUTDIR.
#   bench/bcast/run.sh [-np 8] [-o OUTDIR] [--] [bcast_maxeffect options]
# MPIS="openmpi" restricts the MPIs.
# Smoke:  bench/bcast/run.sh -np 4 -- -i 10 -n 0,80 -s 1,65536 -w sleep
# Full campaign (paper's grid, long: do not run on a shared machine):
#         bench/bcast/run.sh -np 128 -- -i 100 -w mm
set -e
NP=8
OUT=/tmp/bcast-bench
while [ $# -gt 0 ]; do
    case "$1" in
        -np) NP=$2; shift 2 ;;
        -o) OUT=$2; shift 2 ;;
        --) shift; break ;;
        *) break ;;
    esac
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
NICE="nice -n 19"
for mpi in ${MPIS:-mpich openmpi}; do
    CXX=/usr/bin/mpicxx.$mpi
    [ -x "$CXX" ] || { echo "skip $mpi: no $CXX"; continue; }
    mkdir -p "$OUT/$mpi"
    $NICE make -s -C "$SRC" -f src/coll/pmpi/Makefile.pmpi MPICXX=$CXX OUT="$OUT/$mpi/libllccoll_pmpi.so"
    $NICE $CXX -std=c++17 -O2 -o "$OUT/$mpi/bcast_maxeffect" "$SRC/bench/bcast/bcast_maxeffect.cpp" -ldl
    if [ $mpi = mpich ]; then
        UCX_TLS=self,sm,tcp $NICE mpiexec.hydra -n "$NP" -env LD_PRELOAD "$OUT/$mpi/libllccoll_pmpi.so" \
            "$OUT/$mpi/bcast_maxeffect" "$@" > "$OUT/$mpi/result.txt" 2>&1
    else
        $NICE mpirun.openmpi --allow-run-as-root --oversubscribe -n "$NP" -x LD_PRELOAD="$OUT/$mpi/libllccoll_pmpi.so" \
            "$OUT/$mpi/bcast_maxeffect" "$@" > "$OUT/$mpi/result.txt" 2>&1
    fi
    echo "== $mpi ($NP procs): $OUT/$mpi/result.txt"
    grep -v '^load ' "$OUT/$mpi/result.txt" | grep -v UCX || true
done
