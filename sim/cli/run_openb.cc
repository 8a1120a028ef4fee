#include "sim/cli/run_openb.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/common/command_util.h"
#include "sim/common/output_dir.h"
#include "sim/metrics/pod_summary.h"
#include "sim/openb/fill_experiment.h"
#include "sim/openb/openb_replay.h"
#include "sim/policies/policy_registry.h"

namespace hived::sim {
namespace {

constexpr std::string_view kOpenbOnlyFlags[] = {
    "nodes",       "pods",         "sample-seconds",   "quantum",
    "switch-cost", "uvm-slowdown", "mps-interference", "tgs-production-slowdown"};
constexpr std::string_view kSharedFlags[] = {"format", "policy",        "seed", "sharing",
                                             "out",    "skip-bad-rows", "quiet"};

template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

}  // namespace

void AddOpenbRunFlags(FlagParser* p, OpenbRunFlags* flags) {
  p->String("nodes", &flags->nodes_path, "PATH", "openb: the node list");
  p->String("pods", &flags->pods_path, "PATH", "openb: the pod list with times (11 columns)");
  p->Int("sample-seconds", &flags->sample_seconds,
         "openb: timeline step in seconds (default 3600)");
  SharingParams& params = flags->sharing_params;
  p->Double("quantum", &params.quantum_s, "time-slice: NvShare's time quantum, s (default 30)");
  p->Double("switch-cost", &params.switch_s,
            "time-slice: seconds lost per turn paging the next pod in (default 2)");
  p->Double("uvm-slowdown", &params.uvm_slowdown,
            "time-slice: cost of unified memory, a fraction (default 0.01)");
  p->Double("mps-interference", &params.mps_interference,
            "mps: speed = 1 / (1 + this x the neighbours' GPU share) (default 0.25)");
  p->Double("tgs-production-slowdown", &params.tgs_production_slowdown,
            "tgs: production pods' slowdown next to opportunistic ones (default 0.01)");
}

std::string FlagNotTaken(const FlagParser& parser, bool openb) {
  for (const std::string& name : parser.given()) {
    const bool taken =
        openb ? In(kSharedFlags, name) || In(kOpenbOnlyFlags, name) : !In(kOpenbOnlyFlags, name);
    if (!taken) return absl::StrCat("--", name);
  }
  return "";
}

int RunOpenbReplay(const FlagParser& p, std::string_view command, OpenbRunArgs args) {
  const OpenbRunFlags& flags = args.flags;
  const OpenbInputFlags input{flags.nodes_path, flags.pods_path, args.out_dir, args.skip_bad_rows};
  if (std::string missing = MissingOpenbInput(input); !missing.empty()) {
    return p.UsageError(missing);
  }
  OpenbReplayOptions options;
  if (absl::StatusOr<PolicyKind> k = ParsePolicy(args.policy, PolicyModel::kPods); k.ok()) {
    options.policy = *k;
  } else {
    return p.UsageError(k.status().message());
  }
  if (args.seed < 0) return p.UsageError("--seed must be non-negative");
  if (flags.sample_seconds < 60) return p.UsageError("--sample-seconds must be at least 60");
  options.seed = static_cast<uint64_t>(args.seed);
  options.sample_seconds = flags.sample_seconds;
  if (std::optional<SharingMode> m = ParseSharingMode(args.sharing)) {
    options.sharing = *m;
  } else {
    return p.UsageError(absl::StrCat("unknown --sharing '", args.sharing,
                                     "' (ideal, exclusive, time-slice, mps, tgs, mig)"));
  }
  if (std::string error = CheckSharingParams(flags.sharing_params); !error.empty()) {
    return p.UsageError(error);
  }
  options.sharing_params = flags.sharing_params;

  // As for job traces: the folder is opened first, clearing an earlier run's outputs.
  const std::vector<std::string> layout = {"summary.json", "timeline.csv", "pods.csv"};
  if (absl::Status s =
          OutputDir::CheckInputs(args.out_dir, layout, {flags.nodes_path, flags.pods_path});
      !s.ok()) {
    return p.UsageError(s.message());
  }
  absl::StatusOr<std::unique_ptr<OutputDir>> outputs = OutputDir::Open(args.out_dir, layout);
  if (!outputs.ok()) return Fail(command, outputs.status().message());

  absl::StatusOr<FillInputs> in = LoadFillInputs(input);
  if (!in.ok()) return Fail(command, in.status().message());
  PodSummaryBuilder builder(in->pods.pods.size());
  absl::StatusOr<PodReplayResult> replayed =
      ReplayOpenb(in->nodes, in->pods, in->fill_pods, options, &builder);
  if (!replayed.ok()) return Fail(command, replayed.status().message());
  absl::StatusOr<PodSummary> r = builder.Finish(*std::move(replayed));
  if (!r.ok()) return Fail(command, r.status().message());
  PodRunInfo info{flags.nodes_path,
                  flags.pods_path,
                  args.out_dir,
                  std::string(PolicyKindName(options.policy)),
                  in->nodes.skipped_rows + in->pods.stats.skipped_rows,
                  in->pods.stats.dropped_unknown_spec,
                  options.sharing,
                  options.sharing_params};
  const PodReplayOutputs out = RenderPodReplay(*r, in->nodes, in->pods, info);
  for (const auto& [name, text] :
       {std::pair<const char*, const std::string&>{"summary.json", out.summary_json},
        {"timeline.csv", out.timeline_csv},
        {"pods.csv", out.pods_csv}}) {
    if (absl::Status s = (*outputs)->Write(name, text); !s.ok()) return Fail(command, s.message());
  }
  if (absl::Status s = (*outputs)->Commit(); !s.ok()) return Fail(command, s.message());
  std::fputs(out.line.c_str(), stdout);
  return kExitOk;
}

}  // namespace hived::sim
