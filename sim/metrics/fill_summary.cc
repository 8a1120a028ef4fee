// `hived-sim fill`'s summary.json (sim/metrics/fill_summary.h).
#include "sim/metrics/fill_summary.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "sim/common/json.h"

namespace hived::sim {
namespace {

void WriteSpread(JsonWriter* w, std::string_view key, const FillSpread& s) {
  w->BeginObject(key);
  w->Real("mean", s.mean);
  w->Real("stddev", s.stddev);
  w->Real("min", s.min);
  w->Real("max", s.max);
  w->EndObject();
}

void WriteReasons(JsonWriter* w, std::string_view key, const FillReasonCounts& counts) {
  w->BeginObject(key);
  for (const auto& [name, count] : counts) w->Int(name, count);
  w->EndObject();
}

}  // namespace

FillSpread SpreadOf(const std::vector<double>& v) {
  FillSpread s;
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

std::string FillSummaryJson(const FillSummary& s) {
  std::vector<double> ratio, unallocated, frag, failed;
  for (const FillSeedFigures& r : s.per_seed) {
    ratio.push_back(r.allocation_ratio);
    unallocated.push_back(r.unallocated_gpus);
    frag.push_back(r.fragmentation);
    failed.push_back(static_cast<double>(r.failed_pods));
  }
  const FillSpread ratio_spread = SpreadOf(ratio);
  JsonWriter w;
  w.BeginObject();
  w.String("command", "fill");
  w.String("format", "openb");
  w.String("nodes_file", s.nodes_file);
  w.String("pods_file", s.pods_file);
  w.String("policy", s.policy);
  w.String("note", s.note);
  w.Real("inflate", s.inflate);
  w.String("workload", s.workload);
  w.Real("typical_coverage", s.typical_coverage);
  w.BeginArray("seeds");
  for (uint64_t seed : s.seeds) w.IntElement(static_cast<int64_t>(seed));
  w.EndArray();
  w.Real("allocation_ratio", ratio_spread.mean);
  WriteSpread(&w, "allocation_ratio_spread", ratio_spread);
  WriteSpread(&w, "unallocated_gpus", SpreadOf(unallocated));
  WriteSpread(&w, "fragmentation", SpreadOf(frag));
  WriteSpread(&w, "failed_pods", SpreadOf(failed));
  WriteReasons(&w, "failed_pods_by_reason_all_seeds", s.failed_all_seeds);
  const OpenbNodeList& nodes = *s.nodes;
  w.BeginObject("cluster");
  w.Int("nodes", static_cast<int64_t>(nodes.nodes.size()));
  w.Int("gpu_nodes", nodes.gpu_nodes);
  w.Int("gpus", nodes.total_gpus);
  w.BeginArray("models");
  for (size_t m = 0; m < nodes.models.size(); ++m) {
    w.BeginObject();
    w.String("model", nodes.models[m]);
    w.Int("gpus", nodes.model_gpus[m]);
    w.EndObject();
  }
  w.EndArray();
  w.Int("skipped_rows", nodes.skipped_rows);
  w.EndObject();
  const OpenbPodStats& st = *s.pods;
  w.BeginObject("pod_list");
  w.Int("pods", st.pods);
  w.Int("cpu_only", st.cpu_only);
  w.Int("sharing", st.sharing);
  w.Int("whole_gpu", st.whole_gpu);
  w.Real("gpu_demand", static_cast<double>(st.total_gpu_milli) / s.capacity_milli);
  w.Int("with_gpu_spec", st.with_gpu_spec);
  w.Int("gpu_spec_with_unknown_model", st.unknown_spec_model);
  w.Int("gpu_spec_repeated_model", st.duplicate_spec);
  w.Int("zero_memory", st.zero_memory);
  w.Bool("has_times", st.has_times);
  w.Int("pending", st.pending);
  w.Int("censored_running", st.censored);
  w.Int("skipped_rows", st.skipped_rows);
  w.Int("dropped_gpu_spec_without_cluster_model", st.dropped_unknown_spec);
  w.EndObject();
  w.BeginArray("per_seed");
  for (const FillSeedFigures& r : s.per_seed) {
    w.BeginObject();
    w.Int("seed", static_cast<int64_t>(r.seed));
    w.Real("allocation_ratio", r.allocation_ratio);
    w.Real("unallocated_gpus", r.unallocated_gpus);
    w.Real("fragmentation", r.fragmentation);
    w.Int("arrived_pods", r.arrived_pods);
    w.Real("arrived_demand", r.arrived_demand);
    w.Int("placed_pods", r.placed_pods);
    w.Int("failed_pods", r.failed_pods);
    w.Int("failed_gpu_milli", r.failed_gpu_milli);
    WriteReasons(&w, "failed_by_reason", r.failed_by_reason);
    w.Int("typical_pods", r.typical_pods);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Finish();
}

}  // namespace hived::sim
