// hived-sim fill: the FGD fill experiment on the openb trace (sim/openb/fill_experiment.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/common/output_dir.h"
#include "sim/metrics/fill_summary.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/policy_registry.h"
#include "sim/trace/openb_config.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {
namespace {

constexpr int64_t kMaxSeeds = 1000;

// "S" or "A..B" (inclusive) or "A,B,C".
bool ParseSeeds(const std::string& text, std::vector<uint64_t>* seeds, std::string* error) {
  seeds->clear();
  const size_t dots = text.find("..");
  if (dots != std::string::npos) {
    std::optional<int64_t> a = ParseInt(std::string_view(text).substr(0, dots));
    std::optional<int64_t> b = ParseInt(std::string_view(text).substr(dots + 2));
    if (!a || !b || *a < 0 || *b < *a || *b - *a >= kMaxSeeds) {
      *error = absl::StrCat("--seeds '", text, "': want A..B with 0 <= A <= B and at most ",
                            kMaxSeeds, " seeds");
      return false;
    }
    for (int64_t s = *a; s <= *b; ++s) seeds->push_back(static_cast<uint64_t>(s));
    return true;
  }
  for (const CsvField& f : SplitCsvLine(text)) {
    std::optional<int64_t> s = ParseInt(f.text);
    if (!s || *s < 0 || static_cast<int64_t>(seeds->size()) >= kMaxSeeds) {
      *error = absl::StrCat("--seeds '", text, "': want non-negative integers, A..B or A,B,C");
      return false;
    }
    seeds->push_back(static_cast<uint64_t>(*s));
  }
  return true;
}

// Failed pods by reason in the fill model's order, named.
FillReasonCounts NamedReasons(const std::array<int64_t, kFillFailureKinds>& counts) {
  FillReasonCounts out;
  for (size_t k = 0; k < counts.size(); ++k) {
    out.emplace_back(std::string(FillFailureName(static_cast<FillFailure>(k))), counts[k]);
  }
  return out;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "hived-sim fill: %s\n", std::string(status.message()).c_str());
  return kExitFailed;
}

}  // namespace

