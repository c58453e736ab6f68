#!/bin/sh
# Plots of the simulator's output (bench/bcast/bcast_sim > sim.txt):
#   sim_avg_vs_load.png   average time vs load at P=128, 1 B (the paper's Fig. 8 trend)
#   sim_ratio_vs_size.png Opt/Ori of average and overall time vs message size, load 160, P=128
#   sim_ratio_vs_procs.png Opt/Ori of average time vs processes, load 160, 1 B
# Usage: bench/bcast/plot_sim.sh OUTDIR/sim.txt   (PNGs next to it)
set -e
in=$1
dir=$(dirname "$in")
command -v gnuplot >/dev/null || { echo "plot_sim.sh: gnuplot missing (maint/install-deps --bench)" >&2; exit 1; }
# columns: procs load bytes | oO oOpt oI | aO aOpt aI | changes  (the '|' are fields too)
awk '!/^#/ && $1 ~ /^[0-9]+$/ && $1 == 128 && $3 == 1 {print $2, $9, $10, $11}' "$in" > "$dir/avg_vs_load.dat"
awk '!/^#/ && $1 ~ /^[0-9]+$/ && $1 == 128 && $2 == 160 {print $3, $10/$9, $6/$5}' "$in" > "$dir/ratio_vs_size.dat"
awk '!/^#/ && $1 ~ /^[0-9]+$/ && $2 == 160 && $3 == 1 {print $1, $10/$9, $6/$5}' "$in" > "$dir/ratio_vs_procs.dat"
gnuplot <<GP
set terminal pngcairo size 800,500
set grid
set output "$dir/sim_avg_vs_load.png"
set title "Simulated max-effect benchmark, 128 processes, 1 B: average time"
set xlabel "load N (N^3 multiply-adds on the first receiver)"
set ylabel "average time [ms]"
set logscale y
plot "$dir/avg_vs_load.dat" u 1:2 w lp t "Ori (fixed binomial)", "" u 1:3 w lp t "Opt (virtual ranks)", "" u 1:4 w lp t "Ide (ideal table)"
unset logscale y
set output "$dir/sim_ratio_vs_size.png"
set title "Simulated, 128 processes, load 160: Opt/Ori"
set xlabel "message size [bytes]"
set ylabel "Opt / Ori"
set logscale x
set yrange [0:1.1]
plot "$dir/ratio_vs_size.dat" u 1:2 w lp t "average time", "" u 1:3 w lp t "overall time", 0.2 w l dt 2 t "target 0.2 (average)", 0.75 w l dt 3 t "target 0.75 (overall)"
set output "$dir/sim_ratio_vs_procs.png"
set title "Simulated, load 160, 1 B: Opt/Ori vs processes"
set xlabel "processes"
plot "$dir/ratio_vs_procs.dat" u 1:2 w lp t "average time", "" u 1:3 w lp t "overall time"
GP
echo "plots in $dir"
