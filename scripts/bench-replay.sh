#!/usr/bin/env bash
# Timed replays of the simulator on named inputs: the figures of the README's simulator
# performance table and of issue 11 item 6, reproducible.
#
#   bash scripts/bench-replay.sh [-n RUNS] [-b BASE_SIM] [-w DIR] [-I] SIM [NAME...]
#
# Names (default: all but the sweeps):
#   philly-hived    Philly (82,247 jobs) under hived alone (--baseline none)
#   philly-private  Philly under hived with the private baseline replayed alongside
#   philly-out      philly-hived writing its outputs (--out)
#   gen1m-hived     1,000,000 generated jobs on the default gen-cluster (100,032 GPUs, 100 VCs)
#                   under hived alone
#   gen1m-out       gen1m-hived writing its outputs (--out)
#   sweep64-j1      sweep of 64 Philly replays under hived alone (--seeds 1-64), --jobs 1
#   sweep64-j2      the same with --jobs 2
#   openb-replay    the openb default pod list replayed in time on its GPU node list
#                   (`run --format openb`, FGD's fill model under hived, `--sharing ideal`,
#                   `--out`); openb-mps the same under `--sharing mps`
#
# Each name runs RUNS times (default 5); with -b the base binary runs too, alternating run by
# run, so both see the same machine load. Prints, per name and binary, the medians of wall
# time, user CPU, system CPU and peak RSS (/usr/bin/time). -I also counts instructions of one
# run per Philly name (perf stat where the CPU exposes the counter, else valgrind callgrind,
# which is ~50x slower). Generated inputs are made once with SIM into DIR (default
# build/bench-inputs), seeded, so every binary replays the same files.
#
# Needs: a Release build (cmake --preset bench), /usr/bin/time, ../shared/traces/philly
# (and ../shared/traces/openb for the openb names).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
base=""
inputs=build/bench-inputs
count_instructions=0
while getopts "n:b:w:I" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    b) base=$OPTARG ;;
    w) inputs=$OPTARG ;;
    I) count_instructions=1 ;;
    *) echo "usage: $0 [-n RUNS] [-b BASE_SIM] [-w DIR] [-I] SIM [NAME...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  echo "usage: $0 [-n RUNS] [-b BASE_SIM] [-w DIR] [-I] SIM [NAME...]" >&2
  exit 2
fi
sim=$(realpath "$1")
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(philly-hived philly-private philly-out gen1m-hived gen1m-out)
bins=("$sim")
[ -z "$base" ] || bins+=("$(realpath "$base")")

philly_trace=../shared/traces/philly/philly.csv
philly=(--config config/examples/philly.yaml --trace "$philly_trace" --format philly)
if [ ! -f "$philly_trace" ]; then
  echo "missing $philly_trace (ln -sfn /work/shared ../shared)" >&2
  exit 1
fi
openb=../shared/traces/openb
mkdir -p "$inputs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

need_gen1m() {
  if [ ! -f "$inputs/gen1m.csv" ]; then
    "$sim" gen-cluster --out "$inputs/gen-cluster.yaml"
    "$sim" gen-trace --config "$inputs/gen-cluster.yaml" --jobs 1000000 --out "$inputs/gen1m.csv"
  fi
}

# `--max-input-mb 64` for a binary that caps its input (older ones, e.g. 83acae2, read any
# size and do not know the flag).
input_cap() { if "$1" run --help 2>&1 | grep -q -- --max-input-mb; then echo "--max-input-mb 64"; fi; }

# The command line of a named run for binary $1, writing under $2.
command_for() {
  local bin=$1 out=$2 name=$3
  case $name in
    philly-hived) echo "$bin run --quiet ${philly[*]} --baseline none" ;;
    philly-private) echo "$bin run --quiet ${philly[*]}" ;;
    philly-out) echo "$bin run --quiet ${philly[*]} --baseline none --out $out" ;;
    gen1m-hived)
      echo "$bin run --quiet --config $inputs/gen-cluster.yaml --trace $inputs/gen1m.csv" \
        "--baseline none $(input_cap "$bin")" ;;
    gen1m-out)
      echo "$bin run --quiet --config $inputs/gen-cluster.yaml --trace $inputs/gen1m.csv" \
        "--baseline none $(input_cap "$bin") --out $out" ;;
    sweep64-j1 | sweep64-j2)
      echo "$bin sweep ${philly[*]} --seeds 1-64 --run-args --baseline=none" \
        "--jobs ${name#sweep64-j} --out $out" ;;
    openb-replay | openb-mps)
      local mode=ideal
      [ "$name" = openb-replay ] || mode=mps
      echo "$bin run --format openb --nodes $openb/openb_node_list_gpu_node.csv" \
        "--pods $openb/openb_pod_list_default.csv --sharing $mode --out $out" ;;
    *) echo "unknown name '$name'" >&2; return 2 ;;
  esac
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf '%-15s %-5s %5s %9s %9s %9s %9s\n' name bin runs wall_s user_s sys_s rss_MB
for name in "${names[@]}"; do
  [[ $name != gen1m-* ]] || need_gen1m
  for ((i = 0; i < runs; i++)); do
    for b in "${!bins[@]}"; do
      rm -rf "$scratch/out"
      cmd=$(command_for "${bins[$b]}" "$scratch/out" "$name")
      # shellcheck disable=SC2086  # the command line is split on purpose
      /usr/bin/time -f '%e %U %S %M' -o "$scratch/time.$b.$i" $cmd >/dev/null 2>"$scratch/err" ||
        { cat "$scratch/err" >&2; exit 1; }
    done
  done
  for b in "${!bins[@]}"; do
    label=$([ "$b" = 0 ] && echo new || echo base)
    cols=()
    for c in 1 2 3 4; do
      cols+=("$(cat "$scratch"/time."$b".* | awk -v c=$c '{print $c}' | median)")
    done
    printf '%-15s %-5s %5d %9.2f %9.2f %9.2f %9.0f\n' "$name" "$label" "$runs" "${cols[0]}" \
      "${cols[1]}" "${cols[2]}" "$(echo "${cols[3]}" | awk '{print $1 / 1024}')"
    rm -f "$scratch"/time."$b".*
  done
  if [ "$count_instructions" = 1 ] && [[ $name == philly-* ]]; then
    for b in "${!bins[@]}"; do
      label=$([ "$b" = 0 ] && echo new || echo base)
      rm -rf "$scratch/out"
      cmd=$(command_for "${bins[$b]}" "$scratch/out" "$name")
      # shellcheck disable=SC2086
      if perf stat -x, -e instructions -o "$scratch/perf" $cmd >/dev/null 2>&1 &&
        ! grep -q 'not supported' "$scratch/perf"; then
        ins=$(grep instructions "$scratch/perf" | cut -d, -f1)
      else
        # shellcheck disable=SC2086
        valgrind --tool=callgrind --callgrind-out-file="$scratch/cg" $cmd >/dev/null 2>"$scratch/vg"
        ins=$(grep -o 'refs: *[0-9,]*' "$scratch/vg" | tr -dc 0-9)
      fi
      printf '%-15s %-5s instructions %s\n' "$name" "$label" "$ins"
    done
  fi
done
