// Allocate and Recover (src/reservations.h, src/recovery.h): running a reserved or
// Preempting group, the Filtering decision, or a placement from elsewhere resolved by name
// with its virtual binding re-derived.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/status_macros.h"
#include "src/recovery.h"
#include "src/scheduler_impl.h"

namespace hived {

absl::Status SchedulerImpl::DecideAllocate(const GroupRequest& request, const Placement& placement,
                                           GroupId* existing, RecoveryDecision* d) const {
  *existing = groups_.Find(request.name);
  if (*existing != kNilId) {
    const Group& grp = groups_[*existing];
    if (grp.state != GState::kReserved && grp.state != GState::kPreempting) {
      return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
    }
    return CheckPreempting(grp, request, placement);
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(request));
  if (!reservations_.MatchesFiltered(request, placement, *forest_, epoch_)) {
    if (const std::string* by = reservations_.CancelledBy(request.name)) {
      return absl::FailedPreconditionError(Reservations::CancelledMessage(request.name, *by));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", request.name,
        " has no reservation: Schedule it first (the Preempting phase reserves a kPlaced "
        "placement; a Filtering one is taken only by the Allocate right after it), or use "
        "Recover for a placement from elsewhere"));
  }
  HIVED_RETURN_IF_ERROR(CheckLeavesFree(request.name, reservations_.pleaves()));
  if (request.priority >= kMinGuaranteedPriority && vclusters_.FindVc(request.vc).IsNil()) {
    d->downgrade = absl::StrCat("VC ", request.vc, " does not exist");
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> SchedulerImpl::Allocate(const GroupRequest& request,
                                                     const Placement& placement) {
  GroupId existing = kNilId;
  RecoveryDecision d;
  HIVED_RETURN_IF_ERROR(DecideAllocate(request, placement, &existing, &d));
  if (existing != kNilId) return AllocatePreempting(existing);
  // The Filtering decision's leaves are used in place (no copy); nothing below changes them.
  return AllocateFree(request, placement, reservations_.pleaves(), /*filtered=*/true, d);
}

absl::StatusOr<AllocateInfo> SchedulerImpl::PreviewAllocate(const GroupRequest& request,
                                                            const Placement& placement) const {
  GroupId existing = kNilId;
  RecoveryDecision d;
  HIVED_RETURN_IF_ERROR(DecideAllocate(request, placement, &existing, &d));
  AllocateInfo info;
  info.downgraded = !d.downgrade.empty();
  info.reason = d.downgrade;
  return info;
}

absl::Status SchedulerImpl::DecideRecover(const GroupRequest& request, const Placement& placement,
                                          bool ignore_missing, RecoveryDecision* d) const {
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state == GState::kReserved || state == GState::kPreempting) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", request.name, " holds a reservation: Allocate it, or Unreserve it first"));
    }
    return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(request));
  HIVED_RETURN_IF_ERROR(ResolvePlacement(
      *forest_, request, placement, ignore_missing ? MissingLeaves::kIgnore : MissingLeaves::kError,
      &d->resolved));
  if (!d->resolved.missing.empty()) {
    d->notes = absl::StrCat("leaf cells not in the cluster are ignored: ",
                            absl::StrJoin(d->resolved.missing, ", "));
  }
  HIVED_RETURN_IF_ERROR(CheckLeavesFree(request.name, d->resolved.leaves));
  if (request.priority >= kMinGuaranteedPriority) {
    const VcId vc = vclusters_.FindVc(request.vc);
    if (vc.IsNil()) {
      d->downgrade = absl::StrCat("VC ", request.vc, " does not exist");
    } else {
      RecoveryRequest recovery;
      recovery.vc = vc;
      recovery.pinned_cell_id = request.pinned_cell_id;
      recovery.leaves = d->resolved.leaves;
      recovery.types = d->resolved.types;
      recovery.hints = recover_hints_;
      d->downgrade = DecideBinding(*forest_, *buddy_, vclusters_, recovery, &d->binding);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> SchedulerImpl::Recover(const GroupRequest& request,
                                                    const Placement& placement,
                                                    int32_t* ignored_leaves) {
  RecoveryDecision d;
  HIVED_RETURN_IF_ERROR(DecideRecover(request, placement, ignored_leaves != nullptr, &d));
  if (d.resolved.leaves.empty() && !d.resolved.missing.empty()) {
    // Never a group on nodes that do not exist: refused as decided, nothing applied.
    return absl::FailedPreconditionError(absl::StrCat(
        "none of its leaf cells is in the cluster (",
        d.downgrade.empty() ? d.notes : absl::StrCat(d.downgrade, "; ", d.notes), ")"));
  }
  if (ignored_leaves != nullptr) *ignored_leaves = static_cast<int32_t>(d.resolved.missing.size());
  return AllocateFree(request, placement, d.resolved.leaves, /*filtered=*/false, d);
}

absl::StatusOr<AllocateInfo> SchedulerImpl::PreviewRecover(const GroupRequest& request,
                                                           const Placement& placement) const {
  RecoveryDecision d;
  HIVED_RETURN_IF_ERROR(DecideRecover(request, placement, /*ignore_missing=*/false, &d));
  AllocateInfo info;
  info.downgraded = !d.downgrade.empty();
  info.reason = d.downgrade;
  return info;
}

absl::Status SchedulerImpl::CheckLeavesFree(std::string_view group,
                                            const std::vector<CellId>& leaves) const {
  for (CellId p : leaves) {
    GroupId u = physical_.user(p);
    GroupId r = physical_.reserver(p);
    if (u != kNilId || r != kNilId) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", ToAbsl(group), ": leaf cell ", forest_->leaf_index(p), " on node ",
          forest_->node_name(forest_->node(p)), " is ", u != kNilId ? "used" : "reserved",
          " by group ", groups_[u != kNilId ? u : r].name));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocateFree(const GroupRequest& request,
                                                         const Placement& placement,
                                                         const std::vector<CellId>& pleaves,
                                                         bool filtered, const RecoveryDecision& d) {
  const VcId vc = vclusters_.FindVc(request.vc);
  ++epoch_;
  reservations_.TakeCancelled(request.name);  // it runs now: an old cancellation is told
  GroupId g = NewGroup(request, vc);
  Group& grp = groups_[g];
  grp.chain = filtered ? reservations_.chain() : forest_->FindChain(placement.chain);
  if (grp.chain.IsNil() && !pleaves.empty()) grp.chain = forest_->chain(pleaves.front());
  grp.pleaves = pleaves;
  grp.vleaves.assign(pleaves.size(), kNilId);
  AllocateInfo info;
  const std::string& downgrade = d.downgrade;
  if (request.priority >= kMinGuaranteedPriority && downgrade.empty()) {
    if (filtered) {
      // The placement Schedule just returned: bind its virtual cells directly.
      const std::vector<VCellId>& vleaves = reservations_.vleaves();
      NodeKeys keys(this);
      for (size_t i = 0; i < pleaves.size(); ++i) {
        vclusters_.BindLeafPath(vleaves[i], pleaves[i]);
        SetVLeaf(vleaves[i], request.priority, g, &keys);
        grp.vleaves[i] = vleaves[i];
      }
    } else {
      ApplyBinding(d.binding, &vclusters_);  // decided over this state (DecideRecover)
      grp.vleaves = d.binding.vleaves;
      for (VCellId v : grp.vleaves) SetVLeaf(v, request.priority, g);
    }
  }
  // A filtered placement is the decision's (MatchesFiltered), unless it names other or no
  // preassigned types (or MIG fields): then, like any other, the group keeps the caller's.
  if (!filtered || !PlacementMatches(grp, placement, /*exact=*/true)) {
    grp.given_placement = std::make_unique<Placement>(placement);
  }
  reservations_.Invalidate();
  Priority prio = request.priority;
  if (!downgrade.empty()) {
    prio = kOpportunisticPriority;
    grp.running = kOpportunisticPriority;
    grp.SetNote(&GroupNotes::downgrade_reason, downgrade);
    info.downgraded = true;
    info.reason = downgrade;
  }
  NodeKeys keys(this);
  for (CellId p : pleaves) {
    physical_.SetUser(p, g);
    SetPLeaf(p, prio, &keys);
  }
  keys.Flush();
  if (!d.notes.empty())
    info.reason = info.reason.empty() ? d.notes : absl::StrCat(info.reason, "; ", d.notes);
  Settle();
  return info;
}

absl::Status SchedulerImpl::CheckPreempting(const Group& grp, const GroupRequest& request,
                                            const Placement& placement) const {
  const bool reserved = grp.state == GState::kReserved;
  std::string diff = Reservations::RequestDifference(grp, request);
  if (diff.empty() && !PlacementMatches(grp, placement)) {
    diff = Reservations::PlacementDifference(PlacementOf(grp), placement);
  }
  if (!diff.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", grp.name, " holds a reservation for another ", "request or placement (", diff,
        "); ", reserved ? "Unreserve" : "CancelPreemption", " it first"));
  }
  if (!reserved) {
    std::vector<std::string> still;
    for (CellId p : grp.pleaves) {
      GroupId u = physical_.user(p);
      if (u != kNilId && std::find(still.begin(), still.end(), groups_[u].name) == still.end()) {
        still.push_back(groups_[u].name);
      }
    }
    if (!still.empty()) {
      std::sort(still.begin(), still.end());
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", grp.name, " still waits for its victims: ", absl::StrJoin(still, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocatePreempting(GroupId g) {
  Group& grp = groups_[g];
  ++epoch_;
  for (CellId p : grp.pleaves) {  // the leaves are held at the group's priority already
    physical_.SetUser(p, g);
    physical_.SetReserver(p, kNilId);
  }
  grp.state = GState::kRunning;
  return AllocateInfo();
}

}  // namespace hived
