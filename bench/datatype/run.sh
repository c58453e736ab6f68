#!/usr/bin/env bash
# bench/datatype/run.sh -- cost of derived datatypes (MPI_Pack, MPI_Unpack and
# a ping-pong of the derived type, within a node) in our llc builds, Debian's
# MPICH and Open MPI, repeats interleaved, with a table of ratios against
# Debian's MPICH.  Used to choose yaksa's generated nesting depth (see
# maint/graft-mpich and doc/bench-datatype.md).  Results go to an output
# directory outside git.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
PROG=${0##*/}

builds=()          # NAME=PREFIX of llc builds
only="mpich,ompi"
repeat=3
target=0.2
sizes="65536,4194304"
out=""

usage() {
    cat <<EOF
Usage: $PROG [options]
  --llc NAME=DIR   an llc build installed in DIR (DIR/bin/mpicc, DIR/bin/mpiexec),
                   reported as NAME; repeat the option to compare builds, e.g.
                   --llc yaksa2=\$HOME/mpich-llc --llc dataloop=/opt/llc-dataloop
  --only LIST      reference MPIs, comma list of mpich, ompi (default $only; "" = none)
  --repeat R       runs of each MPI, interleaved (default $repeat); the median is reported
  --target S       seconds per measurement (default $target)
  --sizes LIST     packed sizes in bytes, comma list (default $sizes)
  --out DIR        output directory (default bench-out/datatype/<date-time>)
  -h, --help       this text
Writes DIR/raw/<mpi>.<run>.txt, DIR/summary.txt (median microseconds and the
ratio to Debian's MPICH; below 1 is faster).
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
        --llc) builds+=("$2"); shift 2 ;;
        --only) only=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "$PROG: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

out=${out:-$TOP/bench-out/datatype/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/raw" "$out/bin"

# name mpicc mpiexec [mpiexec options]
declare -A cc exe opts
add() { cc[$1]=$2; exe[$1]=$3; opts[$1]=${4:-}; names+=("$1"); }
names=()
for b in "${builds[@]}"; do
    name=${b%%=*}; dir=${b#*=}
    [ -x "$dir/bin/mpicc" ] || { echo "$PROG: $dir/bin/mpicc not found (give the prefix of an installed llc build)" >&2; exit 2; }
    add "$name" "$dir/bin/mpicc" "$dir/bin/mpiexec"
done
case ",$only," in *,mpich,*)
    command -v mpicc.mpich > /dev/null || { echo "$PROG: mpicc.mpich missing: apt-get install mpich (or --only ompi)" >&2; exit 2; }
    add mpich mpicc.mpich mpiexec.mpich ;;
esac
case ",$only," in *,ompi,*)
    command -v mpicc.openmpi > /dev/null || { echo "$PROG: mpicc.openmpi missing: apt-get install openmpi-bin libopenmpi-dev (or --only mpich)" >&2; exit 2; }
    add ompi mpicc.openmpi mpiexec.openmpi "--oversubscribe --allow-run-as-root" ;;
esac
[ ${#names[@]} -gt 0 ] || { echo "$PROG: nothing to run (give --llc or --only)" >&2; exit 2; }

for n in "${names[@]}"; do
    echo "[$PROG] building dtbench with ${cc[$n]}"
    "${cc[$n]}" -O2 -o "$out/bin/dtbench.$n" "$HERE/dtbench.c"
done

total=$(( repeat * ${#names[@]} )); k=0
for r in $(seq 1 "$repeat"); do
    for n in "${names[@]}"; do
        k=$((k + 1))
        echo "[$PROG] run $k of $total: $n (repeat $r)"
        # shellcheck disable=SC2086
        timeout 600 "${exe[$n]}" ${opts[$n]} -n 2 "$out/bin/dtbench.$n" --sizes "$sizes" --target "$target" \
            > "$out/raw/$n.$r.txt" 2> "$out/raw/$n.$r.err" \
            || { echo "$PROG: $n run $r failed; see $out/raw/$n.$r.err" >&2; exit 1; }
    done
done

python3 - "$out" "${names[@]}" > "$out/summary.txt" <<'EOF'
import glob, os, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
vals = {}  # (name, layout, bytes, column) -> [values]
cols = ["pack_us", "unpack_us", "pingpong_us"]
for n in names:
    for path in sorted(glob.glob(os.path.join(out, "raw", n + ".*.txt"))):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            f = line.split()
            for i, c in enumerate(cols):
                vals.setdefault((n, f[0], int(f[1]), c), []).append(float(f[2 + i]))
rows = sorted({(k[1], k[2]) for k in vals}, key=lambda x: (x[1], x[0]))
ref = "mpich" if "mpich" in names else None
print("# median microseconds per call (pack, unpack) or per one-way message (pingpong);")
print("# (x) = ratio to Debian's MPICH, below 1 is faster")
for c in cols:
    print("\n## %s" % c)
    print("%-8s %9s" % ("layout", "bytes") + "".join("%20s" % n for n in names))
    for layout, size in rows:
        line = "%-8s %9d" % (layout, size)
        base = statistics.median(vals[(ref, layout, size, c)]) if ref else None
        for n in names:
            m = statistics.median(vals[(n, layout, size, c)])
            line += "%20s" % ("%.1f (%.2f)" % (m, m / base) if base else "%.1f" % m)
        print(line)
EOF
cat "$out/summary.txt"
echo "[$PROG] results in $out"