int FillCommand(int argc, char** argv) {
  FlagParser p(
      "hived-sim fill",
      "--nodes NODES.csv --pods PODS.csv --format openb [--policy P] [--inflate 1.3]\n"
      "       [--seed S | --seeds 42..51] [--workload sample|artifact] --out DIR",
      "The FGD fill experiment (Weng et al., ATC '23) on the openb trace: pods drawn at random\n"
      "until their GPU request reaches --inflate x the GPU capacity arrive once each and are\n"
      "placed or fail; nothing leaves. Writes DIR/summary.json (allocation_ratio = allocated\n"
      "GPU share / capacity at the end, per seed, mean and spread; failed pods by reason) and\n"
      "DIR/curve.csv (allocation ratio and FGD fragmentation against arrived demand).\n"
      "Policies (--policy):\n" +
          PolicyTable(PolicyModel::kPods));
  OpenbInputFlags input;
  std::string format, policy_name(PolicyKindName(PolicyKind::kHived)), seeds_text,
      workload_name = "sample";
  double inflate = 1.3, coverage = 0.95;
  int64_t seed = -1;
  AddOpenbInputFlags(&p, &input, "openb pod list (11 columns, or the 5 of multigpu*)");
  p.String("format", &format, "FMT", "trace format: openb (the only one)");
  p.String("policy", &policy_name, "P",
           absl::StrCat("placement policy: ", PolicyNames(PolicyModel::kPods, ", "), " (default ",
                        Av(PolicyKindName(PolicyKind::kHived)), ")"));
  p.Double("inflate", &inflate, "arrived GPU demand / capacity at the end (default 1.3)");
  p.Int("seed", &seed, "one seed (default 42)");
  p.String("seeds", &seeds_text, "A..B", "several seeds: A..B or A,B,C; mean and spread reported");
  p.String("workload", &workload_name, "W",
           "sample: draws with replacement, shuffled (default); artifact: the pod list shuffled, "
           "then draws appended (the published simulator)");
  p.Double("typical-coverage", &coverage, "FGD's typical pods cover this share (default 0.95)");
  std::vector<std::string> rest;
  if (int code = p.Parse(argc, argv, &rest); code >= 0) return code;
  if (!rest.empty()) return p.UsageError(absl::StrCat("unexpected argument '", rest[0], "'"));
  if (std::string missing = MissingOpenbInput(input); !missing.empty()) {
    return p.UsageError(missing);
  }
  if (format != "openb") {
    return p.UsageError(absl::StrCat("--format must be openb, got '", format, "'"));
  }
  FillOptions options;
  options.inflate = inflate;
  options.typical_coverage = coverage;
  if (absl::StatusOr<PolicyKind> k = ParsePolicy(policy_name, PolicyModel::kPods); k.ok()) {
    options.policy = *k;
  } else {
    return p.UsageError(k.status().message());
  }
  if (workload_name == "sample") {
    options.workload = FillWorkload::kSample;
  } else if (workload_name == "artifact") {
    options.workload = FillWorkload::kArtifact;
  } else {
    return p.UsageError(
        absl::StrCat("--workload must be sample or artifact, got '", workload_name, "'"));
  }
  if (!(inflate > 0 && inflate <= 10)) return p.UsageError("--inflate must be in (0, 10]");
  if (!(coverage > 0 && coverage <= 1)) return p.UsageError("--typical-coverage must be in (0, 1]");
  std::vector<uint64_t> seeds;
  if (!seeds_text.empty() && seed >= 0) return p.UsageError("give --seed or --seeds, not both");
  if (!seeds_text.empty()) {
    std::string error;
    if (!ParseSeeds(seeds_text, &seeds, &error)) return p.UsageError(error);
  } else if (seed < -1) {
    return p.UsageError("--seed must be non-negative");
  } else {
    seeds.push_back(seed < 0 ? 42 : static_cast<uint64_t>(seed));
  }

  absl::StatusOr<FillInputs> in = LoadFillInputs(input);
  if (!in.ok()) return Fail(in.status());
  const OpenbNodeList* nodes = &in->nodes;
  const OpenbPodList* pods = &in->pods;

  std::vector<FillRun> runs;
  std::vector<double> seconds;
  for (uint64_t s : seeds) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<FillRun> run = RunFill(*nodes, in->fill_pods, options, s);
    if (!run.ok()) return Fail(run.status());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    runs.push_back(std::move(*run));
  }

  // summary.json (sim/metrics/fill_summary.h)
  const double capacity = static_cast<double>(runs.front().capacity_milli);
  FillSummary summary;
  summary.nodes_file = input.nodes_path;
  summary.pods_file = input.pods_path;
  summary.policy = std::string(PolicyKindName(options.policy));
  summary.note = absl::StrCat(Av(PolicyKindName(PolicyKind::kHived)),
                              " is the library (every pod through hived::Scheduler on the "
                              "generated config, sim/policies/fill_library.h); ",
                              Av(PolicyKindName(PolicyKind::kHivedModel)),
                              " the simulator's model of its rule (sim/policies/fill_hived.h); "
                              "the other policies are the published baselines as implemented here");
  summary.inflate = inflate;
  summary.workload = workload_name;
  summary.typical_coverage = coverage;
  summary.seeds = seeds;
  std::array<int64_t, kFillFailureKinds> failed_total{};
  for (const FillRun& r : runs) {
    for (size_t k = 0; k < failed_total.size(); ++k) failed_total[k] += r.failed_by_reason[k];
    FillSeedFigures f;
    f.seed = r.seed;
    f.allocation_ratio = r.allocation_ratio;
    f.unallocated_gpus = (capacity - static_cast<double>(r.allocated_milli)) / kMilliPerGpu;
    f.fragmentation = r.fragmentation;
    f.arrived_pods = r.arrived_pods;
    f.arrived_demand = static_cast<double>(r.arrived_milli) / capacity;
    f.placed_pods = r.placed_pods;
    f.failed_pods = r.failed_pods;
    f.failed_gpu_milli = r.failed_milli;
    f.failed_by_reason = NamedReasons(r.failed_by_reason);
    f.typical_pods = r.typical_pods;
    summary.per_seed.push_back(std::move(f));
  }
  summary.failed_all_seeds = NamedReasons(failed_total);
  summary.capacity_milli = capacity;
  summary.nodes = &*nodes;
  summary.pods = &pods->stats;
  std::vector<double> ratio, unallocated;
  for (const FillSeedFigures& f : summary.per_seed) {
    ratio.push_back(f.allocation_ratio);
    unallocated.push_back(f.unallocated_gpus);
  }
  const FillSpread ratio_spread = SpreadOf(ratio);

  std::string csv =
      "arrived_demand,arrived_pods,allocation_ratio,allocation_ratio_min,allocation_ratio_max,"
      "fragmentation,frag_of_idle\n";
  const size_t points = runs.front().curve.size();
  for (size_t i = 0; i < points; ++i) {
    std::vector<double> a, f, fi, pods_arrived;
    for (const FillRun& r : runs) {
      a.push_back(r.curve[i].allocation_ratio);
      f.push_back(r.curve[i].fragmentation);
      fi.push_back(r.curve[i].frag_of_idle);
      pods_arrived.push_back(static_cast<double>(r.curve[i].arrived_pods));
    }
    const FillSpread sa = SpreadOf(a);
    absl::StrAppend(
        &csv, absl::StrFormat("%.2f,%.1f,%.6f,%.6f,%.6f,%.6f,%.6f\n",
                              runs.front().curve[i].arrived_demand, SpreadOf(pods_arrived).mean,
                              sa.mean, sa.min, sa.max, SpreadOf(f).mean, SpreadOf(fi).mean));
  }
  if (absl::Status s = OutputDir::WriteAll(
          input.out_dir, {{"summary.json", FillSummaryJson(summary)}, {"curve.csv", csv}},
          {input.nodes_path, input.pods_path});
      !s.ok()) {
    return Fail(s);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    std::fprintf(stderr, "seed %llu: allocation ratio %.4f, %lld failed pods, %.3f s\n",
                 static_cast<unsigned long long>(runs[i].seed), runs[i].allocation_ratio,
                 static_cast<long long>(runs[i].failed_pods), seconds[i]);
  }
  std::printf(
      "%s: allocation ratio %.2f%% (mean of %zu seed%s, stddev %.2f), %.1f GPUs unallocated; "
      "wrote %s/{summary.json,curve.csv}\n",
      std::string(PolicyKindName(options.policy)).c_str(), 100 * ratio_spread.mean, runs.size(),
      runs.size() == 1 ? "" : "s", 100 * ratio_spread.stddev, SpreadOf(unallocated).mean,
      input.out_dir.c_str());
  return kExitOk;
}

}  // namespace hived::sim
