// State changes: allocate, release, preemption bookkeeping, binding, health, doomed cells.
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

using cellalloc::BuddyState;
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
    pending_bad_.push_back(v);
  }
}

void SchedulerImpl::FlushBadChildren() {
  while (!pending_bad_.empty()) {
    VCellId v = pending_bad_.back();
    pending_bad_.pop_back();
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
      MarkDirty(v_[x].chain);
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

void SchedulerImpl::MarkDirty(ChainId ch) {
  if (std::find(dirty_chains_.begin(), dirty_chains_.end(), ch) == dirty_chains_.end()) {
    dirty_chains_.push_back(ch);
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
  if (ChainHasBadOrDoomed(r.chain)) MarkDirty(r.chain);
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
  if (ChainHasBadOrDoomed(r.chain)) MarkDirty(r.chain);
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
// Doomed bad cells.

bool SchedulerImpl::ChainHasBadOrDoomed(ChainId ch) const {
  if (doomed_count_[ch.value()] > 0) return true;
  const ChainInfo& info = forest_->chain_info(ch);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    if (buddy_->bad_free(ch, l) > 0) return true;
  }
  return false;
}

CellId SchedulerImpl::FindBadFreeCell(ChainId ch, CellLevel l) const {
  const cellalloc::CellForest& f = *forest_;
  const CellLevel top = f.chain_info(ch).top_level;
  for (CellLevel k = l; k <= top; ++k) {
    for (CellId c = buddy_->FirstFree(ch, k); !c.IsNil(); c = buddy_->NextFree(c)) {
      if (buddy_->IsHealthy(c)) continue;
      CellId x = c;
      while (f.level(x) > l) {
        CellId next;
        for (int32_t j = 0; j < f.num_children(x); ++j) {
          if (!buddy_->IsHealthy(f.child(x, j))) {
            next = f.child(x, j);
            break;
          }
        }
        if (next.IsNil()) break;
        x = next;
      }
      if (f.level(x) == l) return x;
    }
  }
  return CellId::Nil();
}

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
        --doomed_count_[ch.value()];
        v_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
      // Bind doomed cells while the VC's unbound cells cannot all be backed by healthy ones.
      while (slot.free > buddy_->obtainable(ch, l) - buddy_->bad_free(ch, l)) {
        CellId pc = FindBadFreeCell(ch, l);
        int32_t pos = slot.unbound.FindNext(0);
        if (pc.IsNil() || pos < 0) break;
        VCellId root = slot.roots[static_cast<size_t>(pos)];
        v_[root].doomed = true;
        v_[root].bad_bound = true;
        slot.doomed.push_back(root);
        ++doomed_count_[ch.value()];
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
        --doomed_count_[ch.value()];
        v_[root].doomed = false;
        UnbindSubtree(root);
        ReleasePreassigned(root);
      }
    }
  }
}

void SchedulerImpl::FlushDoomed() {
  // Rebalancing may dirty chains again; iterate until quiet (bounded by the chains).
  for (int round = 0; round < 4 && !dirty_chains_.empty(); ++round) {
    std::vector<ChainId> chains;
    chains.swap(dirty_chains_);
    for (ChainId ch : chains) RebalanceDoomed(ch);
  }
  dirty_chains_.clear();
}

// ---------------------------------------------------------------------------------------
// Groups.

GroupId SchedulerImpl::NewGroup(const GroupRequest& request, VcId vc) {
  GroupId g;
  if (!free_group_ids_.empty()) {
    g = free_group_ids_.back();
    free_group_ids_.pop_back();
  } else {
    g = static_cast<GroupId>(groups_.size());
    groups_.emplace_back();
  }
  Group& grp = groups_[g];
  // Reset in place: keeps the strings' and vectors' capacity of a recycled slot.
  grp.name = request.name;
  grp.vc_name = request.vc;
  grp.vc = vc;
  grp.priority = request.priority;
  grp.running = request.priority;
  grp.lazy = request.lazy_preemption;
  grp.alive = true;
  grp.state = GState::kRunning;
  grp.pinned_id = request.pinned_cell_id;
  grp.leaf_type = request.leaf_cell_type;
  grp.chain = ChainId::Nil();
  grp.pleaves.clear();
  grp.vleaves.clear();
  grp.saved_vleaves.clear();
  grp.reserved_by_others = 0;
  grp.preemptor.clear();
  grp.downgrade_reason.clear();
  group_by_name_[request.name] = g;
  return g;
}

