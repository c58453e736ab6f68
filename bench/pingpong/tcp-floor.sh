#!/usr/bin/env bash
# bench/pingpong/tcp-floor.sh -- the kernel's floor for the inter-node
# ping-pong: bench/pingpong/tcp_floor.c between the emulated hosts h0 and h1
# (plain TCP sockets, no MPI), with one connection for both directions and
# with one per direction, eager (the message itself) and rendezvous (48-byte
# request, 56-byte answer, then the message).  Any MPI's inter-node latency
# on this machine minus the floor is what that MPI adds; see
# doc/bench-pingpong.md.
#
# Usage: bench/pingpong/tcp-floor.sh [--repeat N] [--sizes LIST] [-o OUTDIR]
#   --repeat N     rounds, the cases interleaved in each (default 5)
#   --sizes LIST   comma list of message sizes (default 8,65536,4194304);
#                  rendezvous is measured for the sizes >= 65536
# Needs root (network namespaces).  Run it under `flock /tmp/llc-bench.lock`
# when other jobs use maint/llc-netns.  Prints the median latency (us) per
# case and writes it to OUTDIR/summary.md (default
# bench-out/pingpong/<date-time>-tcp-floor, outside git).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
NETNS=$TOP/maint/llc-netns
repeat=5
sizes=8,65536,4194304
out=$TOP/bench-out/pingpong/$(date +%Y-%m-%d_%H%M%S)-tcp-floor
while [ $# -gt 0 ]; do
    case $1 in
        --repeat) repeat=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "tcp-floor.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
log() { echo "[tcp-floor $(date +%H:%M:%S)] $*" >&2; }
mkdir -p "$out"
exe=$out/tcp_floor
cc -O2 -o "$exe" "$HERE/tcp_floor.c"
if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1; then
    log "emulated cluster not up: $NETNS up 2"
    "$NETNS" up 2
fi
h0=$("$NETNS" addr h0)

# case = conns:pattern:size
cases=()
IFS=, read -ra list <<<"$sizes"
for s in "${list[@]}"; do
    for c in 1 2; do
        cases+=("$c:eager:$s")
        [ "$s" -lt 65536 ] || cases+=("$c:rendezvous:$s")
    done
done
iters_for() { # about 0.2-0.5 s per run on this kind of machine
    if [ "$1" -le 1024 ]; then echo 20000; elif [ "$1" -le 262144 ]; then echo 3000; else echo 150; fi
}
raw=$out/raw.txt
: >"$raw"
port=47000
total=$((repeat * ${#cases[@]})); k=0
for r in $(seq 1 "$repeat"); do
    for cs in "${cases[@]}"; do
        IFS=: read -r c p s <<<"$cs"
        k=$((k + 1)); port=$((port + 2))
        args=(--conns "$c" --pattern "$p" --size "$s" --iters "$(iters_for "$s")")
        log "run $k of $total: conns $c $p $s B (round $r)"
        "$NETNS" exec h0 "$exe" --listen "$port" "${args[@]}" &
        lpid=$!
        if ! "$NETNS" exec h1 timeout 120 "$exe" --connect "$h0:$port" "${args[@]}" >>"$raw"; then
            kill "$lpid" 2>/dev/null || true
            echo "tcp-floor.sh: the run conns $c $p $s failed (see above)" >&2
            exit 1
        fi
        wait "$lpid"
    done
done
python3 - "$raw" "$out/summary.md" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault((f[5], f[3], f[1]), []).append(float(f[7]))  # size, pattern, conns
out = ["| size (B) | pattern | 1 connection (us) | 2 connections (us) | runs |", "|---:|---|---:|---:|---:|"]
for size, pattern in sorted({(k[0], k[1]) for k in rows}, key=lambda t: (int(t[0]), t[1])):
    one, two = rows.get((size, pattern, "1"), []), rows.get((size, pattern, "2"), [])
    med = lambda v: "%.2f" % statistics.median(v) if v else "-"
    out.append("| %s | %s | %s | %s | %d |" % (size, pattern, med(one), med(two), max(len(one), len(two))))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
log "wrote $out/summary.md (raw: $raw)"
