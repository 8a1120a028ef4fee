// VirtualClusters: binding virtual to physical cells, preassigned cells in the buddy
// allocator, the safety counters, and CheckInvariants.
#include "src/virtual_clusters.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"

namespace hived {

using cellalloc::BuddyState;
using cellalloc::ChainInfo;

std::string VirtualClusters::Address(VCellId v) const {
  std::vector<int32_t> parts;
  VCellId x = v;
  while (true) {
    parts.push_back(cells_[x].index);
    if (cells_[x].parent == kNilId) break;
    x = cells_[x].parent;
  }
  std::string out = vcs_[cells_[v].vc.value()].name;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) absl::StrAppend(&out, "/", *it);
  return out;
}

void VirtualClusters::UpdateNodeHealth(VCellId v) {
  if (cells_[v].view < 0) return;
  CellId p = cells_[v].bound;
  bool healthy = p.IsNil() || buddy_->IsHealthy(p);
  (*views_)[static_cast<size_t>(cells_[v].view)].index.SetHealthy(cells_[v].view_pos, healthy);
}

void VirtualClusters::BindCell(VCellId v, CellId p) {
  HIVED_CHECK(cells_[v].bound.IsNil() && p_bound_[p.value()] == kNilId)
      << "binding " << Address(v) << " to " << forest_->address(p);
  ++binding_changes_;
  cells_[v].bound = p;
  p_bound_[p.value()] = v;
  if (cells_[v].parent != kNilId) ++cells_[cells_[v].parent].bound_children;
  UpdateNodeHealth(v);
  if (!buddy_->IsHealthy(p) &&
      forest_->level(p) > forest_->chain_info(forest_->chain(p)).node_level) {
    health_->NoteBadBound(v);
  }
}

void VirtualClusters::UnbindCell(VCellId v) {
  ++binding_changes_;
  CellId p = cells_[v].bound;
  p_bound_[p.value()] = kNilId;
  cells_[v].bound = CellId::Nil();
  cells_[v].bad_bound = false;
  if (cells_[v].parent != kNilId) --cells_[cells_[v].parent].bound_children;
  UpdateNodeHealth(v);
}

bool VirtualClusters::CanUnbind(VCellId v) const {
  const VCell& c = cells_[v];
  if (c.bound.IsNil() || c.pinned || c.doomed || c.bound_children > 0) return false;
  if (usage_.UsedTotal(CellId(v)) > 0) return false;
  if (c.bad_bound && !buddy_->IsHealthy(c.bound)) return false;
  return true;
}

void VirtualClusters::UnbindUp(VCellId v) {
  // A doomed root is given back by RebalanceDoomed (once healed or no longer needed).
  for (VCellId x = v; x != kNilId; x = cells_[x].parent) {
    if (cells_[x].doomed) {
      health_->MarkDirty(cells_[x].chain);
      break;
    }
  }
  while (v != kNilId && CanUnbind(v)) {
    VCellId parent = cells_[v].parent;
    if (cells_[v].is_root) {
      ReleasePreassigned(v);
      return;
    }
    UnbindCell(v);
    v = parent;
  }
}

void VirtualClusters::BindLeafPath(VCellId v, CellId p) {
  const cellalloc::CellForest& f = *forest_;
  while (true) {
    if (!cells_[v].bound.IsNil()) {
      HIVED_CHECK(cells_[v].bound == p) << Address(v) << " is bound to "
                                        << f.address(cells_[v].bound) << ", not " << f.address(p);
      return;
    }
    if (cells_[v].is_root) {
      AllocatePreassigned(v, p);
      return;
    }
    BindCell(v, p);
    v = cells_[v].parent;
    p = f.parent(p);
  }
}

void VirtualClusters::AllocatePreassigned(VCellId root, CellId p) {
  HIVED_CHECK(buddy_->AllocateCell(p))
      << "physical cell " << forest_->address(p) << " is not available for " << Address(root);
  BindCell(root, p);
  const VCell& r = cells_[root];
  ChainLevel& slot = SlotOf(root);
  --slot.free;
  slot.unbound.Erase(r.slot_pos);
  --all_free_[r.chain.value()][static_cast<size_t>(r.level)];
  if (health_->ChainHasBadOrDoomed(r.chain)) health_->MarkDirty(r.chain);
}

