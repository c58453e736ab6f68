#!/usr/bin/env bash
# plot.sh - rss-vs-n.png: mean RSS per process after all-pairs traffic (solid)
# and after MPI_Init (dashed) against the job size, one panel per
# configuration, for llc, Debian's MPICH and Open MPI (gnuplot, pngcairo).
set -euo pipefail
cd "$(dirname "$0")"
CONFS=(udp-cap8 defaults hybrid-cap8 hybrid-cap8-evict0)
TITLES=("llc: LLC\\\\_NET=udp, LLC\\\\_MAX\\\\_CONTEXTS=8, evict idle 0 ms" "llc: defaults (tcp, gamma 1024)" "llc: LLC\\\\_NET=hybrid, LLC\\\\_MAX\\\\_CONTEXTS=8, evict idle 3.2 s (default)" "llc: LLC\\\\_NET=hybrid, LLC\\\\_MAX\\\\_CONTEXTS=8, evict idle 0 ms")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for c in "${CONFS[@]}"; do
    [ -f "$c/summary.md" ] || continue
    for m in llc mpich ompi; do
        awk -F'|' -v m=$m '/^$/ { exit } NR > 2 { gsub(/ /, ""); if ($2 == m) print $3, $5 / 1024, $6 / 1024 }' "$c/summary.md" > "$tmp/$c-$m.dat"
    done
    n=$((n + 1))
done
{
    echo "set terminal pngcairo size 1200,900 font ',10'"
    echo "set output 'rss-vs-n.png'"
    echo "set multiplot layout 2,2 title 'Mean RSS per process vs job size (4 processes per emulated host; solid: after all-pairs traffic, dashed: after MPI\\_Init)'"
    echo "set logscale x 2; set xrange [12:160]; set xtics (16, 32, 64, 128)"
    echo "set yrange [0:22]; set xlabel 'processes n'; set ylabel 'RSS per process [MiB]'; set key bottom right; set grid"
    i=0
    for c in "${CONFS[@]}"; do
        [ -f "$c/summary.md" ] || { i=$((i + 1)); continue; }
        echo "set title \"${TITLES[$i]}\""
        echo "plot '$tmp/$c-llc.dat' u 1:3 w lp lc 1 pt 7 t 'llc', '$tmp/$c-llc.dat' u 1:2 w lp lc 1 dt 2 pt 6 notitle, \
'$tmp/$c-mpich.dat' u 1:3 w lp lc 2 pt 5 t 'Debian MPICH', '$tmp/$c-mpich.dat' u 1:2 w lp lc 2 dt 2 pt 4 notitle, \
'$tmp/$c-ompi.dat' u 1:3 w lp lc 3 pt 9 t 'Open MPI', '$tmp/$c-ompi.dat' u 1:2 w lp lc 3 dt 2 pt 8 notitle"
        i=$((i + 1))
    done
    echo "unset multiplot"
} > "$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "plot.sh: wrote $(pwd)/rss-vs-n.png"
