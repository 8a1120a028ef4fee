#!/usr/bin/env bash
# The README's first command: install what is needed, build hived in Release, validate the
# bundled example cluster, generate a seeded multi-tenant trace for it (one heavy tenant,
# light ones) and replay it under the policies users run, each against the private-cluster
# baseline: yarn-cs (YARN's capacity scheduler: borrowing, no reclaim) shows the sharing
# anomaly — a light tenant waits longer than on a private cluster of its own size — and
# hived shows none; then the utilisation and lost work each policy gets.
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
gen=(gen-trace --config "$config" --jobs 1000 --load 2 --vc-mix research=20,prod=2,dev=1,test=1)
echo "== hived-sim ${gen[*]} --out $out/trace.csv"
"$sim" "${gen[@]}" --out "$out/trace.csv"
echo
for policy in yarn-cs hived; do
  echo "== hived-sim run --config $config --trace $out/trace.csv --policy $policy --out $out/$policy"
  "$sim" run --config "$config" --trace "$out/trace.csv" --policy "$policy" --out "$out/$policy" --quiet
  echo
done
echo "== the same trace under elastic quotas (reclaim by preemption) and hived with overflow"
"$sim" run --config "$config" --trace "$out/trace.csv" --policy elastic-quota \
  --out "$out/elastic-quota" --quiet >/dev/null
"$sim" run --config "$config" --trace "$out/trace.csv" --policy hived --opportunistic-overflow \
  --out "$out/hived-overflow" --quiet >/dev/null
"$sim" compare "$out/yarn-cs" "$out/hived"
echo
"$sim" compare "$out/elastic-quota" "$out/hived-overflow"
