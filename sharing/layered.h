// sharing/layered.h: the scheduler behind `hived::Scheduler`: GPU sharing as a layer strictly
// above the whole-GPU core (docs/architecture.md, "GPU sharing: a layer above the core").
//
// `LayeredScheduler` owns the whole-GPU core (`SchedulerImpl`, src/scheduler_impl.h) and
// `Sharing` (sharing/sharing.h: fractional, MIG and host groups, and the holder groups that
// open GPUs for them). Every public call enters here:
//  - a request or group that `Sharing::Handles` (a fractional, MIG or host request, a
//    fractional or host group's name, a holder's name) goes to Sharing, which calls the
//    core downward for its holders; anything else goes to the core;
//  - a whole-GPU Schedule's victims and cancellations naming holders are translated to the
//    groups sharing their GPUs (Sharing::TranslateVictims / TranslateCancelled);
//  - the views merge Sharing's data into the core's: per leaf its shares and MIG instances
//    (PhysicalCluster, PhysicalNode, PhysicalChain), per chain the MIG counters (the chain
//    summaries), the fractional and CPU-only groups' statuses (GetGroup, Groups);
//  - SaveState, Restore and GetGroupRecord compose the core's records with Sharing's;
//    CheckInvariants checks the core's, then Sharing's.
//
// The dependency points one way: the core includes nothing of Sharing or of this layer and
// has no hook, flag or back-pointer. What Sharing needs of the core is a type of its own,
// `WholeGpuCore` (src/core_for_layer.h, owned by the core): Sharing holds one, never a
// `SchedulerImpl*`, so a new call to the core is a change to that header. Among its calls,
// `SetShields`: the reserved shares' marker (a running holder whose GPUs carry a reserved
// share is never a victim: a decision that would take its leaves waits, sharing/sharing.h
// invariant 8), which Sharing keeps current (`Sharing::SyncShields`) before every core
// Schedule.
//
// Invariants: those of the core (scheduler_impl.h) and of Sharing (sharing.h); and
//  (L1) the core's shields are exactly Sharing's reserved shares per holder whenever the
//       core decides (checked by CheckInvariants: Sharing::CheckShields).
//
// Thread safety: not thread-safe; `hived::Scheduler` serialises (src/scheduler.cc).
#ifndef HIVED_SHARING_LAYERED_H_
#define HIVED_SHARING_LAYERED_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/schedule_result.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "hived/types.h"

