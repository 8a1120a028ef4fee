// sim/policies/fill_cluster.h: the cluster model of the FGD fill experiment (openb trace): nodes
// with CPU (millicores), host memory (MiB) and GPUs of one model, each GPU 1000 milli and tracked
// individually. A sharing pod (one GPU, < 1000 milli) goes on one GPU; a pod of whole GPUs
// takes that many fully free GPUs of one node. Nothing ever leaves (the experiment has no
// departures); the time-based replay (openb_replay.h) also removes.
//
// Invariants (checked by `CheckInvariants`): (1) 0 <= cpu_left <= cpu, 0 <= memory_left <=
// memory for every node; (2) every GPU's free milli is in 0..1000; (3) `allocated_milli()` is
// the capacity minus the sum of free milli; (4) a node's `version` grows by one per placement or
// removal.
//
// Example:
//   FillCluster cluster(nodes);  // from an OpenbNodeList
//   FillPod pod = ...;           // from MakeFillPods
//   if (cluster.Fits(n, pod)) cluster.Place(pod, n, cluster.BestFitGpus(n, pod));
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_POLICIES_FILL_CLUSTER_H_
#define HIVED_SIM_POLICIES_FILL_CLUSTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

// A pod as the fill experiment sees it.
struct FillPod {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;    // per GPU: 1..999 sharing, 1000 whole, 0 CPU-only
  uint64_t model_mask = 0;  // bit m: may run on model m of the node list; all ones = any
  int32_t source = 0;       // index in the pod list
  int32_t shape = 0;        // id of (cpu, share, count) within a workload, for caches
  bool IsSharing() const { return num_gpu == 1 && gpu_milli < kMilliPerGpu; }
  int64_t TotalGpuMilli() const { return static_cast<int64_t>(num_gpu) * gpu_milli; }
};

// Why a pod fitted no node, checked in this order over all nodes.
enum class FillFailure {
  kGpuModel,  // no node of an allowed model has enough GPUs in total
  kGpu,       // no node of an allowed model has the free GPU share(s)
  kCpu,       // ... and the CPU
  kMemory,    // ... and the memory
  kDeclined,  // some node fits it in the fill model, but the policy (the library) declined it
};
std::string_view FillFailureName(FillFailure reason);
inline constexpr int kFillFailureKinds = 5;

// The pods of `list` for `nodes`: `gpu_spec` turned into a model mask over `nodes.models`.
// REQUIRES: CheckPodSpecs(list, nodes) passed. Errors: kInvalidArgument when the node list
// has more than 64 GPU models.
absl::StatusOr<std::vector<FillPod>> MakeFillPods(const OpenbPodList& list,
                                                  const OpenbNodeList& nodes);

class FillCluster {
 public:
  struct Node {
    int64_t cpu = 0, cpu_left = 0;
    int64_t memory = 0, memory_left = 0;
    int32_t model = -1;  // index in the node list's models; -1 without GPUs
    int32_t gpus = 0;
    int32_t first_gpu = 0;  // index of its first GPU in `gpu_left()`
    uint32_t version = 1;   // bumped by every placement on or removal from the node
  };

  explicit FillCluster(const OpenbNodeList& nodes);

  int32_t node_count() const { return static_cast<int32_t>(nodes_.size()); }
  const Node& node(int32_t n) const { return nodes_[static_cast<size_t>(n)]; }
  // The free milli of node `n`'s GPUs, in device order.
  const int32_t* gpu_left(int32_t n) const {
    return gpu_left_.data() + nodes_[static_cast<size_t>(n)].first_gpu;
  }
  int64_t capacity_milli() const { return capacity_milli_; }
  int64_t allocated_milli() const { return allocated_milli_; }
  double allocation_ratio() const {
    return capacity_milli_ == 0
               ? 0.0
               : static_cast<double>(allocated_milli_) / static_cast<double>(capacity_milli_);
  }
  // Free milli of node `n` over all its GPUs.
  int64_t FreeMilli(int32_t n) const;
  // GPUs of node `n` with all 1000 milli free.
  int32_t FullyFreeGpus(int32_t n) const;

  bool ModelAllowed(int32_t n, const FillPod& pod) const;
  // GPU part only: a GPU with the share free, or `num_gpu` fully free GPUs.
  bool FitsGpu(int32_t n, const FillPod& pod) const;
  // Model, GPU, CPU and memory.
  bool Fits(int32_t n, const FillPod& pod) const;
  // The most specific reason no node fits `pod`. REQUIRES: no node fits.
  FillFailure WhyNoFit(const FillPod& pod) const;

  // The GPUs (bit i = the node's GPU i) a pod takes on node `n` under best fit: for a
  // sharing pod the GPU with the least free milli that still fits (lowest index on ties),
  // for whole GPUs the first fully free ones. REQUIRES: FitsGpu(n, pod). 0 for CPU-only pods.
  uint64_t BestFitGpus(int32_t n, const FillPod& pod) const;
  // The first `pod.num_gpu` fully free GPUs. REQUIRES: enough of them.
  uint64_t FirstFreeGpus(int32_t n, const FillPod& pod) const;

  // Calls `visit(gpus, after)` for each distinct way `pod` can take GPUs on node `n`, where
  // `after` is the node's free milli per GPU with the pod placed: once for CPU-only and
  // whole-GPU pods (the first free GPUs), once per fitting GPU for a sharing pod, in device
  // order, skipping a GPU whose free milli equals an earlier one's (same outcome).
  // REQUIRES: FitsGpu(n, pod).
  void ForEachGpuChoice(int32_t n, const FillPod& pod,
                        absl::FunctionRef<void(uint64_t gpus, const int32_t* after)> visit) const;

  // Places `pod` on node `n` taking `gpus` (one bit for a sharing pod, `num_gpu` fully free
  // ones otherwise). REQUIRES: Fits(n, pod) and `gpus` valid for it.
  void Place(const FillPod& pod, int32_t n, uint64_t gpus);
  // Gives back what `Place(pod, n, gpus)` took (time-based replay: the pod ended).
  // REQUIRES: that placement is still in force.
  void Remove(const FillPod& pod, int32_t n, uint64_t gpus);

  absl::Status CheckInvariants() const;

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> gpu_left_;
  int64_t capacity_milli_ = 0;
  int64_t allocated_milli_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_FILL_CLUSTER_H_