void SchedulerImpl::DeleteGroup(GroupId g) {
  group_by_name_.erase(groups_[g].name);
  groups_[g].alive = false;
  groups_[g].pleaves.clear();
  groups_[g].vleaves.clear();
  free_group_ids_.push_back(g);
}

void SchedulerImpl::DowngradeGroup(GroupId g, const std::string& preemptor,
                                   const std::string& reason) {
  Group& grp = groups_[g];
  grp.saved_vleaves = grp.vleaves;
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    VCellId v = grp.vleaves[i];
    CellId p = grp.pleaves[i];
    if (v != kNilId && v_[v].user == g) ReleaseVLeaf(v);
    if (p_reserver_[p.value()] == kNilId) SetPLeaf(p, kOpportunisticPriority);
    grp.vleaves[i] = kNilId;
  }
  grp.running = kOpportunisticPriority;
  grp.preemptor = preemptor;
  grp.downgrade_reason = reason;
}

void SchedulerImpl::RevertDowngrade(GroupId g, Priority priority) {
  Group& grp = groups_[g];
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    VCellId v = grp.saved_vleaves[i];
    CellId p = grp.pleaves[i];
    if (v != kNilId) {
      BindLeafPath(v, p);
      SetVLeaf(v, priority, g);
    }
    if (p_reserver_[p.value()] == kNilId) SetPLeaf(p, priority);
  }
  grp.vleaves = std::move(grp.saved_vleaves);
  grp.saved_vleaves.clear();
  grp.running = priority;
  grp.preemptor.clear();
  grp.downgrade_reason.clear();
}

void SchedulerImpl::CancelInternal(GroupId g) {
  Group& pre = groups_[g];
  for (size_t i = 0; i < pre.pleaves.size(); ++i) {
    CellId p = pre.pleaves[i];
    VCellId v = pre.vleaves[i];
    if (p_reserver_[p.value()] != g) continue;
    p_reserver_[p.value()] = kNilId;
    GroupId u = p_user_[p.value()];
    if (u != kNilId) {
      Group& victim = groups_[u];
      auto it = std::find(victim.pleaves.begin(), victim.pleaves.end(), p);
      VCellId vv = victim.vleaves[static_cast<size_t>(it - victim.pleaves.begin())];
      if (vv != kNilId && vv == v) {
        SetVLeaf(v, victim.running, u);
      } else if (v != kNilId && v_[v].user == g) {
        ReleaseVLeaf(v);
      }
      SetPLeaf(p, victim.running);
      if (--victim.reserved_by_others == 0 && victim.state == GState::kBeingPreempted) {
        victim.state = GState::kRunning;
        if (victim.running >= 0) victim.preemptor.clear();
      } else if (victim.reserved_by_others > 0 && victim.preemptor == pre.name) {
        // Still preempted by another group: name that one.
        for (CellId q : victim.pleaves) {
          GroupId r = p_reserver_[q.value()];
          if (r != kNilId && r != g) {
            victim.preemptor = groups_[r].name;
            break;
          }
        }
      }
    } else {
      SetPLeaf(p, kFreePriority);
      if (v != kNilId && v_[v].user == g) ReleaseVLeaf(v);
    }
  }
  DeleteGroup(g);
}

void SchedulerImpl::ReleaseInternal(GroupId g) {
  Group& grp = groups_[g];
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    CellId p = grp.pleaves[i];
    VCellId v = grp.vleaves[i];
    if (p_user_[p.value()] != g) continue;
    p_user_[p.value()] = kNilId;
    if (p_reserver_[p.value()] != kNilId) continue;  // Reserving -> Reserved
    SetPLeaf(p, kFreePriority);
    if (v != kNilId && v_[v].user == g) ReleaseVLeaf(v);
  }
  DeleteGroup(g);
}

// ---------------------------------------------------------------------------------------
// Public mutations.

