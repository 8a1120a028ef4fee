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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"

namespace hived::sim {

// One row of report.md's table.
struct PlanMdRow {
  std::string vc, unit_type, now, chosen, gpus, value, cost;
  std::string sure;  // `plan --resamples`: "7 of 10 (70%); 95%: 1.2 h"
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
// Empty when the input starts with no comment. (sized.yaml's fallback, see SizedYamlText.)
std::string InputComments(const std::string& config_text);

// The input config's text (`input_text`) with only what the plan changed edited in, line by
// line, so every comment stays where it was: changed scalars replaced in place (a trailing
// comment kept), sequence items the sized config (`sized_yaml`, block YAML as
// ClusterSpecToYaml writes it) no longer has deleted with their lines, and items it adds
// appended after the input's last item of that sequence. Sequence items match by position.
// nullopt when this cannot be done line-wise (flow collections, block scalars, anchors,
// tabs, several documents, a sequence new to the input) or when the result would not load
// to exactly the spec `sized_yaml` loads to (the result is always checked).
std::optional<std::string> MergeIntoInput(const std::string& input_text,
                                          const std::string& sized_yaml);

// sized.yaml: `header`, then MergeIntoInput of the input with `sized` written out (VC names
// kept strings); when that fails, a line saying the comments could not be kept, the input's
// leading comments (InputComments) and `sized` written out, as before issue 31 item 5.
std::string SizedYamlText(const std::string& header, const std::string& input_text,
                          const ClusterSpec& sized);

// The report's "physical cluster for the sized VCs" lines: top-level cells per chain, before
// (`base`) and after (`sized`).
std::string PhysicalChangeText(const ClusterSpec& base, const ClusterSpec& sized);

// `hived-sim ARGS` as a shell command line (each argument quoted when it needs to be), without
// --resume: a resumed plan's outputs equal the uninterrupted run's.
std::string PlanCommandLine(int argc, char** argv);

// FNV-1a (64-bit) of `bytes`, as 16 hex digits: identifies the trace a plan was made from.
std::string Fnv1a64Hex(absl::string_view bytes);

// The date in sized.yaml's header, reproducible-builds style: SOURCE_DATE_EPOCH (its value,
// `source_date_epoch`, or null when unset: then `now`, seconds since the epoch) as UTC ISO
// 8601, "2026-12-05T11:20:47Z". kInvalidArgument for a value that is not a whole number of
// seconds in 0..253402300799 (the spec says to fail rather than guess).
absl::StatusOr<std::string> PlanDate(const char* source_date_epoch, int64_t now);

// sized.yaml's header: how it was made (`command`, `date` from PlanDate), the trace
// (ctx.trace, its size and Fnv1a64Hex of `trace_bytes`), the target, the VCs' `results`,
// prices, speeds and the VCs skipped.
std::string SizedHeader(const std::string& command, const std::string& date, const PlanContext& ctx,
                        absl::string_view trace_bytes, const std::vector<std::string>& results,
                        const std::string& price_text, const std::string& speed_text,
                        const std::vector<std::string>& skipped);

// DIR/report.md: the command, the table, the charts present (plan-VC.png, wait-VC.png),
// then report.txt verbatim.
absl::Status WriteReportMd(const std::string& dir, const std::string& command,
                           const std::string& target, const std::vector<PlanMdRow>& rows,
                           const std::vector<std::string>& vcs, const std::string& report_txt);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLAN_OUTPUT_H_