void VirtualClusters::ReleasePreassigned(VCellId root) {
  CellId p = cells_[root].bound;
  UnbindCell(root);
  buddy_->Release(p);
  const VCell& r = cells_[root];
  ChainLevel& slot = SlotOf(root);
  ++slot.free;
  slot.unbound.Insert(r.slot_pos);
  ++all_free_[r.chain.value()][static_cast<size_t>(r.level)];
  if (health_->ChainHasBadOrDoomed(r.chain)) health_->MarkDirty(r.chain);
}

void VirtualClusters::UnbindSubtree(VCellId v) {
  for (int32_t j = 0; j < cells_[v].num_children; ++j) {
    VCellId c = cells_[v].first_child + static_cast<VCellId>(j);
    if (!cells_[c].bound.IsNil()) UnbindSubtree(c);
  }
  if (!cells_[v].is_root) UnbindCell(v);
}

void VirtualClusters::MarkDoomed(VCellId root) {
  cells_[root].doomed = true;
  cells_[root].bad_bound = true;
  SlotOf(root).doomed.push_back(root);
  health_->AddDoomed(cells_[root].chain);
}

bool VirtualClusters::SafetyOk(ChainId ch) const {
  const ChainInfo& info = forest_->chain_info(ch);
  std::vector<int32_t> obtainable(static_cast<size_t>(info.top_level) + 1, 0);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    obtainable[static_cast<size_t>(l)] = buddy_->obtainable(ch, l);
  }
  return SafetyOk(info, obtainable, all_free_[ch.value()]);
}

