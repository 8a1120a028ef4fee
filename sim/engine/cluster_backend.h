// sim/engine/cluster_backend.h: what the engine asks of a cluster, whatever the sharing policy.
//
// The engine owns time, queues and jobs; a `ClusterBackend` owns placement. It is the one
// seam of both replays: the job backends (sim/policies/scheduler_backend.h) wrap
// `hived::Scheduler` for every job policy of the registry (sim/policies/policy_registry.h)
// under the job replay (engine.h); the fill model (sim/openb/openb_replay.h) places openb
// pods under the pod replay (pod_replay.h), a pod being a one-member job. Tests may use a
// hand-checkable backend.
//
// Protocol per job: `TryStart` -> kStarted (running), kWaiting, kInfeasible (never), or
// kPreempting with victims; the engine then `Release`s every victim and calls
// `FinishPreemption`, after which the job runs. A running job ends with `Release`. The fill
// model only answers kStarted or kWaiting.
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_CLUSTER_BACKEND_H_
#define HIVED_SIM_ENGINE_CLUSTER_BACKEND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/schedule_result.h"
#include "sim/trace/job.h"

namespace hived::sim {

// A run's nodes, sorted and unique; inline up to four (no allocation for most runs).
using NodeList = absl::InlinedVector<int32_t, 4>;

// A job resolved against the config: what a backend needs to place it. 48 bytes, nothing
// padded (a million jobs: 48 MB).
struct SimJob {
  JobIndex index = 0;
  int32_t vc = 0;  // index of the VC in config order; -1 when unknown (rejected job)
  Priority priority = 0;
  int32_t gpus = 0;
  GangMembers members;
  // The trace row's interned names (`Engine::Run`'s trace's `NameTable`): valid while that
  // trace lives, which covers the replay; read by the backends during it, never after. One
  // pointer each: 16 bytes a job instead of 64 for copies or 32 for views.
  Name gpu_type;
  Name pinned_cell;  // HiveD's pinnedCellId; empty = the VC's virtual cells
};

// How the engine asks for a start (per attempt, so not in the job: a `SimJob` is 48 bytes).
struct TryOptions {
  bool allow_overflow = false;  // a guaranteed job that must wait may run opportunistically
  // The job has waited at least the policy's `ReclaimAfter()`, so it may preempt borrowers
  // (a pool policy with a preemption monitor).
  bool may_reclaim = false;
  // >= 0: start the job on this node (an index of `nodes()`) or not at all (the pod replay's
  // retry on the node a departure freed); -1: anywhere. A backend that cannot honour it
  // refuses the attempt with kInvalidArgument.
  int32_t only_node = -1;
};

struct StartAttempt {
  enum class Kind { kStarted, kPreempting, kWaiting, kInfeasible };
  Kind kind = Kind::kWaiting;
  std::vector<JobIndex> victims;  // kPreempting: jobs to release first
  // kInfeasible: why it can never run. kWaiting: the scheduler's reason when it was asked;
  // empty when the backend's own cheap checks answered (the engine reports no waiting
  // reasons, and these answers are the most frequent: no string built per attempt).
  std::string reason;
  bool opportunistic = false;  // kStarted/kPreempting: runs at priority -1
};

// Where a running job sits at GPU granularity: GPUs `mask` (bit i: the node's GPU i) of node
// `node`, whose first GPU has index `first_gpu` among the cluster's `total_gpus()`. A backend
// that does not model single GPUs answers node -1 and mask 0; so does a job not running, or
// one without GPUs (a CPU-only pod: its node, mask 0).
struct JobGpus {
  int32_t node = -1;
  int32_t first_gpu = 0;
  uint64_t mask = 0;
};

// Counts used and fragmented GPUs per node as placements come and go.
// Invariants: (1) 0 <= used[n] <= capacity[n]; (2) used_total == sum(used);
// (3) fragmented_free == sum of capacity[n] - used[n] over nodes with 0 < used[n] < capacity[n].
class NodeUsage {
 public:
  explicit NodeUsage(std::vector<int32_t> capacity);
  void Add(int32_t node, int32_t gpus);
  void Remove(int32_t node, int32_t gpus);
  int64_t used() const { return used_total_; }
  int64_t capacity() const { return capacity_total_; }
  int32_t used_on(int32_t node) const { return used_[static_cast<size_t>(node)]; }
  int32_t capacity_of(int32_t node) const { return capacity_[static_cast<size_t>(node)]; }
  // Free GPUs on partly used nodes: they cannot host a full-node pod.
  int64_t fragmented_free() const { return fragmented_free_; }

