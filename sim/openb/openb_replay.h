// sim/openb/openb_replay.h: the time-based replay of an openb pod list on the fill model
// (`hived-sim run --format openb` and its alias `openb-replay`, whose flags `run` parses:
// sim/cli/run_openb.h). Its outputs are metrics/'s (sim/metrics/pod_summary.h: the
// `PodSink` the caller passes and the summary built from it).
//
// The replay is the engine's (sim/engine/pod_replay.h: event queue, sharing models,
// measurement); this module adapts the fill model (sim/policies/fill_cluster.h, CPU, memory,
// `gpu_spec`, per-GPU shares) and a fill policy (fill_policy.h) as a `ClusterBackend`
// (sim/engine/cluster_backend.h), job i being pod i: a pod is placed on a node that fits it
// (only the node `TryOptions::only_node` names, when set), chosen by the policy, and under
// `exclusive` and `mig` a sharing pod requests what `SharingRequestMilli` gives. `TryStart`
// answers kStarted or kWaiting; `RunGpus` gives the pod's node and GPUs; the allocation and
// fragmentation ratios are in GPU milli (FGD's fragmentation). It has no node failures
// (`SetNodeHealthy` is kUnimplemented) and never preempts (`FinishPreemption` is
// kFailedPrecondition). Deterministic: no randomness but the `random` policy's, seeded.
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_OPENB_OPENB_REPLAY_H_
#define HIVED_SIM_OPENB_OPENB_REPLAY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/engine/cluster_backend.h"
#include "sim/engine/pod_replay.h"
#include "sim/engine/sharing_model.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/fill_policy.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

struct OpenbReplayOptions {
  PolicyKind policy = PolicyKind::kHived;
  uint64_t seed = 42;              // for `random`
  double typical_coverage = 0.95;  // FGD's typical pods, from the whole pod list
  int64_t sample_seconds = 3600;   // timeline step
  SharingMode sharing = SharingMode::kIdeal;
  SharingParams sharing_params;
};

// The fill model of `nodes` placing `pods` (MakeFillPods(list, nodes)) by `options.policy`,
// the requests as `options.sharing` gives them; its job i is pod i (`SimJob::index`).
std::unique_ptr<ClusterBackend> MakeFillBackend(const OpenbNodeList& nodes,
                                                std::vector<FillPod> pods,
                                                const OpenbReplayOptions& options);

// Replays `list` on the fill model (ReplayPods), handing each pod to `sink`. Errors:
// kInvalidArgument (naming the file) when the pod list has no times (the 5-column layout);
// ReplayPods' errors. REQUIRES: `pods` made by MakeFillPods(list, nodes); `sink` not null.
absl::StatusOr<PodReplayResult> ReplayOpenb(const OpenbNodeList& nodes, const OpenbPodList& list,
                                            const std::vector<FillPod>& pods,
                                            const OpenbReplayOptions& options, PodSink* sink);

}  // namespace hived::sim

#endif  // HIVED_SIM_OPENB_OPENB_REPLAY_H_
