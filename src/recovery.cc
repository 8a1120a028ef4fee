// Recovery and Allocate (src/recovery.h, src/reservations.h): running a reserved or
// Preempting group, the Filtering decision, or a placement from elsewhere resolved by name
// with its virtual binding re-derived.
#include "src/recovery.h"

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

// ---------------------------------------------------------------------------------------
// Public mutations.

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

absl::StatusOr<AllocateInfo> SchedulerImpl::Allocate(const GroupRequest& request,
                                                     const Placement& placement) {
  if (sharing_->Handles(request)) return sharing_->Allocate(request, placement);
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state == GState::kReserved || state == GState::kPreempting) {
      return AllocatePreempting(existing, request, placement);
    }
    return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(request));
  if (!reservations_.MatchesFiltered(request, placement, *forest_, epoch_)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", request.name,
        " has no reservation: Schedule it first (the Preempting phase reserves a kPlaced "
        "placement; a Filtering one is taken only by the Allocate right after it), or use "
        "Recover for a placement from elsewhere"));
  }
  // The Filtering decision's leaves are used in place (no copy); nothing below changes them.
  return AllocateFree(request, placement, reservations_.pleaves(), /*filtered=*/true, {}, "");
}

absl::StatusOr<AllocateInfo> SchedulerImpl::Recover(const GroupRequest& request,
                                                    const Placement& placement,
                                                    int32_t* ignored_leaves) {
  if (sharing_->Handles(request)) return sharing_->Recover(request, placement);
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state == GState::kReserved || state == GState::kPreempting) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", request.name, " holds a reservation: Allocate it, or Unreserve it first"));
    }
    return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(request));
  ResolvedPlacement resolved;
  HIVED_RETURN_IF_ERROR(ResolvePlacement(
      *forest_, request, placement,
      ignored_leaves != nullptr ? MissingLeaves::kIgnore : MissingLeaves::kError, &resolved));
  std::string notes;
  if (ignored_leaves != nullptr) {
    *ignored_leaves = static_cast<int32_t>(resolved.missing.size());
    if (!resolved.missing.empty()) {
      notes = absl::StrCat("leaf cells not in the cluster are ignored: ",
                           absl::StrJoin(resolved.missing, ", "));
    }
  }
  return AllocateFree(request, placement, resolved.leaves, /*filtered=*/false,
                      std::move(resolved.types), notes);
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocateFree(
    const GroupRequest& request, const Placement& placement, const std::vector<CellId>& pleaves,
    bool filtered, std::vector<const std::string*> types, const std::string& notes) {
  for (CellId p : pleaves) {
    GroupId u = p_user_[p.value()];
    GroupId r = p_reserver_[p.value()];
    if (u != kNilId || r != kNilId) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", request.name, ": leaf cell ", forest_->leaf_index(p), " on node ",
          forest_->node_name(forest_->node(p)), " is ", u != kNilId ? "used" : "reserved",
          " by group ", groups_[u != kNilId ? u : r].name));
    }
  }
  const VcId vc = vclusters_.FindVc(request.vc);
  ++epoch_;
  GroupId g = NewGroup(request, vc);
  Group& grp = groups_[g];
  grp.placement = placement;
  grp.chain = filtered ? reservations_.chain() : forest_->FindChain(placement.chain);
  if (grp.chain.IsNil() && !pleaves.empty()) grp.chain = forest_->chain(pleaves.front());
  grp.pleaves = pleaves;
  grp.vleaves.assign(pleaves.size(), kNilId);
  AllocateInfo info;
  std::string downgrade;
  if (request.priority >= kMinGuaranteedPriority) {
    if (vc.IsNil()) {
      downgrade = absl::StrCat("VC ", request.vc, " does not exist");
    } else if (filtered) {
      // The placement Schedule just returned: bind its virtual cells directly.
      const std::vector<VCellId>& vleaves = reservations_.vleaves();
      for (size_t i = 0; i < pleaves.size(); ++i) {
        vclusters_.BindLeafPath(vleaves[i], pleaves[i]);
        SetVLeaf(vleaves[i], request.priority, g);
        grp.vleaves[i] = vleaves[i];
      }
    } else {
      bool down = false;
      Req req;
      req.vc = vc;
      req.raw = &request;
      if (!request.pinned_cell_id.empty()) {
        auto it = vclusters_.vc(vc).pinned.find(request.pinned_cell_id);
        if (it != vclusters_.vc(vc).pinned.end()) req.pinned_root = it->second;
      }
      grp.saved_vleaves.clear();
      // RecoverVirtual reads each leaf's preassigned type from `recover_types_`.
      recover_types_ = std::move(types);
      std::string reason = RecoverVirtual(req, &grp, &down);
      recover_types_.clear();
      if (down) downgrade = reason;
    }
  }
  reservations_.Invalidate();
  Priority prio = request.priority;
  if (!downgrade.empty()) {
    prio = kOpportunisticPriority;
    grp.running = kOpportunisticPriority;
    grp.downgrade_reason = downgrade;
    info.downgraded = true;
    info.reason = downgrade;
  }
  for (CellId p : pleaves) {
    p_user_[p.value()] = g;
    SetPLeaf(p, prio);
  }
  if (!notes.empty())
    info.reason = info.reason.empty() ? notes : absl::StrCat(info.reason, "; ", notes);
  Settle();
  return info;
}

