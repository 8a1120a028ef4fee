// sim/metrics/pod_summary.h: what a pod-level replay (sim/engine/pod_replay.h; `run --format
// openb` and its alias `openb-replay`) writes: summary.json, timeline.csv, pods.csv and the
// one-line summary for stdout. The job replay's are in metrics.h.
//
// The figures are `PodReplayResult`'s (definitions there). Invariants:
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

#include "sim/engine/pod_replay.h"
#include "sim/engine/sharing_model.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

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
PodReplayOutputs RenderPodReplay(const PodReplayResult& r, const OpenbNodeList& nodes,
                                 const OpenbPodList& pods, const PodRunInfo& info);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_POD_SUMMARY_H_