bool VirtualClusters::SafetyOk(const ChainInfo& info, const std::vector<int32_t>& obtainable,
                               const std::vector<int32_t>& unbound) {
  int64_t need = 0;  // level-l cells the unbound cells of level l and above take
  for (CellLevel l = info.top_level; l >= 1; --l) {
    const size_t li = static_cast<size_t>(l);
    if (l < info.top_level) need *= info.child_count[li + 1];
    need += unbound[li];
    if (obtainable[li] < need) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Invariants.

absl::Status VirtualClusters::CheckInvariants() const {
  HIVED_RETURN_IF_ERROR(usage_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(CheckBinding());
  HIVED_RETURN_IF_ERROR(CheckCounters());
  return absl::OkStatus();
}

absl::Status VirtualClusters::CheckBinding() const {
  const cellalloc::CellForest& f = *forest_;
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  std::vector<int32_t> doomed(static_cast<size_t>(f.num_chains()), 0);
  for (size_t i = 0; i < cells_.size(); ++i) {
    const VCell& v = cells_[i];
    VCellId id = static_cast<VCellId>(i);
    int32_t bound_kids = 0;
    for (int32_t k = 0; k < v.num_children; ++k) {
      const VCellId c = v.first_child + static_cast<VCellId>(k);
      const VCell& child = cells_[c];
      if (child.parent != id || child.level != v.level - 1 || child.root != v.root ||
          child.vc != v.vc || child.chain != v.chain) {
        return fail("(1) ", Address(id), " and its child ", k, " do not match");
      }
      if (!child.bound.IsNil()) ++bound_kids;
    }
    if (bound_kids != v.bound_children) return fail("(2) bound-children count of ", Address(id));
    if (v.pinned && v.is_root && v.bound.IsNil())
      return fail("(3) pinned cell ", Address(id), " is unbound");
    if (v.doomed) {
      ++doomed[v.chain.value()];
      if (v.bound.IsNil() || !v.bad_bound || !v.is_root || v.pinned) {
        return fail("(6) doomed ", Address(id), " is not a bad-bound preassigned cell");
      }
    }
    if (v.view >= 0 && views_ != nullptr) {
      const bool healthy = v.bound.IsNil() || buddy_->IsHealthy(v.bound);
      if ((*views_)[static_cast<size_t>(v.view)].index.healthy(v.view_pos) != healthy) {
        return fail("(7) health of view node ", Address(id), " is stale");
      }
    }
    if (v.bound.IsNil()) continue;
    CellId p = v.bound;
    if (p_bound_[p.value()] != id)
      return fail("(2) ", Address(id), " -> ", f.address(p), " is not symmetric");
    if (f.level(p) != v.level || f.chain(p) != v.chain) {
      return fail("(2) ", Address(id), " is bound to ", f.address(p), " of another level or chain");
    }
    if (v.parent != kNilId && cells_[v.parent].bound.IsNil()) {
      return fail("(2) ", Address(id), " is bound but its parent is not");
    }
    if (v.parent != kNilId && cells_[v.parent].bound != f.parent(p)) {
      return fail("(2) ", Address(id), " and its parent are bound to unrelated cells");
    }
    if (v.is_root && buddy_->state(p) != BuddyState::kUsed) {
      return fail("(3) preassigned ", Address(id), " is bound to ", f.address(p),
                  " which the allocator does not hold");
    }
  }
  for (size_t i = 0; i < p_bound_.size(); ++i) {
    VCellId v = p_bound_[i];
    if (v != kNilId && cells_[v].bound.value() != i)
      return fail("(2) physical ", f.address(CellId(static_cast<uint32_t>(i))),
                  " binding is not symmetric");
  }
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    if (health_->doomed(ChainId(static_cast<uint32_t>(c))) != doomed[static_cast<size_t>(c)]) {
      return fail("(6) chain ", f.chain_info(ChainId(static_cast<uint32_t>(c))).name, " has ",
                  doomed[static_cast<size_t>(c)], " doomed cells, health counts ",
                  health_->doomed(ChainId(static_cast<uint32_t>(c))));
    }
  }
  return absl::OkStatus();
}

absl::Status VirtualClusters::CheckCounters() const {
  const cellalloc::CellForest& f = *forest_;
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    int32_t listed_doomed = 0;
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      size_t li = static_cast<size_t>(l);
      int32_t sum = 0;
      for (const Vc& vc : vcs_) {
        const ChainLevel& s = vc.cl[ch.value()][li];
        int32_t unbound = 0;
        for (size_t k = 0; k < s.roots.size(); ++k) {
          bool ub = cells_[s.roots[k]].bound.IsNil();
          if (ub) ++unbound;
          if (ub != s.unbound.Contains(static_cast<int32_t>(k))) {
            return fail("(4) unbound set of VC ", vc.name, " is stale at ", Address(s.roots[k]));
          }
        }
        for (VCellId r : s.doomed) {
          if (!cells_[r].doomed || std::count(s.doomed.begin(), s.doomed.end(), r) != 1) {
            return fail("(6) doomed list of VC ", vc.name, " is stale at ", Address(r));
          }
        }
        listed_doomed += static_cast<int32_t>(s.doomed.size());
        if (unbound != s.free)
          return fail("(4) vc_free of VC ", vc.name, " chain ", info.name, " level ", l);
        sum += s.free;
      }
      if (sum != all_free_[ch.value()][li])
        return fail("(4) all_vc_free of chain ", info.name, " level ", l);
      if (buddy_->obtainable(ch, l) < sum) {
        return fail("(5) safety broken at chain ", info.name, " level ", l, ": ",
                    buddy_->obtainable(ch, l), " obtainable < ", sum, " unbound virtual cells");
      }
    }
    if (listed_doomed != health_->doomed(ch)) {
      return fail("(6) chain ", info.name, " lists ", listed_doomed,
                  " doomed cells, health counts ", health_->doomed(ch));
    }
    // Joint safety: top-down, the free cells left after every VC takes its unbound cells
    // of a level can still be split into the cells the levels below need.
    int64_t left = 0;
    for (CellLevel l = info.top_level; l >= 1; --l) {
      size_t li = static_cast<size_t>(l);
      if (l < info.top_level) left *= info.child_count[li + 1];
      left += buddy_->free_count(ch, l) - all_free_[ch.value()][li];
      if (left < 0) {
        return fail("(5) joint safety broken at chain ", info.name, " level ", l,
                    ": the free cells cannot back the VCs' unbound cells");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hived