absl::Status SchedulerImpl::ResolvePlacement(const GroupRequest& request,
                                             const Placement& placement,
                                             std::vector<CellId>* pleaves,
                                             std::vector<const std::string*>* types,
                                             std::string* notes) const {
  const cellalloc::CellForest& f = *forest_;
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
  for (const PodPlacement& pod : placement.pods) {
    auto it = std::find_if(want.begin(), want.end(),
                           [&](const auto& e) { return e.first == pod.leaf_cell_number; });
    if (it == want.end() || it->second == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", request.name,
                       ": the placement's pods do not match the group's members (extra pod with ",
                       pod.leaf_cell_number, " leaf cells on node ", pod.node, ")"));
    }
    --it->second;
    if (static_cast<int32_t>(pod.leaf_cell_indices.size()) != pod.leaf_cell_number) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", request.name, ": a pod on node ", pod.node, " lists ",
          pod.leaf_cell_indices.size(), " leaf cell indices but needs ", pod.leaf_cell_number));
    }
    if (!pod.preassigned_cell_types.empty() &&
        pod.preassigned_cell_types.size() != pod.leaf_cell_indices.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", request.name, ": a pod on node ", pod.node,
                       " has a different number of preassigned cell types and leaf cell indices"));
    }
  }
  for (const auto& e : want) {
    if (e.second != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", request.name, ": the placement's pods do not match the group's members (",
          e.second, " pod(s) with ", e.first, " leaf cells missing)"));
    }
  }
  ChainId chain = f.FindChain(placement.chain);
  std::vector<std::string> ignored;
  for (const PodPlacement& pod : placement.pods) {
    NodeId n = f.FindNode(pod.node);
    for (size_t i = 0; i < pod.leaf_cell_indices.size(); ++i) {
      int32_t idx = pod.leaf_cell_indices[i];
      CellId leaf;
      if (!n.IsNil()) {
        if (!chain.IsNil()) leaf = f.FindLeaf(chain, n, idx);
        for (int32_t c = 0; leaf.IsNil() && c < f.num_chains(); ++c) {
          leaf = f.FindLeaf(ChainId(static_cast<uint32_t>(c)), n, idx);
        }
      }
      if (leaf.IsNil()) {
        ignored.push_back(absl::StrCat(pod.node, ":", idx));
        continue;
      }
      if (std::find(pleaves->begin(), pleaves->end(), leaf) != pleaves->end()) {
        return absl::InvalidArgumentError(absl::StrCat("group ", request.name, ": leaf cell ", idx,
                                                       " on node ", pod.node, " is listed twice"));
      }
      pleaves->push_back(leaf);
      types->push_back(pod.preassigned_cell_types.empty() ? nullptr
                                                          : &pod.preassigned_cell_types[i]);
    }
  }
  if (!ignored.empty()) {
    *notes =
        absl::StrCat("leaf cells not in the cluster are ignored: ", absl::StrJoin(ignored, ", "));
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> SchedulerImpl::Allocate(const GroupRequest& request,
                                                     const Placement& placement) {
  auto existing = group_by_name_.find(request.name);
  if (existing != group_by_name_.end()) {
    if (groups_[existing->second].state == GState::kPreempting) {
      return AllocatePreempting(existing->second, placement);
    }
    return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(request));
  std::vector<CellId> resolved;
  std::vector<const std::string*> types;
  std::string notes;
  const bool cached = ResolveCached(request, placement);
  if (!cached) {
    HIVED_RETURN_IF_ERROR(ResolvePlacement(request, placement, &resolved, &types, &notes));
  }
  // The cached decision's leaves are used in place (no copy); nothing below changes them.
  const std::vector<CellId>& pleaves = cached ? cache_.pleaves : resolved;
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
  auto vc_it = vc_by_name_.find(request.vc);
  VcId vc = vc_it == vc_by_name_.end() ? VcId::Nil() : vc_it->second;
  ++epoch_;
  GroupId g = NewGroup(request, vc);
  Group& grp = groups_[g];
  grp.placement = placement;
  grp.chain = cached ? cache_.chain : forest_->FindChain(placement.chain);
  if (grp.chain.IsNil() && !pleaves.empty()) grp.chain = forest_->chain(pleaves.front());
  grp.pleaves = pleaves;
  grp.vleaves.assign(pleaves.size(), kNilId);
  AllocateInfo info;
  std::string downgrade;
  if (request.priority >= kMinGuaranteedPriority) {
    if (vc.IsNil()) {
      downgrade = absl::StrCat("VC ", request.vc, " does not exist");
    } else if (cache_.name == request.name && cache_.epoch + 1 == epoch_ &&
               (cached || cache_.pleaves == pleaves)) {
      // The placement Schedule just returned: bind its virtual cells directly.
      for (size_t i = 0; i < pleaves.size(); ++i) {
        BindLeafPath(cache_.vleaves[i], pleaves[i]);
        SetVLeaf(cache_.vleaves[i], request.priority, g);
        grp.vleaves[i] = cache_.vleaves[i];
      }
    } else {
      bool down = false;
      Req req;
      req.vc = vc;
      req.raw = &request;
      if (!request.pinned_cell_id.empty()) {
        auto it = vcs_[vc.value()].pinned.find(request.pinned_cell_id);
        if (it != vcs_[vc.value()].pinned.end()) req.pinned_root = it->second;
      }
      // Pass the preassigned types through the group's placement order.
      grp.saved_vleaves.clear();
      std::string reason;
      {
        // RecoverVirtual reads types from `types` via the group: stash them.
        recover_types_ = std::move(types);
        reason = RecoverVirtual(req, &grp, &down);
        recover_types_.clear();
      }
      if (down) downgrade = reason;
    }
  }
  cache_.epoch = ~uint64_t{0};
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

bool SchedulerImpl::ResolveCached(const GroupRequest& request, const Placement& placement) const {
  if (cache_.epoch != epoch_ || cache_.name != request.name) return false;
  const cellalloc::CellForest& f = *forest_;
  const std::vector<int32_t>& needs = cache_.needs;
  // The members: the same multiset of pod sizes as scheduled (`needs` is sorted).
  size_t pods = 0;
  for (const GroupMember& m : request.members) {
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0) return false;
    pods += static_cast<size_t>(m.pod_number);
    if (pods > needs.size()) return false;
  }
  if (pods != needs.size() || placement.pods.size() != pods) return false;
  for (const GroupMember& m : request.members) {
    size_t asked = 0;
    for (const GroupMember& o : request.members) {
      if (o.leaf_cell_number == m.leaf_cell_number) asked += static_cast<size_t>(o.pod_number);
    }
    auto range = std::equal_range(needs.begin(), needs.end(), m.leaf_cell_number);
    if (static_cast<size_t>(range.second - range.first) != asked) return false;
  }
  if (placement.chain != f.chain_info(cache_.chain).name) return false;
  // Pods in the scheduled order, on the scheduled nodes and devices. Device indices are
  // unique per node and leaf type, so these are exactly the leaves ResolvePlacement finds.
  size_t off = 0;
  for (size_t k = 0; k < pods; ++k) {
    const PodPlacement& pod = placement.pods[k];
    const size_t n = static_cast<size_t>(needs[k]);
    if (pod.leaf_cell_number != needs[k] || pod.leaf_cell_indices.size() != n) return false;
    if (!pod.preassigned_cell_types.empty() && pod.preassigned_cell_types.size() != n) {
      return false;
    }
    if (pod.node != f.node_name(f.node(cache_.pleaves[off]))) return false;
    for (size_t i = 0; i < n; ++i, ++off) {
      if (f.leaf_index(cache_.pleaves[off]) != pod.leaf_cell_indices[i]) return false;
    }
  }
  return true;
}

std::string SchedulerImpl::RecoverVirtual(const Req& req, Group* grp, bool* downgraded) {
  const cellalloc::CellForest& f = *forest_;
  const GroupId g = group_by_name_.at(grp->name);
  const Vc& vc = vcs_[req.vc.value()];
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
    VCellId vpre = p_bound_[pre.value()];
    if (vpre != kNilId) {
      if (v_[vpre].vc != req.vc) {
        reason = absl::StrCat("physical cell ", f.address(pre), " is bound to VC ",
                              vcs_[v_[vpre].vc.value()].name);
        break;
      }
      bool in_pinned = v_[vpre].pinned;
      if (in_pinned != (req.pinned_root != kNilId) ||
          (in_pinned && v_[vpre].root != req.pinned_root)) {
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
      AllocatePreassigned(vpre, pre);
      partial = vpre;
      if (!SafetyOk(ch)) {
        reason = absl::StrCat("binding ", f.address(pre), " to VC ", vc.name,
                              " would break the safety of chain ", info.name);
        break;
      }
    }
    // Descend to the leaf.
    VCellId v = vpre;
    CellId p = pre;
    while (v_[v].level > 1) {
      CellId pc = leaf;
      while (f.level(pc) < v_[v].level - 1) pc = f.parent(pc);
      VCellId vc_child = p_bound_[pc.value()];
      if (vc_child != kNilId) {
        if (v_[vc_child].parent != v) {
          reason = absl::StrCat("physical cell ", f.address(pc), " is bound elsewhere");
          break;
        }
      } else {
        for (int32_t j = 0; j < v_[v].num_children; ++j) {
          VCellId c = v_[v].first_child + static_cast<VCellId>(j);
          if (v_[c].bound.IsNil()) {
            vc_child = c;
            break;
          }
        }
        if (vc_child == kNilId) {
          reason = absl::StrCat("no free virtual cell under ", VAddress(v));
          break;
        }
        BindCell(vc_child, pc);
      }
      partial = vc_child;
      v = vc_child;
      p = pc;
    }
    if (!reason.empty()) break;
    if (v_[v].user != kNilId) {
      reason = absl::StrCat("virtual cell ", VAddress(v), " is already used");
      break;
    }
    SetVLeaf(v, req.raw->priority, g);
    partial = kNilId;
    done.push_back(v);
    grp->vleaves[i] = v;
  }
  if (reason.empty()) return reason;
  // Undo: release what this group bound.
  if (partial != kNilId) UnbindUp(partial);
  for (VCellId v : done) ReleaseVLeaf(v);
  std::fill(grp->vleaves.begin(), grp->vleaves.end(), kNilId);
  *downgraded = true;
  return reason;
}

absl::StatusOr<AllocateInfo> SchedulerImpl::AllocatePreempting(GroupId g,
                                                               const Placement& placement) {
  Group& grp = groups_[g];
  GroupRequest request;
  request.name = grp.name;
  for (const PodPlacement& pod : grp.placement.pods)
    request.members.push_back({1, pod.leaf_cell_number});
  std::vector<CellId> pleaves;
  std::vector<const std::string*> types;
  std::string notes;
  HIVED_RETURN_IF_ERROR(ResolvePlacement(request, placement, &pleaves, &types, &notes));
  if (pleaves != grp.pleaves) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", grp.name, " is preempting for another placement; cancel it first"));
  }
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
  ++epoch_;
  for (CellId p : grp.pleaves) {
    p_user_[p.value()] = g;
    p_reserver_[p.value()] = kNilId;
  }
  grp.state = GState::kRunning;
  return AllocateInfo();
}

