// Planning the binding of a guaranteed placement (part of the const `Decide`): the virtual
// cells its leaves need, mapped to physical cells by cellalloc's planner, as if the
// placement's planned lazy downgrades were applied (`DowngradeOverlay`, the planner's
// state-as-if); nothing is applied.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "src/internal/check.h"
#include "src/scheduler_impl.h"

namespace hived {

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
  const size_t n = v_.size();
  if (o->unbound.size() != n) {
    o->released.assign(n, 0);
    o->unbound_children.assign(n, 0);
    o->unbound.assign(n, 0);
  }
  o->active = true;
  o->vc_unbound = all_vc_free_[ch.value()];
  auto touch = [o](VCellId x) {
    if (o->released[x] == 0 && o->unbound_children[x] == 0 && o->unbound[x] == 0) {
      o->touched.push_back(x);
    }
  };
  auto can_unbind = [&](VCellId x) {  // CanUnbind after the releases so far
    const VCell& c = v_[x];
    if (c.bound.IsNil() || o->unbound[x] != 0 || c.pinned || c.doomed) return false;
    if (c.bound_children - o->unbound_children[x] > 0) return false;
    if (vusage_.UsedTotal(CellId(x)) - o->released[x] > 0) return false;
    return !c.bad_bound || buddy_->IsHealthy(c.bound);
  };
  for (GroupId u : downgrades) {
    for (VCellId v : groups_[u].vleaves) {
      if (v == kNilId || v_[v].user != u) continue;
      if (vusage_.LeafPriority(CellId(v)) != kFreePriority) {
        for (VCellId x = v; x != kNilId; x = v_[x].parent) {
          touch(x);
          ++o->released[x];
        }
      }
      for (VCellId x = v; x != kNilId && can_unbind(x);) {
        touch(x);
        o->unbound[x] = 1;
        o->unbound_cells.push_back(v_[x].bound);
        if (v_[x].is_root) {  // ReleasePreassigned
          o->free_roots.push_back(v_[x].bound);
          if (v_[x].chain == ch) ++o->vc_unbound[static_cast<size_t>(v_[x].level)];
          break;
        }
        x = v_[x].parent;
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
    return kAsIf && as_unbound[x] != 0 ? CellId::Nil() : v_[x].bound;
  };
  cellalloc::PlanContext context;
  context.bound = &p_bound_;
  placer_.suggested().FillPlanContext(&context);
  context.vc_unbound = &all_vc_free_[ch.value()];
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
      const int32_t slot = planner.AddNode(v_[x].level);
      vslot[x] = slot;
      s->vslot_touched.push_back(x);
      if (child_slot >= 0) planner.AddChild(slot, child_slot);
      child_slot = slot;
      if (v_[x].is_root) {
        pre_roots.push_back(slot);
        break;
      }
      VCellId parent = v_[x].parent;
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
      HIVED_CHECK(!p.IsNil()) << "unmapped virtual leaf " << VAddress(leaf);
      pleaves->push_back(p);
    }
  }
  planner.Abandon();
  for (VCellId v : s->vslot_touched) vslot[v] = -1;
  s->vslot_touched.clear();
  return ok;
}

}  // namespace hived
