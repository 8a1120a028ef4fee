// sim/metrics/metrics.h: what a replay measured, per VC and overall, and how it is written out.
//
// Definitions (all times in seconds). Job metrics count the *measured* jobs: those submitted
// in [window start + warmup, window end) (all of them by default).
//   queuing delay  first start - submit, over jobs that started (`queuing_delay`); to the last
//                  (final, uninterrupted) start (`queuing_delay_final`);
//   censored       jobs not started by the end: counted, with end - submit as a lower bound
//                  of their wait; never silently dropped;
//   JCT            end - submit, over completed jobs;
//   percentiles    nearest rank on the sorted values;
//   utilisation    time-weighted used GPUs / total GPUs over [start, end];
//   allocation     used GPU-seconds / servable GPU-seconds, where servable at each moment is
//   rate           min(total GPUs, used + GPUs of waiting jobs): 1.0 means no GPU idled
//                  while a job waited;
//   reachable      the same with servable = used + what waiting jobs could use under the
//   allocation     policy's rules (per-VC capacity: a VC's guaranteed jobs only its idle
//   rate           guarantee; pool policies: up to its maximum): 1.0 = no GPU a waiting job
//                  was allowed to use idled;
//   fragmentation  time-weighted free GPUs on partly used nodes (they cannot host a
//                  full-node pod) / total GPUs;
//   sharing        mean queuing delay under the policy minus under the private baseline
//                  (each VC alone on its reserved cells), per VC
//   anomaly        (present when the private baseline ran); also on the p95 queuing delay
//                  and the mean JCT. > 0 = waits longer than in a private cluster;
//   window         GPU-time in the measurement window over (cluster GPUs x window) — the
//   utilisation    same denominator for every policy — and apart the part later lost;
//   per VC         used, borrowed (beyond its guarantee), lent (its idle guarantee used by
//                  others) GPU-hours in the window; reservation utilisation = (used -
//                  borrowed) / (guarantee x window);
//   by size        queuing delay by gang size: 1, 2-7, 8, 9-32, >32 GPUs;
//   SLO            share of measured jobs whose first start came within T of submission;
//                  a censored job counts as a miss once it waited more than T, and is left
//                  out while it waited less (its outcome is unknown).
// Accounting: submitted = completed + queued + running + rejected, per VC and overall.
//
// Thread safety: plain values.
#ifndef HIVED_SIM_METRICS_METRICS_H_
#define HIVED_SIM_METRICS_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/json.h"
#include "sim/engine/engine.h"
#include "sim/metrics/samples.h"

