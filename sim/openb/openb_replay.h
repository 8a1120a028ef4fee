// sim/openb/openb_replay.h: the time-based replay of an openb pod list on the fill model
// (`hived-sim openb-replay`).
//
// Each pod arrives at its `creation_time` and is placed by a fill policy (fill_policy.h) on
// the same model as the fill experiment (CPU, memory, `gpu_spec`, per-GPU shares). A pod
// that fits nowhere waits; it is retried whenever a pod leaves (only the node that pod freed
// can have become feasible, so a retry costs O(GPUs per node)), in arrival order, and a newer
// pod may pass an older one that does not fit. How long a pod runs comes from the trace:
//   - a pod the trace scheduled runs `deletion_time - scheduled_time` from its placement here;
//     if it is still waiting at the trace end it is reported as never placed;
//   - a Pending pod (never scheduled in the trace) was deleted while waiting: it waits at most
//     until its `deletion_time` and, if placed earlier, runs until then;
//   - a Running pod deleted exactly at the trace end is censored: its run is cut there, and the
//     replay reports how many there are.
// Departures at a time go before arrivals at the same time. Deterministic: no randomness but
// the `random` policy's, seeded.
//
// Sharing (`sharing`, sharing_model.h): a scheduled pod carries its trace runtime as *work*
// (seconds at speed 1.0) and progresses at the speed its GPU's sharing mode gives it, which
// changes whenever a pod arrives on or leaves that GPU; its departure is rescheduled then
// (event-driven, O(pods on the GPU) per change; departure times rounded up to whole
// seconds). A Pending pod still leaves at its deletion time, but occupies its GPU (and slows
// its neighbours) until then. `exclusive` and `mig` change what a sharing pod requests.
//
// Invariants: (1) every pod is placed at most once; (2) placed + never placed == pods;
// (3) the cluster's allocation is back to 0 after the last departure.
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_OPENB_OPENB_REPLAY_H_
#define HIVED_SIM_OPENB_OPENB_REPLAY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/engine/sharing_model.h"
#include "sim/policies/fill_policy.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

struct OpenbReplayOptions {
  FillPolicyKind policy = FillPolicyKind::kHived;
  uint64_t seed = 42;              // for `random`
  double typical_coverage = 0.95;  // FGD's typical pods, from the whole pod list
  int64_t sample_seconds = 3600;   // timeline step
  SharingMode sharing = SharingMode::kIdeal;
  SharingParams sharing_params;
};

// One pod's run in the replay.
struct OpenbPodRun {
  bool placed = false;
  int32_t node = -1;
  int64_t start = 0, end = 0;  // placement and departure times
  int64_t work = 0;            // seconds at speed 1 (the trace's runtime); 0 for Pending pods
  double slowdown = 0;         // (end - start) / work; 0 when not measured (Pending, work 0)
  int32_t max_degree = 0;      // most pods its GPU(s) held at once while it ran (it included)
};

struct OpenbReplayPoint {
  int64_t time = 0;
  double allocation_ratio = 0;
  double fragmentation = 0;  // FGD fragmentation / capacity
  int64_t running = 0;
  int64_t waiting = 0;
};

struct OpenbReplayResult {
  int64_t pods = 0;
  int64_t placed = 0;
  int64_t placed_at_arrival = 0;
  int64_t never_placed = 0;
  int64_t pending_in_trace = 0;     // pods the trace never scheduled
  int64_t pending_placed = 0;       // ... of them placed here before their deletion
  int64_t never_placed_by_end = 0;  // scheduled pods still waiting at the trace end
  int64_t censored = 0;             // Running pods cut at the trace end
  double mean_wait = 0;             // seconds, over placed pods
  int64_t p50_wait = 0, p99_wait = 0, max_wait = 0;
  double mean_allocation_ratio = 0;  // time-weighted from the first arrival to the trace end
  double peak_allocation_ratio = 0;
  int64_t start_time = 0, end_time = 0;
  std::vector<OpenbReplayPoint> timeline;
  std::vector<OpenbPodRun> runs;  // per pod, in list order
  // Slowdown over the scheduled GPU pods placed here with work > 0.
  int64_t slowdown_pods = 0, slowed_pods = 0;  // slowed: slowdown > 1.001
  double mean_slowdown = 0, p50_slowdown = 0, p99_slowdown = 0, max_slowdown = 0;
  // GPU sharing degree: busy-GPU seconds by pods on the GPU (index = degree, [0] unused),
  // their mean (time-weighted over busy GPUs) and the maximum.
  std::vector<double> gpu_seconds_by_degree;
  double mean_degree = 0;
  int32_t max_degree = 0;
};

// Errors: kInvalidArgument (naming the file) when the pod list has no times (the 5-column
// layout). REQUIRES: `pods` made by MakeFillPods(list, nodes).
absl::StatusOr<OpenbReplayResult> ReplayOpenb(const OpenbNodeList& nodes, const OpenbPodList& list,
                                              const std::vector<FillPod>& pods,
                                              const OpenbReplayOptions& options);

// hived-sim openb-replay --nodes NODES.csv --pods PODS.csv [--policy P] --out DIR
int OpenbReplayCommand(int argc, char** argv);

// `hived-sim run --format openb ...` (argv[0] = "run"): when the arguments select the openb
// format (`--format openb` or `--format=openb`), runs OpenbReplayCommand on the other
// arguments and returns its exit code; otherwise returns nullopt and `run` goes on with its
// own trace formats. So `run --format openb --sharing MODE` is the replay with sharing models.
std::optional<int> RunOpenbFormat(int argc, char** argv);

}  // namespace hived::sim

#endif  // HIVED_SIM_OPENB_OPENB_REPLAY_H_
