// The summary of a pod-level replay and its outputs: PodSummaryBuilder and RenderPodReplay of
// sim/metrics/pod_summary.h.
#include "sim/metrics/pod_summary.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/json.h"

namespace hived::sim {
namespace {

// sorted[n/2] and sorted[min(n-1, n*99/100)] of `samples`. REQUIRES: not empty.
template <typename T>
std::pair<T, T> P50P99(SampleCounts<T>& samples) {
  const size_t n = samples.size();
  return {samples.AtRank(n / 2), samples.AtRank(std::min(n - 1, n * 99 / 100))};
}

std::string SummaryJson(const PodSummary& r, const PodRunInfo& info) {
  const SharingParams& params = info.sharing_params;
  JsonWriter w;
  w.BeginObject();
  w.String("command", "openb-replay");
  w.String("nodes_file", info.nodes_file);
  w.String("pods_file", info.pods_file);
  w.String("policy", info.policy);
  w.Int("pods", r.pods);
  w.Int("placed", r.placed);
  w.Int("placed_at_arrival", r.placed_at_arrival);
  w.Int("never_placed", r.never_placed);
  w.Int("never_placed_by_trace_end", r.never_placed_by_end);
  w.Int("pending_in_trace", r.pending_in_trace);
  w.Int("pending_in_trace_placed_here", r.pending_placed);
  w.Int("censored_running", r.censored);
  w.Int("skipped_rows", info.skipped_rows);
  w.Int("dropped_gpu_spec_without_cluster_model", info.dropped_unknown_spec);
  w.BeginObject("wait_seconds");
  w.Real("mean", r.mean_wait);
  w.Int("p50", r.p50_wait);
  w.Int("p99", r.p99_wait);
  w.Int("max", r.max_wait);
  w.EndObject();
  w.Real("allocation_ratio_time_weighted", r.mean_allocation_ratio);
  w.Real("allocation_ratio_peak", r.peak_allocation_ratio);
  w.Int("start_time", r.start_time);
  w.Int("trace_end", r.end_time);
  w.BeginObject("sharing");
  w.String("mode", SharingModeName(info.sharing));
  w.Real("quantum_s", params.quantum_s);
  w.Real("switch_cost_s", params.switch_s);
  w.Real("uvm_slowdown", params.uvm_slowdown);
  w.Real("mps_interference", params.mps_interference);
  w.Real("tgs_production_slowdown", params.tgs_production_slowdown);
  w.BeginObject("slowdown");
  w.Int("pods", r.slowdown_pods);
  w.Int("slowed_pods", r.slowed_pods);
  w.Real("mean", r.mean_slowdown);
  w.Real("p50", r.p50_slowdown);
  w.Real("p99", r.p99_slowdown);
  w.Real("max", r.max_slowdown);
  w.EndObject();
  w.BeginObject("gpu_sharing_degree");
  w.Real("mean_over_busy_gpu_time", r.mean_degree);
  w.Int("max", r.max_degree);
  w.BeginObject("busy_gpu_hours_by_degree");
  for (size_t k = 1; k < r.gpu_seconds_by_degree.size(); ++k) {
    if (r.gpu_seconds_by_degree[k] > 0) {
      w.Real(std::to_string(k), r.gpu_seconds_by_degree[k] / 3600.0);
    }
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return w.Finish();
}

}  // namespace

absl::Status PodSummaryBuilder::Add(const FinishedPod& pod) {
  const size_t i = static_cast<size_t>(pod.pod);
  if (pod.pod < 0 || i >= runs_.size() || added_[i]) {
    return absl::InternalError(absl::StrCat(
        "pod summary: pod ", pod.pod,
        pod.pod < 0 || i >= runs_.size() ? " is not in the pod list" : " handed over twice"));
  }
  added_[i] = true;
  ++added_count_;
  const PodRun& run = *pod.run;
  runs_[i] = run;
  if (!run.placed) return absl::OkStatus();
  waits_.push_back(pod.wait);
  if (run.work != 0 && pod.gpus != 0) {
    slowdowns_.push_back(run.slowdown);
    if (run.slowdown > 1.001) ++slowed_;
  }
  return absl::OkStatus();
}

absl::StatusOr<PodSummary> PodSummaryBuilder::Finish(PodReplayResult replay) {
  if (added_count_ != runs_.size()) {
    return absl::InternalError(
        absl::StrCat("pod summary: ", added_count_, " of ", runs_.size(), " pods handed over"));
  }
  PodSummary s;
  static_cast<PodReplayResult&>(s) = std::move(replay);
  s.runs = std::move(runs_);
  if (!waits_.empty()) {
    const size_t n = waits_.size();
    s.mean_wait = waits_.SumAscending() / static_cast<double>(n);
    std::tie(s.p50_wait, s.p99_wait) = P50P99(waits_);
    s.max_wait = waits_.Max();
  }
  s.slowdown_pods = static_cast<int64_t>(slowdowns_.size());
  s.slowed_pods = slowed_;
  if (!slowdowns_.empty()) {
    const size_t n = slowdowns_.size();
    s.mean_slowdown = slowdowns_.SumAscending() / static_cast<double>(n);
    std::tie(s.p50_slowdown, s.p99_slowdown) = P50P99(slowdowns_);
    s.max_slowdown = slowdowns_.Max();
  }
  double busy = 0, weighted = 0;
  for (size_t k = 1; k < s.gpu_seconds_by_degree.size(); ++k) {
    busy += s.gpu_seconds_by_degree[k];
    weighted += static_cast<double>(k) * s.gpu_seconds_by_degree[k];
    if (s.gpu_seconds_by_degree[k] > 0) s.max_degree = static_cast<int32_t>(k);
  }
  s.mean_degree = busy > 0 ? weighted / busy : 0;
  runs_.clear();
  added_.clear();
  added_count_ = 0;
  waits_.Clear();
  slowdowns_.Clear();
  slowed_ = 0;
  return s;
}

PodReplayOutputs RenderPodReplay(const PodSummary& r, const OpenbNodeList& nodes,
                                 const OpenbPodList& pods, const PodRunInfo& info) {
  PodReplayOutputs out;
  out.summary_json = SummaryJson(r, info);
  std::string& csv = out.timeline_csv;
  csv = "time,allocation_ratio,fragmentation,running,waiting\n";
  for (const PodReplayPoint& pt : r.timeline) {
    absl::StrAppend(&csv, absl::StrFormat("%d,%.6f,%.6f,%d,%d\n", pt.time, pt.allocation_ratio,
                                          pt.fragmentation, pt.running, pt.waiting));
  }
  std::string& pods_csv = out.pods_csv;
  pods_csv = "name,placed,node,start,end,wait,work,runtime,slowdown,max_sharing_degree\n";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const PodRun& run = r.runs[i];
    const OpenbPod& pod = pods.pods[i];
    if (!run.placed) {
      absl::StrAppend(&pods_csv, pod.name, ",0,,,,,,,,\n");
      continue;
    }
    absl::StrAppend(&pods_csv, pod.name, ",1,", nodes.nodes[static_cast<size_t>(run.node)].name,
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
      info.policy, static_cast<long long>(r.pods), static_cast<long long>(r.placed),
      static_cast<long long>(r.placed_at_arrival), static_cast<long long>(r.never_placed),
      static_cast<long long>(r.pending_in_trace), static_cast<long long>(r.pending_placed),
      static_cast<long long>(r.censored), 100 * r.mean_allocation_ratio,
      100 * r.peak_allocation_ratio, std::string(SharingModeName(info.sharing)), r.mean_slowdown,
      r.p99_slowdown, static_cast<long long>(r.slowed_pods), r.mean_degree, r.max_degree,
      info.out_dir);
  return out;
}

}  // namespace hived::sim
