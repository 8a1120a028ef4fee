// sim/planning/sweep.h: the parameter grid of `hived-sim sweep`, its tidy results and their
// summary.
//
// A grid is a base config and trace plus axes; every combination of axis values is one
// run. Runs are numbered in grid order (mixed radix, the last axis fastest; seeds are last),
// and everything written is sorted by that number, so results never depend on --jobs,
// completion order or sharding. Axes:
//   config axes (edit the `ClusterSpec`, sim/cluster/spec_edit.h): `scale` (every VC by a factor),
//     `scale:VC` (one VC), `cells:VC[@TYPE]` (one VC to N units; adds a VC not in the
//     config), `racks[:CHAIN]` (top-level cells added, or removed when negative);
//   run axes (passed to the child `hived-sim run --NAME=VALUE`): `policy`, `queue`, any
//     `--vary NAME=...`, and `seed` (always last).
//
// Results: one row per run x VC ("all" first, then the VCs in summary order), with the run's
// parameters and EVERY numeric field of its summary.json, flattened generically:
//   per-VC fields as `queuing_delay.p95`, `sharing_anomaly`, ...;
//   top-level sections of the summary (`cluster`, `accounting`, and any added later) as
//   `cluster:utilisation`, repeated on each row of the run.
// Columns: `run`, the axes, `vc`, then per-VC metrics sorted by name, then the `section:`
// ones sorted by name. A metric missing from a row (null, or absent in an older summary) is
// an empty cell. Values are JSON number text (shortest round trip), so a row read back from
// CSV is identical to the one written (what `merge` relies on).
//
// The summary groups rows by every axis except `seed`, and gives per metric the number of
// seeds with a value, the mean and the 95% confidence half-width (Student t, n-1 degrees of
// freedom; empty for n < 2).
//
// Thread safety: plain values and stateless functions.
#ifndef HIVED_SIM_PLANNING_SWEEP_H_
#define HIVED_SIM_PLANNING_SWEEP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"

namespace hived::sim {

struct SweepAxis {
  enum class Kind { kScale, kScaleVc, kVcCells, kRacks, kRunFlag };
  Kind kind = Kind::kRunFlag;
  std::string name;       // the CSV column, e.g. "scale:6214e9", "policy"
  std::string target;     // VC (kScaleVc, kVcCells), chain (kRacks, may be empty), run flag name
  std::string unit_type;  // kVcCells: dotted cell type path, may be empty
  std::vector<std::string> values;
};

struct SweepGrid {
  std::string config;
  std::string trace;
  std::string format = "hived";
  std::vector<std::string> fixed_args;  // passed to every child run
  std::vector<SweepAxis> axes;          // config axes, run axes, `seed` last
  int64_t RunCount() const;             // saturates at 2^62
  // The value index of each axis for run `run` (0 <= run < RunCount()).
  std::vector<size_t> Coordinates(int64_t run) const;
  // "policy=quota seed=2" (single-valued axes left out).
  std::string Describe(int64_t run) const;
  // The canonical text of the grid (what grid.txt holds): equal texts, equal grids.
  std::string Fingerprint() const;
  std::vector<std::string> AxisNames() const;
};

// Parses `Fingerprint()` text back. kInvalidArgument naming `file` when malformed.
absl::StatusOr<SweepGrid> ParseGridFingerprint(const std::string& text, const std::string& file);

// The spec of run `run`: the base spec with the run's config axes applied in axis order,
// then `FitPhysicalCluster`. Errors: kInvalidArgument naming the axis value.
absl::StatusOr<ClusterSpec> BuildRunSpec(const SweepGrid& grid, const ClusterSpec& base,
                                         int64_t run);

// The arguments of the child `hived-sim run` for run `run` (without --config/--out).
std::vector<std::string> RunArgs(const SweepGrid& grid, int64_t run);

struct SweepRow {
  int64_t run = 0;
  std::vector<std::string> params;  // one per axis
  std::string vc;
  std::map<std::string, std::string> metrics;
};

// The rows of one run from its summary.json text. Errors: kInvalidArgument for a summary
// that does not parse or lacks `overall`/`vcs` (named by `file`).
absl::StatusOr<std::vector<SweepRow>> RowsFromSummary(const std::string& json,
                                                      const std::string& file, int64_t run,
                                                      const std::vector<std::string>& params);

// The tidy CSV of `rows` (sorted by run, stable), with the axis names of `grid`.
std::string SweepCsv(const std::vector<std::string>& axis_names, std::vector<SweepRow> rows);

// Parses a CSV written by `SweepCsv` back into rows. Errors: kInvalidArgument with
// file:line for a malformed file or a header whose axes differ from `axis_names`.
absl::StatusOr<std::vector<SweepRow>> ParseSweepCsv(const std::string& text,
                                                    const std::string& file,
                                                    const std::vector<std::string>& axis_names);

// The two-sided 95% Student t quantile for `df` degrees of freedom (df >= 1).
double StudentT975(int64_t df);

struct MetricStats {
  int64_t n = 0;
  double mean = 0;
  std::optional<double> ci95;  // half-width; none for n < 2
};

// Rows grouped by every axis except `seed`: key = (params without seed, vc), in order of
// first appearance; per metric the statistics across the group's rows.
struct SummaryGroup {
  std::vector<std::string> params;  // without the seed axis
  std::string vc;
  std::map<std::string, MetricStats> metrics;
};
std::vector<SummaryGroup> SummarizeRows(const std::vector<std::string>& axis_names,
                                        const std::vector<SweepRow>& rows);

// summary.csv: params..., vc, metric, n, mean, ci95 (one line per group x metric).
std::string SummaryCsv(const std::vector<std::string>& axis_names,
                       const std::vector<SummaryGroup>& groups);

// A readable table of the key metrics (mean and p95 queuing delay in hours, anomaly,
// utilisation, each "mean ± ci"); `all_vcs` false keeps only the "all" rows.
std::string SummaryText(const std::vector<std::string>& axis_names,
                        const std::vector<SummaryGroup>& groups, bool all_vcs);

// The metric a user names (`p95_wait`, `mean_wait`, `slo_attainment`, `anomaly`, or any key
// of a row) resolved against the metric names present; nullopt when none matches.
std::optional<std::string> ResolveMetric(const std::string& name,
                                         const std::vector<std::string>& available);

// Writes grid.txt, sweep.csv, summary.csv and summary.txt into `dir` (whole files only).
absl::Status WriteSweepResults(const std::string& dir, const SweepGrid& grid,
                               const std::vector<SweepRow>& rows);

// One process's part of a sweep (`--shard I/N`): the runs r with r % count == index.
struct SweepShard {
  int64_t index = 0;
  int64_t count = 1;
};

// "I/N" with 0 <= I < N <= 1,000,000; nullopt otherwise.
std::optional<SweepShard> ParseSweepShard(const std::string& text);

// Quotes a CSV field when it holds a comma, quote or newline.
std::string CsvQuote(const std::string& field);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_SWEEP_H_
