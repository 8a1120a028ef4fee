// sim/planning/plan_search.h: the search of `hived-sim plan` (internal to sim/planning/):
// probes of a VC at candidate sizes, each a `run` child process on the spec resized to that
// size, narrowed until the smallest size meeting the target is found (sim/planning/plan.h
// gives the rules).
//
// Thread safety: single-threaded; the probes run as child processes.
#ifndef HIVED_SIM_PLANNING_PLAN_SEARCH_H_
#define HIVED_SIM_PLANNING_PLAN_SEARCH_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "sim/cluster/spec_edit.h"
#include "sim/common/flags.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_output.h"
#include "sim/planning/sweep_runner.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {

// One probe: the VC at `size` units, its result.
struct PlanProbe {
  int64_t size = 0;
  std::optional<double> value;  // the VC's metric; none when absent (e.g. null)
  int64_t rejected = 0;
  int64_t jobs = 0;  // the VC's jobs behind the metric (e.g. queuing_delay.count)
  bool meets = false;
  std::string dir;
};

// Everything a VC's search needs.
struct PlanContext {
  std::string exe;
  ClusterSpec base;
  std::string trace, format;
  std::vector<std::string> fixed_args;  // run flags for every probe
  PlanTarget target;
  std::string resolved_metric;  // set after the first probe
  int jobs = 1;
  int64_t min_jobs = 0;  // a VC whose metric rests on fewer jobs is skipped
  std::filesystem::path out;
  // --resume: a probe whose folder holds the same config.yaml and args.txt and a readable
  // out/summary.json is read, not run again (`reused` counts them).
  bool resume = false;
  int64_t reused = 0;
  std::set<std::string> new_vcs;  // --add-vc: VCs not in the input config ("now" is 0)
};

// A VC's search: its probes by size and the size chosen.
struct VcPlan {
  std::string vc;
  VcUnits current;
  int64_t leaves_per_unit = 0;
  std::map<int64_t, PlanProbe> probes;
  std::optional<int64_t> chosen;
  int64_t jobs = 0;     // the jobs behind the metric (at the smallest probe)
  int64_t cap = 0;      // > 0 when the range widened: the largest size it could reach
  std::string skipped;  // non-empty: the VC was not sized, and why
  std::string notes;    // non-monotone probes, rejected jobs
};

// Reads the VC's metric from a finished probe (p->dir/out/summary.json) into p->value,
// p->rejected and p->meets; sets ctx->resolved_metric on the first. Errors: the summary unreadable,
// or without the metric.
absl::Status ReadProbe(PlanContext* ctx, const std::string& vc, PlanProbe* p);

// Searches, within [min_size, max_size], the smallest size of `vc` in `cell_type` units
// that meets ctx->target (max_size 0: from max(4 x now, now + 4), doubled while the top fails,
// up to 4 x the cluster's GPUs in this unit; a VC whose metric rests on fewer than
// ctx->min_jobs jobs is returned with `skipped` set): probes run ctx->jobs at a time, each read by
// ReadProbe. Errors: a probe that fails or whose summary lacks the metric; a VC or cell type not in
// the config.
absl::StatusOr<VcPlan> PlanOneVc(PlanContext* ctx, const std::string& vc,
                                 const std::string& cell_type, int64_t min_size, int64_t max_size);

// `plan --all-vcs` in joint rounds, for VCs whose metrics do not depend on each other's
// sizes (HiveD's guarantee: under `hived` with guaranteed jobs only, a VC's waits depend on
// its own reservation): each round replays the trace once per candidate (2 in the first
// round, the smallest and largest size; then at most ctx->jobs), with every VC still searching at
// one of its candidate sizes, so the rounds are those of the slowest VC's search instead of the sum
// over VCs. Each VC's probes, answer and notes are PlanOneVc's (`unit_types[i]` as its
// `cell_type`), provided the VCs are independent; the confirmation replay of the sized config
// checks it. Probe folders are ctx->out/probes/roundR-K. Errors: as PlanOneVc.
absl::StatusOr<std::vector<VcPlan>> PlanVcsJointly(PlanContext* ctx,
                                                   const std::vector<std::string>& vcs,
                                                   const std::vector<std::string>& unit_types,
                                                   int64_t min_size, int64_t max_size);

// The report's line for a VC skipped because its metric rests on fewer than ctx.min_jobs
// jobs (plan.jobs).
std::string SkippedText(const PlanContext& ctx, const VcPlan& plan);

// Widening step from size `from` to `to` (both probed): true, with a note in plan->notes,
// when `to` still fails with the same value and rejected jobs as `from` (a plateau no larger
// size passes), so the search stops widening.
bool WidenedToPlateau(VcPlan* plan, int64_t from, int64_t to);

// Adds to plan->notes the probes that contradict "a larger VC never does worse" around
// plan->chosen (a failing probe above it, a meeting one below it), if any.
void NoteNonMonotone(VcPlan* plan);

// One k-section step of a search bracketed by a failing `*lo` and a meeting `*hi`, after
// probing `sizes` (ascending, inside (lo, hi), each in `probes`): `*hi` becomes the smallest
// meeting size, `*lo` the largest failing size below it. Shared by PlanOneVc and
// PlanVcsJointly, so both take exactly the same steps.
void NarrowBracket(const std::map<int64_t, PlanProbe>& probes, const std::vector<int64_t>& sizes,
                   int64_t* lo, int64_t* hi);

