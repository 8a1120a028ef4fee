// Schedule: a decision computed by a const `Decide` (it writes only the scratch its caller
// grants), applied in one step (`Commit`); a Preempting group's re-check; one chain's
// attempt. Planning the binding of a guaranteed placement: plan_binding.cc.
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

absl::StatusOr<ScheduleResult> SchedulerImpl::Schedule(const GroupRequest& request, Phase phase) {
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    if (groups_[existing].state != GState::kPreempting) {
      return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
    }
    absl::StatusOr<ScheduleResult> result = RecheckPreempting(existing, request, phase);
    Settle();
    return result;
  }
  HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
  absl::StatusOr<ScheduleResult> result = ScheduleNew(req, phase);
  needs_pool_.swap(req.needs);
  Settle();
  return result;
}

absl::StatusOr<ScheduleResult> SchedulerImpl::ScheduleNew(const Req& req, Phase phase) {
  DecideScratch& s = decide_scratch_;
  if (s.placer != &placer_) {  // the first decision
    s.placer = &placer_;
    s.planner = planner_.get();
    s.vslot.assign(v_.size(), -1);
  }
  Decide(req, &s, &decision_);
  return Commit(req, phase, &decision_);
}

void SchedulerImpl::Decide(const Req& req, DecideScratch* s, Decision* d) const {
  const GroupRequest& r = *req.raw;
  const cellalloc::CellForest& f = *forest_;
  // Suggested nodes: marked for this request only.
  if (req.has_suggested) s->placer->suggested().Mark(*r.suggested_nodes);
  struct Cleanup {
    SuggestedNodes* s;
    ~Cleanup() { s->Clear(); }
  } cleanup{&s->placer->suggested()};

  d->victims.clear();
  d->overlapping.clear();
  d->lazy.clear();
  d->code = ReasonCode::kNone;
  d->reason.clear();
  std::vector<std::string> reasons;
  ReasonCode first_code = ReasonCode::kNone;
  bool all_infeasible = true;
  auto try_view = [&](int32_t view_id) {
    Attempt a = TryGuaranteed(req, view_id, s, d);
    if (a.ok) {
      d->chain = views_[static_cast<size_t>(view_id)].chain;
      return true;
    }
    all_infeasible = all_infeasible && a.infeasible;
    if (reasons.empty()) first_code = a.code;
    reasons.push_back(std::move(a.reason));
    return false;
  };
  auto try_chain = [&](ChainId ch) {
    if (req.guaranteed) {
      int32_t view = vcs_[req.vc.value()].chain_view[ch.value()];
      if (view < 0) return false;
      return try_view(view);
    }
    Attempt a = TryOpportunistic(req, ch, s, d);
    if (a.ok) {
      d->chain = ch;
      return true;
    }
    all_infeasible = all_infeasible && a.infeasible;
    if (reasons.empty()) first_code = a.code;
    reasons.push_back(std::move(a.reason));
    return false;
  };
  bool ok = false;
  if (req.pinned_root != kNilId) {
    ok = try_view(vcs_[req.vc.value()].pinned_view.at(r.pinned_cell_id));
  } else if (!r.leaf_cell_type.empty()) {
    for (ChainId ch : f.ChainsOfLeafType(r.leaf_cell_type)) {
      if ((ok = try_chain(ch))) break;
    }
  } else {
    for (ChainId ch : chains_by_leaf_type_) {
      if ((ok = try_chain(ch))) break;
    }
  }

  d->found = ok;
  if (!ok) {
    d->outcome = all_infeasible && !reasons.empty() ? Outcome::kInfeasible : Outcome::kWaiting;
    d->reason = absl::StrJoin(reasons, "; ");
    d->code = first_code;
    if (d->reason.empty()) {
      d->reason = "no chain of the requested leaf cell type";
      d->code = ReasonCode::kNoChain;
    }
    return;
  }
  // Victims and overlapping preemptors (lazy downgrades keep a group on its physical leaves).
  for (CellId p : d->pleaves) {
    GroupId u = p_user_[p.value()];
    GroupId rv = p_reserver_[p.value()];
    if (u != kNilId && std::find(d->victims.begin(), d->victims.end(), u) == d->victims.end()) {
      d->victims.push_back(u);
    }
    if (rv != kNilId &&
        std::find(d->overlapping.begin(), d->overlapping.end(), rv) == d->overlapping.end()) {
      d->overlapping.push_back(rv);
    }
  }
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
  if (phase == Phase::kFiltering) {
    // Decide only. A placement that needs lazy downgrades is reported as a preemption
    // whose victims include the groups that would be downgraded.
    for (auto it = d->lazy.rbegin(); it != d->lazy.rend(); ++it) {
      if (std::find(victims.begin(), victims.end(), *it) == victims.end()) victims.push_back(*it);
    }
    if (!d->lazy.empty()) {
      result.reason = "lazily preemptible victims would be downgraded to opportunistic";
      result.code = ReasonCode::kLazyDowngrade;
    }
    if (!overlapping.empty()) {
      std::vector<std::string> names;
      for (GroupId g : overlapping) names.push_back(groups_[g].name);
      std::sort(names.begin(), names.end());
      result.outcome = Outcome::kWaiting;
      result.placement = Placement();
      result.code = ReasonCode::kReservationOverlap;
      result.reason = absl::StrCat("the placement overlaps the reservation of preempting group(s) ",
                                   absl::StrJoin(names, ", "),
                                   "; schedule in the Preempting phase to cancel them");
      return result;
    }
    if (!victims.empty()) {
      result.outcome = Outcome::kPreempting;
      for (GroupId g : victims) result.victims.push_back(groups_[g].name);
      std::sort(result.victims.begin(), result.victims.end());
      return result;
    }
    result.outcome = Outcome::kPlaced;
    if (d->lazy.empty()) {  // the virtual cells are valid only without the downgrades
      CacheDecision(req, found_chain);
    }
    return result;
  }
  // The commit: lazy downgrades (in the order Decide planned them), cancelled overlapping
  // reservations, then the placement or the new reservation.
  for (GroupId u : d->lazy) {
    DowngradeGroup(u, r.name, absl::StrCat("lazily preempted by group ", r.name));
  }
  if (!d->lazy.empty()) ++epoch_;
  for (GroupId g : overlapping) CancelInternal(g);
  if (!overlapping.empty()) {
    victims.clear();
    for (CellId p : d->pleaves) {
      GroupId u = p_user_[p.value()];
      if (u != kNilId && std::find(victims.begin(), victims.end(), u) == victims.end()) {
        victims.push_back(u);
      }
    }
  }
  if (victims.empty()) {
    result.outcome = Outcome::kPlaced;
    CacheDecision(req, found_chain);
    return result;
  }
  // Create the preempting group: reserve every leaf.
  ++epoch_;
  GroupId g = NewGroup(r, req.vc);
  Group& grp = groups_[g];
  grp.state = GState::kPreempting;
  grp.running = r.priority;
  grp.chain = found_chain;
  grp.placement = result.placement;
  grp.pleaves = d->pleaves;
  grp.vleaves = d->vleaves;
  for (size_t i = 0; i < d->pleaves.size(); ++i) {
    CellId p = d->pleaves[i];
    VCellId v = d->vleaves[i];
    GroupId u = p_user_[p.value()];
    if (u != kNilId) {
      Group& victim = groups_[u];
      victim.state = GState::kBeingPreempted;
      victim.preemptor = r.name;
      ++victim.reserved_by_others;
    }
    if (v != kNilId) {
      BindLeafPath(v, p);
      SetVLeaf(v, r.priority, g);
    }
    p_reserver_[p.value()] = g;
    SetPLeaf(p, r.priority);
  }
  result.outcome = Outcome::kPreempting;
  for (GroupId x : victims) result.victims.push_back(groups_[x].name);
  std::sort(result.victims.begin(), result.victims.end());
  return result;
}

