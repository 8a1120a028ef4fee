// The group table: creating and deleting groups, lazy downgrades, cancelling a
// reservation, releasing; the Release, CancelPreemption and SetNodeHealthy calls.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

// ---------------------------------------------------------------------------------------
// Groups.

GroupId SchedulerImpl::NewGroup(const GroupRequest& request, VcId vc) {
  const GroupId g = groups_.Add(request.name);
  changes_.NoteGroup(request.name);  // the change log (scheduler_changes.cc)
  Group& grp = groups_[g];
  // Reset in place: keeps the strings' and vectors' capacity of a recycled slot.
  grp.ClearNotes();
  grp.known_vc = vc.IsNil() ? nullptr : &vclusters_.vc(vc).name;
  if (vc.IsNil()) grp.SetNote(&GroupNotes::unknown_vc, request.vc);
  grp.vc = vc;
  grp.priority = request.priority;
  grp.running = request.priority;
  grp.lazy = request.lazy_preemption;
  grp.state = GState::kRunning;
  grp.SetNote(&GroupNotes::pinned_id, request.pinned_cell_id);
  grp.SetNote(&GroupNotes::leaf_type, request.leaf_cell_type);
  grp.members.assign(request.members.begin(), request.members.end());
  grp.given_placement.reset();
  grp.chain = ChainId::Nil();
  grp.pleaves.clear();
  grp.vleaves.clear();
  grp.reserved_by_others = 0;
  return g;
}

void SchedulerImpl::DeleteGroup(GroupId g) {
  changes_.NoteGroup(groups_[g].name);  // the change log (scheduler_changes.cc)
  if (noted_user_ == g) noted_user_ = kNilId;
  if (noted_reserver_ == g) noted_reserver_ = kNilId;
  groups_.Remove(g);
}

void SchedulerImpl::DowngradeGroup(GroupId g, const std::string& preemptor,
                                   const std::string& reason) {
  Group& grp = groups_[g];
  // Its placement keeps the preassigned types its virtual leaves gave it.
  if (grp.given_placement == nullptr) {
    grp.given_placement = std::make_unique<Placement>(PlacementOf(grp));
  }
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    VCellId v = grp.vleaves[i];
    CellId p = grp.pleaves[i];
    if (v != kNilId && vclusters_.cell(v).user == g) ReleaseVLeaf(v);
    if (physical_.reserver(p) == kNilId) SetPLeaf(p, kOpportunisticPriority);
    grp.vleaves[i] = kNilId;
  }
  grp.running = kOpportunisticPriority;
  grp.SetNote(&GroupNotes::preemptor, preemptor);
  grp.SetNote(&GroupNotes::downgrade_reason, reason);
}

void SchedulerImpl::CancelInternal(GroupId g) {
  Group& pre = groups_[g];
  for (size_t i = 0; i < pre.pleaves.size(); ++i) {
    CellId p = pre.pleaves[i];
    VCellId v = pre.vleaves[i];
    if (physical_.reserver(p) != g) continue;
    physical_.SetReserver(p, kNilId);
    GroupId u = physical_.user(p);
    if (u != kNilId) {
      Group& victim = groups_[u];
      auto it = std::find(victim.pleaves.begin(), victim.pleaves.end(), p);
      VCellId vv = victim.vleaves[static_cast<size_t>(it - victim.pleaves.begin())];
      if (vv != kNilId && vv == v) {
        SetVLeaf(v, victim.running, u);
      } else if (v != kNilId && vclusters_.cell(v).user == g) {
        ReleaseVLeaf(v);
      }
      SetPLeaf(p, victim.running);
      if (--victim.reserved_by_others == 0 && victim.state == GState::kBeingPreempted) {
        victim.state = GState::kRunning;
        // A lazily downgraded victim keeps naming its preemptor; others name nobody.
        if (victim.running >= 0 || victim.priority < 0) victim.SetNote(&GroupNotes::preemptor, "");
      } else if (victim.reserved_by_others > 0 && victim.notes().preemptor == pre.name) {
        // Still preempted by another group: name that one.
        for (CellId q : victim.pleaves) {
          GroupId r = physical_.reserver(q);
          if (r != kNilId && r != g) {
            victim.SetNote(&GroupNotes::preemptor, groups_[r].name);
            break;
          }
        }
      }
    } else {
      SetPLeaf(p, kFreePriority);
      if (v != kNilId && vclusters_.cell(v).user == g) ReleaseVLeaf(v);
    }
  }
  DeleteGroup(g);
}

void SchedulerImpl::ReleaseInternal(GroupId g) {
  Group& grp = groups_[g];
  NodeKeys keys(this);
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    CellId p = grp.pleaves[i];
    VCellId v = grp.vleaves[i];
    if (physical_.user(p) != g) continue;
    physical_.SetUser(p, kNilId);
    if (physical_.reserver(p) != kNilId) continue;  // Reserving -> Reserved
    SetPLeaf(p, kFreePriority, &keys);
    if (v != kNilId && vclusters_.cell(v).user == g) ReleaseVLeaf(v, &keys);
  }
  keys.Flush();
  DeleteGroup(g);
}

absl::Status SchedulerImpl::Release(std::string_view name) {
  const GroupId g = groups_.Find(name);
  if (g == kNilId) {
    return absl::NotFoundError(absl::StrCat("group ", ToAbsl(name), " is not running"));
  }
  if (groups_[g].state == GState::kPreempting || groups_[g].state == GState::kReserved) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name),
                     groups_[g].state == GState::kReserved
                         ? " is reserved, not running; use Unreserve"
                         : " is preempting, not running; use CancelPreemption"));
  }
  ++epoch_;
  ReleaseInternal(g);
  Settle();
  return absl::OkStatus();
}

absl::Status SchedulerImpl::CancelPreemption(std::string_view name) {
  const GroupId g = groups_.Find(name);
  if (g != kNilId && groups_[g].state != GState::kPreempting) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name), " is not preempting",
                     groups_[g].state == GState::kReserved ? "; use Unreserve" : ""));
  }
  return Unreserve(name);  // kNotFound for an unknown group; else gives up the reservation
}

absl::Status SchedulerImpl::Unreserve(std::string_view name) {
  const GroupId g = groups_.Find(name);
  if (g == kNilId) {
    return absl::NotFoundError(absl::StrCat("group ", ToAbsl(name), " is not known"));
  }
  // A Preempting group's reservation is given up as by CancelPreemption: a manager that
  // unreserves on every failed bind need not know whether the group had victims.
  if (groups_[g].state != GState::kReserved && groups_[g].state != GState::kPreempting) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name), " holds no reservation (it runs); use Release"));
  }
  ++epoch_;
  CancelInternal(g);
  Settle();
  return absl::OkStatus();
}

absl::Status SchedulerImpl::SetNodeHealthy(std::string_view node, bool healthy) {
  const cellalloc::CellForest& f = *forest_;
  NodeId n = f.FindNode(node);
  if (n.IsNil()) {
    return absl::NotFoundError(absl::StrCat("node ", ToAbsl(node), " is not in the cluster"));
  }
  std::vector<CellId> changed = buddy_->SetNodeHealthy(n, healthy);
  if (changed.empty()) return absl::OkStatus();
  ++epoch_;
  for (CellId c : changed) {
    if (f.is_node_level(c))
      views_[f.chain(c).value()].index.SetHealthy(physical_.view_pos(c), healthy);
  }
  vclusters_.HealthChanged(changed, healthy);
  for (CellId c : f.node_cells(n)) health_.MarkDirty(f.chain(c));
  Settle();
  return absl::OkStatus();
}

}  // namespace hived
