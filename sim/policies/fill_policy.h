// sim/policies/fill_policy.h: the placement policies of the FGD fill experiment, implemented from
// the descriptions published with the openb trace (Weng et al., ATC '23) and the scoring rules of
// its simulator: `best-fit`, `gpu-packing`, `gpu-clustering`, `dot-product`, `random` and `fgd`.
// Each scores the feasible nodes of a pod as a whole number (the simulator's 0..100 node scores),
// takes the highest, and breaks ties by node-list order (the first node), as the published artifact
// does; then it picks the GPUs on that node. `fgd-exact` is FGD scored by the fragmentation change
// itself, to show what the artifact's rounding does.
//
// Constants shared with the simulator: leftovers are normalised by 128 CPUs (128000 milli)
// and 8 GPUs (8000 milli), not by the node's own capacity.
//
// `hived`, this project's placement, is the library itself (fill_library.h); `hived-model`,
// the simulator's model of its rule before the library had it, is in fill_hived.h. Both are
// made through MakeFillPolicy.
//
// Example:
//   std::mt19937_64 rng(42);
//   std::unique_ptr<FillPolicy> p = MakeFillPolicy(PolicyKind::kFgd, {&rng, &frag, 92}, n);
//   FillChoice c = p->Choose(cluster, pod, feasible);
//   cluster.Place(pod, c.node, c.gpus);
//   p->Placed(cluster, pod, c);
//
// Thread safety: not thread-safe; one policy per run.
#ifndef HIVED_SIM_POLICIES_FILL_POLICY_H_
#define HIVED_SIM_POLICIES_FILL_POLICY_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/policy_kind.h"

namespace hived::sim {

// A uniform draw in [0, n) from `rng`, without modulo bias and independent of the standard
// library's distributions (whose algorithms differ between implementations). REQUIRES: n > 0.
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n);

struct FillChoice {
  int32_t node = -1;  // -1: the policy declined the pod (`hived`: the library did not place it)
  uint64_t gpus = 0;  // bit i: the node's GPU i
};

// What a policy may use besides the cluster.
struct FillPolicyContext {
  std::mt19937_64* rng = nullptr;                  // `random` only
  const FragMeasure* frag = nullptr;               // `fgd` only
  int32_t shape_count = 0;                         // `fgd`, `hived`: pods' `shape` ids are below it
  const std::vector<FillPod>* workload = nullptr;  // `hived`: the pods that will arrive
  double typical_coverage = 0.95;                  // `hived`: as FGD's typical pods
  int32_t model_count = 0;                         // `hived-model`: GPU models of the node list
  const OpenbNodeList* nodes = nullptr;            // `hived`: the node list (its config)
};

class FillPolicy {
 public:
  virtual ~FillPolicy() = default;
  // The node and GPUs for `pod` among `feasible` (node indices, ascending, every one passing
  // FillCluster::Fits), or node -1 when the policy declines it (only `hived`: the library
  // placed it nowhere). REQUIRES: `feasible` is not empty.
  virtual FillChoice Choose(const FillCluster& cluster, const FillPod& pod,
                            const std::vector<int32_t>& feasible) = 0;
  // Called after `cluster.Place(pod, choice...)`.
  virtual void Placed(const FillCluster& /*cluster*/, const FillPod& /*pod*/,
                      const FillChoice& /*choice*/) {}
  // Called after `cluster.Remove(pod, choice...)` (time-based replay).
  virtual void Removed(const FillCluster& /*cluster*/, const FillPod& /*pod*/,
                       const FillChoice& /*choice*/) {}
  // An error the policy met (`hived`: the library's, or a placement the fill model rejects).
  virtual absl::Status Check() const { return absl::OkStatus(); }
};

// The fill policy `kind` (its registry entry's factory, sim/policies/policy_registry.h).
// REQUIRES: `kind` places pods (PolicyOf(kind).places_pods()); the context fields the policy
// uses are set.
std::unique_ptr<FillPolicy> MakeFillPolicy(PolicyKind kind, const FillPolicyContext& context,
                                           int32_t node_count);

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_FILL_POLICY_H_
