// The outputs of the openb pod replay (`run --format openb`, `openb-replay`): summary.json,
// timeline.csv, pods.csv and the one-line summary. Declared in sim/openb/openb_replay.h.
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/openb/openb_replay.h"
#include "sim/policies/policy_registry.h"

namespace hived::sim {

OpenbReplayOutputs RenderOpenbReplay(const FillInputs& in, const OpenbReplayResult& r,
                                     const OpenbReplayOptions& options,
                                     const OpenbReplayPaths& paths) {
  const SharingParams& params = options.sharing_params;
  nlohmann::ordered_json degree_hours = nlohmann::ordered_json::object();
  for (size_t k = 1; k < r.gpu_seconds_by_degree.size(); ++k) {
    if (r.gpu_seconds_by_degree[k] > 0) {
      degree_hours[std::to_string(k)] = r.gpu_seconds_by_degree[k] / 3600.0;
    }
  }
  nlohmann::ordered_json summary = {
      {"command", "openb-replay"},
      {"nodes_file", paths.nodes_path},
      {"pods_file", paths.pods_path},
      {"policy", std::string(PolicyKindName(options.policy))},
      {"pods", r.pods},
      {"placed", r.placed},
      {"placed_at_arrival", r.placed_at_arrival},
      {"never_placed", r.never_placed},
      {"never_placed_by_trace_end", r.never_placed_by_end},
      {"pending_in_trace", r.pending_in_trace},
      {"pending_in_trace_placed_here", r.pending_placed},
      {"censored_running", r.censored},
      {"skipped_rows", in.nodes.skipped_rows + in.pods.stats.skipped_rows},
      {"dropped_gpu_spec_without_cluster_model", in.pods.stats.dropped_unknown_spec},
      {"wait_seconds",
       {{"mean", r.mean_wait}, {"p50", r.p50_wait}, {"p99", r.p99_wait}, {"max", r.max_wait}}},
      {"allocation_ratio_time_weighted", r.mean_allocation_ratio},
      {"allocation_ratio_peak", r.peak_allocation_ratio},
      {"start_time", r.start_time},
      {"trace_end", r.end_time},
      {"sharing",
       {{"mode", std::string(SharingModeName(options.sharing))},
        {"quantum_s", params.quantum_s},
        {"switch_cost_s", params.switch_s},
        {"uvm_slowdown", params.uvm_slowdown},
        {"mps_interference", params.mps_interference},
        {"tgs_production_slowdown", params.tgs_production_slowdown},
        {"slowdown",
         {{"pods", r.slowdown_pods},
          {"slowed_pods", r.slowed_pods},
          {"mean", r.mean_slowdown},
          {"p50", r.p50_slowdown},
          {"p99", r.p99_slowdown},
          {"max", r.max_slowdown}}},
        {"gpu_sharing_degree",
         {{"mean_over_busy_gpu_time", r.mean_degree},
          {"max", r.max_degree},
          {"busy_gpu_hours_by_degree", degree_hours}}}}}};
  OpenbReplayOutputs out;
  out.summary_json = summary.dump(2) + "\n";
  std::string& csv = out.timeline_csv;
  csv = "time,allocation_ratio,fragmentation,running,waiting\n";
  for (const OpenbReplayPoint& pt : r.timeline) {
    absl::StrAppend(&csv, absl::StrFormat("%d,%.6f,%.6f,%d,%d\n", pt.time, pt.allocation_ratio,
                                          pt.fragmentation, pt.running, pt.waiting));
  }
  std::string& pods_csv = out.pods_csv;
  pods_csv = "name,placed,node,start,end,wait,work,runtime,slowdown,max_sharing_degree\n";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const OpenbPodRun& run = r.runs[i];
    const OpenbPod& pod = in.pods.pods[i];
    if (!run.placed) {
      absl::StrAppend(&pods_csv, pod.name, ",0,,,,,,,,\n");
      continue;
    }
    absl::StrAppend(&pods_csv, pod.name, ",1,", in.nodes.nodes[static_cast<size_t>(run.node)].name,
                    ",", run.start, ",", run.end, ",", run.start - *pod.creation_time, ",",
                    run.work, ",", run.end - run.start, ",",
                    run.slowdown > 0 ? absl::StrFormat("%.4f", run.slowdown) : "", ",",
                    run.max_degree, "\n");
  }
  out.line = absl::StrFormat(
      "%s: %lld pods, %lld placed (%lld at arrival), %lld never placed (%lld Pending in the "
      "trace, %lld of them placed here); %lld censored at the trace end; GPU allocation "
      "%.2f%% time-weighted, %.2f%% peak; sharing %s: mean slowdown %.4f (p99 %.4f, %lld "
      "pods slowed), GPU sharing degree %.2f mean, %d max; wrote "
      "%s/{summary.json,timeline.csv,pods.csv}\n",
      std::string(PolicyKindName(options.policy)).c_str(), static_cast<long long>(r.pods),
      static_cast<long long>(r.placed), static_cast<long long>(r.placed_at_arrival),
      static_cast<long long>(r.never_placed), static_cast<long long>(r.pending_in_trace),
      static_cast<long long>(r.pending_placed), static_cast<long long>(r.censored),
      100 * r.mean_allocation_ratio, 100 * r.peak_allocation_ratio,
      std::string(SharingModeName(options.sharing)).c_str(), r.mean_slowdown, r.p99_slowdown,
      static_cast<long long>(r.slowed_pods), r.mean_degree, r.max_degree, paths.out_dir);
  return out;
}

}  // namespace hived::sim