 private:
  int64_t FragmentOf(size_t node) const;
  std::vector<int32_t> capacity_;
  std::vector<int32_t> used_;
  int64_t used_total_ = 0;
  int64_t capacity_total_ = 0;
  int64_t fragmented_free_ = 0;
};

class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;

  virtual std::string_view policy_name() const = 0;
  // Node names; a node's index here is its id in node events and in `JobNodes`.
  virtual const std::vector<std::string>& nodes() const = 0;

  // Tries to start `job` now: as asked (its own priority), or, when `allow_overflow` and a
  // guaranteed job must wait, opportunistically. Errors are bugs (the run fails).
  virtual absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions& options) = 0;
  // After kPreempting and the release of every victim: runs the job.
  virtual absl::Status FinishPreemption(const SimJob& job) = 0;
  // Ends a running job.
  virtual absl::Status Release(const SimJob& job) = 0;
  virtual absl::Status SetNodeHealthy(int32_t node, bool healthy) = 0;
  // Nodes a running job uses, ascending, without duplicates.
  virtual NodeList JobNodes(JobIndex job) const = 0;
  // A running job's GPUs on one node (`JobGpus`); by default none modelled.
  virtual JobGpus RunGpus(JobIndex /*job*/) const { return {}; }
  // True when a release by one VC can let another VC's guaranteed job start (a shared pool);
  // false when guaranteed capacity is per VC (virtual clusters, or a cluster per VC).
  virtual bool ReleaseHelpsAllVcs() const = 0;
  // True when opportunistic jobs share idle cells across VCs (so any release may help any
  // VC's opportunistic jobs); false when each VC only uses its own cells (a cluster per VC).
  virtual bool SharesIdleCells() const = 0;
  // True when waiting VCs are served least-used first (running GPUs / guarantee = the GPUs
  // of its virtual cells, then VC order), as YARN's Capacity Scheduler orders its queues;
  // false: in VC order.
  virtual bool ServesLeastUsedFirst() const { return false; }
  // GPUs a VC's guaranteed jobs may hold at most (elastic pool policies: the maximum
  // capacity); -1 = its guarantee. For `easy`'s reservations.
  virtual int64_t VcMaxGpus(int32_t /*vc*/) const { return -1; }
  // Seconds a job within its VC's guarantee waits before it may preempt borrowers
  // (a preemption monitor's delay); -1 = never waits for this (no such rule).
  virtual Time ReclaimAfter() const { return -1; }
  // Node ids standing for physical node `physical` when `nodes()` names it otherwise (the
  // private baseline's per-VC copies of the hardware; empty for a node of the config in no
  // private cluster); nullopt = not a node of the config.
  virtual std::optional<std::vector<int32_t>> NodesNamed(std::string_view /*physical*/) const {
    return std::nullopt;
  }
  virtual absl::Status CheckInvariants() const = 0;

  virtual int64_t total_gpus() const = 0;
  // GPUs holding some allocation (a shared GPU counts once).
  virtual int64_t used_gpus() const = 0;
  virtual int64_t fragmented_free_gpus() const = 0;
  // The share of the cluster's GPU capacity allocated, in [0, 1]; by default
  // used_gpus / total_gpus (the fill model: GPU milli allocated / capacity).
  virtual double allocation_ratio() const {
    return Ratio(static_cast<double>(used_gpus()), total_gpus());
  }
  // Fragmentation / capacity; by default fragmented_free_gpus / total_gpus (the fill model:
  // FGD's fragmentation in milli / capacity).
  virtual double fragmentation_ratio() const {
    return Ratio(static_cast<double>(fragmented_free_gpus()), total_gpus());
  }
  // Calls to the scheduler's `Schedule` so far.
  virtual int64_t schedule_calls() const = 0;

 protected:
  static double Ratio(double part, int64_t whole) {
    return whole > 0 ? part / static_cast<double>(whole) : 0.0;
  }
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_CLUSTER_BACKEND_H_
