// Recovery (src/recovery.h): resolving a placement from elsewhere to leaf cells, and
// re-deriving the virtual cells its leaves get.
#include "src/recovery.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hived {

using cellalloc::ChainInfo;

absl::Status ResolvePlacement(const cellalloc::CellForest& f, const GroupRequest& request,
                              const Placement& placement, MissingLeaves missing,
                              ResolvedPlacement* out) {
  out->leaves.clear();
  out->types.clear();
  out->missing.clear();
  // Pods must match the members exactly.
  std::vector<std::pair<int32_t, int32_t>> want;  // leaf number -> pods
  for (const GroupMember& m : request.members) {  // validated by ValidateRequest
    auto it = std::find_if(want.begin(), want.end(),
                           [&](const auto& e) { return e.first == m.leaf_cell_number; });
    if (it == want.end()) {
      want.emplace_back(m.leaf_cell_number, m.pod_number);
    } else {
      it->second += m.pod_number;
    }
  }
  for (size_t k = 0; k < placement.pods.size(); ++k) {
    const PodPlacement& pod = placement.pods[k];
    auto it = std::find_if(want.begin(), want.end(),
                           [&](const auto& e) { return e.first == pod.leaf_cell_number; });
    if (it == want.end() || it->second == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", request.name, ", pod ", k,
                       ": the placement's pods do not match the group's members (extra pod with ",
                       pod.leaf_cell_number, " leaf cells on node ", pod.node, ")"));
    }
    --it->second;
    if (static_cast<int32_t>(pod.leaf_cell_indices.size()) != pod.leaf_cell_number) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", request.name, ", pod ", k, " on node ", pod.node, ": lists ",
          pod.leaf_cell_indices.size(), " leaf cell indices but needs ", pod.leaf_cell_number));
    }
    if (!pod.preassigned_cell_types.empty() &&
        pod.preassigned_cell_types.size() != pod.leaf_cell_indices.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", request.name, ", pod ", k, " on node ", pod.node,
                       ": a different number of preassigned cell types and leaf cell indices"));
    }
  }
  for (const auto& e : want) {
    if (e.second != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", request.name, ": the placement's pods do not match the group's members (",
          e.second, " pod(s) with ", e.first, " leaf cells missing)"));
    }
  }
  const ChainId chain = f.FindChain(placement.chain);
  for (size_t k = 0; k < placement.pods.size(); ++k) {
    const PodPlacement& pod = placement.pods[k];
    const NodeId n = f.FindNode(pod.node);
    if (n.IsNil() && missing == MissingLeaves::kError) {
      return absl::InvalidArgumentError(absl::StrCat("group ", request.name, ", pod ", k, ": node ",
                                                     pod.node, " is not in the cluster"));
    }
    for (size_t i = 0; i < pod.leaf_cell_indices.size(); ++i) {
      const int32_t idx = pod.leaf_cell_indices[i];
      CellId leaf;
      if (!n.IsNil()) {
        if (!chain.IsNil()) leaf = f.FindLeaf(chain, n, idx);
        for (int32_t c = 0; leaf.IsNil() && c < f.num_chains(); ++c) {
          leaf = f.FindLeaf(ChainId(static_cast<uint32_t>(c)), n, idx);
        }
      }
      if (leaf.IsNil()) {
        if (missing == MissingLeaves::kError) {
          return absl::InvalidArgumentError(absl::StrCat("group ", request.name, ", pod ", k,
                                                         " on node ", pod.node, ": leaf cell ", idx,
                                                         " is not in the cluster"));
        }
        out->missing.push_back(absl::StrCat(pod.node, ":", idx));
        continue;
      }
      if (std::find(out->leaves.begin(), out->leaves.end(), leaf) != out->leaves.end()) {
        return absl::InvalidArgumentError(absl::StrCat("group ", request.name, ", pod ", k,
                                                       ": leaf cell ", idx, " on node ", pod.node,
                                                       " is listed twice"));
      }
      out->leaves.push_back(leaf);
      out->types.push_back(pod.preassigned_cell_types.empty() ? nullptr
                                                              : &pod.preassigned_cell_types[i]);
    }
  }
  return absl::OkStatus();
}

namespace {

// The ancestor at `level` of the virtual leaf hinted for leaf `i`, kNilId if none.
VCellId Hint(const VirtualClusters& vcs, absl::Span<const VCellId> hints, size_t i,
             CellLevel level) {
  if (i >= hints.size() || hints[i] == kNilId) return kNilId;
  VCellId v = hints[i];
  while (v != kNilId && vcs.cell(v).level < level) v = vcs.cell(v).parent;
  return v != kNilId && vcs.cell(v).level == level ? v : kNilId;
}

}  // namespace

namespace {

// The binding and the allocator as the bindings planned so far would leave them, read over
// the const state (nothing changes): what `ApplyBinding` would have bound before the leaf
// being decided. The plan is short (a group's path cells), so lookups scan it.
class PlannedBinding {
 public:
  PlannedBinding(const cellalloc::CellForest& f, const cellalloc::BuddyAllocator& buddy,
                 const VirtualClusters& vcs, BindingPlan* plan)
      : f_(f), buddy_(buddy), vcs_(vcs), plan_(plan) {}

