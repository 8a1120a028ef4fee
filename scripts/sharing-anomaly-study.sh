#!/usr/bin/env bash
# The sharing-anomaly study of docs/sharing-anomaly.md, rerunnable: replays the Philly trace
# (at 1x, 2x and 3x load) and a generated multi-tenant trace with skewed tenant loads under
# yarn-cs, elastic-quota, hived and hived --opportunistic-overflow, each against the private
# baseline, then writes per-VC tables (CSV) and PNG charts (gnuplot) to docs/sharing-anomaly/.
#
# Usage: bash scripts/sharing-anomaly-study.sh [OUT_DIR]   (default docs/sharing-anomaly)
# Needs a Release hived-sim (built here with the `bench` preset), python3 and gnuplot.
# Philly's trace is read from ../shared/traces/philly/philly.csv (skipped when absent).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/sharing-anomaly}
work=build/sharing-anomaly
sim=${SIM:-build/bench/sim/hived-sim}
if [[ -z "${SIM:-}" ]]; then
  cmake --preset bench >/dev/null
  cmake --build --preset bench --target hived-sim >/dev/null
fi
mkdir -p "$out" "$work"

policies=(yarn-cs elastic-quota hived hived+overflow)
run() {  # run NAME CONFIG TRACE FORMAT LOAD POLICY [QUEUE]
  local name=$1 config=$2 trace=$3 format=$4 load=$5 policy=$6 queue=${7:-fifo} extra=()
  if [[ $policy == hived+overflow ]]; then extra=(--opportunistic-overflow); policy=hived; fi
  "$sim" run --config "$config" --trace "$trace" --format "$format" --load-scale "$load" \
    --policy "$policy" --queue "$queue" "${extra[@]}" --out "$work/$name" --quiet >/dev/null
}

scenarios=()
# A generated multi-tenant trace: one heavy tenant (research) and light ones, on the
# bundled two-rack cluster; the same trace the unit test of the goal uses.
gen=$work/skewed.csv
"$sim" gen-trace --config config/examples/two-racks.yaml --jobs 1000 --load 2 \
  --vc-mix research=20,prod=2,dev=1,test=1 --out "$gen"
for p in "${policies[@]}"; do run "skewed-$p" config/examples/two-racks.yaml "$gen" hived 1 "$p"; done
scenarios+=(skewed)
philly=../shared/traces/philly/philly.csv
if [[ -f $philly ]]; then
  for load in 1 2 3; do
    for p in "${policies[@]}"; do
      run "philly-x$load-$p" config/examples/philly.yaml "$philly" philly "$load" "$p"
    done
    scenarios+=("philly-x$load")
  done
  # Does the anomaly depend on the queue discipline? Philly at 2x under backfill and easy.
  for queue in backfill easy; do
    for p in "${policies[@]}"; do
      run "philly-x2-$queue-$p" config/examples/philly.yaml "$philly" philly 2 "$p" "$queue"
    done
    scenarios+=("philly-x2-$queue")
  done
fi

python3 - "$work" "$out" "${scenarios[@]}" <<'PY'
import json, sys
work, out, scenarios = sys.argv[1], sys.argv[2], sys.argv[3:]
policies = ["yarn-cs", "elastic-quota", "hived", "hived+overflow"]
h = lambda s: s / 3600.0
with open(f"{out}/per_vc.csv", "w") as f:
    f.write("scenario,policy,vc,guaranteed_gpus,jobs,mean_wait_h,private_mean_wait_h,"
            "anomaly_mean_h,anomaly_p95_h,anomaly_jct_h,borrowed_gpu_h,lent_gpu_h,preemptions\n")
    for sc in scenarios:
        for p in policies:
            s = json.load(open(f"{work}/{sc}-{p}/summary.json"))
            for v in s["vcs"] + [s["overall"]]:
                f.write(",".join(str(x) for x in [
                    sc, p, v["name"], v.get("guaranteed_gpus", 0), v["measured"],
                    "%.2f" % h(v["queuing_delay"]["mean"]),
                    "%.2f" % h(v["baseline_mean_queuing_delay"] or 0),
                    "%.2f" % h(v["sharing_anomaly"] or 0),
                    "%.2f" % h(v["sharing_anomaly_p95"] or 0),
                    "%.2f" % h(v["sharing_anomaly_jct"] or 0),
                    "%.1f" % v["borrowed_gpu_hours"], "%.1f" % v["lent_gpu_hours"],
                    v["preemptions"]]) + "\n")
with open(f"{out}/cluster.csv", "w") as f:
    f.write("scenario,policy,window_utilisation,useful_utilisation,lost_gpu_h,"
            "mean_wait_h,p95_wait_h,max_vc_anomaly_h,preemptions\n")
    for sc in scenarios:
        for p in policies:
            s = json.load(open(f"{work}/{sc}-{p}/summary.json"))
            w, o = s["window"], s["overall"]
            worst = max((v["sharing_anomaly"] or 0) for v in s["vcs"])
            f.write(",".join(str(x) for x in [
                sc, p, "%.3f" % w["utilisation"], "%.3f" % w["useful_utilisation"],
                "%.1f" % (w["lost_gpu_hours"] + w["failure_lost_gpu_hours"]),
                "%.2f" % h(o["queuing_delay"]["mean"]), "%.2f" % h(o["queuing_delay"]["p95"]),
                "%.2f" % h(worst), o["preemptions"]]) + "\n")
# One gnuplot data block per scenario: VC, then the mean anomaly under each policy.
for sc in scenarios:
    rows = {}
    for p in policies:
        s = json.load(open(f"{work}/{sc}-{p}/summary.json"))
        for v in s["vcs"]:
            rows.setdefault(v["name"], []).append(h(v["sharing_anomaly"] or 0))
    with open(f"{out}/{sc}.dat", "w") as f:
        f.write("vc " + " ".join(policies) + "\n")
        for name, vals in rows.items():
            f.write(name + " " + " ".join("%.3f" % x for x in vals) + "\n")
PY

for sc in "${scenarios[@]}"; do
  gnuplot <<GP
set terminal pngcairo size 1100,560 noenhanced font 'sans,11'
set output '$out/anomaly-$sc.png'
set title "Sharing anomaly per VC, $sc (> 0 = waits longer than in a private cluster)"
set ylabel 'mean queuing delay minus private (hours)'
set xlabel 'virtual cluster'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border lt -1
set key outside right top vertical
set xtics rotate by -30
set grid ytics
set xzeroaxis lt 1 lc rgb 'grey50' dt 2 lw 1
set label 1 'a 0 is a black line on the axis (every hived bar)' at screen 0.01,0.02 font ',9'
plot for [i=2:5] '$out/$sc.dat' using i:xtic(1) title columnheader(i)
GP
  rm -f "$out/$sc.dat"
done
gnuplot <<GP
set terminal pngcairo size 1100,560 noenhanced font 'sans,11'
set output '$out/utilisation.png'
set title 'Utilisation of the cluster over the measurement window, by scenario and policy'
set ylabel 'GPU-time used / (cluster GPUs x window), %'
set xlabel 'scenario'
set datafile separator ','
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right top vertical
set yrange [0:*]
set grid ytics
plot for [p in "yarn-cs elastic-quota hived hived+overflow"] \
  '< grep ",'.p.'," $out/cluster.csv' using (100*\$3):xtic(1) title p
GP
echo "wrote $out/{per_vc.csv,cluster.csv,anomaly-*.png,utilisation.png}"
