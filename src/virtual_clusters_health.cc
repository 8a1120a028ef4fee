// VirtualClusters, the binding side of health: mirroring bad children of bound cells and
// rebalancing doomed preassigned cells (what is pending, and the counts: `Health`).
#include <algorithm>
#include <iterator>
#include <vector>

#include "src/virtual_clusters.h"

namespace hived {

using cellalloc::ChainInfo;

void VirtualClusters::HealthChanged(const std::vector<CellId>& changed, bool healthy) {
  const cellalloc::CellForest& f = *forest_;
  for (CellId c : changed) {
    if (p_bound_[c.value()] != kNilId) UpdateNodeHealth(p_bound_[c.value()]);
  }
  if (!healthy) {
    // Bad cells inside bound regions get bound too, so the VC sees them.
    for (auto it = changed.rbegin(); it != changed.rend(); ++it) {
      CellId c = *it;
      if (p_bound_[c.value()] != kNilId) continue;
      const ChainInfo& info = f.chain_info(f.chain(c));
      if (f.level(c) < info.node_level) continue;
      CellId parent = f.parent(c);
      if (parent.IsNil() || p_bound_[parent.value()] == kNilId) continue;
      health_->NoteBadBound(p_bound_[parent.value()]);
    }
  } else {
    for (CellId c : changed) {
      VCellId v = p_bound_[c.value()];
      if (v == kNilId || !cells_[v].bad_bound) continue;
      if (cells_[v].doomed) continue;  // doomed roots are given back by RebalanceDoomed
      if (!CanUnbind(v)) continue;
      VCellId parent = cells_[v].parent;
      if (cells_[v].is_root) {
        ReleasePreassigned(v);
      } else {
        UnbindCell(v);
        UnbindUp(parent);
      }
    }
  }
}

void VirtualClusters::FlushBadChildren() {
  VCellId v = kNilId;
  while (health_->PopBadBound(&v)) {
    if (!cells_[v].bound.IsNil()) BindBadChildren(v, cells_[v].bound);
  }
}

void VirtualClusters::BindBadChildren(VCellId v, CellId p) {
  const cellalloc::CellForest& f = *forest_;
  for (int32_t k = 0; k < f.num_children(p); ++k) {
    CellId pc = f.child(p, k);
    if (buddy_->IsHealthy(pc) || p_bound_[pc.value()] != kNilId) continue;
    VCellId free_child = kNilId;
    for (int32_t j = 0; j < cells_[v].num_children; ++j) {
      VCellId c = cells_[v].first_child + static_cast<VCellId>(j);
      if (cells_[c].bound.IsNil()) {
        free_child = c;
        break;
      }
    }
    if (free_child == kNilId) return;
    cells_[free_child].bad_bound = true;
    BindCell(free_child, pc);
  }
}

void VirtualClusters::RebalanceDoomed(ChainId ch) {
  const ChainInfo& info = forest_->chain_info(ch);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    size_t li = static_cast<size_t>(l);
    for (Vc& vc : vcs_) {
      ChainLevel& slot = vc.cl[ch.value()][li];
      if (slot.roots.empty()) continue;
      // Doomed cells that healed and hold nothing go back first.
      for (size_t i = slot.doomed.size(); i > 0; --i) {
        VCellId root = slot.doomed[i - 1];
        if (!buddy_->IsHealthy(cells_[root].bound) || usage_.UsedTotal(CellId(root)) > 0) continue;
        slot.doomed.erase(slot.doomed.begin() + static_cast<std::ptrdiff_t>(i - 1));
        health_->RemoveDoomed(ch);
        cells_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
      // Bind doomed cells while the VC's unbound cells cannot all be backed by healthy ones.
      while (slot.free > buddy_->obtainable(ch, l) - buddy_->bad_free(ch, l)) {
        CellId pc = health_->FindBadFreeCell(ch, l);
        int32_t pos = slot.unbound.FindNext(0);
        if (pc.IsNil() || pos < 0) break;
        VCellId root = slot.roots[static_cast<size_t>(pos)];
        cells_[root].doomed = true;
        cells_[root].bad_bound = true;
        slot.doomed.push_back(root);
        health_->AddDoomed(ch);
        AllocatePreassigned(root, pc);
      }
      // Give doomed cells back while healthy cells suffice again.
      while (!slot.doomed.empty() &&
             slot.free < buddy_->obtainable(ch, l) - buddy_->bad_free(ch, l)) {
        auto it = std::find_if(slot.doomed.rbegin(), slot.doomed.rend(),
                               [&](VCellId r) { return usage_.UsedTotal(CellId(r)) == 0; });
        if (it == slot.doomed.rend()) break;
        VCellId root = *it;
        slot.doomed.erase(std::next(it).base());
        health_->RemoveDoomed(ch);
        cells_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
    }
  }
}

void VirtualClusters::FlushDoomed() {
  // Rebalancing may dirty chains again; iterate until quiet (bounded by the chains).
  for (int round = 0; round < 4 && health_->HasDirty(); ++round) {
    for (ChainId ch : health_->TakeDirty()) RebalanceDoomed(ch);
  }
  health_->DropDirty();
}

}  // namespace hived
