#!/usr/bin/env bash
# bench/pingpong/paired-env.sh -- the same llc build under two settings,
# paired: rounds alternate A and B, and each row reports the medians and the
# median of the per-round ratios B/A (the vCPU placement of these machines
# moves single runs by up to 2x; paired ratios see through it).
#
#   paired-env.sh --prefix DIR --mode intra|host|inter [--rounds N] [--tests LIST]
#                 [--sizes LIST] [--target S] [--out DIR] 'ENV_A' 'ENV_B'
#
# ENV_A / ENV_B: space-separated NAME=VALUE settings, e.g. LLC_TAG_OFFER=0
# (LD_LIBRARY_PATH=DIR puts another libllc.so.5 under the same binary).
# intra: 2 ranks in host h0; host: 2 ranks on this machine, no namespace;
# inter: one rank in h0, one in h1 (tcp); the emulated hosts of intra and
# inter must be up (maint/llc-netns up 2).  Raw outputs go to
# --out (default: a new directory under /tmp).  See doc/bench-pingpong.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" mode=intra rounds=8 tests=lat,bw,bibw sizes=65536,1048576,4194304 target=0.2 out=""
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        -*) echo "paired-env: unknown option '$1' (see --help)" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "paired-env: give ENV_A and ENV_B (see --help)" >&2; exit 2; }
[ -x "$prefix/bin/mpicc" ] || { echo "paired-env: --prefix DIR must hold bin/mpicc of the llc build" >&2; exit 2; }
envs=("$1" "$2")
out=${out:-$(mktemp -d /tmp/paired-env.XXXXXX)}
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -o "$out/pingpong" "$TOP/bench/pingpong/pingpong.c"
args=(--tests "$tests" --sizes "$sizes" --target "$target")
for r in $(seq 1 "$rounds"); do
    uptime >> "$out/load.txt" # the machine may be shared: the summary shows how loaded it was
    for v in 0 1; do
        echo "paired-env: round $r/$rounds, ${envs[$v]}" >&2
        # shellcheck disable=SC2086 # the settings are words on purpose
        if [ "$mode" = intra ]; then
            "$TOP/maint/llc-netns" exec h0 env ${envs[$v]} "$prefix/bin/mpiexec" -n 2 "$out/pingpong" "${args[@]}"
        elif [ "$mode" = host ]; then
            env ${envs[$v]} "$prefix/bin/mpiexec" -n 2 "$out/pingpong" "${args[@]}"
        else
            env ${envs[$v]} "$TOP/maint/llc-mpiexec-hosts" --mpiexec "$prefix/bin/mpiexec" -hosts h0,h1 -n 2 \
                "$out/pingpong" "${args[@]}"
        fi > "$out/$v.$r" 2>&1 || { echo "paired-env: run failed, see $out/$v.$r" >&2; exit 1; }
    done
done
python3 - "$out" "$rounds" "${envs[0]}" "${envs[1]}" <<'PY' | tee "$out/summary.txt"
import statistics, sys
out, rounds, ea, eb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def parse(path):
    d = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 3 and p[0] in ("lat", "bw", "bibw", "rate"):
            d[(p[0], int(p[1]))] = float(p[2])
    return d
A = [parse(f"{out}/0.{r}") for r in range(1, rounds + 1)]
B = [parse(f"{out}/1.{r}") for r in range(1, rounds + 1)]
print(f"A: {ea}   B: {eb}   ({rounds} rounds; lat in us, bw/bibw in MB/s, rate in msgs/s)")
print(f"{'test':5} {'size':>8} {'A median':>11} {'B median':>11} {'B/A paired':>11}")
for k in sorted(set().union(*A), key=lambda k: (k[0], k[1])):
    pairs = [(a[k], b[k]) for a, b in zip(A, B) if k in a and k in b]
    if not pairs:
        continue
    print(f"{k[0]:5} {k[1]:>8} {statistics.median(p[0] for p in pairs):>11.2f} "
          f"{statistics.median(p[1] for p in pairs):>11.2f} {statistics.median(p[1] / p[0] for p in pairs):>11.3f}")
PY
uptime >> "$out/load.txt"
echo "load (uptime, each round):" | tee -a "$out/summary.txt"
sed 's/.*load average/  load average/' "$out/load.txt" | tee -a "$out/summary.txt"
echo "paired-env: raw outputs in $out" >&2
