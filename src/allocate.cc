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

absl::StatusOr<AllocateInfo> SchedulerImpl::Allocate(const GroupRequest& request,
                                                     const Placement& placement) {
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state == GState::kReserved || state == GState::kPreempting) {
      return AllocatePreempting(existing, request, placement);
    }
    return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
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
  // The Filtering decision's leaves are used in place (no copy); nothing below changes them.
  return AllocateFree(request, placement, reservations_.pleaves(), /*filtered=*/true, {}, "");
}

const std::string* SchedulerImpl::PreviewRecoverType(std::string_view vc,
                                                     const std::vector<CellId>& leaves,
                                                     const std::vector<std::string>& types,
                                                     std::string* reason) const {
  const VcId id = vclusters_.FindVc(ToAbsl(vc));
  if (id.IsNil()) return nullptr;
  for (const std::string& type : types) {
    *reason = PreviewBinding(*forest_, *buddy_, vclusters_, id, leaves, type);
    if (reason->empty()) return &type;
  }
  return nullptr;
}

absl::StatusOr<AllocateInfo> SchedulerImpl::Recover(const GroupRequest& request,
                                                    const Placement& placement,
                                                    int32_t* ignored_leaves) {
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
  ResolvedPlacement resolved;
  HIVED_RETURN_IF_ERROR(ResolvePlacement(
      *forest_, request, placement,
      ignored_leaves != nullptr ? MissingLeaves::kIgnore : MissingLeaves::kError, &resolved));
  std::string notes;
  if (ignored_leaves != nullptr) {
    *ignored_leaves = static_cast<int32_t>(resolved.missing.size());
    if (!resolved.missing.empty()) {
      notes = absl::StrCat("leaf cells not in the cluster are ignored: ",
                           absl::StrJoin(resolved.missing, ", "));
    }
  }
  return AllocateFree(request, placement, resolved.leaves, /*filtered=*/false, resolved.types,
                      notes);
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

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocateFree(
    const GroupRequest& request, const Placement& placement, const std::vector<CellId>& pleaves,
    bool filtered, const std::vector<const std::string*>& types, const std::string& notes) {
  HIVED_RETURN_IF_ERROR(CheckLeavesFree(request.name, pleaves));
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
  std::string downgrade;
  if (request.priority >= kMinGuaranteedPriority) {
    if (vc.IsNil()) {
      downgrade = absl::StrCat("VC ", request.vc, " does not exist");
    } else if (filtered) {
      // The placement Schedule just returned: bind its virtual cells directly.
      const std::vector<VCellId>& vleaves = reservations_.vleaves();
      NodeKeys keys(this);
      for (size_t i = 0; i < pleaves.size(); ++i) {
        vclusters_.BindLeafPath(vleaves[i], pleaves[i]);
        SetVLeaf(vleaves[i], request.priority, g, &keys);
        grp.vleaves[i] = vleaves[i];
      }
    } else {
      RecoveryRequest recovery;
      recovery.vc = vc;
      recovery.pinned_cell_id = request.pinned_cell_id;
      recovery.leaves = pleaves;
      recovery.types = types;
      recovery.hints = recover_hints_;
      downgrade = RecoverBinding(*forest_, *buddy_, recovery, &vclusters_, &grp.vleaves);
      if (downgrade.empty()) {
        for (VCellId v : grp.vleaves) SetVLeaf(v, request.priority, g);
      }
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
  if (!notes.empty())
    info.reason = info.reason.empty() ? notes : absl::StrCat(info.reason, "; ", notes);
  Settle();
  return info;
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocatePreempting(GroupId g,
                                                               const GroupRequest& request,
                                                               const Placement& placement) {
  Group& grp = groups_[g];
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
  ++epoch_;
  for (CellId p : grp.pleaves) {  // the leaves are held at the group's priority already
    physical_.SetUser(p, g);
    physical_.SetReserver(p, kNilId);
  }
  grp.state = GState::kRunning;
  return AllocateInfo();
}

}  // namespace hived
