// sim/engine/pod_replay.h: the engine's replay of a pod-level trace (an openb pod list,
// sim/trace/openb_reader.h) over a `ClusterBackend` (cluster_backend.h, the job replay's
// seam), with the GPU sharing models (sim/engine/sharing_model.h). `hived-sim openb-replay`
// and `run --format openb` reach it through sim/openb/openb_replay.h, which adapts the fill
// model (sim/policies/) as the backend.
//
// A pod is a one-member job: `SimJob{index = its index in the list, vc = 0, priority 0, gpus
// = its GPUs (0 for a CPU-only pod), members = {1 pod of those GPUs}}`; what it requests
// beside the GPUs (milli, CPU, memory) is the backend's, which models the pod list by
// `SimJob::index`. The backend must answer `TryStart` with kStarted or kWaiting (anything
// else fails the replay) and give a running pod's GPUs through `RunGpus` (without it, the
// pod runs on `JobNodes`' first node and shares no GPU).
//
// The replay runs on the engine's one event loop (sim/engine/event_loop.h), as the job
// replay does: the pods arrive from a feed sorted by (creation time, pod index); departures
// wait in the `EventQueue` (sim/engine/event_queue.h) under `PushOrdered`'s key (pod index,
// generation); at one time departures go before arrivals (`TiePolicy::kHeapFirst`), also a
// departure pushed while handling an arrival of that time.
//
// Each pod arrives at its `creation_time` and is placed by the backend. A pod that fits
// nowhere waits; it is retried whenever a pod leaves (only the node that pod freed can have
// become feasible, so a retry costs O(GPUs per node)), in arrival order, and a newer pod may
// pass an older one that does not fit. How long a pod runs comes from the trace:
//   - a pod the trace scheduled runs `deletion_time - scheduled_time` from its placement here;
//     if it is still waiting at the trace end it is reported as never placed;
//   - a Pending pod (never scheduled in the trace) was deleted while waiting: it waits at most
//     until its `deletion_time` and, if placed earlier, runs until then;
//   - a Running pod deleted exactly at the trace end is censored: its run is cut there, and the
//     replay reports how many there are.
// Departures at a time go before arrivals at the same time. Deterministic: the backend's
// choices are (the `random` fill policy's are seeded).
//
// Sharing: a scheduled pod carries its trace runtime as *work* (seconds at speed 1.0) and
// progresses at the speed its GPU's sharing mode gives it, which changes whenever a pod
// arrives on or leaves that GPU; its departure is rescheduled then (event-driven, O(pods on
// the GPU) per change; departure times rounded up to whole seconds). A Pending pod still
// leaves at its deletion time, but occupies its GPU (and slows its neighbours) until then.
// What a sharing pod requests under `exclusive` and `mig` is the backend's (it places the
// requests `SharingRequestMilli` gives).
//
// Measurement: the replay keeps the counts, the allocation and sharing-degree integrals and
// the timeline, and hands each pod's final `PodRun` to a `PodSink`; waits, slowdowns and
// their statistics are metrics/'s (sim/metrics/pod_summary.h: `PodSummaryBuilder`).
//
// Invariants: (1) every pod is placed at most once and handed to the sink exactly once;
// (2) placed + never placed == pods;
// (3) after the last departure the backend holds no GPU (`used_gpus() == 0`) and its
// `CheckInvariants` passes.
//
// Thread safety: not thread-safe; one replay per thread.
#ifndef HIVED_SIM_ENGINE_POD_REPLAY_H_
#define HIVED_SIM_ENGINE_POD_REPLAY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/engine/cluster_backend.h"
#include "sim/engine/sharing_model.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

struct PodReplayOptions {
  int64_t sample_seconds = 3600;  // timeline step
  SharingMode sharing = SharingMode::kIdeal;
  SharingParams sharing_params;
};

// One pod's run in the replay.
struct PodRun {
  bool placed = false;
  int32_t node = -1;
  int64_t start = 0, end = 0;  // placement and departure times
  int64_t work = 0;            // seconds at speed 1 (the trace's runtime); 0 for Pending pods
  double slowdown = 0;         // (end - start) / work; 0 when not measured (Pending, work 0)
  int32_t max_degree = 0;      // most pods its GPU(s) held at once while it ran (it included)
};

struct PodReplayPoint {
  int64_t time = 0;
  double allocation_ratio = 0;
  double fragmentation = 0;  // FGD fragmentation / capacity
  int64_t running = 0;
  int64_t waiting = 0;
};

// What the replay measured over the whole run (its counts, integrals and timeline); the
// per-pod figures went to the `PodSink` (sim/metrics/pod_summary.h summarises both).
struct PodReplayResult {
  int64_t pods = 0;
  int64_t placed = 0;
  int64_t placed_at_arrival = 0;
  int64_t never_placed = 0;
  int64_t pending_in_trace = 0;      // pods the trace never scheduled
  int64_t pending_placed = 0;        // ... of them placed here before their deletion
  int64_t never_placed_by_end = 0;   // scheduled pods still waiting at the trace end
  int64_t censored = 0;              // Running pods cut at the trace end
  double mean_allocation_ratio = 0;  // time-weighted from the first arrival to the trace end
  double peak_allocation_ratio = 0;
  int64_t start_time = 0, end_time = 0;
  std::vector<PodReplayPoint> timeline;
  // GPU sharing degree: busy-GPU seconds by pods on the GPU (index = degree, [0] unused).
  std::vector<double> gpu_seconds_by_degree;
};

// One pod whose run is final, handed to a `PodSink` once: at its departure when it was
// placed, else when it gave up (at its deletion, or at the trace end).
struct FinishedPod {
  int32_t pod = 0;              // index in the pod list
  int32_t gpus = 0;             // GPUs it asked for; 0 for a CPU-only pod
  int64_t wait = 0;             // placed: seconds from its creation to its placement; else 0
  const PodRun* run = nullptr;  // valid during the call only
};

// Where the pod replay hands each final pod (as the job replay's `JobSink`, engine.h).
class PodSink {
 public:
  virtual ~PodSink() = default;
  // An error stops the replay with it.
  virtual absl::Status Add(const FinishedPod& pod) = 0;
};

// Replays `list` over `backend`, handing every pod to `sink` once. Errors: kInvalidArgument
// (naming the file) when the pod list has no times (the 5-column layout); the backend's
// errors (its `TryStart` and `Release`, its `CheckInvariants` at the end) and the sink's;
// kInternal when an invariant fails or the backend answers neither kStarted nor kWaiting.
// REQUIRES: `backend` models `list`'s pods (job i = pod i), none placed yet; `sink` not null.
absl::StatusOr<PodReplayResult> ReplayPods(const OpenbPodList& list, ClusterBackend* backend,
                                           const PodReplayOptions& options, PodSink* sink);

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_POD_REPLAY_H_
