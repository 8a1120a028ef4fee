// hived-sim fill: the FGD fill experiment on the openb trace (sim/openb/fill_experiment.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/common/output_dir.h"
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

struct Spread {
  double mean = 0, stddev = 0, min = 0, max = 0;
};
Spread SpreadOf(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.min = s.max = v.front();
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(s.stddev / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}
nlohmann::ordered_json SpreadJson(const Spread& s) {
  return {{"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min}, {"max", s.max}};
}

nlohmann::ordered_json ReasonsJson(const std::array<int64_t, kFillFailureKinds>& counts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (size_t k = 0; k < counts.size(); ++k) {
    out[std::string(FillFailureName(static_cast<FillFailure>(k)))] = counts[k];
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

  // summary.json
  const double capacity = static_cast<double>(runs.front().capacity_milli);
  std::vector<double> ratio, unallocated, frag, failed;
  nlohmann::ordered_json per_seed = nlohmann::ordered_json::array();
  std::array<int64_t, kFillFailureKinds> failed_total{};
  for (const FillRun& r : runs) {
    ratio.push_back(r.allocation_ratio);
    unallocated.push_back((capacity - static_cast<double>(r.allocated_milli)) / kMilliPerGpu);
    frag.push_back(r.fragmentation);
    failed.push_back(static_cast<double>(r.failed_pods));
    for (size_t k = 0; k < failed_total.size(); ++k) failed_total[k] += r.failed_by_reason[k];
    per_seed.push_back({{"seed", r.seed},
                        {"allocation_ratio", r.allocation_ratio},
                        {"unallocated_gpus", unallocated.back()},
                        {"fragmentation", r.fragmentation},
                        {"arrived_pods", r.arrived_pods},
                        {"arrived_demand", static_cast<double>(r.arrived_milli) / capacity},
                        {"placed_pods", r.placed_pods},
                        {"failed_pods", r.failed_pods},
                        {"failed_gpu_milli", r.failed_milli},
                        {"failed_by_reason", ReasonsJson(r.failed_by_reason)},
                        {"typical_pods", r.typical_pods}});
  }
  const OpenbPodStats& st = pods->stats;
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (size_t m = 0; m < nodes->models.size(); ++m) {
    models.push_back({{"model", nodes->models[m]}, {"gpus", nodes->model_gpus[m]}});
  }
  const Spread ratio_spread = SpreadOf(ratio);
  nlohmann::ordered_json summary = {
      {"command", "fill"},
      {"format", "openb"},
      {"nodes_file", input.nodes_path},
      {"pods_file", input.pods_path},
      {"policy", std::string(PolicyKindName(options.policy))},
      {"note", absl::StrCat(Av(PolicyKindName(PolicyKind::kHived)),
                            " is the library (every pod through hived::Scheduler on the "
                            "generated config, sim/policies/fill_library.h); ",
                            Av(PolicyKindName(PolicyKind::kHivedModel)),
                            " the simulator's model of its rule (sim/policies/fill_hived.h); "
                            "the other policies are the published baselines as implemented here")},
      {"inflate", inflate},
      {"workload", workload_name},
      {"typical_coverage", coverage},
      {"seeds", seeds},
      {"allocation_ratio", ratio_spread.mean},
      {"allocation_ratio_spread", SpreadJson(ratio_spread)},
      {"unallocated_gpus", SpreadJson(SpreadOf(unallocated))},
      {"fragmentation", SpreadJson(SpreadOf(frag))},
      {"failed_pods", SpreadJson(SpreadOf(failed))},
      {"failed_pods_by_reason_all_seeds", ReasonsJson(failed_total)},
      {"cluster",
       {{"nodes", nodes->nodes.size()},
        {"gpu_nodes", nodes->gpu_nodes},
        {"gpus", nodes->total_gpus},
        {"models", models},
        {"skipped_rows", nodes->skipped_rows}}},
      {"pod_list",
       {{"pods", st.pods},
        {"cpu_only", st.cpu_only},
        {"sharing", st.sharing},
        {"whole_gpu", st.whole_gpu},
        {"gpu_demand", static_cast<double>(st.total_gpu_milli) / capacity},
        {"with_gpu_spec", st.with_gpu_spec},
        {"gpu_spec_with_unknown_model", st.unknown_spec_model},
        {"gpu_spec_repeated_model", st.duplicate_spec},
        {"zero_memory", st.zero_memory},
        {"has_times", st.has_times},
        {"pending", st.pending},
        {"censored_running", st.censored},
        {"skipped_rows", st.skipped_rows},
        {"dropped_gpu_spec_without_cluster_model", st.dropped_unknown_spec}}},
      {"per_seed", per_seed}};

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
    const Spread sa = SpreadOf(a);
    absl::StrAppend(
        &csv, absl::StrFormat("%.2f,%.1f,%.6f,%.6f,%.6f,%.6f,%.6f\n",
                              runs.front().curve[i].arrived_demand, SpreadOf(pods_arrived).mean,
                              sa.mean, sa.min, sa.max, SpreadOf(f).mean, SpreadOf(fi).mean));
  }
  if (absl::Status s = OutputDir::WriteAll(
          input.out_dir, {{"summary.json", summary.dump(2) + "\n"}, {"curve.csv", csv}},
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
