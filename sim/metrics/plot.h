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

// `baseline` may be null. Errors: kFailedPrecondition without gnuplot, kInternal when a
// file cannot be written or gnuplot fails.
absl::Status PlotRun(const std::string& dir, const Summary& summary, const EngineResult& result,
                     const SpecInfo& info, const EngineResult* baseline);

struct PlotInput {
  std::string label;  // e.g. the policy
  Summary summary;
  std::string timeline_csv;  // contents of the run's timeline.csv ("" when absent)
};
absl::Status PlotRuns(const std::string& dir, const std::vector<PlotInput>& runs);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_PLOT_H_