void SchedulerImpl::CacheDecision(const Req& req, ChainId chain) {
  cache_.Store(req.raw->name, epoch_, chain, req.needs, &decision_.pleaves, &decision_.vleaves);
}

absl::StatusOr<ScheduleResult> SchedulerImpl::RecheckPreempting(GroupId g,
                                                                const GroupRequest& request,
                                                                Phase phase) {
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
  if (blocked && phase == Phase::kPreempting) {
    ++epoch_;
    CancelInternal(g);
    HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
    return ScheduleNew(req, phase);
  }
  ScheduleResult result;
  result.placement = grp.placement;
  for (CellId p : grp.pleaves) {
    GroupId u = p_user_[p.value()];
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
    result.reason =
        absl::StrCat("the reservation of preempting group ", grp.name, " is blocked: ", why,
                     "; schedule in the Preempting phase to re-place it");
    return result;
  }
  result.outcome = result.victims.empty() ? Outcome::kPlaced : Outcome::kPreempting;
  return result;
}

SchedulerImpl::Attempt SchedulerImpl::TryGuaranteed(const Req& req, int32_t view_id,
                                                    DecideScratch* s, Decision* d) const {
  Attempt a;
  const View& view = views_[static_cast<size_t>(view_id)];
  std::string inf = Infeasibility(req, view, &a.code);
  if (!inf.empty()) {
    a.infeasible = true;
    a.reason = std::move(inf);
    return a;
  }
  const Priority p = req.raw->priority;
  std::vector<int32_t>& pod_node = s->pod_node;
  Priority q = kOpportunisticPriority;
  bool ok = FindNodes(view, req.needs, q, /*pass1=*/true, &pod_node, &a.reason, &a.code);
  if (!ok && view.HasUsageBelow(p)) {
    // Pass 2 explains the wait only when it names a node (bad, not suggested).
    std::string reason2;
    ReasonCode code2 = ReasonCode::kNone;
    ok = FindNodes(view, req.needs, p, /*pass1=*/false, &pod_node, &reason2, &code2);
    q = p;
    if (!ok && code2 != ReasonCode::kInsufficientCapacity) {
      a.reason = std::move(reason2);
      a.code = code2;
    }
  }
  if (!ok) return a;
  std::vector<uint32_t>& leaves = s->leaves;
  leaves.clear();
  for (size_t k = 0; k < req.needs.size(); ++k) {
    s->placer->ChooseLeaves<false>(view.nodes[static_cast<size_t>(pod_node[k])], req.needs[k], q,
                                   &leaves);
  }
  s->placer->ClearTaken();
  // Lazy preemption: lazily preemptible running groups on the chosen leaves are planned
  // to be downgraded (`d->lazy`), and the binding is planned as if they were.
  d->lazy.clear();
  if (req.pinned_root == kNilId && q != kOpportunisticPriority) LazyDowngrades(leaves, &d->lazy);
  if (!PlanBinding(view.chain, leaves, d->lazy, s, &d->pleaves)) {
    d->lazy.clear();
    a.code = ReasonCode::kBindingUnavailable;
    a.reason = absl::StrCat(
        "VC ", vcs_[req.vc.value()].name, ", chain ", forest_->chain_info(view.chain).name,
        ": mapping the virtual placement to physical cells would need at least one ",
        placer_.suggested().active() ? "bad or non-suggested" : "bad", " node");
    return a;
  }
  a.ok = true;
  d->vleaves.assign(leaves.begin(), leaves.end());
  return a;
}

