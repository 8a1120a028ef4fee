// sim/metrics.h: what a replay measured, per VC and overall, and how it is written out.
//
// Definitions (all times in seconds):
//   queuing delay  first start - submit, over jobs that started;
//   JCT            end - submit, over completed jobs;
//   percentiles    nearest rank on the sorted values;
//   utilisation    time-weighted used GPUs / total GPUs over [start, end];
//   allocation     used GPU-seconds / servable GPU-seconds, where servable at each moment is
//   rate           min(total GPUs, used + GPUs of waiting jobs): 1.0 means no GPU idled
//                  while a job waited;
//   fragmentation  time-weighted free GPUs on partly used nodes (they cannot host a
//                  full-node pod) / total GPUs;
//   sharing        mean queuing delay under the policy minus under `private`, per VC
//   anomaly        (present when the private baseline ran).
// Accounting: submitted = completed + queued + running + rejected, per VC and overall.
//
// Thread safety: plain values.
#ifndef HIVED_SIM_METRICS_H_
#define HIVED_SIM_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/json.h"
#include "sim/spec_info.h"

namespace hived::sim {

struct Stats {
  int64_t count = 0;
  double mean = 0;
  int64_t p50 = 0;
  int64_t p95 = 0;
  int64_t p99 = 0;
  int64_t max = 0;
};
// Nearest-rank statistics; sorts `values`.
Stats ComputeStats(std::vector<int64_t>* values);

struct GroupSummary {
  std::string name;  // VC name, or "all"
  int64_t reserved_gpus = 0;
  int64_t submitted = 0;
  int64_t completed = 0;
  int64_t queued = 0;
  int64_t running = 0;
  int64_t rejected = 0;
  Stats queuing_delay;
  Stats jct;
  int64_t preemptions = 0;
  double gpu_hours_lost = 0;  // to preemptions
  int64_t failures = 0;
  double failure_gpu_hours_lost = 0;
  std::optional<double> baseline_mean_queuing_delay;
  std::optional<double> sharing_anomaly;
};

struct RunInfo {
  std::string policy;
  std::string queue;
  std::string config;
  std::string trace;
  std::string format;
  uint64_t seed = 1;
  bool resume = false;
  bool opportunistic_overflow = false;
  int64_t skipped_rows = 0;
};

struct Summary {
  RunInfo info;
  int64_t total_gpus = 0;
  Time start = 0;
  Time end = 0;
  double utilisation = 0;
  double allocation_rate = 0;
  double fragmentation = 0;
  double mean_fragmented_free_gpus = 0;
  int64_t events = 0;
  int64_t schedule_calls = 0;
  int64_t node_down_events = 0;
  GroupSummary all;
  std::vector<GroupSummary> vcs;
  std::vector<std::pair<std::string, int64_t>> rejection_reasons;  // most frequent first
  bool accounting_ok = true;
};

Summary Summarize(const EngineResult& result, const SpecInfo& info, const RunInfo& run_info);
// Fills baseline delays and anomalies from a `private` summary of the same trace.
void AddBaseline(const Summary& baseline, Summary* summary);

std::string SummaryToJson(const Summary& summary);
std::string JobsCsv(const EngineResult& result, const Trace& trace,
                    const std::vector<std::string>& nodes);
std::string TimelineCsv(const EngineResult& result, const SpecInfo& info);
// The short human summary for stdout: one line of cluster figures and a table per VC.
std::string SummaryTable(const Summary& summary);

// Reads the parts of a summary.json that `compare` and `plot` use.
absl::StatusOr<Summary> SummaryFromJson(const JsonValue& json);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_H_
