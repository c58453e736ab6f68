#!/usr/bin/env bash
# bench/pingpong/run.sh -- build and run the MPI ping-pong with our "llc"
# MPICH build, Debian's stock MPICH and Open MPI, intra-node and across two
# emulated hosts (llc-netns), then merge the results into a markdown table
# and gnuplot PNGs.  See doc/bench-pingpong.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
NETNS=$TOP/maint/llc-netns
MPIEXEC_HOSTS=$TOP/maint/llc-mpiexec-hosts
PROG=${0##*/}

llc_prefix=""
out=""
repeat=3
target=0.2
maxsize=4194304
settle=0
run_timeout=180
only="llc,mpich,ompi"
modes="intra,inter"
down=0
plots=1
nice_level=-15
stat=median

usage() {
    cat <<EOF
Usage: $PROG [options]
  --llc-prefix DIR   install prefix of our llc build (DIR/bin/mpicc, DIR/bin/mpiexec);
                     without it (or if missing) the llc runs are skipped
  --only LIST        comma list of MPIs to run: llc,mpich,ompi (default: all);
                     also llc-udp and llc-hybrid: the llc build with LLC_NET=udp
                     or LLC_NET=hybrid (the table then adds their latency and
                     bandwidth relative to llc over tcp, the default), and
                     llc-hybrid-receiver / llc-hybrid-sender: LLC_NET=hybrid with
                     LLC_HYBRID_DRIVER=receiver / sender
  --modes LIST       intra,inter (default: both)
  --repeat R         run every case R times (default $repeat)
  --stat median|min  how the R latencies of a size are combined (default $stat;
                     min = best-of-R, useful on a machine with other load)
  --target S         seconds of timed ping-pong per message size (default $target)
  --max BYTES        largest message size (default $maxsize)
  --settle S         untimed 8-byte ping-pong for S seconds before the first size
                     (default 0; use > 2 x LLC_HYBRID_PERIOD_MS with llc-hybrid)
  --timeout S        kill any single run after S seconds (default $run_timeout)
  --out DIR          results directory (default bench/pingpong/results/<date>)
  --down             tear the emulated cluster down at the end if this script
                     brought it up (default: leave it up)
  --nice N           run every job under "nice -n N" (default $nice_level; 0 = off).
                     On a small shared machine busy-polling MPI ranks otherwise lose
                     their CPU to any other load and latencies jump to ~4 ms ticks
  --no-plots         skip gnuplot
  -h, --help         this text

MPIs:   llc   = DIR/bin/mpicc + DIR/bin/mpiexec (hydra)
        mpich = /usr/bin/mpicc.mpich + /usr/bin/mpiexec.hydra (Debian, ch4:ucx)
        ompi  = /usr/bin/mpicc.openmpi + /usr/bin/mpirun.openmpi (Debian)
Modes:  intra = 2 ranks on one host (plain launcher, run inside host h0)
        inter = rank 0 in h0, rank 1 in h1 (maint/llc-mpiexec-hosts)
Needs root (network namespaces).
EOF
}

die() { echo "$PROG: error: $*" >&2; exit 2; }
log() { echo "[pingpong $(date +%H:%M:%S)] $*"; }

while [ $# -gt 0 ]; do
    case $1 in
        --llc-prefix) llc_prefix=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --max) maxsize=$2; shift 2 ;;
        --settle) settle=$2; shift 2 ;;
        --timeout) run_timeout=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --down) down=1; shift ;;
        --no-plots) plots=0; shift ;;
        --nice) nice_level=$2; shift 2 ;;
        --stat) stat=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option $1" ;;
    esac
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer"
[[ $stat == median || $stat == min ]] || die "--stat must be median or min"
[ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces)"

[ -n "$out" ] || out=$HERE/results/$(date +%Y-%m-%d_%H%M%S)
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
build=$HERE/build
mkdir -p "$build"