std::string SchedulerImpl::RecoverVirtual(const Req& req, Group* grp, bool* downgraded) {
  const cellalloc::CellForest& f = *forest_;
  const GroupId g = groups_.Find(grp->name);
  const Vc& vc = vclusters_.vc(req.vc);
  std::vector<VCellId> done;
  std::string reason;
  VCellId partial = kNilId;
  for (size_t i = 0; i < grp->pleaves.size() && reason.empty(); ++i) {
    CellId leaf = grp->pleaves[i];
    if (recover_types_[i] == nullptr) {
      reason = "the placement has no preassigned cell types";
      break;
    }
    const std::string& tname = *recover_types_[i];
    if (tname.empty()) {
      reason = "the placement has opportunistic leaf cells";
      break;
    }
    ChainId ch = f.chain(leaf);
    const ChainInfo& info = f.chain_info(ch);
    CellTypeId type = f.FindType(tname);
    if (type.IsNil() || f.type_info(type).level > info.top_level ||
        info.types[static_cast<size_t>(f.type_info(type).level)] != type) {
      reason = absl::StrCat("cell type ", tname, " is not in chain ", info.name);
      break;
    }
    CellLevel level = f.type_info(type).level;
    CellId pre = leaf;
    while (f.level(pre) < level) pre = f.parent(pre);
    VCellId vpre = vclusters_.BoundTo(pre);
    if (vpre != kNilId) {
      if (vclusters_.cell(vpre).vc != req.vc) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is bound to VC ",
                              vclusters_.vcs()[vclusters_.cell(vpre).vc.value()].name);
        break;
      }
      bool in_pinned = vclusters_.cell(vpre).pinned;
      if (in_pinned != (req.pinned_root != kNilId) ||
          (in_pinned && vclusters_.cell(vpre).root != req.pinned_root)) {
        reason =
            absl::StrCat("physical cell ", f.address(pre),
                         in_pinned ? " is in another pinned cell" : " is not in the pinned cell");
        break;
      }
    } else {
      if (req.pinned_root != kNilId) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is not in pinned cell ",
                              req.raw->pinned_cell_id);
        break;
      }
      const VcChainLevel& slot = vc.cl[ch.value()][static_cast<size_t>(level)];
      int32_t pos = slot.unbound.FindNext(0);
      // Restore: the recorded preassigned cell when it is still an unbound one of this slot.
      const VCellId hinted = RecoverHint(i, level);
      if (hinted != kNilId && vclusters_.cell(hinted).is_root && !vclusters_.cell(hinted).pinned &&
          vclusters_.cell(hinted).vc == req.vc && vclusters_.cell(hinted).chain == ch &&
          vclusters_.cell(hinted).bound.IsNil()) {
        pos = vclusters_.cell(hinted).slot_pos;
      }
      if (pos < 0) {
        reason = absl::StrCat("VC ", vc.name, " has no unbound ", tname, " cell left in chain ",
                              info.name);
        break;
      }
      if (!buddy_->IsAvailable(pre)) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is not free for VC ", vc.name);
        break;
      }
      vpre = slot.roots[static_cast<size_t>(pos)];
      vclusters_.AllocatePreassigned(vpre, pre);
      partial = vpre;
      if (!vclusters_.SafetyOk(ch)) {
        reason = absl::StrCat("binding ", f.address(pre), " to VC ", vc.name,
                              " would break the safety of chain ", info.name);
        break;
      }
    }
    // Descend to the leaf.
    VCellId v = vpre;
    CellId p = pre;
    while (vclusters_.cell(v).level > 1) {
      CellId pc = leaf;
      while (f.level(pc) < vclusters_.cell(v).level - 1) pc = f.parent(pc);
      VCellId vc_child = vclusters_.BoundTo(pc);
      if (vc_child != kNilId) {
        if (vclusters_.cell(vc_child).parent != v) {
          reason = absl::StrCat("physical cell ", f.address(pc), " is bound elsewhere");
          break;
        }
      } else {
        const VCellId hinted = RecoverHint(i, vclusters_.cell(v).level - 1);
        if (hinted != kNilId && vclusters_.cell(hinted).parent == v &&
            vclusters_.cell(hinted).bound.IsNil()) {
          vc_child = hinted;
        }
        for (int32_t j = 0; vc_child == kNilId && j < vclusters_.cell(v).num_children; ++j) {
          VCellId c = vclusters_.cell(v).first_child + static_cast<VCellId>(j);
          if (vclusters_.cell(c).bound.IsNil()) {
            vc_child = c;
            break;
          }
        }
        if (vc_child == kNilId) {
          reason = absl::StrCat("no free virtual cell under ", vclusters_.Address(v));
          break;
        }
        vclusters_.BindCell(vc_child, pc);
      }
      partial = vc_child;
      v = vc_child;
      p = pc;
    }
    if (!reason.empty()) break;
    if (vclusters_.cell(v).user != kNilId) {
      reason = absl::StrCat("virtual cell ", vclusters_.Address(v), " is already used");
      break;
    }
    SetVLeaf(v, req.raw->priority, g);
    partial = kNilId;
    done.push_back(v);
    grp->vleaves[i] = v;
  }
  if (reason.empty()) return reason;
  // Undo: release what this group bound.
  if (partial != kNilId) vclusters_.UnbindUp(partial);
  for (VCellId v : done) ReleaseVLeaf(v);
  std::fill(grp->vleaves.begin(), grp->vleaves.end(), kNilId);
  *downgraded = true;
  return reason;
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocatePreempting(GroupId g,
                                                               const GroupRequest& request,
                                                               const Placement& placement) {
  Group& grp = groups_[g];
  const bool reserved = grp.state == GState::kReserved;
  std::string diff = Reservations::RequestDifference(grp, request);
  if (diff.empty()) diff = Reservations::PlacementDifference(grp.placement, placement);
  if (!diff.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", grp.name, " holds a reservation for another ", "request or placement (", diff,
        "); ", reserved ? "Unreserve" : "CancelPreemption", " it first"));
  }
  if (!reserved) {
    std::vector<std::string> still;
    for (CellId p : grp.pleaves) {
      GroupId u = p_user_[p.value()];
      if (u != kNilId && std::find(still.begin(), still.end(), groups_[u].name) == still.end()) {
        still.push_back(groups_[u].name);
      }
    }
    if (!still.empty()) {
      std::sort(still.begin(), still.end());
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", grp.name, " still waits for its victims: ", absl::StrJoin(still, ", ")));
    }
  }
  ++epoch_;
  for (CellId p : grp.pleaves) {  // the leaves are held at the group's priority already
    p_user_[p.value()] = g;
    p_reserver_[p.value()] = kNilId;
  }
  grp.state = GState::kRunning;
  return AllocateInfo();
}

}  // namespace hived