absl::Status SchedulerImpl::Release(std::string_view name) {
  auto it = group_by_name_.find(ToAbsl(name));
  if (it == group_by_name_.end()) {
    return absl::NotFoundError(
        absl::StrCat("group ", absl::string_view(name.data(), name.size()), " is not running"));
  }
  GroupId g = it->second;
  if (groups_[g].state == GState::kPreempting) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", absl::string_view(name.data(), name.size()),
                     " is preempting, not running; use CancelPreemption"));
  }
  ++epoch_;
  ReleaseInternal(g);
  Settle();
  return absl::OkStatus();
}

absl::Status SchedulerImpl::CancelPreemption(std::string_view name) {
  auto it = group_by_name_.find(ToAbsl(name));
  if (it == group_by_name_.end()) {
    return absl::NotFoundError(
        absl::StrCat("group ", absl::string_view(name.data(), name.size()), " is not known"));
  }
  GroupId g = it->second;
  if (groups_[g].state != GState::kPreempting) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", absl::string_view(name.data(), name.size()), " is not preempting"));
  }
  ++epoch_;
  CancelInternal(g);
  Settle();
  return absl::OkStatus();
}

absl::Status SchedulerImpl::SetNodeHealthy(std::string_view node, bool healthy) {
  const cellalloc::CellForest& f = *forest_;
  NodeId n = f.FindNode(node);
  if (n.IsNil()) {
    return absl::NotFoundError(absl::StrCat("node ", absl::string_view(node.data(), node.size()),
                                            " is not in the cluster"));
  }
  std::vector<CellId> changed = buddy_->SetNodeHealthy(n, healthy);
  if (changed.empty()) return absl::OkStatus();
  ++epoch_;
  for (CellId c : changed) {
    if (f.is_node_level(c))
      views_[f.chain(c).value()].index.SetHealthy(p_view_pos_[c.value()], healthy);
    if (p_bound_[c.value()] != kNilId) UpdateVNodeHealth(p_bound_[c.value()]);
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
      pending_bad_.push_back(p_bound_[parent.value()]);
    }
  } else {
    for (CellId c : changed) {
      VCellId v = p_bound_[c.value()];
      if (v == kNilId || !v_[v].bad_bound) continue;
      if (v_[v].doomed) continue;  // doomed roots are given back by RebalanceDoomed
      if (!CanUnbind(v)) continue;
      VCellId parent = v_[v].parent;
      if (v_[v].is_root) {
        ReleasePreassigned(v);
      } else {
        UnbindCell(v);
        UnbindUp(parent);
      }
    }
  }
  for (CellId c : f.node_cells(n)) MarkDirty(f.chain(c));
  Settle();
  return absl::OkStatus();
}

}  // namespace hived
