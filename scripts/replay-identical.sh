#!/usr/bin/env bash
# Checks that two simulator binaries produce byte-identical replay outputs: the "must not
# change" check of engine speed work (issue 11 item 6). Every case writes summary.json,
# jobs.csv and timeline.csv (and baseline-private/ when the private baseline runs; sweeps
# their sweep.csv and summary.csv); each file must be equal byte for byte.
#
#   bash scripts/replay-identical.sh [-L] [-O] [-k REGEX] [-w DIR] BASE_SIM NEW_SIM
#
# Cases: Philly (../shared/traces/philly/philly.csv on config/examples/philly.yaml) under
# each of the five policies (hived with the private baseline, quota, private, yarn-cs also
# with --reclaim-after, elastic-quota), each also with an MTBF/MTTR failure model; hived
# alone with --resume, --opportunistic-overflow, node events from a file, each queue policy;
# Philly with priorities, opportunistic shares and twice the load (preemption paths) under
# hived (with the baseline), hived with --opportunistic-overflow and elastic-quota; a sweep of
# 8 runs (2 seeds x 2 queues x hived, quota) at --jobs 2; the sweep and plan examples of
# docs/planning.md (the what-if sweep with an added tenant and racks, the scale grid with
# failures, the plan of VC 6214e9's reservation; report.csv and sized.yaml compared); the
# openb replay (`run --format openb`, ../shared/traces/openb/: the GPU node list with the
# default and the gpushare40 pod lists) under every sharing mode (ideal, exclusive,
# time-slice, mps, tgs, mig). -L adds the 1,000,000-job replay on the default gen-cluster
# (inputs made with BASE_SIM into DIR, default build/bench-inputs, as bench-replay.sh does).
# -O adds the openb commands on every pod list of ../shared/traces/openb/ (on the GPU node
# list): `fill --seeds 42..51` under hived and random, and `openb-replay` under hived and under
# random with each seed 42..51 (lists with times only: the 5-column multigpu20 has none).
# -k REGEX runs only the cases whose name matches REGEX (grep -E).
# SOURCE_DATE_EPOCH is set (to 0 unless already set), so a plan's sized.yaml has the same
# `# Date:` line from both binaries; its `# Date:` and `# Trace:` lines are left out of the
# comparison when one binary does not write them (older binaries wrote neither).
# Prints one line per case and exits 1 on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 [-L] [-O] [-k REGEX] [-w DIR] BASE_SIM NEW_SIM" >&2
  exit 2
}
large=0
openb_all=0
only=
inputs=build/bench-inputs
while getopts "LOk:w:" opt; do
  case $opt in
    L) large=1 ;;
    O) openb_all=1 ;;
    k) only=$OPTARG ;;
    w) inputs=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
base=$(realpath "$1")
new=$(realpath "$2")
philly_trace=../shared/traces/philly/philly.csv
if [ ! -f "$philly_trace" ]; then
  echo "missing $philly_trace (ln -sfn /work/shared ../shared)" >&2
  exit 1
fi
philly=(--config config/examples/philly.yaml --trace "$philly_trace" --format philly)
openb_dir=../shared/traces/openb
if [ ! -f "$openb_dir/openb_node_list_gpu_node.csv" ]; then
  echo "missing $openb_dir (ln -sfn /work/shared ../shared)" >&2
  exit 1
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Two nodes of the config fail and come back: a node-events file.
cat >"$scratch/node-events.csv" <<'EOF'
time,node,state
3000000,philly-r00-n0,down
3000000,philly-r01-n3,down
3400000,philly-r00-n0,up
5000000,philly-r01-n3,up
EOF
mixed="--vc-priority 6214e9=10,2869ce=5 --vc-opportunistic 11cb48=0.5,ee9e8c=0.3 --load-scale 2"

cases=(
  "hived|run ${philly[*]} --policy hived"
  "quota|run ${philly[*]} --policy quota --baseline none"
  "private|run ${philly[*]} --policy private"
  "yarn-cs|run ${philly[*]} --policy yarn-cs --baseline none"
  "yarn-cs-reclaim|run ${philly[*]} --policy yarn-cs --reclaim-after 3600 --baseline none"
  "elastic-quota|run ${philly[*]} --policy elastic-quota --baseline none"
  "resume|run ${philly[*]} --baseline none --resume --mtbf 2000 --mttr 24"
  "overflow|run ${philly[*]} --baseline none --opportunistic-overflow"
  "node-events|run ${philly[*]} --baseline none --node-events $scratch/node-events.csv"
  "mtbf|run ${philly[*]} --baseline none --mtbf 2000 --mttr 24 --seed 7"
  "hived-mtbf|run ${philly[*]} --policy hived --mtbf 2000 --mttr 24"
  "quota-mtbf|run ${philly[*]} --policy quota --baseline none --mtbf 2000 --mttr 24"
  "private-mtbf|run ${philly[*]} --policy private --baseline none --mtbf 200 --mttr 2"
  "yarn-cs-mtbf|run ${philly[*]} --policy yarn-cs --baseline none --mtbf 2000 --mttr 24"
  "elastic-quota-mtbf|run ${philly[*]} --policy elastic-quota --baseline none --mtbf 2000 --mttr 24"
  "strict|run ${philly[*]} --baseline none --queue strict"
  "backfill|run ${philly[*]} --baseline none --queue backfill"
  "easy|run ${philly[*]} --baseline none --queue easy"
  "mixed-hived|run ${philly[*]} $mixed --policy hived"
  "mixed-overflow|run ${philly[*]} $mixed --baseline none --opportunistic-overflow"
  "mixed-elastic|run ${philly[*]} $mixed --policy elastic-quota --baseline none"
  "sweep|sweep ${philly[*]} --seeds 1-2 --queue fifo,backfill --policy hived,quota --run-args --baseline=none --jobs 2"
  "sweep-whatif|sweep ${philly[*]} --add-racks 0,2 --vary 'opportunistic-overflow=false,true' --vc-cells newteam@P100-RACK.P100-NODE=8 --add-tenant newteam:jobs=5000,load=0.7 --jobs 2"
  "sweep-grid|sweep ${philly[*]} --scale 1,1.5,2,2.5 --policy hived,quota --seeds 1-3 --run-args '--mtbf 2000 --mttr 4' --jobs 2"
  "plan|plan ${philly[*]} --vc 6214e9 --cell-type P100-RACK.P100-NODE --target 'p95_wait<=1h' --jobs 2"
)
for pods in default gpushare40; do
  for mode in ideal exclusive time-slice mps tgs mig; do
    cases+=("openb-$pods-$mode|run --format openb --nodes $openb_dir/openb_node_list_gpu_node.csv --pods $openb_dir/openb_pod_list_$pods.csv --sharing $mode")
  done
