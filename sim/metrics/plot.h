// sim/metrics/plot.h: PNG charts through gnuplot. Each chart is written as a data file (.dat) and
// a gnuplot script (.gp) into the output folder, then gnuplot renders the .png, so a chart
// can be restyled and re-rendered by hand.
//
// Charts of one run (`run --plot`, into OUT/plots/):
//   utilisation.png  GPU utilisation and fragmentation over time (and the private baseline);
//   delay_cdf.png    queuing-delay CDF of the busiest VCs (log time axis);
//   anomaly.png      sharing anomaly per VC (mean delay minus private), hours.
// Charts across runs (`hived-sim plot DIR...`):
//   anomaly_by_policy.png      anomaly per VC, one bar per run (policy);
//   delay_by_policy.png        mean queuing delay per VC per run, plus private;
//   utilisation_by_policy.png  utilisation over time, one line per run.
//
// Thread safety: runs a child process; call from one thread.
#ifndef HIVED_SIM_METRICS_PLOT_H_
#define HIVED_SIM_METRICS_PLOT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/engine.h"
#include "sim/metrics/metrics.h"

namespace hived::sim {

// True when `gnuplot` runs.
bool GnuplotAvailable();

// What the queuing-delay CDF of one run draws: every started job's first wait, by VC,
// gathered job by job from the replay's `FinishedJob`s (in any order), so the records need
// not be kept: 8 bytes a started job.
class PlotDelays {
 public:
  explicit PlotDelays(const SpecInfo& info) : by_vc_(static_cast<size_t>(info.vc_count())) {}
  void Add(const FinishedJob& job) {
    if (job.record->first_start < 0 || job.job->vc < 0) return;
    by_vc_[static_cast<size_t>(job.job->vc)].push_back(job.record->first_start -
                                                       job.record->submit);
  }
  // By VC index; each VC's waits in the order added.
  std::vector<std::vector<int64_t>>& by_vc() { return by_vc_; }

 private:
  std::vector<std::vector<int64_t>> by_vc_;
};

// `result`'s timeline and totals are drawn (its jobs and records are not read), `delays`
// holds its jobs' waits (sorted in place); `baseline` may be null. Errors:
// kFailedPrecondition without gnuplot, kInternal when a file cannot be written or gnuplot
// fails.
absl::Status PlotRun(const std::string& dir, const Summary& summary, const EngineResult& result,
                     PlotDelays* delays, const SpecInfo& info, const EngineResult* baseline);

struct PlotInput {
  std::string label;  // e.g. the policy
  Summary summary;
  std::string timeline_csv;  // contents of the run's timeline.csv ("" when absent)
};
absl::Status PlotRuns(const std::string& dir, const std::vector<PlotInput>& runs);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_PLOT_H_
