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
# Each command's wall time and the load when it ended, on stderr (for docs/planning.md).
timed() {
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  printf '   (%.1f s wall, load %s)\n' "$(echo "$end - $start" | bc)" \
    "$(cut -d' ' -f1 /proc/loadavg)" >&2
}

echo "== Q1: the smallest reservation for VC 6214e9 with p95 queuing delay <= 1 h"
timed "$sim" plan "${philly[@]}" --vc 6214e9 --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' \
  --out "$out/plan-6214e9"
echo "== Q1: the same for every VC (in P100 nodes), then the physical cluster; and at 1.5x load"
timed "$sim" plan "${philly[@]}" --all-vcs --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' \
  --jobs 2 --resamples 10 --out "$out/plan-all"
timed "$sim" plan "${philly[@]}" --all-vcs --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' \
  --jobs 2 --resamples 10 --load-scale 1.5 --out "$out/plan-all-15"
echo "== Q1: VC 23dbec (8 jobs) sized anyway"
timed "$sim" plan "${philly[@]}" --vc 23dbec --min-jobs 0 --target 'p95_wait<=1h' \
  --out "$out/plan-23dbec"

echo "== Q2b: a new team like VC 103959, and 103959 growing by half"
node=(--cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' --jobs 2)
timed "$sim" plan "${philly[@]}" "${node[@]}" --add-vc newteam --add-tenant 'newteam:like=103959' \
  --out "$out/p-add"
timed "$sim" plan "${philly[@]}" "${node[@]}" --vc 103959 --out "$out/p-base"
timed "$sim" plan "${philly[@]}" "${node[@]}" --vc 103959 --vc-load-scale 103959=1.5 \
  --out "$out/p-grow"

echo "== Q2: what if: a new tenant of 8 nodes with a synthetic workload; 2 more racks,"
echo "   idle and usable only opportunistically (--opportunistic-overflow)"
timed "$sim" run "${philly[@]}" --quiet --out "$out/base" >/dev/null
timed "$sim" sweep "${philly[@]}" --out "$out/whatif" --add-racks 0,2 \
  --vary 'opportunistic-overflow=false,true' \
  --vc-cells 'newteam@P100-RACK.P100-NODE=8' --add-tenant 'newteam:jobs=5000,load=0.7'
timed "$sim" compare --label base "$out/base" \
  --label "tenant" "$out/whatif/runs/000000/out" \
  --label "tenant, overflow" "$out/whatif/runs/000001/out" \
  --label "tenant, +2 racks" "$out/whatif/runs/000002/out" \
  --label "tenant, +2 racks, overflow" "$out/whatif/runs/000003/out" \
  --out "$out/whatif/charts"

echo "== Q3: sizes x policies x seeds (node failures make the seeds differ)"
timed "$sim" sweep "${philly[@]}" --out "$out/grid" --scale 1,1.5,2,2.5 --policy hived,quota \
  --seeds 1-3 --run-args '--mtbf 2000 --mttr 4'
timed "$sim" compare "$out/grid/sweep.csv" --out "$out/grid/charts" --target 'p95_wait<=24h'

echo "== Q4: the cost of a new tenant like VC 6c71a0 (at P100 \$1.46/GPU-h, an assumed price)"
timed "$sim" plan "${philly[@]}" --add-vc newteam --add-tenant 'newteam:like=6c71a0,scale=1' \
  --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' --price P100=1.46 --out "$out/tenant"

echo "== Q5: move VC 6c71a0 to V100s, twice as fast, at \$2.48/GPU-h? (a V100 rack added)"
python3 - "$config" "$out/philly-v100.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
v100 = ("    V100-NODE:\n      childCellType: V100\n      childCellNumber: 8\n"
        "      isNodeLevel: true\n    V100-RACK:\n      childCellType: V100-NODE\n"
        "      childCellNumber: 8\n  physicalCells:\n  - cellType: V100-RACK\n"
        "    cellChildren:\n" + "".join(f"    - cellAddress: philly-v00-n{i}\n" for i in range(8)))
open(sys.argv[2], "w").write(text.replace("  physicalCells:\n", v100, 1))
PY
timed "$sim" plan --config "$out/philly-v100.yaml" --trace "$trace" --format philly --vc 6c71a0 \
  --target 'p95_wait<=1h' --try-types P100-RACK.P100-NODE,V100-RACK.V100-NODE \
  --gpu-speed P100=1,V100=2 --price P100=1.46,V100=2.48 --out "$out/move"

echo "== how sure: each option's sized config over 10 bootstrap resamples of the trace's days"
timed "$sim" sweep --config "$out/move/sized.yaml" --trace "$trace" --format philly --only-vcs 6c71a0 \
  --bootstrap days --seeds 1-10 --run-args '--baseline none' --out "$out/sure-p100"
timed "$sim" sweep --config "$out/move/type-V100-RACK.V100-NODE/probes/6c71a0/12/config.yaml" \
  --trace "$trace" --format philly --only-vcs 6c71a0 --vc-speed 6c71a0=2 \
  --bootstrap days --seeds 1-10 --run-args '--baseline none' --out "$out/sure-v100"
timed "$sim" compare --label P100 "$out/sure-p100/sweep.csv" --label V100 "$out/sure-v100/sweep.csv" \
  --target 'p95_wait<=1h' --price P100=1.46,V100=2.48

cp "$out/plan-6214e9/plan-6214e9.png" docs/planning/plan-6214e9.png
cp "$out/whatif/charts/mean_wait_by_vc.png" docs/planning/whatif-mean-wait.png
cp "$out/grid/charts/p95_wait_by_vc.png" docs/planning/grid-p95-wait.png
echo "charts copied to docs/planning/"
