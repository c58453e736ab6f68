set terminal pngcairo size 1400,420 font ',9'
set output 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.png'
set multiplot layout 1,1
set style data histograms
set style histogram clustered gap 1
set termoption noenhanced
set style fill solid 0.8 border -1
set logscale y 2
set yrange [0.25:*]
set ylabel 'time / best fixed'
set key outside right
set xlabel 'placement pattern'
set grid y
set title 'llc, 16384 bytes per rank, 8 ranks'
plot 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 2:xtic(1) title 'bruck' lc rgb '#9467bd', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 3:xtic(1) title 'pairwise' lc rgb '#2ca02c', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 4:xtic(1) title 'pairwise_lb' lc rgb '#98df8a', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 5:xtic(1) title 'pairwise_mb' lc rgb '#d62728', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 6:xtic(1) title 'pairwise_ob' lc rgb '#ff9896', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 7:xtic(1) title 'ring' lc rgb '#1f77b4', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 8:xtic(1) title 'ring_lb' lc rgb '#aec7e8', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 9:xtic(1) title 'ring_mb' lc rgb '#8c564b', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 10:xtic(1) title 'ring_ob' lc rgb '#c49c94', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 11:xtic(1) title 'auto' lc rgb '#000000' fill pattern 4, 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 12:xtic(1) title 'auto-noprune' lc rgb '#7f7f7f' fill pattern 4, 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 13:xtic(1) title 'mpich' lc rgb '#ff7f0e', 'bench/alltoall/results/2026-11-22-modelstop-quiet/times.dat' index 0 using 15:xtic(1) title 'auto-nostop' lc rgb '#bcbd22' fill pattern 4
unset multiplot