  VCellId BoundTo(CellId p) const {
    for (const auto& [v, q] : plan_->binds) {
      if (q == p) return v;
    }
    return vcs_.BoundTo(p);
  }
  bool IsBound(VCellId v) const {
    if (!vcs_.cell(v).bound.IsNil()) return true;
    for (const auto& b : plan_->binds) {
      if (b.first == v) return true;
    }
    return false;
  }
  // The first position of `slot` whose preassigned cell is unbound, -1 if none.
  int32_t FirstUnbound(const VirtualClusters::ChainLevel& slot) const {
    int32_t pos = slot.unbound.FindNext(0);
    while (pos >= 0 && IsBound(slot.roots[static_cast<size_t>(pos)])) {
      pos = slot.unbound.FindNext(pos + 1);
    }
    return pos;
  }
  // `BuddyAllocator::IsAvailable` after the planned preassigned cells are allocated.
  bool IsAvailable(CellId p) const {
    if (!buddy_.IsAvailable(p)) return false;
    for (CellId t : taken_) {
      if (Within(t, p) || Within(p, t)) return false;
    }
    return true;
  }
  // Plans preassigned cell `root` on `p` (REQUIRES: `IsAvailable(p)`), as
  // `VirtualClusters::AllocatePreassigned` would take it: `p`, the cells inside it and its
  // available ancestors stop being obtainable; the level's unbound cells drop by one.
  void TakePreassigned(VCellId root, CellId p) {
    plan_->binds.emplace_back(root, p);
    const ChainId ch = f_.chain(p);
    std::vector<int32_t>& d = Delta(ch);
    const CellLevel level = f_.level(p);
    int32_t inside = 1;
    CellId c = p;
    for (CellLevel l = level; l >= 1; --l) {
      d[static_cast<size_t>(l)] -= inside;
      if (l > 1) {
        inside *= f_.num_children(c);
        c = f_.first_child(c);
      }
    }
    for (CellId a = f_.parent(p); !a.IsNil() && IsAvailable(a); a = f_.parent(a)) {
      --d[static_cast<size_t>(f_.level(a))];
    }
    taken_.push_back(p);
  }
  // `VirtualClusters::SafetyOk(ch)` after the planned allocations: the allocator's
  // obtainable cells changed by the overlay, the unbound cells less the planned ones.
  bool SafetyOk(ChainId ch) {
    const std::vector<int32_t>& d = Delta(ch);
    std::vector<int32_t> obtainable(d.size(), 0);
    std::vector<int32_t> unbound = vcs_.all_free(ch);
    for (size_t l = 1; l < d.size(); ++l) {
      obtainable[l] = buddy_.obtainable(ch, static_cast<CellLevel>(l)) + d[l];
    }
    for (CellId t : taken_) {
      if (f_.chain(t) == ch) --unbound[static_cast<size_t>(f_.level(t))];
    }
    return VirtualClusters::SafetyOk(f_.chain_info(ch), obtainable, unbound);
  }
  void Bind(VCellId v, CellId p) { plan_->binds.emplace_back(v, p); }

 private:
  // True when `inner` is `outer` or inside it.
  bool Within(CellId inner, CellId outer) const {
    if (f_.chain(inner) != f_.chain(outer)) return false;
    while (!inner.IsNil() && f_.level(inner) < f_.level(outer)) inner = f_.parent(inner);
    return inner == outer;
  }
  std::vector<int32_t>& Delta(ChainId ch) {
    for (auto& [c, d] : deltas_) {
      if (c == ch) return d;
    }
    deltas_.emplace_back(
        ch, std::vector<int32_t>(static_cast<size_t>(f_.chain_info(ch).top_level) + 1, 0));
    return deltas_.back().second;
  }

  const cellalloc::CellForest& f_;
  const cellalloc::BuddyAllocator& buddy_;
  const VirtualClusters& vcs_;
  BindingPlan* plan_;
  std::vector<CellId> taken_;  // the planned preassigned cells' physical cells
  // Per chain touched: the change of `obtainable` per level (index 0 unused).
  std::vector<std::pair<ChainId, std::vector<int32_t>>> deltas_;
};

}  // namespace

