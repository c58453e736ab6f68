#!/usr/bin/env bash
# bench/pingpong/shared-recv.sh -- the cost of one udp socket per node
# (LLC_UDP_SHARED_RECV=1) on point-to-point latency and bandwidth, against a
# socket per process (LLC_UDP_SHARED_RECV=0), across 2 emulated hosts.
#
# Ranks 0 and 1 ping-pong (bench/pingpong/pingpong.c) from h0 to h1; with
# -n 4, ranks 2 (h0) and 3 (h1) share their nodes and wait in the
# per-size MPI_Barrier meanwhile: they progress, read the node socket and hand rank 0's
# and rank 1's datagrams over, which is the case the node socket makes
# slower.  -n 2 (alone on their nodes: the node socket is the process's own)
# is the reference.  Both settings alternate, --repeat times each.
#
# Usage: bench/pingpong/shared-recv.sh --llc-prefix DIR [--repeat N]
#            [--target S] [--max BYTES] [-o OUTDIR]
# Needs root (network namespaces).  Only one emulated cluster may exist at a
# time on a machine: run it under `flock /tmp/llc-bench.lock` when other
# jobs use maint/llc-netns.  Prints a table (median latency per size and
# setting, ratio shared/per-process) and writes it to OUTDIR/summary.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
NETNS=$TOP/maint/llc-netns
MPIEXEC_HOSTS=$TOP/maint/llc-mpiexec-hosts
llc=""; repeat=3; target=0.2; max=4194304
out=$TOP/bench-out/pingpong/$(date +%Y-%m-%d_%H%M%S)-shared-recv
while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) llc=$(cd "$2" && pwd); shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --max) max=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "shared-recv.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$llc" ] && [ -x "$llc/bin/mpicc" ] || { echo "shared-recv.sh: give --llc-prefix of an installed mpich-llc (DIR/bin/mpicc)" >&2; exit 2; }
mkdir -p "$out/bin"
log() { echo "[shared-recv $(date +%H:%M:%S)] $*" >&2; }

exe=$out/bin/pingpong
"$llc/bin/mpicc" -O2 -o "$exe" "$TOP/bench/pingpong/pingpong.c"
brought_up=0
if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1; then
    log "bringing up 2 emulated hosts"; "$NETNS" up 2 >/dev/null; brought_up=1
fi
trap '[ $brought_up = 1 ] && "$NETNS" down >/dev/null 2>&1 || true' EXIT
{
    echo "date: $(date -Iseconds)"; echo "host: $(uname -srm), $(nproc) cores"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "git: $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "repeat: $repeat  target: $target s/size  max: $max"
} > "$out/meta.txt"
: > "$out/commands.txt"

cases="np2-perproc np2-shared np4-perproc np4-shared"
total=$((repeat * 4)); k=0
for r in $(seq 1 "$repeat"); do
    for c in $cases; do
        k=$((k + 1))
        np=${c%%-*}; np=${np#np}
        shared=0; [ "${c#*-}" = shared ] && shared=1
        cmd=("$MPIEXEC_HOSTS" --mpiexec "$llc/bin/mpiexec" -hosts h0,h1 -n "$np"
             -genv LLC_NET udp -genv LLC_UDP_SHARED_RECV "$shared" -genv LLC_MEM_REPORT 0
             "$exe" --tests lat --sizes "8-$max" --target "$target" --settle 0.5)
        echo "$c run $r: ${cmd[*]}" >> "$out/commands.txt"
        log "($k/$total) $c, run $r"
        if ! timeout 600 "${cmd[@]}" > "$out/$c-$r.txt" 2> "$out/$c-$r.err"; then
            log "FAILED: $c run $r (see $out/$c-$r.err)"; tail -3 "$out/$c-$r.err" >&2
        fi
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"

# median latency per (case, size) over the repeats
python3 - "$out" "$repeat" $cases > "$out/summary.md" <<'EOF'
import sys, statistics, glob, os
out, repeat, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
lat = {}
for c in cases:
    for f in glob.glob(os.path.join(out, c + "-*.txt")):
        for line in open(f):
            p = line.split()
            if len(p) < 3 or p[0] != "lat":
                continue
            lat.setdefault((c, int(p[1])), []).append(float(p[2]))
sizes = sorted({s for (_, s) in lat})
print("# one udp socket per node vs one per process (LLC_NET=udp, 2 emulated hosts)\n")
print("Median one-way latency (us) over the repeats; bandwidth = size / latency (MB/s).")
print("shared/per-process > 1 means the node socket is slower.\n")
print("| size | np2 per-process | np2 shared | ratio | np4 per-process | np4 shared | ratio | np4 shared MB/s |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
def med(c, s):
    v = lat.get((c, s))
    return statistics.median(v) if v else None
for s in sizes:
    a, b, c2, d = (med(x, s) for x in cases)
    f = lambda v: "-" if v is None else "%.1f" % v
    r = lambda x, y: "-" if x is None or y is None else "%.2f" % (y / x)
    bw = "-" if d is None else "%.0f" % (s / d)
    print(f"| {s} | {f(a)} | {f(b)} | {r(a, b)} | {f(c2)} | {f(d)} | {r(c2, d)} | {bw} |")
EOF
cat "$out/summary.md"
log "results in $out"
