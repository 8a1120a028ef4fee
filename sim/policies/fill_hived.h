// sim/policies/fill_hived.h: the simulator's model of hived's placement of GPU shares in the
// fill model (`--policy hived-model`), kept for comparison. The library implements the same
// rule for fractional requests (src/share_choice.h), and `--policy hived`, the default of
// `fill` and `openb-replay`, schedules every pod through it (fill_library.h); this model runs
// the rule on the simulator's own cluster model (fill_cluster.h).
//
// The rule: place a pod where the cluster's *stranded* GPU milli grows least. A node's
// stranded milli is the sum of two parts, both in GPU milli:
//   1. shape stranding (FGD's fragmentation, made exact): over the workload's typical pods
//      (the most common (CPU, memory, share, count, models) shapes covering `coverage` of its
//      pods, weighted by popularity), the free milli on GPUs too small for the pod if the pod
//      fits the node, else all the node's free milli. Unlike FGD's, "fits" includes host
//      memory, the score is the change itself (no sigmoid, no rounding to whole numbers), and
//      only the typical pods the node's model can run count (FGD also charges CPU-only pods
//      and pods of other models all free milli, which only adds a constant per model to a
//      placement's change).
//   2. resource stranding: the free GPU milli the node cannot feed with its CPU or host memory
//      at the workload's own ratio (CPU per GPU milli and memory per GPU milli, over all its
//      pods, CPU-only ones included): max(0, free - cpu_left / cpu_ratio, free - memory_left /
//      memory_ratio). FGD's measure sees a node as usable while one typical pod still fits; a
//      node with 8 free GPUs and the CPU for two pods is mostly stranded, and this part says so.
// Ties (equal change, exactly) go to the node with the least free GPU milli, keeping emptier
// nodes whole for multi-GPU pods (HiveD's buddy rule: split the smallest cell that fits), then
// to the first node. On a node, a sharing pod takes the GPU with the least change, ties to the
// tightest GPU, then the first; whole-GPU pods take the first fully free GPUs.
// Everything is derived from the workload; there is no tuned parameter.
//
// Invariants: (1) both parts are in [0, free milli of the node] each, so a node without free
// GPU milli strands nothing; (2) the typical weights of one model are positive and sum to at
// most 1.
//
// Example:
//   std::unique_ptr<FillPolicy> p = MakeHivedFillPolicy(workload, 0.95, models, shapes, nodes);
//   FillChoice c = p->Choose(cluster, pod, feasible);
//
// Thread safety: not thread-safe; one policy per run.
#ifndef HIVED_SIM_POLICIES_FILL_HIVED_H_
#define HIVED_SIM_POLICIES_FILL_HIVED_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/policies/fill_cluster.h"
#include "sim/policies/fill_policy.h"

namespace hived::sim {

// The stranded GPU milli of a node (parts 1 and 2 above), for one workload.
class StrandedMeasure {
 public:
  // `model_count`: GPU models of the node list. A workload without GPU (or CPU, or memory)
  // demand has no resource stranding (for that resource).
  StrandedMeasure(const std::vector<FillPod>& workload, double coverage, int32_t model_count);

  // A node of GPU model `model` (-1: no GPUs) with `cpu_left`, `memory_left` and GPUs
  // `gpu_left[0..gpus)` free milli.
  double Of(int32_t model, int64_t cpu_left, int64_t memory_left, const int32_t* gpu_left,
            int32_t gpus) const;
  // Part 1 only.
  double ShapePart(int32_t model, int64_t cpu_left, int64_t memory_left, const int32_t* gpu_left,
                   int32_t gpus) const;
  double cpu_per_milli() const { return cpu_per_milli_; }
  double memory_per_milli() const { return memory_per_milli_; }

 private:
  struct Typical {
    int64_t cpu = 0, memory = 0;
    int32_t count = 0;
    int32_t share_index = 0;  // into Model::shares
    double weight = 0;
  };
  // The typical GPU pods a model can run.
  struct Model {
    std::vector<Typical> pods;
    std::vector<int32_t> shares;  // distinct shares of `pods`
  };
  std::vector<Model> models_;
  double cpu_per_milli_ = 0, memory_per_milli_ = 0;
};

std::unique_ptr<FillPolicy> MakeHivedFillPolicy(const std::vector<FillPod>& workload,
                                                double coverage, int32_t model_count,
                                                int32_t shape_count, int32_t node_count);

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_FILL_HIVED_H_