std::string DecideBinding(const cellalloc::CellForest& f, const cellalloc::BuddyAllocator& buddy,
                          const VirtualClusters& vcs, const RecoveryRequest& r, BindingPlan* plan) {
  plan->binds.clear();
  plan->vleaves.assign(r.leaves.size(), kNilId);
  PlannedBinding planned(f, buddy, vcs, plan);
  const VirtualClusters::Vc& vc = vcs.vc(r.vc);
  const absl::string_view pinned_id(r.pinned_cell_id.data(), r.pinned_cell_id.size());
  VCellId pinned_root = kNilId;
  if (!pinned_id.empty()) {
    auto it = vc.pinned.find(pinned_id);
    if (it != vc.pinned.end()) pinned_root = it->second;
  }
  std::string reason;
  for (size_t i = 0; i < r.leaves.size() && reason.empty(); ++i) {
    const CellId leaf = r.leaves[i];
    if (r.types[i] == nullptr) {
      reason = "the placement has no preassigned cell types";
      break;
    }
    const std::string& tname = *r.types[i];
    if (tname.empty()) {
      reason = "the placement has opportunistic leaf cells";
      break;
    }
    const ChainId ch = f.chain(leaf);
    const ChainInfo& info = f.chain_info(ch);
    const CellTypeId type = f.FindType(tname);
    if (type.IsNil() || f.type_info(type).level > info.top_level ||
        info.types[static_cast<size_t>(f.type_info(type).level)] != type) {
      reason = absl::StrCat("cell type ", tname, " is not in chain ", info.name);
      break;
    }
    const CellLevel level = f.type_info(type).level;
    CellId pre = leaf;
    while (f.level(pre) < level) pre = f.parent(pre);
    VCellId vpre = planned.BoundTo(pre);
    if (vpre != kNilId) {
      const state::VCell& bound = vcs.cell(vpre);
      if (bound.vc != r.vc) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is bound to VC ",
                              vcs.vc(bound.vc).name);
        break;
      }
      if (bound.pinned != (pinned_root != kNilId) || (bound.pinned && bound.root != pinned_root)) {
        reason = absl::StrCat(
            "physical cell ", f.address(pre),
            bound.pinned ? " is in another pinned cell" : " is not in the pinned cell");
        break;
      }
    } else {
      if (pinned_root != kNilId) {
        reason =
            absl::StrCat("physical cell ", f.address(pre), " is not in pinned cell ", pinned_id);
        break;
      }
      const VirtualClusters::ChainLevel& slot = vc.cl[ch.value()][static_cast<size_t>(level)];
      int32_t pos = planned.FirstUnbound(slot);
      // Restore: the recorded preassigned cell when it is still an unbound one of this slot.
      const VCellId hinted = Hint(vcs, r.hints, i, level);
      if (hinted != kNilId) {
        const state::VCell& h = vcs.cell(hinted);
        if (h.is_root && !h.pinned && h.vc == r.vc && h.chain == ch && !planned.IsBound(hinted)) {
          pos = h.slot_pos;
        }
      }
      if (pos < 0) {
        reason = absl::StrCat("VC ", vc.name, " has no unbound ", tname, " cell left in chain ",
                              info.name);
        break;
      }
      if (!planned.IsAvailable(pre)) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is not free for VC ", vc.name);
        break;
      }
      vpre = slot.roots[static_cast<size_t>(pos)];
      planned.TakePreassigned(vpre, pre);
      if (!planned.SafetyOk(ch)) {
        reason = absl::StrCat("binding ", f.address(pre), " to VC ", vc.name,
                              " would break the safety of chain ", info.name);
        break;
      }
    }
    // Descend to the leaf.
    VCellId v = vpre;
    while (reason.empty() && vcs.cell(v).level > 1) {
      const CellLevel below = vcs.cell(v).level - 1;
      CellId pc = leaf;
      while (f.level(pc) < below) pc = f.parent(pc);
      VCellId child = planned.BoundTo(pc);
      if (child != kNilId) {
        if (vcs.cell(child).parent != v) {
          reason = absl::StrCat("physical cell ", f.address(pc), " is bound elsewhere");
        }
      } else {
        const VCellId hinted = Hint(vcs, r.hints, i, below);
        if (hinted != kNilId && vcs.cell(hinted).parent == v && !planned.IsBound(hinted)) {
          child = hinted;
        }
        for (int32_t j = 0; child == kNilId && j < vcs.cell(v).num_children; ++j) {
          const VCellId c = vcs.cell(v).first_child + static_cast<VCellId>(j);
          if (!planned.IsBound(c)) child = c;
        }
        if (child == kNilId) {
          reason = absl::StrCat("no free virtual cell under ", vcs.Address(v));
        } else {
          planned.Bind(child, pc);
        }
      }
      v = child;
    }
    if (reason.empty() && vcs.cell(v).user != kNilId) {
      reason = absl::StrCat("virtual cell ", vcs.Address(v), " is already used");
    }
    if (reason.empty()) plan->vleaves[i] = v;
  }
  if (!reason.empty()) {
    plan->binds.clear();
    std::fill(plan->vleaves.begin(), plan->vleaves.end(), kNilId);
  }
  return reason;
}

bool SafeToBind(const cellalloc::CellForest& f, const cellalloc::BuddyAllocator& buddy,
                const VirtualClusters& vcs, VCellId root, CellId p) {
  BindingPlan plan;
  PlannedBinding planned(f, buddy, vcs, &plan);
  planned.TakePreassigned(root, p);
  return planned.SafetyOk(f.chain(p));
}

void ApplyBinding(const BindingPlan& plan, VirtualClusters* vclusters) {
  for (const auto& [v, p] : plan.binds) {
    if (vclusters->cell(v).is_root) {
      vclusters->AllocatePreassigned(v, p);
    } else {
      vclusters->BindCell(v, p);
    }
  }
}

}  // namespace hived
