// sim/planning/plan.h: `hived-sim plan`, the smallest reservation meeting a target, found by
// searching over replays (each probe a full `hived-sim run` in a child process).
//
// Target: `METRIC OP VALUE[unit]` with OP one of <=, <, >=, >; METRIC a key of the per-VC
// summary (e.g. `queuing_delay.p95`) or an alias (`p95_wait`, `mean_wait`, `anomaly`,
// `slo_attainment@T`, the share of jobs waiting at most T; see `ResolveMetric` in
// sim/planning/sweep.h); units s, m/min, h, d for times (seconds in the summary) and % for
// fractions.
//
// Search (assumes the target is monotone in size: a larger VC never does worse): probe the
// smallest and the largest size of [min, max]; if the smallest meets, it is the answer; if
// the largest fails, no size does. Otherwise keep lo (fails) < hi (meets) and probe up to
// --jobs sizes spread evenly inside (lo, hi) at once (k-section), moving lo and hi to the
// tightest failing and meeting probes, until hi = lo + 1; hi is the answer. A probe whose VC
// has rejected jobs (a job no size of the VC can hold) does not meet the target. Probes that
// contradict monotonicity are reported.
//
// `--all-vcs` under `hived` searches every VC at once in joint rounds (PlanVcsJointly,
// sim/planning/plan_search.h; `--one-by-one` for the search per VC); `--price`,
// `--gpu-speed` and `--try-types` add money and GPU speed (sim/planning/plan_cost.h);
// report.md and the wait heatmaps are sim/planning/plan_output.h.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_PLANNING_PLAN_H_
#define HIVED_SIM_PLANNING_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hived::sim {

struct PlanTarget {
  enum class Op { kLe, kLt, kGe, kGt };
  std::string metric;  // as written (resolved against the summary later)
  Op op = Op::kLe;
  double value = 0;         // in the summary's units (seconds, fractions)
  std::string text;         // as written, for reports
  int64_t slo_seconds = 0;  // > 0 for slo_attainment@T: T in seconds (metric slo[T].share)
  bool Meets(double v) const;
};

// Parses "p95_wait<=1h". kInvalidArgument saying what is wrong.
absl::StatusOr<PlanTarget> ParsePlanTarget(const std::string& text);

// The sizes to probe next inside (lo, hi): at most `k` distinct sizes, evenly spread.
// REQUIRES: lo < hi, k >= 1. Empty when hi == lo + 1.
std::vector<int64_t> NextProbeSizes(int64_t lo, int64_t hi, int64_t k);

// `yaml` (a ClusterSpecToYaml output) with every VC name that a YAML reader could take for
// a number, bool or null (`103959`, `1e5`, `no`) written in double quotes.
std::string YamlWithStringVcNames(const std::string& yaml);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLAN_H_
