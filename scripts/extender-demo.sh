#!/usr/bin/env bash
# hived-extender demo: the server against the test API server (hived-fake-apiserver), this
# script playing kube-scheduler (filter -> bind; filter -> preempt -> delete victims ->
# filter -> bind), then `kill -9` and a restart: the recovered inspect output equals the
# output before the crash. (Kills at seeded random points, mid-bind included, over 1,000
# pods: the CTest "Crash: ..." in server/tests/crash_test.cc.)
#
# Usage: bash scripts/extender-demo.sh [build-dir]    (default build/dev; builds the targets)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset dev >/dev/null
fi
cmake --build "$build" --target hived-extender hived-fake-apiserver >/dev/null
work=$(mktemp -d)
api_port=$((20000 + RANDOM % 10000))
ext_port=$((api_port + 1))
config=tests/testdata/hived-configs/design.yaml
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# HiveD's design config, unchanged, pointed at the test API server.
{
  echo "kubeApiServerAddress: http://127.0.0.1:$api_port"
  echo "webServerAddress: 127.0.0.1:$ext_port"
  grep -v '^kubeApiServerAddress' "$config"
} >"$work/hivedscheduler.yaml"

"$build/server/tests/hived-fake-apiserver" "$config" "$api_port" 2>"$work/api.log" &
pids+=($!)
api=http://127.0.0.1:$api_port
ext=http://127.0.0.1:$ext_port

start_extender() {
  CONFIG=$work/hivedscheduler.yaml "$build/server/hived-extender" 2>>"$work/extender.log" &
  extender_pid=$!
  pids+=("$extender_pid")
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$ext/readyz")" = 200 ] && return 0
    sleep 0.1
  done
  echo "hived-extender did not become ready:" >&2
  cat "$work/extender.log" >&2
  exit 1
}

# A pod of gang $2 ($3 pods of $4 GPUs, VC $5, priority $6).
pod_json() {
  local spec="virtualCluster: $5\npriority: $6\nleafCellType: DGX1-P100\nleafCellNumber: $4\naffinityGroup:\n  name: $2\n  members:\n  - podNumber: $3\n    leafCellNumber: $4\n"
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","uid":"uid-%s","annotations":{"hivedscheduler.microsoft.com/pod-scheduling-spec":"%s"}},"spec":{"schedulerName":"hivedscheduler","containers":[{"name":"main","image":"ubuntu","resources":{"limits":{"hivedscheduler.microsoft.com/pod-scheduling-enable":"1"}}}]}}' \
    "$1" "$1" "$spec"
}
create() { curl -sf -X POST "$api/api/v1/namespaces/default/pods" -d "$1" >/dev/null; }
filter() {
  curl -s -X POST "$ext/v1/extender/filter" -d "{\"Pod\": $1, \"NodeNames\": [\"1.0.0.0\",\"1.0.0.1\",\"1.0.0.2\"]}"
}
node_of() { sed -n 's/.*"NodeNames":\["\([^"]*\)".*/\1/p'; }
bind() {
  curl -sf -X POST "$ext/v1/extender/bind" \
    -d "{\"PodName\":\"$1\",\"PodNamespace\":\"default\",\"PodUID\":\"uid-$1\",\"Node\":\"$2\"}" >/dev/null
}
schedule() {  # filter then bind; prints the node
  local node
  node=$(filter "$2" | node_of)
  [ -n "$node" ] || { echo "filter did not choose a node for $1" >&2; exit 1; }
  bind "$1" "$node"
  echo "$node"
}

start_extender
echo "== hived-extender ready on $ext (API server $api)"

echo "== a gang of 2 pods x 8 GPUs in VC2, priority 0: filter -> bind"
for i in 0 1; do
  p=$(pod_json "low-$i" low 2 8 VC2 0)
  create "$p"
  echo "low-$i -> $(schedule "low-$i" "$p")"
done
curl -s "$ext/v1/inspect/affinitygroups/low"; echo

echo "== a priority-100 pod of VC2 needs the gang's cells: filter, preempt"
high=$(pod_json high-0 high 1 8 VC2 100)
create "$high"
echo "filter:  $(filter "$high")"
victims=$(curl -s -X POST "$ext/v1/extender/preempt" -d "{\"Pod\": $high, \"NodeNameToMetaVictims\": {}}")
echo "preempt: $victims"
echo "== kube-scheduler deletes the victims; the watch tells the extender"
for i in 0 1; do curl -sf -X DELETE "$api/api/v1/namespaces/default/pods/low-$i" >/dev/null; done
for _ in $(seq 50); do
  node=$(filter "$high" | node_of)
  [ -n "$node" ] && break
  sleep 0.1
done
[ -n "$node" ] || { echo "the preemptor was not placed" >&2; exit 1; }
bind high-0 "$node"
echo "high-0 -> $node"

before=$(curl -s "$ext/v1/inspect/affinitygroups/"; curl -s "$ext/v1/inspect/clusterstatus")
echo "== kill -9 hived-extender and start it again: recovery from the pods' bind info"
kill -9 "$extender_pid"
wait "$extender_pid" 2>/dev/null || true
start_extender
after=$(curl -s "$ext/v1/inspect/affinitygroups/"; curl -s "$ext/v1/inspect/clusterstatus")
grep 'recovered' "$work/extender.log" | tail -1
curl -s "$ext/v1/inspect/affinitygroups/"; echo
if [ "$before" = "$after" ]; then
  echo "== recovered inspect output equals the output before the crash"
else
  echo "== recovered inspect output differs:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
curl -s "$ext/metrics" | grep -E '^hived_extender_(decisions_total|preemptions_total|pods_recovered_total)'