namespace hived::sim {

// Queuing delay of the jobs of one gang-size class.
struct SizeClass {
  std::string label;  // "1", "2-7", "8", "9-32", ">32"
  Stats queuing_delay;
};

struct SloShare {
  Time seconds = 0;
  int64_t jobs = 0;  // with a known outcome
  int64_t met = 0;
  double share = 0;  // met / jobs; 1 when jobs == 0
};

struct GroupSummary {
  std::string name;  // VC name, or "all"
  int64_t reserved_gpus = 0;
  int64_t guaranteed_gpus = 0;  // what its jobs can use without borrowing (virtual cells)
  int64_t measured = 0;         // jobs in the measurement
  int64_t submitted = 0;
  int64_t completed = 0;
  int64_t queued = 0;
  int64_t running = 0;
  int64_t rejected = 0;
  Stats queuing_delay;
  Stats queuing_delay_final;
  Stats censored_wait;  // count = censored jobs; values are lower bounds
  Stats jct;
  std::vector<SizeClass> by_size;
  std::vector<SloShare> slo;
  double used_gpu_hours = 0;
  double borrowed_gpu_hours = 0;
  double lent_gpu_hours = 0;
  double reservation_utilisation = 0;
  int64_t preemptions = 0;
  double gpu_hours_lost = 0;  // to preemptions
  int64_t failures = 0;
  double failure_gpu_hours_lost = 0;
  std::optional<double> baseline_mean_queuing_delay;
  std::optional<double> sharing_anomaly;
  std::optional<double> baseline_p95_queuing_delay;
  std::optional<double> sharing_anomaly_p95;
  std::optional<double> baseline_mean_jct;
  std::optional<double> sharing_anomaly_jct;
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
  double load_scale = 1;
  Time warmup = 0;  // after the window start, not measured
  std::vector<Time> slo_seconds = {600, 3600};
};

// The measurement window's cluster figures.
struct WindowSummary {
  Time start = 0;
  Time end = 0;
  int64_t cluster_gpus = 0;
  double used_gpu_hours = 0;
  double lost_gpu_hours = 0;          // to preemption (restart from zero)
  double failure_lost_gpu_hours = 0;  // to node failures
  double utilisation = 0;             // used / (cluster GPUs x window)
  double useful_utilisation = 0;      // (used - lost - failure lost) / (cluster GPUs x window)
};

struct Summary {
  RunInfo info;
  int64_t total_gpus = 0;
  Time start = 0;
  Time end = 0;
  double utilisation = 0;
  double allocation_rate = 0;
  double reachable_allocation_rate = 0;
  double fragmentation = 0;
  double mean_fragmented_free_gpus = 0;
  WindowSummary window;
  int64_t events = 0;
  int64_t schedule_calls = 0;
  int64_t node_down_events = 0;
  GroupSummary all;
  std::vector<GroupSummary> vcs;
  std::vector<std::pair<std::string, int64_t>> rejection_reasons;  // most frequent first
  bool accounting_ok = true;
};

Summary Summarize(const EngineResult& result, const SpecInfo& info, const RunInfo& run_info);

// `Summarize` job by job: a replay hands each job over once its record is final
// (sim/engine/engine.h's `FinishedJob`), in any order, and the builder keeps the counts and
// the measured jobs' samples (exact counts per distinct value, `samples.h`), not the records. The
// summary equals `Summarize` of a result holding the same records.
class SummaryBuilder {
 public:
  SummaryBuilder(const SpecInfo& info, const RunInfo& run_info);
  void Add(const FinishedJob& job);
  // The summary of the run `result` (its `jobs` and `records` are not read) once all its
  // `jobs` were added (else accounting_ok is false). Call once.
  Summary Finish(const EngineResult& result, int64_t jobs);

 private:
  struct GroupSamples {
    Samples delays, finals, censored, jcts;
    std::vector<Samples> by_size;
  };
  const SpecInfo& info_;
  RunInfo run_info_;
  std::vector<GroupSummary> groups_;  // by VC, then "all"
  std::vector<GroupSamples> samples_;
  std::vector<std::vector<SloShare>> slo_;
  std::vector<int64_t> lost_;
  std::vector<int64_t> failure_lost_;
  absl::flat_hash_map<std::string, int64_t> reasons_;
  int64_t added_ = 0;
};
// Fills baseline delays and anomalies from the private baseline's summary of the same trace.
void AddBaseline(const Summary& baseline, Summary* summary);

std::string SummaryToJson(const Summary& summary);
inline constexpr std::string_view kJobsCsvHeader =
    "job_id,vc,priority,gpus,pods,submit,first_start,end,queuing_delay,jct,state,"
    "preemptions,failures,gpu_hours_lost,opportunistic,nodes,reason\n";
std::string JobsCsv(const EngineResult& result, const Trace& trace,
                    const std::vector<std::string>& nodes);
// Appends one job's jobs.csv row (with its newline); `nodes` names the backend's node ids.
void AppendJobRow(std::string* row, std::string_view id, std::string_view vc, const SimJob& job,
                  const JobRecord& rec, const std::vector<std::string>& nodes);
std::string TimelineCsv(const EngineResult& result, const SpecInfo& info);
// The short human summary for stdout: one line of cluster figures and a table per VC.
std::string SummaryTable(const Summary& summary);

// Reads the parts of a summary.json that `compare` and `plot` use.
absl::StatusOr<Summary> SummaryFromJson(const JsonValue& json);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_METRICS_H_
