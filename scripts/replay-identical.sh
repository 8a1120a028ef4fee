#!/usr/bin/env bash
# Checks that two simulator binaries produce byte-identical replay outputs: the "must not
# change" check of engine speed work (issue 11 item 6). Every case writes summary.json,
# jobs.csv and timeline.csv (and baseline-private/ when the private baseline runs; sweeps
# their sweep.csv and summary.csv); each file must be equal byte for byte.
#
#   bash scripts/replay-identical.sh [-L] [-w DIR] BASE_SIM NEW_SIM
#
# Cases: Philly (../shared/traces/philly/philly.csv on config/examples/philly.yaml) under
# hived (with the private baseline), quota, private, yarn-cs (also with --reclaim-after),
# elastic-quota; hived alone with --resume, --opportunistic-overflow, node events from a
# file, an MTBF/MTTR failure model (also under private, whose clusters fail apart), each
# queue policy; Philly with priorities, opportunistic
# shares and twice the load (preemption paths) under hived (with the baseline), hived with
# --opportunistic-overflow and elastic-quota; a sweep of 8 runs (2 seeds x 2 queues x hived,
# quota) at --jobs 2. -L adds the 1,000,000-job replay on the default gen-cluster (inputs
# made with BASE_SIM into DIR, default build/bench-inputs, as bench-replay.sh does).
# Prints one line per case and exits 1 on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 [-L] [-w DIR] BASE_SIM NEW_SIM" >&2
  exit 2
}
large=0
inputs=build/bench-inputs
while getopts "Lw:" opt; do
  case $opt in
    L) large=1 ;;
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
  "private-mtbf|run ${philly[*]} --policy private --baseline none --mtbf 200 --mttr 2"
  "strict|run ${philly[*]} --baseline none --queue strict"
  "backfill|run ${philly[*]} --baseline none --queue backfill"
  "easy|run ${philly[*]} --baseline none --queue easy"
  "mixed-hived|run ${philly[*]} $mixed --policy hived"
  "mixed-overflow|run ${philly[*]} $mixed --baseline none --opportunistic-overflow"
  "mixed-elastic|run ${philly[*]} $mixed --policy elastic-quota --baseline none"
  "sweep|sweep ${philly[*]} --seeds 1-2 --queue fifo,backfill --policy hived,quota --run-args --baseline=none --jobs 2"
)
if [ "$large" = 1 ]; then
  if [ ! -f "$inputs/gen1m.csv" ]; then
    mkdir -p "$inputs"
    "$base" gen-cluster --out "$inputs/gen-cluster.yaml"
    "$base" gen-trace --config "$inputs/gen-cluster.yaml" --jobs 1000000 --out "$inputs/gen1m.csv"
  fi
  cases+=("gen1m|run --config $inputs/gen-cluster.yaml --trace $inputs/gen1m.csv --baseline none --max-input-mb 64")
fi

files=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  args=${c#*|}
  for which in base new; do
    bin=$base
    [ "$which" = base ] || bin=$new
    quiet=--quiet
    [ "$name" != sweep ] || quiet=""
    # shellcheck disable=SC2086  # the arguments are split on purpose
    "$bin" $args $quiet --out "$scratch/$which-$name" >/dev/null 2>"$scratch/err" ||
      { echo "$name: $which failed:" >&2; cat "$scratch/err" >&2; exit 1; }
  done
  # Sweeps keep each run's folder under runs/ (with logs that name the binary): compare the
  # tables, which hold every metric of every run.
  if [ "$name" = sweep ]; then
    list=(sweep.csv summary.csv)
  else
    mapfile -t list < <(cd "$scratch/base-$name" && find . -type f -name '*.*' | sort)
  fi
  for f in "${list[@]}"; do
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
echo "all ${#cases[@]} cases identical ($files files)"
