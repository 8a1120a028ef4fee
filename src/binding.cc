// Virtual clusters: leaf usage and node keys, binding virtual to physical cells,
// preassigned cells in the buddy allocator, safety, and doomed bad cells (health).
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

using cellalloc::ChainInfo;

namespace {

void HistAdd(std::vector<std::pair<Priority, int32_t>>* h, Priority p, int32_t delta) {
  if (p == kFreePriority) return;
  auto it = std::lower_bound(
      h->begin(), h->end(), p,
      [](const std::pair<Priority, int32_t>& e, Priority x) { return e.first < x; });
  if (it == h->end() || it->first != p) it = h->insert(it, {p, 0});
  it->second += delta;
  if (it->second == 0) h->erase(it);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Leaf usage.

void SchedulerImpl::SetVLeaf(VCellId v, Priority p, GroupId user) {
  Priority old = vusage_.LeafPriority(CellId(v));
  v_[v].user = user;
  if (old == p) return;
  vusage_.SetLeafPriority(CellId(v), p);
  VCellId node = v_[v].view_node;
  View& view = views_[static_cast<size_t>(v_[node].view)];
  HistAdd(&view.histogram, old, -1);
  HistAdd(&view.histogram, p, +1);
  UpdateVNodeKey(node);
}

void SchedulerImpl::SetPLeaf(CellId p, Priority prio) {
  Priority old = pusage_.LeafPriority(p);
  if (old == prio) return;
  pusage_.SetLeafPriority(p, prio);
  View& view = views_[forest_->chain(p).value()];
  HistAdd(&view.histogram, old, -1);
  HistAdd(&view.histogram, prio, +1);
  UpdatePNodeKey(CellId(p_nodecell_[p.value()]));
}

void SchedulerImpl::UpdateVNodeKey(VCellId node) {
  View& view = views_[static_cast<size_t>(v_[node].view)];
  view.index.SetKeys(v_[node].view_pos, vusage_.UsedTotal(CellId(node)), 0);
}

void SchedulerImpl::UpdatePNodeKey(CellId nc) {
  View& view = views_[forest_->chain(nc).value()];
  view.index.SetKeys(p_view_pos_[nc.value()], pusage_.UsedAt(nc, kOpportunisticPriority),
                     pusage_.UsedAbove(nc, kOpportunisticPriority));
}

void SchedulerImpl::UpdateVNodeHealth(VCellId v) {
  if (v_[v].view < 0) return;
  CellId p = v_[v].bound;
  bool healthy = p.IsNil() || buddy_->IsHealthy(p);
  views_[static_cast<size_t>(v_[v].view)].index.SetHealthy(v_[v].view_pos, healthy);
}

// ---------------------------------------------------------------------------------------
// Binding.

void SchedulerImpl::BindCell(VCellId v, CellId p) {
  HIVED_CHECK(v_[v].bound.IsNil() && p_bound_[p.value()] == kNilId)
      << "binding " << VAddress(v) << " to " << forest_->address(p);
  ++binding_changes_;
  v_[v].bound = p;
  p_bound_[p.value()] = v;
  if (v_[v].parent != kNilId) ++v_[v_[v].parent].bound_children;
  UpdateVNodeHealth(v);
  if (!buddy_->IsHealthy(p) &&
      forest_->level(p) > forest_->chain_info(forest_->chain(p)).node_level) {
    health_.NoteBadBound(v);
  }
}

void SchedulerImpl::FlushBadChildren() {
  VCellId v = kNilId;
  while (health_.PopBadBound(&v)) {
    if (!v_[v].bound.IsNil()) BindBadChildren(v, v_[v].bound);
  }
}

void SchedulerImpl::BindBadChildren(VCellId v, CellId p) {
  const cellalloc::CellForest& f = *forest_;
  for (int32_t k = 0; k < f.num_children(p); ++k) {
    CellId pc = f.child(p, k);
    if (buddy_->IsHealthy(pc) || p_bound_[pc.value()] != kNilId) continue;
    VCellId free_child = kNilId;
    for (int32_t j = 0; j < v_[v].num_children; ++j) {
      VCellId c = v_[v].first_child + static_cast<VCellId>(j);
      if (v_[c].bound.IsNil()) {
        free_child = c;
        break;
      }
    }
    if (free_child == kNilId) return;
    v_[free_child].bad_bound = true;
    BindCell(free_child, pc);
  }
}

void SchedulerImpl::UnbindCell(VCellId v) {
  ++binding_changes_;
  CellId p = v_[v].bound;
  p_bound_[p.value()] = kNilId;
  v_[v].bound = CellId::Nil();
  v_[v].bad_bound = false;
  if (v_[v].parent != kNilId) --v_[v_[v].parent].bound_children;
  UpdateVNodeHealth(v);
}

bool SchedulerImpl::CanUnbind(VCellId v) const {
  const VCell& c = v_[v];
  if (c.bound.IsNil() || c.pinned || c.doomed || c.bound_children > 0) return false;
  if (vusage_.UsedTotal(CellId(v)) > 0) return false;
  if (c.bad_bound && !buddy_->IsHealthy(c.bound)) return false;
  return true;
}

void SchedulerImpl::UnbindUp(VCellId v) {
  // A doomed root is given back by RebalanceDoomed (once healed or no longer needed).
  for (VCellId x = v; x != kNilId; x = v_[x].parent) {
    if (v_[x].doomed) {
      health_.MarkDirty(v_[x].chain);
      break;
    }
  }
  while (v != kNilId && CanUnbind(v)) {
    VCellId parent = v_[v].parent;
    if (v_[v].is_root) {
      ReleasePreassigned(v);
      return;
    }
    UnbindCell(v);
    v = parent;
  }
}

void SchedulerImpl::BindLeafPath(VCellId v, CellId p) {
  const cellalloc::CellForest& f = *forest_;
  while (true) {
    if (!v_[v].bound.IsNil()) {
      HIVED_CHECK(v_[v].bound == p)
          << VAddress(v) << " is bound to " << f.address(v_[v].bound) << ", not " << f.address(p);
      return;
    }
    if (v_[v].is_root) {
      AllocatePreassigned(v, p);
      return;
    }
    BindCell(v, p);
    v = v_[v].parent;
    p = f.parent(p);
  }
}

void SchedulerImpl::AllocatePreassigned(VCellId root, CellId p) {
  HIVED_CHECK(buddy_->AllocateCell(p))
      << "physical cell " << forest_->address(p) << " is not available for " << VAddress(root);
  BindCell(root, p);
  const VCell& r = v_[root];
  VcChainLevel& slot = vcs_[r.vc.value()].cl[r.chain.value()][static_cast<size_t>(r.level)];
  --slot.free;
  slot.unbound.Erase(r.slot_pos);
  --all_vc_free_[r.chain.value()][static_cast<size_t>(r.level)];
  if (health_.ChainHasBadOrDoomed(r.chain)) health_.MarkDirty(r.chain);
}

void SchedulerImpl::ReleasePreassigned(VCellId root) {
  CellId p = v_[root].bound;
  UnbindCell(root);
  buddy_->Release(p);
  const VCell& r = v_[root];
  VcChainLevel& slot = vcs_[r.vc.value()].cl[r.chain.value()][static_cast<size_t>(r.level)];
  ++slot.free;
  slot.unbound.Insert(r.slot_pos);
  ++all_vc_free_[r.chain.value()][static_cast<size_t>(r.level)];
  if (health_.ChainHasBadOrDoomed(r.chain)) health_.MarkDirty(r.chain);
}

void SchedulerImpl::ReleaseVLeaf(VCellId v) {
  SetVLeaf(v, kFreePriority, kNilId);
  UnbindUp(v);
}

bool SchedulerImpl::SafetyOk(ChainId ch) const {
  const ChainInfo& info = forest_->chain_info(ch);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    if (buddy_->obtainable(ch, l) < all_vc_free_[ch.value()][static_cast<size_t>(l)]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Doomed bad cells (the counts and the search for a bad cell: `health_`).

void SchedulerImpl::UnbindSubtree(VCellId v) {
  for (int32_t j = 0; j < v_[v].num_children; ++j) {
    VCellId c = v_[v].first_child + static_cast<VCellId>(j);
    if (!v_[c].bound.IsNil()) UnbindSubtree(c);
  }
  if (!v_[v].is_root) UnbindCell(v);
}

void SchedulerImpl::RebalanceDoomed(ChainId ch) {
  const ChainInfo& info = forest_->chain_info(ch);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    size_t li = static_cast<size_t>(l);
    for (Vc& vc : vcs_) {
      VcChainLevel& slot = vc.cl[ch.value()][li];
      if (slot.roots.empty()) continue;
      // Doomed cells that healed and hold nothing go back first.
      for (size_t i = slot.doomed.size(); i > 0; --i) {
        VCellId root = slot.doomed[i - 1];
        if (!buddy_->IsHealthy(v_[root].bound) || vusage_.UsedTotal(CellId(root)) > 0) continue;
        slot.doomed.erase(slot.doomed.begin() + static_cast<std::ptrdiff_t>(i - 1));
        health_.RemoveDoomed(ch);
        v_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
      // Bind doomed cells while the VC's unbound cells cannot all be backed by healthy ones.
      while (slot.free > buddy_->obtainable(ch, l) - buddy_->bad_free(ch, l)) {
        CellId pc = health_.FindBadFreeCell(ch, l);
        int32_t pos = slot.unbound.FindNext(0);
        if (pc.IsNil() || pos < 0) break;
        VCellId root = slot.roots[static_cast<size_t>(pos)];
        v_[root].doomed = true;
        v_[root].bad_bound = true;
        slot.doomed.push_back(root);
        health_.AddDoomed(ch);
        AllocatePreassigned(root, pc);
      }
      // Give doomed cells back while healthy cells suffice again.
      while (!slot.doomed.empty() &&
             slot.free < buddy_->obtainable(ch, l) - buddy_->bad_free(ch, l)) {
        auto it = std::find_if(slot.doomed.rbegin(), slot.doomed.rend(),
                               [&](VCellId r) { return vusage_.UsedTotal(CellId(r)) == 0; });
        if (it == slot.doomed.rend()) break;
        VCellId root = *it;
        slot.doomed.erase(std::next(it).base());
        health_.RemoveDoomed(ch);
        v_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
    }
  }
}

void SchedulerImpl::FlushDoomed() {
  // Rebalancing may dirty chains again; iterate until quiet (bounded by the chains).
  for (int round = 0; round < 4 && health_.HasDirty(); ++round) {
    for (ChainId ch : health_.TakeDirty()) RebalanceDoomed(ch);
  }
  health_.DropDirty();
}

}  // namespace hived
