// Decide: a new group's decision as a value, computed over const state (a const member
// function; it writes only the `DecideScratch` its caller grants): the candidate chains'
// attempts (node and leaf choice by the Placer), the lazy downgrades a guaranteed
// placement implies, and the binding planned as if they were applied (`DowngradeOverlay`,
// the planner's state-as-if); nothing is applied (`Commit`, schedule.cc, does that).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/scheduler_impl.h"

namespace hived {

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
      int32_t view = vclusters_.vc(req.vc).chain_view[ch.value()];
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
    ok = try_view(vclusters_.vc(req.vc).pinned_view.at(r.pinned_cell_id));
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
    GroupId u = physical_.user(p);
    GroupId rv = physical_.reserver(p);
    if (u != kNilId && std::find(d->victims.begin(), d->victims.end(), u) == d->victims.end()) {
      d->victims.push_back(u);
    }
    if (rv != kNilId &&
        std::find(d->overlapping.begin(), d->overlapping.end(), rv) == d->overlapping.end()) {
      d->overlapping.push_back(rv);
    }
  }
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
  bool ok = FindNodes(*s->placer, view, req.needs, q, /*pass1=*/true, &pod_node, &a.reason, &a.code,
                      req.room);
  if (!ok && view.HasUsageBelow(p)) {
    // Pass 2 explains the wait only when it names a node (bad, not suggested).
    std::string reason2;
    ReasonCode code2 = ReasonCode::kNone;
    ok = FindNodes(*s->placer, view, req.needs, p, /*pass1=*/false, &pod_node, &reason2, &code2,
                   req.room);
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
        "VC ", vclusters_.vc(req.vc).name, ", chain ", forest_->chain_info(view.chain).name,
        ": mapping the virtual placement to physical cells would need at least one ",
        s->placer->suggested().active() ? "bad or non-suggested" : "bad", " node");
    return a;
  }
  // A virtual node bound only by this plan was not checked by the node choice: its pods must
  // fit the physical node the plan gives it (src/node_room.h).
  const NodeId short_node =
      req.room == nullptr ? NodeId() : NodeShort(req.needs, d->pleaves, *req.room);
  if (!short_node.IsNil()) {
    d->lazy.clear();
    a.code = ReasonCode::kInsufficientCapacity;
    a.reason = absl::StrCat("VC ", vclusters_.vc(req.vc).name, ", chain ",
                            forest_->chain_info(view.chain).name, ": node ",
                            forest_->node_name(short_node),
                            " lacks the CPU or host memory for the pods placed on it");
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
  if (!FindNodes(*s->placer, view, req.needs, kOpportunisticPriority, /*pass1=*/true, &pod_node,
                 &a.reason, &a.code, req.room)) {
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
    CellId pc = vclusters_.cell(v).bound;
    if (pc.IsNil()) continue;
    GroupId u = physical_.user(pc);
    if (u == kNilId) continue;
    const Group& victim = groups_[u];
    if (!victim.lazy || victim.running < kMinGuaranteedPriority ||
        victim.state != GState::kRunning) {
      continue;
    }
    if (std::find(lazy->begin(), lazy->end(), u) == lazy->end()) lazy->push_back(u);
  }
}

bool SchedulerImpl::PlanBinding(ChainId ch, const std::vector<VCellId>& vleaves,
                                const std::vector<GroupId>& downgrades, DecideScratch* s,
                                std::vector<CellId>* pleaves) const {
  if (downgrades.empty()) return MapPlacement<false>(ch, vleaves, s, pleaves);
  DowngradeOverlay& o = s->downgrades;
  PlanDowngrades(ch, downgrades, &o);
  const bool ok = MapPlacement<true>(ch, vleaves, s, pleaves);
  for (VCellId x : o.touched) {
    o.released[x] = 0;
    o.unbound_children[x] = 0;
    o.unbound[x] = 0;
  }
  o.touched.clear();
  o.free_roots.clear();
  o.unbound_cells.clear();
  o.active = false;
  return ok;
}

