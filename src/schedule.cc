// Schedule: a decision computed by the const `Decide` (decide.cc), applied in one step
// (`Commit`); a Preempting group's re-check.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

absl::StatusOr<ScheduleResult> SchedulerImpl::Schedule(const GroupRequest& request, Phase phase) {
  return Schedule(request, phase, nullptr);
}

absl::StatusOr<ScheduleResult> SchedulerImpl::Schedule(const GroupRequest& request, Phase phase,
                                                       const NodeRoom* room, Apply apply) {
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state != GState::kPreempting && state != GState::kReserved) {
      return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
    }
    absl::StatusOr<ScheduleResult> result = RecheckPreempting(existing, request, phase, room);
    Settle();
    return result;
  }
  HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
  req.room = room;
  req.only_placed = apply == Apply::kOnlyPlaced;
  absl::StatusOr<ScheduleResult> result = ScheduleNew(req, phase);
  needs_pool_.swap(req.needs);
  Settle();
  if (result.ok()) {
    // Told once, by the Preempting phase (the Filtering phase changes nothing).
    if (phase == Phase::kPreempting) {
      result->cancelled_by = reservations_.TakeCancelled(request.name);
    } else if (const std::string* by = reservations_.CancelledBy(request.name)) {
      result->cancelled_by = *by;
    }
  }
  return result;
}

absl::StatusOr<ScheduleResult> SchedulerImpl::ScheduleNew(const Req& req, Phase phase) {
  DecideScratch& s = decide_scratch_;
  if (s.placer != &placer_) {  // the first decision
    s.placer = &placer_;
    s.planner = planner_.get();
    s.vslot.assign(vclusters_.cells().size(), -1);
  }
  Decide(req, &s, &decision_);
  return Commit(req, phase, &decision_);
}

absl::StatusOr<ScheduleResult> SchedulerImpl::Commit(const Req& req, Phase phase, Decision* d) {
  const GroupRequest& r = *req.raw;
  ScheduleResult result;
  if (!d->found) {
    result.outcome = d->outcome;
    result.reason = std::move(d->reason);
    result.code = d->code;
    return result;
  }
  std::vector<GroupId>& victims = d->victims;
  const std::vector<GroupId>& overlapping = d->overlapping;
  const ChainId found_chain = d->chain;
  FillPlacement(found_chain, req.needs, d->pleaves, d->vleaves, &result.placement);
  // A group shielded by reservations made above the core (SetShields) is never a victim.
  if (ShieldedWait(d->pleaves, &result)) return result;
  const bool places = overlapping.empty() && victims.empty() && d->lazy.empty();
  if (phase == Phase::kFiltering || (req.only_placed && !places)) {
    if (ReportOnly(d, &result)) CacheDecision(req, found_chain);  // filter.cc
    return result;
  }
  // A kReserved group's leaves are never taken (src/reservations.h): wait for it.
  for (GroupId g : overlapping) {
    if (groups_[g].state == GState::kReserved) return OverlapWait(overlapping, &result);
  }
  // The commit: lazy downgrades (in the order Decide planned them), cancelled overlapping
  // reservations, then the new reservation (kPlaced) or the preemption (kPreempting).
  for (GroupId u : d->lazy) {
    DowngradeGroup(u, r.name, absl::StrCat("lazily preempted by group ", r.name));
  }
  if (!d->lazy.empty()) ++epoch_;
  // Cancelled reservations are told: this result lists them, and each group's next
  // Schedule or Allocate names this one (Reservations::NoteCancelled).
  for (GroupId g : overlapping) {
    result.cancelled.push_back(groups_[g].name);
    reservations_.NoteCancelled(groups_[g].name, r.name);
    CancelInternal(g);
  }
  std::sort(result.cancelled.begin(), result.cancelled.end());
  if (!overlapping.empty()) {
    victims.clear();
    for (CellId p : d->pleaves) {
      GroupId u = physical_.user(p);
      if (u != kNilId && std::find(victims.begin(), victims.end(), u) == victims.end()) {
        victims.push_back(u);
      }
    }
  }
  if (victims.empty()) {
    HoldLeaves(req, GState::kReserved, *d);
    result.outcome = Outcome::kPlaced;
    return result;
  }
  HoldLeaves(req, GState::kPreempting, *d);
  result.outcome = Outcome::kPreempting;
  for (GroupId x : victims) result.victims.push_back(groups_[x].name);
  std::sort(result.victims.begin(), result.victims.end());
  return result;
}

GroupId SchedulerImpl::HoldLeaves(const Req& req, GState state, const Decision& d) {
  const GroupRequest& r = *req.raw;
  ++epoch_;
  GroupId g = NewGroup(r, req.vc);
  Group& grp = groups_[g];
  grp.state = state;
  grp.chain = d.chain;  // the placement Commit filled follows from these (PlacementOf)
  grp.pleaves = d.pleaves;
  grp.vleaves = d.vleaves;
  NodeKeys keys(this);
  for (size_t i = 0; i < d.pleaves.size(); ++i) {
    CellId p = d.pleaves[i];
    VCellId v = d.vleaves[i];
    GroupId u = physical_.user(p);
    if (u != kNilId) {  // kPreempting only: a kReserved decision has no victims
      Group& victim = groups_[u];
      victim.state = GState::kBeingPreempted;
      victim.SetNote(&GroupNotes::preemptor, r.name);
      ++victim.reserved_by_others;
    }
    if (v != kNilId) {
      vclusters_.BindLeafPath(v, p);
      SetVLeaf(v, r.priority, g, &keys);
    }
    physical_.SetReserver(p, g);
    SetPLeaf(p, r.priority, &keys);
  }
  return g;
}

