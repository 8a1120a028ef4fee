// Recovery (src/recovery.h): resolving a placement from elsewhere to leaf cells, and
// re-deriving the virtual cells its leaves get.
#include "src/recovery.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
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

std::string RecoverBinding(const cellalloc::CellForest& f, const cellalloc::BuddyAllocator& buddy,
                           const RecoveryRequest& r, VirtualClusters* vclusters,
                           std::vector<VCellId>* vleaves) {
  VirtualClusters& vcs = *vclusters;
  const VirtualClusters::Vc& vc = vcs.vc(r.vc);
  const absl::string_view pinned_id(r.pinned_cell_id.data(), r.pinned_cell_id.size());
  VCellId pinned_root = kNilId;
  if (!pinned_id.empty()) {
    auto it = vc.pinned.find(pinned_id);
    if (it != vc.pinned.end()) pinned_root = it->second;
  }
  vleaves->assign(r.leaves.size(), kNilId);
  std::string reason;
  VCellId partial = kNilId;  // the lowest cell bound for the current leaf
  size_t done = 0;           // leaves bound
  for (size_t i = 0; i < r.leaves.size(); ++i) {
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
    VCellId vpre = vcs.BoundTo(pre);
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
      int32_t pos = slot.unbound.FindNext(0);
      // Restore: the recorded preassigned cell when it is still an unbound one of this slot.
      const VCellId hinted = Hint(vcs, r.hints, i, level);
      if (hinted != kNilId) {
        const state::VCell& h = vcs.cell(hinted);
        if (h.is_root && !h.pinned && h.vc == r.vc && h.chain == ch && h.bound.IsNil()) {
          pos = h.slot_pos;
        }
      }
      if (pos < 0) {
        reason = absl::StrCat("VC ", vc.name, " has no unbound ", tname, " cell left in chain ",
                              info.name);
        break;
      }
      if (!buddy.IsAvailable(pre)) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is not free for VC ", vc.name);
        break;
      }
      vpre = slot.roots[static_cast<size_t>(pos)];
      vcs.AllocatePreassigned(vpre, pre);
      partial = vpre;
      if (!vcs.SafetyOk(ch)) {
        reason = absl::StrCat("binding ", f.address(pre), " to VC ", vc.name,
                              " would break the safety of chain ", info.name);
        break;
      }
    }
    // Descend to the leaf.
    VCellId v = vpre;
    while (vcs.cell(v).level > 1) {
      const CellLevel below = vcs.cell(v).level - 1;
      CellId pc = leaf;
      while (f.level(pc) < below) pc = f.parent(pc);
      VCellId child = vcs.BoundTo(pc);
      if (child != kNilId) {
        if (vcs.cell(child).parent != v) {
          reason = absl::StrCat("physical cell ", f.address(pc), " is bound elsewhere");
          break;
        }
      } else {
        const VCellId hinted = Hint(vcs, r.hints, i, below);
        if (hinted != kNilId && vcs.cell(hinted).parent == v && vcs.cell(hinted).bound.IsNil()) {
          child = hinted;
        }
        for (int32_t j = 0; child == kNilId && j < vcs.cell(v).num_children; ++j) {
          const VCellId c = vcs.cell(v).first_child + static_cast<VCellId>(j);
          if (vcs.cell(c).bound.IsNil()) child = c;
        }
        if (child == kNilId) {
          reason = absl::StrCat("no free virtual cell under ", vcs.Address(v));
          break;
        }
        vcs.BindCell(child, pc);
      }
      partial = child;
      v = child;
    }
    if (!reason.empty()) break;
    if (vcs.cell(v).user != kNilId) {
      reason = absl::StrCat("virtual cell ", vcs.Address(v), " is already used");
      break;
    }
    partial = kNilId;
    (*vleaves)[i] = v;
    done = i + 1;
  }
  if (reason.empty()) return reason;
  // Undo (invariant 4): unbind what this call bound, the unfinished leaf's path first.
  if (partial != kNilId) vcs.UnbindUp(partial);
  for (size_t i = 0; i < done; ++i) vcs.UnbindUp((*vleaves)[i]);
  std::fill(vleaves->begin(), vleaves->end(), kNilId);
  return reason;
}

std::string PreviewBinding(const cellalloc::CellForest& f, const cellalloc::BuddyAllocator& buddy,
                           const VirtualClusters& vcs, VcId vc_id, absl::Span<const CellId> leaves,
                           const std::string& tname) {
  const VirtualClusters::Vc& vc = vcs.vc(vc_id);
  if (tname.empty()) return "the placement has opportunistic leaf cells";
  const CellTypeId type = f.FindType(tname);
  absl::InlinedVector<CellId, 8> bound_here;  // preassigned cells this preview binds
  for (CellId leaf : leaves) {
    const ChainId ch = f.chain(leaf);
    const ChainInfo& info = f.chain_info(ch);
    if (type.IsNil() || f.type_info(type).level > info.top_level ||
        info.types[static_cast<size_t>(f.type_info(type).level)] != type) {
      return absl::StrCat("cell type ", tname, " is not in chain ", info.name);
    }
    const CellLevel level = f.type_info(type).level;
    CellId pre = leaf;
    while (f.level(pre) < level) pre = f.parent(pre);
    if (std::find(bound_here.begin(), bound_here.end(), pre) != bound_here.end()) continue;
    const VCellId vpre = vcs.BoundTo(pre);
    if (vpre != kNilId) {
      const state::VCell& bound = vcs.cell(vpre);
      if (bound.vc != vc_id) {
        return absl::StrCat("physical cell ", f.address(pre), " is bound to VC ",
                            vcs.vc(bound.vc).name);
      }
      if (bound.pinned)
        return absl::StrCat("physical cell ", f.address(pre), " is in another pinned cell");
      continue;
    }
    // An unbound preassigned cell left after the ones this preview took in this chain/level.
    const VirtualClusters::ChainLevel& slot = vc.cl[ch.value()][static_cast<size_t>(level)];
    size_t taken = 0;
    for (CellId b : bound_here) taken += f.chain(b) == ch && f.level(b) == level ? 1 : 0;
    size_t left = 0;
    for (int32_t pos = slot.unbound.FindNext(0); pos >= 0 && left <= taken;
         pos = slot.unbound.FindNext(pos + 1)) {
      ++left;
    }
    if (left <= taken) {
      return absl::StrCat("VC ", vc.name, " has no unbound ", tname, " cell left in chain ",
                          info.name);
    }
    if (!buddy.IsAvailable(pre)) {
      return absl::StrCat("physical cell ", f.address(pre), " is not free for VC ", vc.name);
    }
    bound_here.push_back(pre);
  }
  return std::string();
}

}  // namespace hived
