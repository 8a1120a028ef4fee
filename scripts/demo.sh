#!/usr/bin/env bash
# The README's first command: install what is needed, build hived in Release, validate the
# bundled example cluster, generate the default synthetic trace for it and replay it under
# HiveD (with the private-cluster baseline), printing the per-VC summary, then under
# GPU-count quotas and compares the two.
# Needs nothing outside this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hived-sim
sim=build/release/sim/hived-sim
out=build/demo
mkdir -p "$out"

config=config/examples/two-racks.yaml
echo "== hived-sim validate $config"
"$sim" validate "$config"
echo
echo "== hived-sim gen-trace --config $config --out $out/trace.csv"
"$sim" gen-trace --config "$config" --out "$out/trace.csv"
echo
echo "== hived-sim run --config $config --trace $out/trace.csv --policy hived --out $out/hived"
"$sim" run --config "$config" --trace "$out/trace.csv" --policy hived --out "$out/hived"
echo
echo "== the same trace under GPU-count quotas (the HiveD paper's baseline), then both side by side"
"$sim" run --config "$config" --trace "$out/trace.csv" --policy quota --out "$out/quota" --quiet
"$sim" compare "$out/hived" "$out/quota"
