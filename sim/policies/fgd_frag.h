// sim/policies/fgd_frag.h: FGD's fragmentation measure (Weng et al., ATC '23), as its published
// simulator computes it.
//
// The *typical pods* are the most common pod shapes (CPU, GPU share, GPU count, allowed
// models) of the workload, most common first, taken until they cover 95% of the pods, with
// their popularity renormalised to sum to 1. For one node, a typical pod contributes its
// popularity times
//   - the free milli of the node's GPUs that are too small for it, if the pod fits the node
//     (its model is allowed, enough GPUs have its share free, the node has its CPU);
//   - all the node's free GPU milli otherwise, and also for CPU-only pods (no GPU use).
// The node's fragmentation is the sum; the cluster's is the sum over nodes. Host memory is
// not part of the measure (the published one ignores it too).
//
// Invariants: (1) typical weights are positive and sum to 1; (2) 0 <= NodeFrag <= the node's
// free milli; (3) a node without free GPU milli has fragmentation 0.
//
// Example:
//   FragMeasure frag(TypicalPods(workload, 0.95), model_count);
//   double f = frag.NodeFrag(cluster.node(n).model, cluster.node(n).cpu_left,
//                            cluster.gpu_left(n), cluster.node(n).gpus);
//
// Thread safety: immutable after construction.
#ifndef HIVED_SIM_POLICIES_FGD_FRAG_H_
#define HIVED_SIM_POLICIES_FGD_FRAG_H_

#include <cstdint>
#include <vector>

#include "sim/policies/fill_cluster.h"

namespace hived::sim {

struct TypicalPod {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  // per GPU; 0 for CPU-only pods
  int32_t num_gpu = 0;
  uint64_t model_mask = ~uint64_t{0};
  double weight = 0;  // popularity, normalised over the typical pods
};

// The typical pods of `workload` covering `coverage` (0..1] of its pods. Ties in popularity
// go to the larger shape first (CPU, then share, then count, then mask), as in the
// published simulator's sort.
std::vector<TypicalPod> TypicalPods(const std::vector<FillPod>& workload, double coverage);

class FragMeasure {
 public:
  // `model_count`: the number of GPU models of the node list (node models 0..count-1).
  FragMeasure(const std::vector<TypicalPod>& typical, int32_t model_count);

  // The fragmentation (milli) of a node of GPU model `model` (-1: no GPUs) with `cpu_left`
  // millicores and GPUs `gpu_left[0..gpus)` free milli.
  double NodeFrag(int32_t model, int64_t cpu_left, const int32_t* gpu_left, int32_t gpus) const;

 private:
  // Typical GPU pods of one (share, count) accessible to a model, by CPU request.
  struct Group {
    int32_t gpu_milli = 0;
    int32_t num_gpu = 0;
    std::vector<int64_t> cpu;  // ascending
    std::vector<double> cum;   // cum[i]: weight of cpu[0..i]
    double total = 0;
  };
  // Per model: the weight for which every free milli counts (CPU-only and inaccessible
  // typical pods), and the groups.
  std::vector<double> whole_weight_;
  std::vector<std::vector<Group>> groups_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_FGD_FRAG_H_
