// sim/planning/plan_output.h: the outputs of `hived-sim plan` that stand alone (internal to
// sim/planning/): OUT/report.md (the table, the charts) and a wait heatmap per VC.
//
// Heatmap: the mean queuing delay of a VC's jobs by hour of submission (0-23) and day
// (0-6), both counted from the trace's first submission (traces carry no wall-clock
// origin after reading), from a replay's jobs.csv; a cell with no jobs is left blank, so
// "no jobs" and "no wait" differ.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_PLANNING_PLAN_OUTPUT_H_
#define HIVED_SIM_PLANNING_PLAN_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hived::sim {

// One row of report.md's table.
struct PlanMdRow {
  std::string vc, unit_type, now, chosen, gpus, value, cost;
};

struct PlanContext;
struct VcPlan;
struct CostModel;
// report.md's row of a sized VC.
PlanMdRow MdRow(const PlanContext& ctx, const CostModel& cost, const VcPlan& plan);

// The wait-by-hour table of `vc` from jobs.csv text: 7 x 24 means in seconds, -1 = no jobs.
std::vector<std::vector<double>> WaitByHour(const std::string& jobs_csv, const std::string& vc);

// Draws DIR/wait-VC.png for each VC from the jobs.csv at `jobs_csv_path`; returns the PNG
// names drawn (a VC without jobs gets none). Errors: jobs.csv unreadable; gnuplot failures
// are warnings on stderr.
absl::StatusOr<std::vector<std::string>> WaitHeatmaps(const std::string& jobs_csv_path,
                                                      const std::vector<std::string>& vcs,
                                                      const std::string& dir);

// The comment lines at the top of a config (`config_text`), for the sized config's header:
// "# Input config comments (they describe the input, not this file):" then each as "# | ...".
// Empty when the input starts with no comment. (Comments inside the YAML are not kept: the
// sized config is written from the parsed spec.)
std::string InputComments(const std::string& config_text);

// DIR/report.md: the command, the table, the charts present (plan-VC.png, wait-VC.png),
// then report.txt verbatim.
absl::Status WriteReportMd(const std::string& dir, const std::string& command,
                           const std::string& target, const std::vector<PlanMdRow>& rows,
                           const std::vector<std::string>& vcs, const std::string& report_txt);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLAN_OUTPUT_H_