void SchedulerImpl::PlanDowngrades(ChainId ch, const std::vector<GroupId>& downgrades,
                                   DowngradeOverlay* o) const {
  // DowngradeGroup's releases in its order (groups as planned, each group's leaves in
  // order), each followed by UnbindUp's walk with CanUnbind read through the overlay. The
  // physical leaves' lower priorities change no planner input (they stay used).
  const size_t n = vclusters_.cells().size();
  if (o->unbound.size() != n) {
    o->released.assign(n, 0);
    o->unbound_children.assign(n, 0);
    o->unbound.assign(n, 0);
  }
  o->active = true;
  o->vc_unbound = vclusters_.all_free(ch);
  auto touch = [o](VCellId x) {
    if (o->released[x] == 0 && o->unbound_children[x] == 0 && o->unbound[x] == 0) {
      o->touched.push_back(x);
    }
  };
  auto can_unbind = [&](VCellId x) {  // CanUnbind after the releases so far
    const VCell& c = vclusters_.cell(x);
    if (c.bound.IsNil() || o->unbound[x] != 0 || c.pinned || c.doomed) return false;
    if (c.bound_children - o->unbound_children[x] > 0) return false;
    if (vclusters_.usage().UsedTotal(CellId(x)) - o->released[x] > 0) return false;
    return !c.bad_bound || buddy_->IsHealthy(c.bound);
  };
  for (GroupId u : downgrades) {
    for (VCellId v : groups_[u].vleaves) {
      if (v == kNilId || vclusters_.cell(v).user != u) continue;
      if (vclusters_.usage().LeafPriority(CellId(v)) != kFreePriority) {
        for (VCellId x = v; x != kNilId; x = vclusters_.cell(x).parent) {
          touch(x);
          ++o->released[x];
        }
      }
      for (VCellId x = v; x != kNilId && can_unbind(x);) {
        touch(x);
        o->unbound[x] = 1;
        o->unbound_cells.push_back(vclusters_.cell(x).bound);
        if (vclusters_.cell(x).is_root) {  // ReleasePreassigned
          o->free_roots.push_back(vclusters_.cell(x).bound);
          if (vclusters_.cell(x).chain == ch)
            ++o->vc_unbound[static_cast<size_t>(vclusters_.cell(x).level)];
          break;
        }
        x = vclusters_.cell(x).parent;
        touch(x);
        ++o->unbound_children[x];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Binding: the virtual cells a placement needs, planned on physical cells by cellalloc.

template <bool kAsIf>
bool SchedulerImpl::MapPlacement(ChainId ch, const std::vector<VCellId>& vleaves, DecideScratch* s,
                                 std::vector<CellId>* pleaves) const {
  // The binding as the planned downgrades would leave it (DowngradeOverlay) when kAsIf;
  // instantiated twice so the common case (no downgrades) reads the binding directly.
  const DowngradeOverlay& o = s->downgrades;
  const uint8_t* const as_unbound = o.unbound.data();
  auto bound = [this, as_unbound](VCellId x) {
    return kAsIf && as_unbound[x] != 0 ? CellId::Nil() : vclusters_.cell(x).bound;
  };
  cellalloc::PlanContext context;
  context.bound = &vclusters_.p_bound();
  s->placer->suggested().FillPlanContext(&context);
  context.vc_unbound = &vclusters_.all_free(ch);
  cellalloc::StateAsIf as_if;
  if (kAsIf) {
    as_if.free = o.free_roots;
    as_if.unbound = o.unbound_cells;
    context.as_if = &as_if;
    context.vc_unbound = &o.vc_unbound;
  }
  cellalloc::BuddyPlanner& planner = *s->planner;
  std::vector<int32_t>& vslot = s->vslot;
  planner.Begin(ch, context);
  // Inline storage: a placement binds few roots and few cells under bound parents.
  absl::InlinedVector<int32_t, 8> pre_roots;
  absl::InlinedVector<std::pair<VCellId, absl::InlinedVector<int32_t, 4>>, 4> under_bound;
  for (VCellId leaf : vleaves) {
    if (!bound(leaf).IsNil()) continue;
    int32_t child_slot = -1;
    VCellId x = leaf;
    while (true) {
      if (vslot[x] >= 0) {
        if (child_slot >= 0) planner.AddChild(vslot[x], child_slot);
        break;
      }
      const int32_t slot = planner.AddNode(vclusters_.cell(x).level);
      vslot[x] = slot;
      s->vslot_touched.push_back(x);
      if (child_slot >= 0) planner.AddChild(slot, child_slot);
      child_slot = slot;
      if (vclusters_.cell(x).is_root) {
        pre_roots.push_back(slot);
        break;
      }
      VCellId parent = vclusters_.cell(x).parent;
      if (!bound(parent).IsNil()) {
        auto it = std::find_if(under_bound.begin(), under_bound.end(),
                               [&](const auto& e) { return e.first == parent; });
        if (it == under_bound.end()) {
          under_bound.emplace_back();
          under_bound.back().first = parent;
          under_bound.back().second.push_back(slot);
        } else {
          it->second.push_back(slot);
        }
        break;
      }
      x = parent;
    }
  }
  bool ok = true;
  for (int32_t slot : pre_roots) {
    if (!planner.PlaceRoot(slot)) {
      ok = false;
      break;
    }
  }
  if (ok) {
    for (auto& [parent, slots] : under_bound) {
      if (!planner.PlaceUnder(bound(parent), slots)) {
        ok = false;
        break;
      }
    }
  }
  if (ok) {
    pleaves->clear();
    for (VCellId leaf : vleaves) {
      CellId p = bound(leaf);
      if (p.IsNil()) p = planner.cell(vslot[leaf]);
      HIVED_CHECK(!p.IsNil()) << "unmapped virtual leaf " << vclusters_.Address(leaf);
      pleaves->push_back(p);
    }
  }
  planner.Abandon();
  for (VCellId v : s->vslot_touched) vslot[v] = -1;
  s->vslot_touched.clear();
  return ok;
}

}  // namespace hived