absl::StatusOr<ScheduleResult> SchedulerImpl::OverlapWait(const std::vector<GroupId>& overlapping,
                                                          ScheduleResult* result) const {
  std::vector<std::string> names;
  bool reserved = false;
  for (GroupId g : overlapping) {
    names.push_back(groups_[g].name);
    reserved = reserved || groups_[g].state == GState::kReserved;
  }
  std::sort(names.begin(), names.end());
  result->outcome = Outcome::kWaiting;
  result->placement = Placement();
  result->victims.clear();
  result->code = ReasonCode::kReservationOverlap;
  result->reason =
      reserved ? absl::StrCat("the placement overlaps the reservation of group(s) ",
                              absl::StrJoin(names, ", "), ", held until Allocate or Unreserve")
               : absl::StrCat("the placement overlaps the reservation of preempting group(s) ",
                              absl::StrJoin(names, ", "),
                              "; schedule in the Preempting phase to cancel them");
  return std::move(*result);
}

void SchedulerImpl::CacheDecision(const Req& req, ChainId chain) {
  reservations_.StoreFiltered(*req.raw, epoch_, chain, req.needs, &decision_.pleaves,
                              &decision_.vleaves);
}

absl::StatusOr<ScheduleResult> SchedulerImpl::RecheckPreempting(GroupId g,
                                                                const GroupRequest& request,
                                                                Phase phase, const NodeRoom* room) {
  Group& grp = groups_[g];
  const cellalloc::CellForest& f = *forest_;
  bool blocked = false;
  std::string why;
  for (CellId p : grp.pleaves) {
    NodeId n = f.node(p);
    if (!buddy_->IsNodeHealthy(n)) {
      blocked = true;
      why = absl::StrCat("node ", f.node_name(n), " is bad");
      break;
    }
    if (request.suggested_nodes.has_value() &&
        std::find(request.suggested_nodes->begin(), request.suggested_nodes->end(),
                  f.node_name(n)) == request.suggested_nodes->end()) {
      blocked = true;
      why = absl::StrCat("node ", f.node_name(n), " is not suggested");
      break;
    }
  }
  if (!blocked && room != nullptr) {  // the nodes' CPU and host memory taken since
    std::vector<int32_t> needs;
    for (const GroupMember& m : request.members) {
      needs.insert(needs.end(), static_cast<size_t>(m.pod_number), m.leaf_cell_number);
    }
    std::sort(needs.begin(), needs.end());
    const NodeId n = NodeShort(needs, grp.pleaves, *room);
    if (!n.IsNil()) {
      blocked = true;
      why = absl::StrCat("node ", f.node_name(n), " lacks the CPU or host memory for its pods");
    }
  }
  if (blocked && phase == Phase::kPreempting) {
    ++epoch_;
    CancelInternal(g);
    HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
    req.room = room;
    return ScheduleNew(req, phase);
  }
  ScheduleResult result;
  result.placement = PlacementOf(grp);
  for (CellId p : grp.pleaves) {
    GroupId u = physical_.user(p);
    if (u != kNilId && u != g) {
      const std::string& name = groups_[u].name;
      if (std::find(result.victims.begin(), result.victims.end(), name) == result.victims.end()) {
        result.victims.push_back(name);
      }
    }
  }
  std::sort(result.victims.begin(), result.victims.end());
  if (blocked) {
    result.outcome = Outcome::kWaiting;
    result.code = ReasonCode::kReservationBlocked;
    result.reason = absl::StrCat(
        "the reservation of ", grp.state == GState::kReserved ? "group " : "preempting group ",
        grp.name, " is blocked: ", why, "; schedule in the Preempting phase to re-place it");
    return result;
  }
  result.outcome = result.victims.empty() ? Outcome::kPlaced : Outcome::kPreempting;
  if (result.outcome == Outcome::kPlaced && phase == Phase::kPreempting &&
      grp.state == GState::kPreempting) {
    // A kPlaced result in the Preempting phase reserves, whatever path led to it (scheduler.h
    // rule 7): the victims are gone, so the leaves are the group's alone (invariant R1).
    ++epoch_;
    grp.state = GState::kReserved;
  }
  return result;
}

bool SchedulerImpl::ShieldedWait(const std::vector<CellId>& pleaves, ScheduleResult* result) const {
  if (shields_.empty()) return false;
  std::vector<std::string> held;
  for (CellId p : pleaves) {
    const GroupId u = physical_.user(p);
    if (u == kNilId) continue;
    auto it = shields_.find(groups_[u].name);
    if (it != shields_.end()) held.insert(held.end(), it->second.begin(), it->second.end());
  }
  if (held.empty()) return false;
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  result->outcome = Outcome::kWaiting;
  result->placement = Placement();
  result->victims.clear();
  result->code = ReasonCode::kReservationOverlap;
  result->reason =
      absl::StrCat("the placement overlaps the reservation of group(s) ", absl::StrJoin(held, ", "),
                   " (shares of GPUs it would preempt), held until Allocate or "
                   "Unreserve");
  return true;
}

}  // namespace hived
