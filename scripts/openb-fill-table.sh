#!/usr/bin/env bash
# The FGD comparison of docs/gpu-sharing.md: every policy of `hived-sim fill` on every
# bundled openb pod list, seeds 42..51, then a markdown table of the allocation ratio at
# 130% arrived demand (mean of the seeds, and the stddev) beside the published figures.
#
# usage: [POLICIES="hived fgd"] [VARIANTS="default"] scripts/openb-fill-table.sh [OUT_DIR] [WORKLOAD]
#   OUT_DIR   default build/openb-fill; runs go to OUT_DIR/WORKLOAD/<variant>/<policy>/
#   WORKLOAD  sample (default: draws with replacement, shuffled) or artifact (the published
#             simulator's: the whole list shuffled, then draws appended)
#   POLICIES, VARIANTS  run only these (the table shows runs already there for the others)
# Needs the openb trace in ../shared/traces/openb (or OPENB_DIR) and a Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/openb-fill}
workload=${2:-sample}
trace=${OPENB_DIR:-../shared/traces/openb}
sim=build/release/sim/hived-sim
[ -x "$sim" ] || { cmake --preset release >/dev/null && cmake --build --preset release --target hived-sim; }
read -r -a policies <<<"${POLICIES:-random dot-product gpu-clustering gpu-packing best-fit fgd hived hived-model}"
read -r -a variants <<<"${VARIANTS:-default cpu050 cpu100 gpushare40 gpuspec10 multigpu20}"
for v in "${variants[@]}"; do
  for p in "${policies[@]}"; do
    "$sim" fill --nodes "$trace/openb_node_list_gpu_node.csv" \
      --pods "$trace/openb_pod_list_$v.csv" --format openb --policy "$p" --seeds 42..51 \
      --workload "$workload" --out "$out/$workload/$v/$p" >/dev/null 2>&1
  done
done
python3 - "$out/$workload" <<'PY'
import json, os, sys
root = sys.argv[1]
policies = ["random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd", "hived",
            "hived-model"]
published = {  # ../shared/traces/openb/README.md (the paper's artifact, mean of 10 seeds)
    "default": [87.47, 90.85, 91.88, 92.00, 93.08, 95.39],
    "cpu050": [91.24, 93.27, 93.79, 93.72, 93.79, 95.21],
    "cpu100": [89.11, 91.95, 92.64, 92.72, 93.44, 95.35],
    "gpushare40": [86.00, 89.56, 90.02, 90.03, 91.69, 94.15],
    "gpuspec10": [87.43, 90.39, 92.18, 92.46, 93.30, 94.95],
    "multigpu20": [88.69, 92.06, 93.56, 93.71, 93.93, 95.65],
}
# hived (the library) and hived-model have no published figure: their cells compare with FGD's.
for pub in published.values():
    pub.extend([pub[-1], pub[-1]])
print("| trace | " + " | ".join(policies) + " |")
print("|---|" + "---|" * len(policies))
for v, pub in published.items():
    cells = []
    for p, ref in zip(policies, pub):
        path = f"{root}/{v}/{p}/summary.json"
        if not os.path.exists(path):
            cells.append("not run")
            continue
        s = json.load(open(path))
        mean = 100 * s["allocation_ratio"]
        sd = 100 * s["allocation_ratio_spread"]["stddev"]
        label = "FGD " if p.startswith("hived") else ""
        cells.append(f"{mean:.2f} ±{sd:.2f} ({label}{ref:.2f}, {mean - ref:+.2f})")
    print(f"| {v} | " + " | ".join(cells) + " |")
PY
