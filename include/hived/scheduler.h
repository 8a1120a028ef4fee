// hived/scheduler.h: the HiveD scheduler façade.
//
// A `Scheduler` owns the physical cell forest, the virtual clusters and every live group.
// It places gangs inside their VC's reserved cells (guaranteed, priority 0..1000) or on any
// idle cell (opportunistic, priority -1), binds virtual cells to physical cells lazily by
// buddy allocation, preempts lower-priority work when asked, avoids bad nodes, and rebuilds
// its state from persisted placements after a restart.
//
// "Cannot place now" is a `ScheduleResult`, not an error. `absl::Status` errors mean misuse:
//   kInvalidArgument   a malformed request (priority out of range, empty gang, ...)
//   kNotFound          an unknown VC, group, node, leaf type or pinned cell
//   kAlreadyExists     a group name that is already live
//   kFailedPrecondition a call that does not fit the group's state
//
// Example:
//   auto spec = hived::LoadClusterSpecFile("cluster.yaml");
//   auto scheduler = hived::Scheduler::Create(*spec);
//   hived::GroupRequest req{.name = "g1", .vc = "VC1", .members = {{1, 8}}};
//   auto result = (*scheduler)->Schedule(req, hived::Phase::kPreempting);
//   if (result.ok() && result->outcome == hived::Outcome::kPlaced)
//     (void)(*scheduler)->Allocate(req, result->placement);
//
// Thread safety: not thread-safe; callers serialize. Different schedulers share nothing.
#ifndef HIVED_SCHEDULER_H_
#define HIVED_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/export.h"
#include "hived/schedule_result.h"
#include "hived/status_view.h"
#include "hived/types.h"

namespace hived {

class SchedulerImpl;

class HIVED_EXPORT Scheduler {
 public:
  // Validates `spec` (the same checks as `ValidateClusterSpec`) and builds the scheduler.
  // Every node starts healthy. Errors: kInvalidArgument naming the first problems.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const ClusterSpec& spec);

  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Finds a placement for a new group. In `Phase::kPreempting` a placement that needs
  // victims reserves its cells and the group becomes Preempting until `Allocate` (after the
  // victims are released) or `CancelPreemption`. Scheduling a group that is already
  // Preempting re-checks its reservation. `Phase::kFiltering` never changes state.
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase);

  // Records that the group runs at `placement`: after a kPlaced result, after a Preempting
  // group's victims are gone, or when replaying persisted placements after a restart (any
  // order). A recovered group that no longer fits its VC keeps running, downgraded to
  // opportunistic; the returned info says so.
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement);

  // Ends a running (or being-preempted) group and frees its cells.
  absl::Status Release(std::string_view group);

  // Gives up a Preempting group's reservation; victims not yet gone keep their cells.
  absl::Status CancelPreemption(std::string_view group);

  // Marks a node bad or healthy. Bad nodes are avoided; a VC that cannot be backed by
  // healthy cells sees bad virtual cells.
  absl::Status SetNodeHealthy(std::string_view node, bool healthy);

  // Views, for status pages and metrics.
  GroupStatus GetGroup(std::string_view group) const;  // state kAbsent when unknown
  std::vector<GroupStatus> Groups() const;             // sorted by name
  std::vector<PhysicalCellStatus> PhysicalCluster() const;
  absl::StatusOr<std::vector<VirtualCellStatus>> VirtualCluster(std::string_view vc) const;
  std::vector<VcUsage> VcUsages() const;             // in config order
  std::vector<ChainLevelCapacity> Capacity() const;  // per chain and level
  std::vector<NodeStatus> Nodes() const;             // in config order
  const ClusterSpec& spec() const;

  // Checks the invariants listed in design.md (and the allocator's own); returns the first
  // violation as kInternal.
  absl::Status CheckInvariants() const;

 private:
  explicit Scheduler(std::unique_ptr<SchedulerImpl> impl);
  std::unique_ptr<SchedulerImpl> impl_;
};

}  // namespace hived

#endif  // HIVED_SCHEDULER_H_
