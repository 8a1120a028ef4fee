#!/usr/bin/env bash
# Instructions per scheduler call on the reference workload, from valgrind's callgrind:
# the load-independent figure behind README's performance table (timings on a shared
# machine are noisy; instruction counts are not).
#
#   bench/instruction_counts.sh BUILD_DIR     # a Release build with bench/scheduler_bench
#
# Prints, per benchmark, the inclusive cost of the public `Scheduler` calls divided by the
# number of calls the benchmark made:
#   w1 fill:   Schedule + Allocate per job, Release per job (BM_SchedulerReferenceWorkload/w:1/fast:0);
#   1-GPU and 8x8-GPU cycles: Schedule + Allocate + Release per cycle (BM_SchedulerReferenceCycle),
#   counted only inside the timed loop (setup calls excluded).
set -euo pipefail
build=${1:?build dir}
bench="$build/bench/scheduler_bench"
[[ -x $bench ]] || { echo "no $bench" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Inclusive cost and call count of hived::Scheduler::<fn> in a callgrind profile, as
# "cost calls" (calls summed over every caller).
cost_and_calls() {
  callgrind_annotate --auto=no --inclusive=yes --tree=caller --threshold=100 "$1" 2>/dev/null |
    awk -v fn="hived::Scheduler::$2(" '
      # caller lines: "  1,234 (..%)  < file:caller (N x) [...]" precede the "*" line
      /  < / { line = $0; if (match(line, /\(([0-9,]+)x\)/)) {
                 s = substr(line, RSTART + 1, RLENGTH - 3); gsub(",", "", s); pending += s } next }
      /  \* / { if (index($0, fn) > 0 && !done) { c = $1; gsub(",", "", c); cost = c; calls = pending; done = 1 }
               pending = 0; next }
      { pending = 0 }
      END { print cost + 0, calls + 0 }'
}

run() {  # name filter toggle min_time
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$1.out" --toggle-collect="$3" \
    "$bench" --benchmark_filter="$2" --benchmark_min_time="$4" >/dev/null 2>&1
}

run w1 'BM_SchedulerReferenceWorkload/w:1/fast:0$' 'hived::Scheduler::*' 0.01
read -r s_cost s_calls < <(cost_and_calls "$tmp/w1.out" Schedule)
read -r a_cost _ < <(cost_and_calls "$tmp/w1.out" Allocate)
read -r r_cost r_calls < <(cost_and_calls "$tmp/w1.out" Release)
echo "w1 fill: $(( (s_cost + a_cost) / s_calls )) instructions per Schedule+Allocate ($s_calls jobs)"
echo "w1 release: $(( r_cost / r_calls )) instructions per Release ($r_calls jobs)"

for shape in 1:1 8:8; do
  pods=${shape%%:*}
  gpus=${shape##*:}
  run "c$pods" "BM_SchedulerReferenceCycle/pods:$pods/gpus:$gpus/fast:0\$" '*RunCycles*' 0.1
  read -r s_cost _ < <(cost_and_calls "$tmp/c$pods.out" Schedule)
  read -r a_cost _ < <(cost_and_calls "$tmp/c$pods.out" Allocate)
  # Only the timed loop releases (the half-full setup never does): one Release per cycle.
  read -r r_cost cycles < <(cost_and_calls "$tmp/c$pods.out" Release)
  echo "${pods}x${gpus}-GPU cycle: $(( (s_cost + a_cost + r_cost) / cycles )) instructions per cycle ($cycles cycles)"
done
