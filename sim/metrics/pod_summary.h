// sim/metrics/pod_summary.h: the summary of a pod-level replay (sim/engine/pod_replay.h; `run
// --format openb` and its alias `openb-replay`) and what it writes: summary.json,
// timeline.csv, pods.csv and the one-line summary for stdout. The job replay's are in
// metrics.h; as there, the engine hands each final pod to a sink (`PodSummaryBuilder`, a
// `PodSink`) and its counts, integrals and timeline at the end (`PodReplayResult`), and the
// builder makes the summary:
//   - waits (over placed pods: placement - creation) and slowdowns (over the pods that ask
//     for GPUs and have work, i.e. scheduled in the trace and placed here) are `Samples`
//     (samples.h); their p50 is sorted[n/2], their p99 sorted[min(n-1, n*99/100)] (not
//     nearest rank), their mean the sum in ascending order / n; a pod is slowed when its
//     slowdown > 1.001;
//   - the mean sharing degree is the busy-GPU seconds weighted by degree / busy-GPU seconds,
//     the maximum the highest degree with busy time.
//
// Example:
//   PodSummaryBuilder builder(list.pods.size());
//   absl::StatusOr<PodReplayResult> r = ReplayOpenb(nodes, list, pods, options, &builder);
//   absl::StatusOr<PodSummary> summary = builder.Finish(*std::move(r));
//   PodReplayOutputs out = RenderPodReplay(*summary, nodes, list, info);
//
// Invariants:
//   1. Equal inputs give byte-equal outputs; summary.json is written by the one `JsonWriter`
//      (sim/common/json.h: valid UTF-8 JSON whatever the file names hold), its figures exact
//      (`JsonWriter::Real`) where the job summary rounds them.
//   2. pods.csv has one row per pod of the list, in list order, with `PodRun` i for pod i.
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_METRICS_POD_SUMMARY_H_
#define HIVED_SIM_METRICS_POD_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/engine/pod_replay.h"
#include "sim/engine/sharing_model.h"
#include "sim/metrics/samples.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

// The replay's measures (`PodReplayResult`) with the per-pod runs and their statistics.
struct PodSummary : PodReplayResult {
  std::vector<PodRun> runs;  // per pod, in list order
  double mean_wait = 0;      // seconds, over placed pods
  int64_t p50_wait = 0, p99_wait = 0, max_wait = 0;
  // Slowdown over the scheduled GPU pods placed here with work > 0.
  int64_t slowdown_pods = 0, slowed_pods = 0;  // slowed: slowdown > 1.001
  double mean_slowdown = 0, p50_slowdown = 0, p99_slowdown = 0, max_slowdown = 0;
  // The GPU sharing degree's mean (time-weighted over busy GPUs) and maximum.
  double mean_degree = 0;
  int32_t max_degree = 0;
};

// Collects each final pod of a replay and makes its `PodSummary`. Memory: one `PodRun` per
// pod (pods.csv is in list order) and the waits' and slowdowns' distinct values.
// Not thread-safe; one builder per replay.
class PodSummaryBuilder : public PodSink {
 public:
  explicit PodSummaryBuilder(size_t pods) : runs_(pods), added_(pods, false) {}
  // Errors: kInternal for a pod outside the list or handed twice.
  absl::Status Add(const FinishedPod& pod) override;
  // The summary of the pods added and the replay's measures `replay`. Errors: kInternal
  // when not every pod was added. Leaves the builder empty.
  absl::StatusOr<PodSummary> Finish(PodReplayResult replay);

 private:
  std::vector<PodRun> runs_;
  std::vector<bool> added_;
  size_t added_count_ = 0;
  Samples waits_;
  RealSamples slowdowns_;
  int64_t slowed_ = 0;
};

// What summary.json and the line say about the run beside its figures.
struct PodRunInfo {
  std::string nodes_file;
  std::string pods_file;
  std::string out_dir;  // named by the line
  std::string policy;
  int64_t skipped_rows = 0;          // of the node and pod lists
  int64_t dropped_unknown_spec = 0;  // pods whose GPU model the cluster lacks
  SharingMode sharing = SharingMode::kIdeal;
  SharingParams sharing_params;
};

struct PodReplayOutputs {
  std::string summary_json;  // summary.json
  std::string timeline_csv;  // timeline.csv: allocation, fragmentation, pods per sample
  std::string pods_csv;      // pods.csv: each pod's placement, run and slowdown
  std::string line;          // ends with a newline
};

// Renders `r`, the replay of `pods` on `nodes`. REQUIRES: `r.runs` has one entry per pod of
// `pods`, and the placed ones name nodes of `nodes`.
PodReplayOutputs RenderPodReplay(const PodSummary& r, const OpenbNodeList& nodes,
                                 const OpenbPodList& pods, const PodRunInfo& info);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_POD_SUMMARY_H_