# ---------------------------------------------------------------- MPIs ---
declare -A CC LAUNCH LABEL
LABEL[llc]="llc (our MPICH ch4:llc)"
LABEL[mpich]="Debian MPICH 4.0.2 (ch4:ucx)"
LABEL[ompi]="Open MPI (Debian)"
LABEL[llc-udp]="llc, LLC_NET=udp"
LABEL[llc-hybrid]="llc, LLC_NET=hybrid"
LABEL[llc-hybrid-receiver]="llc, hybrid, receiver-driven"
LABEL[llc-hybrid-sender]="llc, hybrid, sender-driven"
declare -A NETENV DRIVERENV
NETENV[llc-udp]=udp
NETENV[llc-hybrid]=hybrid
NETENV[llc-hybrid-receiver]=hybrid
NETENV[llc-hybrid-sender]=hybrid
DRIVERENV[llc-hybrid-receiver]=receiver
DRIVERENV[llc-hybrid-sender]=sender
mpis=()
for m in ${only//,/ }; do
    case $m in
        llc|llc-udp|llc-hybrid|llc-hybrid-receiver|llc-hybrid-sender)
            if [ -z "$llc_prefix" ]; then
                log "SKIP llc: no --llc-prefix given"
                continue
            fi
            if [ ! -x "$llc_prefix/bin/mpicc" ] || [ ! -x "$llc_prefix/bin/mpiexec" ]; then
                log "SKIP llc: $llc_prefix/bin/mpicc or $llc_prefix/bin/mpiexec not found"
                continue
            fi
            CC[$m]=$llc_prefix/bin/mpicc
            LAUNCH[$m]=$llc_prefix/bin/mpiexec
            ;;
        mpich)
            CC[mpich]=/usr/bin/mpicc.mpich
            LAUNCH[mpich]=/usr/bin/mpiexec.hydra
            ;;
        ompi)
            CC[ompi]=/usr/bin/mpicc.openmpi
            LAUNCH[ompi]=/usr/bin/mpirun.openmpi
            ;;
        *) die "unknown MPI '$m' in --only" ;;
    esac
    if [ ! -x "${CC[$m]}" ] || [ ! -x "${LAUNCH[$m]}" ]; then
        log "SKIP $m: ${CC[$m]} or ${LAUNCH[$m]} not installed"
        continue
    fi
    mpis+=("$m")
