// `hived-sim openb-replay` and `run --format openb`: flags, the replay (openb_replay.cc) and
// its outputs. Declared in sim/openb/openb_replay.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/common/output_dir.h"
#include "sim/openb/fill_experiment.h"
#include "sim/openb/openb_replay.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/policy_registry.h"

namespace hived::sim {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "hived-sim openb-replay: %s\n", std::string(status.message()).c_str());
  return kExitFailed;
}

}  // namespace

int OpenbReplayCommand(int argc, char** argv) {
  FlagParser p(
      "hived-sim openb-replay",
      "--nodes NODES.csv --pods PODS.csv [--policy P] [--seed S]\n"
      "       [--sharing ideal|exclusive|time-slice|mps|tgs|mig] --out DIR",
      "Replays an openb pod list in time: pods arrive at their creation time, run as long\n"
      "as they ran in the trace and leave; a pod that fits nowhere waits (a Pending pod\n"
      "until its deletion). Placement by a fill policy (default hived: the library). Writes\n"
      "DIR/summary.json, DIR/timeline.csv (hourly allocation ratio, fragmentation,\n"
      "running and waiting pods) and DIR/pods.csv (each pod's placement, run and slowdown).\n"
      "--sharing: how pods on one GPU progress (sim/engine/sharing_model.h; default ideal, the\n"
      "trace's own runtimes); a pod's work is its trace runtime at speed 1.");
  OpenbInputFlags input;
  std::string policy_name(FillPolicyName(FillPolicyKind::kHived));
  int64_t seed = 42, step = 3600;
  AddOpenbInputFlags(&p, &input, "openb pod list with times (11 columns)");
  p.String("policy", &policy_name, "P",
           absl::StrCat(FillPolicyNames(", "), " (default ",
                        Av(FillPolicyName(FillPolicyKind::kHived)), ": the library)"));
  p.Int("seed", &seed, "seed of the random policy (default 42)");
  p.Int("sample-seconds", &step, "timeline step in seconds (default 3600)");
  std::string sharing_name = "ideal";
  SharingParams params;
  p.String("sharing", &sharing_name, "MODE",
           "ideal (default), exclusive, time-slice, mps, tgs or mig (sim/engine/sharing_model.h)");
  p.Double("quantum", &params.quantum_s, "time-slice: NvShare's time quantum, s (default 30)");
  p.Double("switch-cost", &params.switch_s,
           "time-slice: seconds lost per turn paging the next pod in (default 2)");
  p.Double("uvm-slowdown", &params.uvm_slowdown,
           "time-slice: cost of unified memory, a fraction (default 0.01)");
  p.Double("mps-interference", &params.mps_interference,
           "mps: speed = 1 / (1 + this x the neighbours' GPU share) (default 0.25)");
  p.Double("tgs-production-slowdown", &params.tgs_production_slowdown,
           "tgs: production pods' slowdown next to opportunistic ones (default 0.01)");
  std::vector<std::string> rest;
  if (int code = p.Parse(argc, argv, &rest); code >= 0) return code;
  if (!rest.empty()) return p.UsageError(absl::StrCat("unexpected argument '", rest[0], "'"));
  if (std::string missing = MissingOpenbInput(input); !missing.empty()) {
    return p.UsageError(missing);
  }
  OpenbReplayOptions options;
  if (std::optional<FillPolicyKind> k = ParseFillPolicy(policy_name)) {
    options.policy = *k;
  } else {
    return p.UsageError(
        absl::StrCat("unknown --policy '", policy_name, "' (", FillPolicyNames(", "), ")"));
  }
  if (seed < 0) return p.UsageError("--seed must be non-negative");
  if (step < 60) return p.UsageError("--sample-seconds must be at least 60");
  options.seed = static_cast<uint64_t>(seed);
  options.sample_seconds = step;
  if (std::optional<SharingMode> m = ParseSharingMode(sharing_name)) {
    options.sharing = *m;
  } else {
    return p.UsageError(absl::StrCat("unknown --sharing '", sharing_name,
                                     "' (ideal, exclusive, time-slice, mps, tgs, mig)"));
  }
  if (std::string error = CheckSharingParams(params); !error.empty()) {
    return p.UsageError(error);
  }
  options.sharing_params = params;

  absl::StatusOr<FillInputs> in = LoadFillInputs(input);
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<OpenbReplayResult> r = ReplayOpenb(in->nodes, in->pods, in->fill_pods, options);
  if (!r.ok()) return Fail(r.status());

  nlohmann::ordered_json degree_hours = nlohmann::ordered_json::object();
  for (size_t k = 1; k < r->gpu_seconds_by_degree.size(); ++k) {
    if (r->gpu_seconds_by_degree[k] > 0) {
      degree_hours[std::to_string(k)] = r->gpu_seconds_by_degree[k] / 3600.0;
    }
  }
  nlohmann::ordered_json summary = {
      {"command", "openb-replay"},
      {"nodes_file", input.nodes_path},
      {"pods_file", input.pods_path},
      {"policy", std::string(FillPolicyName(options.policy))},
      {"pods", r->pods},
      {"placed", r->placed},
      {"placed_at_arrival", r->placed_at_arrival},
      {"never_placed", r->never_placed},
      {"never_placed_by_trace_end", r->never_placed_by_end},
      {"pending_in_trace", r->pending_in_trace},
      {"pending_in_trace_placed_here", r->pending_placed},
      {"censored_running", r->censored},
      {"skipped_rows", in->nodes.skipped_rows + in->pods.stats.skipped_rows},
      {"dropped_gpu_spec_without_cluster_model", in->pods.stats.dropped_unknown_spec},
      {"wait_seconds",
       {{"mean", r->mean_wait}, {"p50", r->p50_wait}, {"p99", r->p99_wait}, {"max", r->max_wait}}},
      {"allocation_ratio_time_weighted", r->mean_allocation_ratio},
      {"allocation_ratio_peak", r->peak_allocation_ratio},
      {"start_time", r->start_time},
      {"trace_end", r->end_time},
      {"sharing",
       {{"mode", std::string(SharingModeName(options.sharing))},
        {"quantum_s", params.quantum_s},
        {"switch_cost_s", params.switch_s},
        {"uvm_slowdown", params.uvm_slowdown},
        {"mps_interference", params.mps_interference},
        {"tgs_production_slowdown", params.tgs_production_slowdown},
        {"slowdown",
         {{"pods", r->slowdown_pods},
          {"slowed_pods", r->slowed_pods},
          {"mean", r->mean_slowdown},
          {"p50", r->p50_slowdown},
          {"p99", r->p99_slowdown},
          {"max", r->max_slowdown}}},
        {"gpu_sharing_degree",
         {{"mean_over_busy_gpu_time", r->mean_degree},
          {"max", r->max_degree},
          {"busy_gpu_hours_by_degree", degree_hours}}}}}};
  std::string csv = "time,allocation_ratio,fragmentation,running,waiting\n";
  for (const OpenbReplayPoint& pt : r->timeline) {
    absl::StrAppend(&csv, absl::StrFormat("%d,%.6f,%.6f,%d,%d\n", pt.time, pt.allocation_ratio,
                                          pt.fragmentation, pt.running, pt.waiting));
  }
  std::string pods_csv =
      "name,placed,node,start,end,wait,work,runtime,slowdown,max_sharing_degree\n";
  for (size_t i = 0; i < r->runs.size(); ++i) {
    const OpenbPodRun& run = r->runs[i];
    const OpenbPod& pod = in->pods.pods[i];
    if (!run.placed) {
      absl::StrAppend(&pods_csv, pod.name, ",0,,,,,,,,\n");
      continue;
    }
    absl::StrAppend(&pods_csv, pod.name, ",1,", in->nodes.nodes[static_cast<size_t>(run.node)].name,
                    ",", run.start, ",", run.end, ",", run.start - *pod.creation_time, ",",
                    run.work, ",", run.end - run.start, ",",
                    run.slowdown > 0 ? absl::StrFormat("%.4f", run.slowdown) : "", ",",
                    run.max_degree, "\n");
  }
  if (absl::Status s = OutputDir::WriteAll(
          input.out_dir,
          {{"summary.json", summary.dump(2) + "\n"}, {"timeline.csv", csv}, {"pods.csv", pods_csv}},
          {input.nodes_path, input.pods_path});
      !s.ok()) {
    return Fail(s);
  }
  std::printf(
      "%s: %lld pods, %lld placed (%lld at arrival), %lld never placed (%lld Pending in the "
      "trace, %lld of them placed here); %lld censored at the trace end; GPU allocation "
      "%.2f%% time-weighted, %.2f%% peak; sharing %s: mean slowdown %.4f (p99 %.4f, %lld "
      "pods slowed), GPU sharing degree %.2f mean, %d max; wrote "
      "%s/{summary.json,timeline.csv,pods.csv}\n",
      std::string(FillPolicyName(options.policy)).c_str(), static_cast<long long>(r->pods),
      static_cast<long long>(r->placed), static_cast<long long>(r->placed_at_arrival),
      static_cast<long long>(r->never_placed), static_cast<long long>(r->pending_in_trace),
      static_cast<long long>(r->pending_placed), static_cast<long long>(r->censored),
      100 * r->mean_allocation_ratio, 100 * r->peak_allocation_ratio,
      std::string(SharingModeName(options.sharing)).c_str(), r->mean_slowdown, r->p99_slowdown,
      static_cast<long long>(r->slowed_pods), r->mean_degree, r->max_degree, input.out_dir.c_str());
  return kExitOk;
}

std::optional<int> RunOpenbFormat(int argc, char** argv) {
  std::vector<char*> rest;
  bool openb = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i > 0 && a == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "openb") {
      openb = true;
      ++i;
    } else if (i > 0 && a == "--format=openb") {
      openb = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (!openb) return std::nullopt;
  return OpenbReplayCommand(static_cast<int>(rest.size()), rest.data());
}

}  // namespace hived::sim
