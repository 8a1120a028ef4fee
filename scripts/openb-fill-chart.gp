# The chart of docs/gpu-sharing.md: GPU allocation ratio and FGD fragmentation against
# arrived GPU demand, one line per policy (mean of the seeds), from `hived-sim fill` runs
# laid out as scripts/openb-fill-table.sh writes them.
#
# usage: gnuplot -e "dir='build/openb-fill/sample/default'; out='docs/images/openb-fill-default.png'" \
#          scripts/openb-fill-chart.gp
if (!exists("dir")) dir = 'build/openb-fill/sample/default'
if (!exists("out")) out = 'docs/images/openb-fill-default.png'
policies = "random dot-product gpu-clustering gpu-packing best-fit fgd hived hived-model"
set terminal pngcairo size 1000,900 font ",11"
set output out
set datafile separator ","
set grid
set multiplot layout 2,1
set title "openb default: GPU allocation ratio against arrived GPU demand (mean of seeds 42-51)"
set xlabel "arrived GPU demand (% of 6,212 GPUs)"
set ylabel "GPU allocation ratio (%)"
set key right bottom
set xrange [50:130]
set yrange [50:100]
plot for [p in policies] dir.'/'.p.'/curve.csv' skip 1 using ($1*100):($3*100) with lines lw 2 title p, \
     x with lines dt 2 lc rgb "gray" title "demand"
set title "FGD fragmentation of the unallocated GPU milli"
set ylabel "fragmented / unallocated (%)"
set key left top
set xrange [0:130]
set yrange [0:100]
plot for [p in policies] dir.'/'.p.'/curve.csv' skip 1 using ($1*100):($7*100) with lines lw 2 title p
unset multiplot