SchedulerImpl::Attempt SchedulerImpl::TryOpportunistic(const Req& req, ChainId ch, DecideScratch* s,
                                                       Decision* d) const {
  Attempt a;
  const View& view = views_[ch.value()];
  std::string inf = Infeasibility(req, view, &a.code);
  if (!inf.empty()) {
    a.infeasible = true;
    a.reason = std::move(inf);
    return a;
  }
  std::vector<int32_t>& pod_node = s->pod_node;
  if (!FindNodes(view, req.needs, kOpportunisticPriority, /*pass1=*/true, &pod_node, &a.reason,
                 &a.code)) {
    return a;
  }
  std::vector<uint32_t>& leaves = s->leaves;
  leaves.clear();
  for (size_t k = 0; k < req.needs.size(); ++k) {
    s->placer->ChooseLeaves<true>(view.nodes[static_cast<size_t>(pod_node[k])], req.needs[k],
                                  kOpportunisticPriority, &leaves);
  }
  s->placer->ClearTaken();
  a.ok = true;
  d->pleaves.clear();
  for (uint32_t x : leaves) d->pleaves.push_back(CellId(x));
  d->vleaves.assign(leaves.size(), kNilId);
  return a;
}

void SchedulerImpl::LazyDowngrades(const std::vector<VCellId>& vleaves,
                                   std::vector<GroupId>* lazy) const {
  for (VCellId v : vleaves) {
    CellId pc = v_[v].bound;
    if (pc.IsNil()) continue;
    GroupId u = p_user_[pc.value()];
    if (u == kNilId) continue;
    const Group& victim = groups_[u];
    if (!victim.lazy || victim.running < kMinGuaranteedPriority ||
        victim.state != GState::kRunning) {
      continue;
    }
    if (std::find(lazy->begin(), lazy->end(), u) == lazy->end()) lazy->push_back(u);
  }
}

}  // namespace hived