done
if [ "$openb_all" = 1 ]; then
  gpu_nodes=$openb_dir/openb_node_list_gpu_node.csv
  for list in "$openb_dir"/openb_pod_list_*.csv; do
    pods=$(basename "$list" .csv)
    pods=${pods#openb_pod_list_}
    for policy in hived random; do
      cases+=("fill-$pods-$policy|fill --format openb --nodes $gpu_nodes --pods $list --policy $policy --seeds 42..51")
    done
    # A 5-column list has no times: `openb-replay` refuses it.
    [ "$(head -1 "$list" | tr ',' '\n' | wc -l)" -gt 5 ] || continue
    cases+=("openb-replay-$pods-hived|openb-replay --nodes $gpu_nodes --pods $list")
    for seed in $(seq 42 51); do
      cases+=("openb-replay-$pods-random-$seed|openb-replay --nodes $gpu_nodes --pods $list --policy random --seed $seed")
    done
  done
fi
if [ "$large" = 1 ]; then
  if [ ! -f "$inputs/gen1m.csv" ]; then
    mkdir -p "$inputs"
    "$base" gen-cluster --out "$inputs/gen-cluster.yaml"
    "$base" gen-trace --config "$inputs/gen-cluster.yaml" --jobs 1000000 --out "$inputs/gen1m.csv"
  fi
  cases+=("gen1m|run --config $inputs/gen-cluster.yaml --trace $inputs/gen1m.csv --baseline none --max-input-mb 64")
fi

files=0
ran=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  args=${c#*|}
  if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then continue; fi
  ran=$((ran + 1))
  for which in base new; do
    bin=$base
    [ "$which" = base ] || bin=$new
    # `run` on job traces has --quiet; sweeps, plans and the openb replay print no progress.
    quiet=--quiet
    case $name in sweep* | plan | openb-* | fill-*) quiet="" ;; esac
    # A case's arguments are shell words (quotes group, as on a command line).
    argv=()
    eval "argv=($args $quiet)"
    "$bin" "${argv[@]}" --out "$scratch/$which-$name" >/dev/null 2>"$scratch/err" ||
      { echo "$name: $which failed:" >&2; cat "$scratch/err" >&2; exit 1; }
  done
  # Sweeps keep each run's folder under runs/ (with logs that name the binary): compare the
  # tables, which hold every metric of every run. A plan's probes likewise: compare its
  # report and the sized config.
  case $name in
    sweep*) list=(sweep.csv summary.csv) ;;
    plan) list=(report.csv sized.yaml) ;;
    *) mapfile -t list < <(cd "$scratch/base-$name" && find . -type f -name '*.*' | sort) ;;
  esac
  for f in "${list[@]}"; do
    # sized.yaml's header records the command, whose --out folder differs by name only, and
    # (since 2026-12) the date and the trace, which an older binary does not write.
    if [ "$name/$f" = plan/sized.yaml ]; then
      drop=()
      for line in '# Date: ' '# Trace: '; do
        if [ "$(grep -c "^$line" "$scratch/base-$name/$f")" != \
          "$(grep -c "^$line" "$scratch/new-$name/$f")" ]; then
          drop+=(-e "/^$line/d")
        fi
      done
      if cmp -s <(sed -e "s|$scratch/base-$name|OUT|g" "${drop[@]}" "$scratch/base-$name/$f") \
        <(sed -e "s|$scratch/new-$name|OUT|g" "${drop[@]}" "$scratch/new-$name/$f"); then
        files=$((files + 1))
        continue
      fi
    fi
    if ! cmp -s "$scratch/base-$name/$f" "$scratch/new-$name/$f"; then
      echo "$name: $f differs" >&2
      diff <(head -c 2000000 "$scratch/base-$name/$f") <(head -c 2000000 "$scratch/new-$name/$f") |
        head -10 >&2
      exit 1
    fi
    files=$((files + 1))
  done
  echo "$name: ${#list[@]} files identical"
  rm -rf "$scratch/base-$name" "$scratch/new-$name"
done
echo "all $ran cases identical ($files files)"
