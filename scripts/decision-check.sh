#!/usr/bin/env bash
# Decision check (issue 9, "Must not change"): records every decision of a build and
# compares it with a saved baseline, byte for byte.
#
#   scripts/decision-check.sh record BUILD_DIR OUT_DIR   # e.g. before a change
#   scripts/decision-check.sh compare BUILD_DIR BASE_DIR # after it: exit 1 on any difference
#
# What is recorded (run from the checkout root; needs ../shared):
#  - decisions.txt: the hidden [.decisions] test (tests/unit/scheduler_api/
#    decision_trace_test.cc): the three reference workloads of bench/scheduler_bench.cc and
#    seeded random call sequences on HiveD's configs and the test configs, every result
#    and the full views;
#  - decisions-sharing.txt: the hidden [.decisions] test of tests/unit/sharing/
#    sharing_decision_trace_test.cc: seeded fractional, MIG and host call sequences mixed
#    with whole groups, every result and the groups' and leaves' sharing views;
#  - fill-<list>/curve.csv: `hived-sim fill` (the library's policy) seed 42 on the openb
#    pod lists default, gpushare40 and multigpu20 (allocation ratio per arrived demand);
#  - scenarios.txt: `hived-sim scenario` on every tests/scenarios/*.yaml (pass/fail lines);
#  - philly-<policy>/jobs.csv and summary.json without timings: the Philly replay with
#    the hived, quota and private policies.
set -euo pipefail
mode=${1:?record|compare}
build=${2:?build dir}
out=${3:?output dir}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dest=$out
if [[ $mode == compare ]]; then dest=$(mktemp -d); trap 'rm -rf "$dest"' EXIT; fi
mkdir -p "$dest"

HIVED_DECISION_TRACE="$dest/decisions.txt" \
  "$build/tests/unit/scheduler_api/property_scheduler_api" "[.decisions]" >/dev/null
# Error messages name config files by absolute path: keep them relative to the checkout, so
# a baseline recorded in one worktree compares equal in another.
sed -i "s#$root/##g" "$dest/decisions.txt"
HIVED_SHARING_DECISION_TRACE="$dest/decisions-sharing.txt" \
  "$build/tests/unit/sharing/sharing_decision_trace" "[.decisions]" >/dev/null
openb=../shared/traces/openb
for list in default gpushare40 multigpu20; do
  "$build/sim/hived-sim" fill --nodes "$openb/openb_node_list_gpu_node.csv" \
    --pods "$openb/openb_pod_list_$list.csv" --format openb --seed 42 \
    --out "$dest/fill-$list" >/dev/null
  find "$dest/fill-$list" -type f ! -name curve.csv -delete
done
for f in tests/scenarios/*.yaml; do
  if "$build/sim/hived-sim" scenario --skip-missing-config "$f" >/dev/null 2>&1; then
    echo "pass $f"
  else
    echo "FAIL $f"
  fi
done >"$dest/scenarios.txt"
for policy in hived quota private; do
  "$build/sim/hived-sim" run --config config/examples/philly.yaml \
    --trace ../shared/traces/philly/philly.csv --format philly --policy "$policy" \
    --out "$dest/philly-$policy" >/dev/null
  # Wall-clock figures differ per run: keep only the decisions.
  find "$dest/philly-$policy" \( -name summary.json -o -name "*.svg" \) -delete
done

if [[ $mode == compare ]]; then
  if diff -r -q "$out" "$dest"; then
    echo "decision-check: identical to $out"
  else
    echo "decision-check: DIFFERENT from $out (first differences below)"
    diff -r "$out" "$dest" | head -40
    exit 1
  fi
else
  echo "decision-check: recorded in $out"
fi