done
[ ${#mpis[@]} -gt 0 ] || die "no MPI to run"

# --------------------------------------------------------------- build ---
for m in "${mpis[@]}"; do
    log "build $m with ${CC[$m]}"
    "${CC[$m]}" -O2 -o "$build/pingpong.$m" "$HERE/pingpong.c"
done

# ------------------------------------------------------------- cluster ---
brought_up=0
if [[ ,$modes, == *,inter,* || ,$modes, == *,intra,* ]]; then
    if ! "$NETNS" addr h0 >/dev/null 2>&1 || ! "$NETNS" addr h1 >/dev/null 2>&1; then
        log "emulated cluster not up: $NETNS up 2"
        "$NETNS" up 2
        brought_up=1
    else
        log "emulated cluster already up (h0, h1)"
    fi
fi
cleanup() {
    if [ $down -eq 1 ] && [ $brought_up -eq 1 ]; then
        log "tearing the emulated cluster down"
        "$NETNS" down || true
    fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- meta ---
{
    echo "date: $(date -Iseconds)"
    echo "host: $(uname -srm), $(nproc) cores"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "repeat: $repeat ($stat)  target: $target s/size  max: $maxsize  settle: $settle s  timeout: $run_timeout s  nice: $nice_level"
    echo "git: $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    for m in "${mpis[@]}"; do
        echo "mpi $m: ${LABEL[$m]}: cc=${CC[$m]} launcher=${LAUNCH[$m]}"
    done
} >"$out/meta.txt"

# ----------------------------------------------------------------- run ---
pp_args=(--target "$target" --max "$maxsize" --settle "$settle")

run_cmd() {  # mpi mode -> prints the command (one word per line)
    local m=$1 mode=$2 exe=$build/pingpong.$1
    # the launcher passes its environment to the ranks (hydra's default)
    if [ -n "${NETENV[$m]:-}" ]; then
        printf '%s\n' env "LLC_NET=${NETENV[$m]}"
        [ -z "${DRIVERENV[$m]:-}" ] || printf '%s\n' "LLC_HYBRID_DRIVER=${DRIVERENV[$m]}"
    fi
    if [ "$mode" = intra ]; then
        if [ "$m" = ompi ]; then
            printf '%s\n' "$NETNS" exec h0 "${LAUNCH[$m]}" --allow-run-as-root -n 2 "$exe" "${pp_args[@]}"
        else
            printf '%s\n' "$NETNS" exec h0 "${LAUNCH[$m]}" -n 2 "$exe" "${pp_args[@]}"
        fi
    else
        printf '%s\n' "$MPIEXEC_HOSTS" --mpiexec "${LAUNCH[$m]}" -hosts h0,h1 -n 2 "$exe" "${pp_args[@]}"
    fi
}

# bytes through h1's veth: proves inter-node traffic really crossed the bridge
h1_bytes() {
    ip netns exec h1 sh -c 'echo $(( $(cat /sys/class/net/eth0/statistics/rx_bytes) + $(cat /sys/class/net/eth0/statistics/tx_bytes) ))' 2>/dev/null || echo 0
}

failures=0
for mode in ${modes//,/ }; do
    [[ $mode == intra || $mode == inter ]] || die "unknown mode '$mode'"
    for m in "${mpis[@]}"; do
        mapfile -t cmd < <(run_cmd "$m" "$mode")
        echo "$m $mode: ${cmd[*]}" >>"$out/commands.txt"
        for ((r = 1; r <= repeat; r++)); do
            raw=$out/raw/$m-$mode-r$r.txt
            log "run $m $mode ($r/$repeat) ..."
            b0=$(h1_bytes)
            t0=$(date +%s.%N)
            rc=0
            timeout -k 10 "$run_timeout" nice -n "$nice_level" "${cmd[@]}" >"$raw" 2>"${raw%.txt}.err" </dev/null || rc=$?
            t1=$(date +%s.%N)
            dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
            nlines=$(grep -cE '^[0-9]+ ' "$raw" || true)
            if [ $rc -ne 0 ]; then
                log "  FAILED $m $mode rep $r: exit $rc after ${dt}s ($nlines sizes); see ${raw%.txt}.err"
                [ $rc -ne 124 ] || log "  (timeout after $run_timeout s)"
                failures=$((failures + 1))
                mv "$raw" "${raw%.txt}.failed"
            else
                last=$(grep -E '^[0-9]+ ' "$raw" | tail -1)
                b1=$(h1_bytes)
                log "  ok in ${dt}s, $nlines sizes, last: $last; h1 eth0 moved $(( (b1 - b0) / 1000000 )) MB"
                echo "$m $mode rep $r: h1 eth0 rx+tx $((b1 - b0)) bytes" >>"$out/traffic.txt"
            fi
            [ -s "${raw%.txt}.err" ] || rm -f "${raw%.txt}.err"
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"

# --------------------------------------------------------------- merge ---
# per (mpi, mode): median latency over the repeats, bandwidth from it
for mode in ${modes//,/ }; do
    for m in "${mpis[@]}"; do
        files=("$out"/raw/$m-$mode-r*.txt)
        [ -e "${files[0]}" ] || continue
        awk -v stat="$stat" '
            /^[0-9]+ / { n[$1]++; v[$1, n[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 } }
            END {
                for (k = 1; k <= ns; k++) {
                    s = order[k]; c = n[s]
                    for (i = 1; i <= c; i++) a[i] = v[s, i]
                    for (i = 2; i <= c; i++) { x = a[i]; j = i - 1; while (j >= 1 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
                    med = (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
                    if (stat == "min") med = a[1]
                    printf "%d %.3f %.3f %d\n", s, med, s / med, c
                }
            }' "${files[@]}" | sort -n >"$out/$m-$mode.dat"
    done
done

# table: latency per MPI, llc/best-other; bandwidth per MPI, best-other/llc
table=$out/results.md
{
    echo "# Ping-pong results $(basename "$out")"
    echo
    echo "$stat of $repeat runs per size; latency = half round trip (us),"
    echo "bandwidth = size / latency (MB/s, 1 MB = 1e6 B)."
    echo "Ratios: lat llc/best = llc latency / lowest latency of the other MPIs"
    echo "(< 1 means llc is faster); bw best/llc = highest other bandwidth / llc bandwidth"
    echo "(< 1 means llc is faster). n/a when llc or the others are missing."
    echo "llc-udp, llc-hybrid(-receiver|-sender): the llc build with LLC_NET=udp / hybrid"
    echo "(LLC_HYBRID_DRIVER=receiver|sender); they are not"
    echo "\"other MPIs\".  lat V/llc = V latency / llc (tcp) latency, bw llc/V = llc (tcp)"
    echo "bandwidth / V bandwidth: > 1 means V is slower than the default tcp path."
    echo
    sed 's/^/    /' "$out/meta.txt"
    for mode in ${modes//,/ }; do
        present=()
        for m in "${mpis[@]}"; do [ -s "$out/$m-$mode.dat" ] && present+=("$m"); done
        [ ${#present[@]} -gt 0 ] || continue
        echo
        if [ "$mode" = intra ]; then echo "## Intra-node (2 ranks in h0)"; else echo "## Inter-node (rank 0 in h0, rank 1 in h1, veth + bridge)"; fi
        echo
        hdr="| size |"; sep="|---:|"
        for m in "${present[@]}"; do hdr+=" $m lat us |"; sep+="---:|"; done
        hdr+=" lat llc/best |"; sep+="---:|"
        for m in "${present[@]}"; do hdr+=" $m MB/s |"; sep+="---:|"; done
        hdr+=" bw best/llc |"; sep+="---:|"
        variants=()
        for m in "${present[@]}"; do [[ $m == llc-* ]] && variants+=("$m"); done
        for v in "${variants[@]}"; do hdr+=" lat $v/llc |"; sep+="---:|"; done
        for v in "${variants[@]}"; do hdr+=" bw llc/$v |"; sep+="---:|"; done
        echo "$hdr"; echo "$sep"
        files=""
        for m in "${present[@]}"; do files+="${files:+|}$out/$m-$mode.dat"; done
        awk -v names="${present[*]}" -v files="$files" -v variants="${variants[*]}" '
            BEGIN {
                nm = split(names, M, " "); split(files, F, "|")
                for (k = 1; k <= nm; k++) {
                    f = F[k]
                    while ((getline line < f) > 0) {
                        split(line, p, " ")
                        lat[M[k], p[1]] = p[2]; bw[M[k], p[1]] = p[3]
                        if (!(p[1] in seen)) { seen[p[1]] = 1; sizes[++ns] = p[1] + 0 }
                    }
                }
                for (i = 2; i <= ns; i++) { x = sizes[i]; j = i - 1; while (j >= 1 && sizes[j] > x) { sizes[j + 1] = sizes[j]; j-- } sizes[j + 1] = x }
                for (i = 1; i <= ns; i++) {
                    s = sizes[i]; row = "| " s " |"
                    bestlat = ""; bestbw = ""
                    for (k = 1; k <= nm; k++) {
                        m = M[k]
                        if ((m, s) in lat) {
                            row = row " " sprintf("%.2f", lat[m, s]) " |"
                            if (m !~ /^llc/) {
                                if (bestlat == "" || lat[m, s] < bestlat) bestlat = lat[m, s]
                                if (bestbw == "" || bw[m, s] > bestbw) bestbw = bw[m, s]
                            }
                        } else row = row " - |"
                    }
                    if (("llc", s) in lat && bestlat != "" && lat["llc", s] > 0) row = row " " sprintf("%.2f", lat["llc", s] / bestlat) " |"
                    else row = row " n/a |"
                    for (k = 1; k <= nm; k++) {
                        m = M[k]
                        if ((m, s) in bw) row = row " " sprintf("%.1f", bw[m, s]) " |"; else row = row " - |"
                    }
                    if (("llc", s) in bw && bestbw != "" && bw["llc", s] > 0) row = row " " sprintf("%.2f", bestbw / bw["llc", s]) " |"
                    else row = row " n/a |"
                    nv = split(variants, V, " ")
                    for (k = 1; k <= nv; k++)
                        if ((V[k], s) in lat && ("llc", s) in lat && lat["llc", s] > 0) row = row " " sprintf("%.2f", lat[V[k], s] / lat["llc", s]) " |"
                        else row = row " n/a |"
                    for (k = 1; k <= nv; k++)
                        if ((V[k], s) in bw && ("llc", s) in bw && bw[V[k], s] > 0) row = row " " sprintf("%.2f", bw["llc", s] / bw[V[k], s]) " |"
                        else row = row " n/a |"
                    print row
                }
            }' < /dev/null
    done
} >"$table"
log "table: $table"

# --------------------------------------------------------------- plots ---
if [ $plots -eq 1 ]; then
    if ! command -v gnuplot >/dev/null 2>&1; then
        log "SKIP plots: gnuplot not installed (apt-get install gnuplot-nox)"
    else
        for mode in ${modes//,/ }; do
            present=()
            for m in "${mpis[@]}"; do [ -s "$out/$m-$mode.dat" ] && present+=("$m"); done
            [ ${#present[@]} -gt 0 ] || continue
            if [ "$mode" = intra ]; then title="intra-node (2 ranks in one host)"; else title="inter-node (h0 <-> h1 over veth/bridge)"; fi
            for what in latency bandwidth; do
                if [ $what = latency ]; then col=2; ylabel="latency (us, half round trip)"; else col=3; ylabel="bandwidth (MB/s)"; fi
                plot=""
                for m in "${present[@]}"; do
                    plot+="${plot:+, }'$out/$m-$mode.dat' using 1:$col with linespoints lw 2 title '${LABEL[$m]}'"
                done
                gnuplot <<EOF || log "gnuplot failed for $mode $what"
set terminal pngcairo size 900,600 noenhanced
set output '$out/$what-$mode.png'
set title 'ping-pong $what, $title'
set logscale xy
set format x '%.0s%cB'
set xlabel 'message size'
set ylabel '$ylabel'
set grid
set key left top
plot $plot
EOF
            done
        done
        log "plots: $(cd "$out" && ls -- *.png | tr '\n' ' ')"
    fi
fi

if [ $failures -gt 0 ]; then
    log "done with $failures FAILED run(s); results in $out"
    exit 1
fi
log "done; results in $out"