namespace hived {

class SchedulerImpl;
class Sharing;

class LayeredScheduler {
 public:
  static absl::StatusOr<std::unique_ptr<LayeredScheduler>> Create(const ClusterSpec& spec);
  ~LayeredScheduler();
  LayeredScheduler(const LayeredScheduler&) = delete;
  LayeredScheduler& operator=(const LayeredScheduler&) = delete;

  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase);
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement);
  absl::Status Release(std::string_view group);
  absl::Status CancelPreemption(std::string_view group);
  absl::Status Unreserve(std::string_view group);
  absl::StatusOr<AllocateInfo> Recover(const GroupRequest& request, const Placement& placement);
  absl::Status SetNodeHealthy(std::string_view node, bool healthy);
  // Pods and reservations with time (src/pods.cc, src/reservation_clock.cc): whole-GPU
  // groups only; a group sharing GPUs (fractional, MIG, CPU-only, or a holder's name) has
  // no per-pod calls (kFailedPrecondition) and its reservation no time.
  absl::StatusOr<PodAllocation> AllocatePod(const GroupRequest& request, const Placement& placement,
                                            const Pod& pod);
  absl::StatusOr<PodRelease> ReleasePod(std::string_view group, std::string_view pod);
  absl::StatusOr<PodStatus> GetPod(std::string_view group, std::string_view pod) const;
  absl::StatusOr<PodAllocation> RecoverPod(const GroupRecord& record, const Pod& pod);
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase,
                                          const ReservationTime& time);
  std::vector<ExpiredReservation> ExpireReservations(int64_t now);

  GroupStatus GetGroup(std::string_view group) const;
  std::vector<GroupStatus> Groups() const;
  std::vector<PhysicalCellStatus> PhysicalCluster() const;
  absl::StatusOr<std::vector<VirtualCellStatus>> VirtualCluster(std::string_view vc) const;
  std::vector<VcUsage> VcUsages() const;
  std::vector<ChainLevelCapacity> Capacity() const;
  std::vector<NodeStatus> Nodes() const;
  PhysicalClusterTable PhysicalClusterAsTable() const;
  absl::StatusOr<std::vector<NodeStatus>> GetNode(std::string_view node) const;
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalNode(std::string_view node) const;
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalChain(std::string_view chain) const;
  std::vector<ChainSummary> ChainSummaries() const;
  absl::StatusOr<ChainSummary> GetChainSummary(std::string_view chain) const;
  std::vector<VcSummary> VcSummaries() const;
  absl::StatusOr<std::vector<VcSummary>> GetVcSummary(std::string_view vc) const;
  const ClusterSpec& spec() const;
  std::string ConfigFingerprint() const;  // SchedulerImpl::ConfigFingerprint
  absl::Status CheckInvariants() const;

  // Threads and the change log (src/filter.cc, src/scheduler_changes.cc; the façade's
  // locking, src/scheduler.cc). `Filter`: the const Filtering decision of a new whole-GPU
  // group, nullopt when the call takes the exclusive path (a request Sharing handles, or
  // any while a reserved share shields a group: shields are refreshed only by writers).
  std::optional<absl::StatusOr<ScheduleResult>> Filter(const GroupRequest& request) const;
  uint64_t epoch() const;
  uint64_t version() const;
  absl::StatusOr<StateChanges> Changes(uint64_t since) const;
  // One page of `Groups()`: the core's and Sharing's groups merged by name.
  std::vector<GroupStatus> Groups(std::string_view after, int32_t limit) const;
  void EndChange(uint64_t epoch_before, bool changed, std::string_view group,
                 const ScheduleResult* result = nullptr);
  void NoteNodeChanged(std::string_view node);
  // Drops what building or restoring noted, with a change log of `capacity` entries
  // (SchedulerOptions); and that capacity.
  void ResetChangeLog(size_t capacity);
  size_t change_log_capacity() const;

  // The fast path (src/fast_path.cc, sharing/layered_fast_path.cc, hived/fast_path.h): whole-GPU
  // groups only.
  absl::Status ScheduleAndAllocate(const GroupRequest& request, FastResult* out);
  absl::Status Release(GroupHandle handle);
  absl::StatusOr<GroupHandle> HandleOf(std::string_view group) const;
  absl::StatusOr<std::string> GroupName(GroupHandle handle) const;
  int32_t NodeCount() const;
  std::string_view NodeName(int32_t node) const;
  std::string_view ChainName(int32_t chain) const;

  // Persistence (sharing/layered_state.cc, docs/state-format.md).
  std::string SaveState() const;
  // A fractional group's record comes from Sharing; a holder has none (kFailedPrecondition).
  absl::StatusOr<GroupRecord> GetGroupRecord(std::string_view group) const;
  // The recovery of one record (AllocateRecord); `ignored_leaves`: as SchedulerImpl's.
  absl::StatusOr<AllocateInfo> RestoreGroup(const GroupRecord& rec, int32_t* ignored_leaves);
  static absl::StatusOr<std::unique_ptr<LayeredScheduler>> Restore(const ClusterSpec& spec,
                                                                   std::string_view state,
                                                                   RestoreReport* report,
                                                                   RestoreOptions options = {});

 private:
  LayeredScheduler() = default;
  // After a call Sharing answered: the core's shields made current (L1); `result` returned.
  template <typename T>
  T Synced(T result) {
    SyncShields();
    return result;
  }
  void SyncShields();
  // Sharing's Schedule, its group noted in the change log when the call ended or began it.
  absl::StatusOr<ScheduleResult> ScheduleShared(const GroupRequest& request, Phase phase);
  bool SharesGpus(std::string_view group) const;
  // Sharing's shares and MIG instances filled into the leaves of `s`, the status of cell
  // `cell` and its subtree (the core's tree mirrors the forest).
  void FillLeaves(uint32_t cell, PhysicalCellStatus* s) const;
  void FillChain(ChainSummary* s) const;

  std::unique_ptr<SchedulerImpl> whole_;  // the whole-GPU core
  std::unique_ptr<Sharing> sharing_;      // above it: calls `whole_` downward only
};

}  // namespace hived

#endif  // HIVED_SHARING_LAYERED_H_
