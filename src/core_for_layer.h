// src/core_for_layer.h: the whole-GPU core as the layer above it sees it (sharing/layered.h,
// docs/architecture.md "GPU sharing: a layer above the core"): the narrow interface, as a type.
//
// `Sharing` (sharing/sharing.h) holds a `WholeGpuCore`, never a `SchedulerImpl*`: what it may
// call on the core is exactly what this class forwards, so a new call to the core is a visible
// change to this header, which the core owns. Every member forwards inline to
// `SchedulerImpl` (no virtual call, no state of its own):
//  - the entry points for holder groups (the groups that open GPUs for sharing): Schedule
//    with a `NodeRoom` and an `Apply`, Allocate, Recover, Release, Unreserve,
//    CancelPreemption, GetGroup, RestoreGroup; each change they make is noted in the change
//    log under the holder's name (the layer's `EndChange` then notes the holder's sharers);
//  - const previews that let the layer decide before it changes anything: PreviewAllocate and
//    PreviewRecover (the decision the call itself runs first, so they cannot differ),
//    UsedLeaves, NodeHealthy, epoch;
//  - the cancellation notes (NoteCancelled, TakeCancelled, CancelledBy);
//  - the shields (SetShields, shields): the reserved shares' marker, sharing/sharing.h (8).
// See `SchedulerImpl` (src/scheduler_impl.h) for each call's contract.
//
// Invariant: (1) `impl_` is non-null and outlives this object (the layer owns both).
//
// Thread safety: as `SchedulerImpl`: not thread-safe; callers serialise.
#ifndef HIVED_SRC_CORE_FOR_LAYER_H_
#define HIVED_SRC_CORE_FOR_LAYER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/schedule_result.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "src/schedule_changed.h"
#include "src/scheduler_impl.h"

namespace hived {

class WholeGpuCore {
 public:
  using Apply = SchedulerImpl::Apply;
  using Shields = SchedulerImpl::Shields;

  explicit WholeGpuCore(SchedulerImpl* core) : impl_(core) {}

  // Holder groups. Each change is noted in the change log under the holder's name, as the
  // façade notes the group its own calls name (src/scheduler_changes.cc): a holder's status
  // changes (reserved to running, say) where its leaves' usage need not.
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase,
                                          const NodeRoom* room, Apply apply) {
    absl::StatusOr<ScheduleResult> out = impl_->Schedule(request, phase, room, apply);
    if (out.ok() && phase == Phase::kPreempting && ScheduleChangedState(out->outcome, *out)) {
      impl_->NoteGroupChanged(request.name);
    }
    return out;
  }
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement) {
    return Noted(request.name, impl_->Allocate(request, placement));
  }
  absl::StatusOr<AllocateInfo> Recover(const GroupRequest& request, const Placement& placement) {
    return Noted(request.name, impl_->Recover(request, placement));
  }
  absl::Status Release(std::string_view group) { return Noted(group, impl_->Release(group)); }
  absl::Status Unreserve(std::string_view group) { return Noted(group, impl_->Unreserve(group)); }
  absl::Status CancelPreemption(std::string_view group) {
    return Noted(group, impl_->CancelPreemption(group));
  }
  GroupStatus GetGroup(std::string_view group) const { return impl_->GetGroup(group); }
  GroupState GetGroupState(std::string_view group) const { return impl_->GetGroupState(group); }
  absl::StatusOr<AllocateInfo> RestoreGroup(const GroupRecord& rec, int32_t* ignored_leaves) {
    return Noted(rec.request.name, impl_->RestoreGroup(rec, ignored_leaves));
  }

  // Const previews: what Allocate and Recover of a holder would return, by the decision
  // those calls run first (nothing changes).
  absl::StatusOr<AllocateInfo> PreviewAllocate(const GroupRequest& request,
                                               const Placement& placement) const {
    return impl_->PreviewAllocate(request, placement);
  }
  absl::StatusOr<AllocateInfo> PreviewRecover(const GroupRequest& request,
                                              const Placement& placement) const {
    return impl_->PreviewRecover(request, placement);
  }
  int32_t UsedLeaves(CellId cell) const { return impl_->UsedLeaves(cell); }
  bool NodeHealthy(NodeId node) const { return impl_->NodeHealthy(node); }
  uint64_t epoch() const { return impl_->epoch(); }

  // Cancellation notes (src/reservations.h).
  void NoteCancelled(std::string_view group, std::string_view by) {
    impl_->cancellations().NoteCancelled(group, by);
  }
  std::string TakeCancelled(std::string_view group) {
    return impl_->cancellations().TakeCancelled(group);
  }
  const std::string* CancelledBy(std::string_view group) const {
    return impl_->cancellations().CancelledBy(group);
  }

  // Shields.
  void SetShields(Shields shields) { impl_->SetShields(std::move(shields)); }
  const Shields& shields() const { return impl_->shields(); }

 private:
  template <typename T>
  T Noted(std::string_view group, T result) {
    if (result.ok()) impl_->NoteGroupChanged(group);
    return result;
  }

  SchedulerImpl* impl_;
};

}  // namespace hived

#endif  // HIVED_SRC_CORE_FOR_LAYER_H_