// The replay of a probe: `config` (a ClusterSpecToYaml text) run in `dir` (`run` with the
// trace, format and ctx->fixed_args, output in dir/out). With ctx->resume and `dir` already
// holding this probe finished (ReusableProbe), *reused is set and nothing is written;
// otherwise `dir` is emptied and gets config.yaml and args.txt. Errors: a file not written.
absl::StatusOr<ChildRun> PrepareProbe(const PlanContext& ctx, const std::filesystem::path& dir,
                                      const std::string& config, const std::string& label,
                                      bool* reused);

// True when `dir` holds a finished probe of exactly this config and these run arguments.
bool ReusableProbe(const std::filesystem::path& dir, const std::string& config,
                   const std::string& args);

// `plan --add-vc NAME`: NAME must be a VC not in `base`, whose jobs come from an absolute
// tenant or a rename in `t` (a load= tenant would grow with every probe). Returns -1 when
// fine, else the exit code of the usage error printed by `p`.
int CheckAddVc(const FlagParser& p, const std::string& name, const ClusterSpec& base,
               const TraceTransforms& t);

// `plan --cell-type [VC=]PATH,...` into the default type and per-VC types; `vcs` the VCs the
// plan sizes, `vc` the --vc given (empty with --all-vcs). Returns -1 when fine, else the exit
// code of the usage error printed by `p` (two defaults, a malformed item, a VC not sized).
int ParseVcCellTypes(const FlagParser& p, const std::string& cell_type,
                     const std::vector<std::string>& vcs, const std::string& vc,
                     std::string* default_type, std::map<std::string, std::string>* vc_types);

// A value of `metric` for reports: hours for times ("1.020 h"), else 4 significant digits.
std::string ShowValue(const std::string& metric, double v);

// The report of one VC's search: its probes, the chosen size and margin, or why none meets.
std::string PlanReport(const PlanContext& ctx, const VcPlan& plan);

// Draws OUT/plan-VC.png (the metric against size, the target as a line); a warning on stderr
// when gnuplot is missing or fails.
void PlanChart(const PlanContext& ctx, const VcPlan& plan);

// The VC's rows of report.csv.
std::string ReportCsvRows(const PlanContext& ctx, const VcPlan& plan);

// `plan --all-vcs`'s confirmation replay: the whole sized config (`sized_path`) replayed
// once, and each VC of `vcs` but the `skipped` read against the target (*all_met cleared
// when one misses); a VC whose value differs from its joint-round probe at the chosen size
// (`joint_plans`) is marked, with a warning to rerun with --one-by-one. Returns the report's
// section. Errors: the replay fails or lacks a VC.
absl::StatusOr<std::string> ConfirmSized(PlanContext* ctx, const std::string& sized_path,
                                         const std::vector<std::string>& vcs,
                                         const std::vector<std::string>& skipped,
                                         const std::map<std::string, VcPlan>& joint_plans,
                                         bool* all_met);

// How sure a plan is (`plan --resamples N`): a VC's metric at its sized size over N
// resampled traces.
struct VcSureness {
  std::string vc;
  int64_t met = 0;                            // resamples in which the VC meets the target
  int64_t n = 0;                              // resamples replayed
  std::vector<std::optional<double>> values;  // the metric in each resample (none: absent)
  std::vector<int64_t> missed_seeds;          // the seeds of the resamples that miss
};

// `fixed_args` for resample `seed`: its --seed replaced, and --bootstrap=UNIT added unless
// the args already resample (then their unit is kept).
std::vector<std::string> ResampleArgs(const std::vector<std::string>& fixed_args,
                                      const std::string& unit, int64_t seed);

// Replays `sized_config` (a config text) on resampled traces seed + 1 .. seed + resamples
// (`--bootstrap UNIT`, ResampleArgs), ctx->jobs at a time, in ctx->out/resamples/NNNN (read
// back under ctx->resume like a probe), and reads each of `vcs` from every one. Deterministic
// for a fixed seed. Errors: a replay that fails or lacks a VC's metric.
absl::StatusOr<std::vector<VcSureness>> ReplayResamples(PlanContext* ctx,
                                                        const std::string& sized_config,
                                                        const std::vector<std::string>& vcs,
                                                        int64_t resamples, const std::string& unit,
                                                        int64_t seed);

// The metric's value that 95% of the resamples do at least as well as (nearest rank: the
// 95th percentile for a <= target, the 5th for >=); none when a resample lacks the metric.
std::optional<double> SurenessLevel(const PlanTarget& target, const VcSureness& s);

// "7 of 10 (70%)".
std::string SurenessShare(const VcSureness& s);

// The report's "how sure" section: per VC the resamples meeting the target, the 95% level
// and a verdict (every resample, 95% sure, or not).
std::string SurenessReport(const PlanContext& ctx, const std::vector<VcSureness>& sure,
                           const std::string& unit, int64_t seed);

// ReplayResamples of `sized` for `vcs` and its SurenessReport; each of `rows` (report.md's)
// of a VC in `vcs` gets its `sure` column. Empty when resamples is 0.
absl::StatusOr<std::string> ResampleSection(PlanContext* ctx, const ClusterSpec& sized,
                                            const std::vector<std::string>& vcs, int64_t resamples,
                                            const std::string& unit, int64_t seed,
                                            std::vector<PlanMdRow>* rows);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLAN_SEARCH_H_
