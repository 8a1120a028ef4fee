#!/usr/bin/env bash
# Capacity planning on the Philly trace: the commands behind docs/planning.md. Runs the plans
# and sweeps into OUT (default build/planning-philly) and copies the charts the document
# shows into docs/planning/. Needs a built hived-sim (default build/release) and gnuplot.
#
#   bash scripts/planning-philly.sh [OUT] [HIVED_SIM]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/planning-philly}
sim=${2:-build/release/sim/hived-sim}
trace=../shared/traces/philly/philly.csv
config=config/examples/philly.yaml
philly=(--config "$config" --trace "$trace" --format philly)
rm -rf "$out"
mkdir -p "$out" docs/planning

echo "== Q1: the smallest reservation for VC 6214e9 with p95 queuing delay <= 1 h"
"$sim" plan "${philly[@]}" --vc 6214e9 --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' \
  --out "$out/plan-6214e9"
echo "== Q1: the same for every VC, then the physical cluster"
"$sim" plan "${philly[@]}" --all-vcs --target 'p95_wait<=1h' --out "$out/plan-all" || true

echo "== Q2: what if: a new tenant of 8 nodes with a synthetic workload; 2 more racks,"
echo "   idle and usable only opportunistically (--opportunistic-overflow)"
"$sim" run "${philly[@]}" --quiet --out "$out/base" >/dev/null
"$sim" sweep "${philly[@]}" --out "$out/whatif" --add-racks 0,2 \
  --vary 'opportunistic-overflow=false,true' \
  --vc-cells 'newteam@P100-RACK.P100-NODE=8' --add-tenant 'newteam:jobs=5000,load=0.7'
"$sim" compare --label base "$out/base" \
  --label "tenant" "$out/whatif/runs/000000/out" \
  --label "tenant, overflow" "$out/whatif/runs/000001/out" \
  --label "tenant, +2 racks" "$out/whatif/runs/000002/out" \
  --label "tenant, +2 racks, overflow" "$out/whatif/runs/000003/out" \
  --out "$out/whatif/charts"

echo "== Q3: sizes x policies x seeds (node failures make the seeds differ)"
"$sim" sweep "${philly[@]}" --out "$out/grid" --scale 1,1.5,2,2.5 --policy hived,quota \
  --seeds 1-3 --run-args '--mtbf 2000 --mttr 4'
"$sim" compare "$out/grid/sweep.csv" --out "$out/grid/charts" --target 'p95_wait<=24h'

cp "$out/plan-6214e9/plan-6214e9.png" docs/planning/plan-6214e9.png
cp "$out/whatif/charts/mean_wait_by_vc.png" docs/planning/whatif-mean-wait.png
cp "$out/grid/charts/p95_wait_by_vc.png" docs/planning/grid-p95-wait.png
echo "charts copied to docs/planning/"
