// Status views and invariant checks.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::BuddyState;
using cellalloc::ChainInfo;

std::string SchedulerImpl::VAddress(VCellId v) const {
  std::vector<int32_t> parts;
  VCellId x = v;
  while (true) {
    parts.push_back(v_[x].index);
    if (v_[x].parent == kNilId) break;
    x = v_[x].parent;
  }
  std::string out = vcs_[v_[v].vc.value()].name;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) absl::StrAppend(&out, "/", *it);
  return out;
}

std::string SchedulerImpl::NodeOfV(VCellId v) const {
  CellId p = v_[v].bound;
  if (p.IsNil() || forest_->node(p).IsNil()) return std::string();
  return forest_->node_name(forest_->node(p));
}

void SchedulerImpl::FillPlacement(ChainId ch, const std::vector<int32_t>& needs,
                                  const std::vector<CellId>& pleaves,
                                  const std::vector<VCellId>& vleaves, Placement* out) const {
  const cellalloc::CellForest& f = *forest_;
  out->chain = f.chain_info(ch).name;
  out->pods.resize(needs.size());
  size_t off = 0;
  for (size_t k = 0; k < needs.size(); ++k) {
    PodPlacement& pod = out->pods[k];
    pod.leaf_cell_number = needs[k];
    pod.node = f.node_name(f.node(pleaves[off]));
    pod.leaf_cell_indices.resize(static_cast<size_t>(needs[k]));
    pod.preassigned_cell_types.resize(static_cast<size_t>(needs[k]));
    for (int32_t i = 0; i < needs[k]; ++i, ++off) {
      pod.leaf_cell_indices[static_cast<size_t>(i)] = f.leaf_index(pleaves[off]);
      VCellId v = vleaves[off];
      if (v != kNilId) {
        pod.preassigned_cell_types[static_cast<size_t>(i)] = f.type_info(v_[v_[v].root].type).name;
      } else {
        pod.preassigned_cell_types[static_cast<size_t>(i)].clear();
      }
    }
  }
}

namespace {

CellState Combine(const std::vector<CellState>& kids) {
  if (kids.empty()) return CellState::kFree;
  bool any_used = false, any_reserving = false, any_reserved = false, all_same = true;
  for (CellState s : kids) {
    any_used = any_used || s == CellState::kUsed;
    any_reserving = any_reserving || s == CellState::kReserving;
    any_reserved = any_reserved || s == CellState::kReserved;
    all_same = all_same && s == kids.front();
  }
  if (any_used) return CellState::kUsed;
  if (all_same) return kids.front();
  if (any_reserving) return CellState::kReserving;
  if (any_reserved) return CellState::kReserved;
  return CellState::kFree;
}

}  // namespace

CellState SchedulerImpl::PState(CellId c) const {
  const cellalloc::CellForest& f = *forest_;
  if (f.level(c) == 1) {
    bool used = p_user_[c.value()] != kNilId, reserved = p_reserver_[c.value()] != kNilId;
    if (used && reserved) return CellState::kReserving;
    if (used) return CellState::kUsed;
    if (reserved) return CellState::kReserved;
    return CellState::kFree;
  }
  std::vector<CellState> kids;
  for (int32_t k = 0; k < f.num_children(c); ++k) kids.push_back(PState(f.child(c, k)));
  return Combine(kids);
}

CellState SchedulerImpl::VState(VCellId v) const {
  if (v_[v].level == 1) {
    CellId p = v_[v].bound;
    if (v_[v].user == kNilId || p.IsNil()) return CellState::kFree;
    return PState(p);
  }
  std::vector<CellState> kids;
  for (int32_t k = 0; k < v_[v].num_children; ++k) {
    kids.push_back(VState(v_[v].first_child + static_cast<VCellId>(k)));
  }
  return Combine(kids);
}

PhysicalCellStatus SchedulerImpl::PStatus(CellId c) const {
  const cellalloc::CellForest& f = *forest_;
  PhysicalCellStatus s;
  s.cell_type = f.type_info(f.type(c)).name;
  s.address = f.address(c);
  s.level = f.level(c);
  s.is_node_level = f.is_node_level(c);
  s.health = buddy_->IsHealthy(c) ? CellHealth::kHealthy : CellHealth::kBad;
  s.priority = pusage_.MaxPriority(c);
  s.pinned_cell_id = f.pinned_id(c);
  VCellId v = p_bound_[c.value()];
  if (v != kNilId) {
    s.vc = vcs_[v_[v].vc.value()].name;
    s.virtual_cell = VAddress(v);
  }
  std::vector<CellState> kids;
  for (int32_t k = 0; k < f.num_children(c); ++k) {
    s.children.push_back(PStatus(f.child(c, k)));
    kids.push_back(s.children.back().state);
  }
  s.state = f.level(c) == 1 ? PState(c) : Combine(kids);
  return s;
}

VirtualCellStatus SchedulerImpl::VStatus(VCellId v) const {
  const cellalloc::CellForest& f = *forest_;
  VirtualCellStatus s;
  s.cell_type = f.type_info(v_[v].type).name;
  s.address = VAddress(v);
  s.level = v_[v].level;
  CellId p = v_[v].bound;
  s.health = p.IsNil() || buddy_->IsHealthy(p) ? CellHealth::kHealthy : CellHealth::kBad;
  s.priority = vusage_.MaxPriority(CellId(v));
  if (!p.IsNil()) s.physical_cell = f.address(p);
  if (v_[v].pinned && v_[v].is_root) s.pinned_cell_id = f.pinned_id(p);
  std::vector<CellState> kids;
  for (int32_t k = 0; k < v_[v].num_children; ++k) {
    s.children.push_back(VStatus(v_[v].first_child + static_cast<VCellId>(k)));
    kids.push_back(s.children.back().state);
  }
  s.state = v_[v].level == 1 ? VState(v) : Combine(kids);
  return s;
}

GroupStatus SchedulerImpl::GStatus(const Group& g) const {
  GroupStatus s;
  s.name = g.name;
  s.vc = g.vc_name;
  switch (g.state) {
    case GState::kRunning:
      s.state = g.running >= 0 ? GroupState::kAllocated : GroupState::kOpportunistic;
      break;
    case GState::kPreempting:
      s.state = GroupState::kPreempting;
      break;
    case GState::kBeingPreempted:
      s.state = GroupState::kBeingPreempted;
      break;
  }
  s.priority = g.running;
  s.request.name = g.name;
  s.request.vc = g.vc_name;
  s.request.priority = g.priority;
  s.request.leaf_cell_type = g.leaf_type;
  s.request.pinned_cell_id = g.pinned_id;
  s.request.lazy_preemption = g.lazy;
  s.request.members = g.members;
  s.placement = g.placement;
  s.preemptor = g.preemptor;
  s.downgrade_reason = g.downgrade_reason;
  return s;
}

GroupStatus SchedulerImpl::GetGroup(std::string_view name) const {
  const GroupId g = groups_.Find(name);
  if (g == kNilId) {
    GroupStatus s;
    s.name = std::string(name);
    s.request.name = s.name;
    return s;
  }
  return GStatus(groups_[g]);
}

std::vector<GroupStatus> SchedulerImpl::Groups() const {
  std::vector<GroupStatus> out;
  for (const Group& g : groups_.slots()) {
    if (g.alive) out.push_back(GStatus(g));
  }
  std::sort(out.begin(), out.end(),
            [](const GroupStatus& a, const GroupStatus& b) { return a.name < b.name; });
  return out;
}

std::vector<PhysicalCellStatus> SchedulerImpl::PhysicalCluster() const {
  std::vector<PhysicalCellStatus> out;
  const cellalloc::CellForest& f = *forest_;
  // Top-level cells in config order: chains hold them in config order per chain; merge by id.
  std::vector<CellId> tops;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    for (CellId t : f.chain_info(ChainId(static_cast<uint32_t>(c))).top_cells) tops.push_back(t);
  }
  std::sort(tops.begin(), tops.end());
  for (CellId t : tops) out.push_back(PStatus(t));
  return out;
}

absl::StatusOr<std::vector<VirtualCellStatus>> SchedulerImpl::VirtualCluster(
    std::string_view vc) const {
  auto it = vc_by_name_.find(ToAbsl(vc));
  if (it == vc_by_name_.end()) {
    return absl::NotFoundError(
        absl::StrCat("VC ", absl::string_view(vc.data(), vc.size()), " does not exist"));
  }
  std::vector<VirtualCellStatus> out;
  for (VCellId r : vcs_[it->second.value()].roots) out.push_back(VStatus(r));
  return out;
}

std::vector<VcUsage> SchedulerImpl::VcUsages() const {
  const cellalloc::CellForest& f = *forest_;
  std::vector<VcUsage> out;
  for (const Vc& vc : vcs_) {
    for (const std::string& type : f.leaf_types()) {
      VcUsage u;
      u.vc = vc.name;
      u.leaf_cell_type = type;
      for (VCellId r : vc.roots) {
        if (f.chain_info(v_[r].chain).leaf_type == type) {
          u.reserved_leaf_cells += f.type_info(v_[r].type).leaf_count;
        }
      }
      for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
        const Group& g = groups_.slots()[gi];
        if (!g.alive || g.vc_name != vc.name || g.state == GState::kPreempting) continue;
        for (CellId p : g.pleaves) {
          if (f.chain_info(f.chain(p)).leaf_type != type || p_user_[p.value()] != gi) continue;
          if (g.running >= 0) {
            ++u.guaranteed_used_leaf_cells;
          } else {
            ++u.opportunistic_used_leaf_cells;
          }
        }
      }
      if (u.reserved_leaf_cells > 0 || u.guaranteed_used_leaf_cells > 0 ||
          u.opportunistic_used_leaf_cells > 0) {
        out.push_back(u);
      }
    }
  }
  return out;
}

std::vector<ChainLevelCapacity> SchedulerImpl::Capacity() const {
  const cellalloc::CellForest& f = *forest_;
  std::vector<ChainLevelCapacity> out;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      ChainLevelCapacity cap;
      cap.chain = info.name;
      cap.level = l;
      cap.cell_type = f.type_info(info.types[static_cast<size_t>(l)]).name;
      cap.total = info.cells_at_level[static_cast<size_t>(l)];
      cap.free = buddy_->free_count(ch, l);
      cap.obtainable = buddy_->obtainable(ch, l);
      cap.bad_free = buddy_->bad_free(ch, l);
      for (const Vc& vc : vcs_)
        cap.vc_reserved += vc.cl[ch.value()][static_cast<size_t>(l)].reserved;
      cap.vc_unbound = all_vc_free_[ch.value()][static_cast<size_t>(l)];
      out.push_back(cap);
    }
  }
  return out;
}

std::vector<NodeStatus> SchedulerImpl::Nodes() const {
  const cellalloc::CellForest& f = *forest_;
  std::vector<NodeStatus> out;
  for (int32_t i = 0; i < f.num_nodes(); ++i) {
    NodeId n(static_cast<uint32_t>(i));
    for (CellId c : f.node_cells(n)) {
      NodeStatus s;
      s.name = f.node_name(n);
      s.leaf_cell_type = f.chain_info(f.chain(c)).leaf_type;
      s.total_leaf_cells = f.leaf_count(c);
      s.free_leaf_cells = s.total_leaf_cells - pusage_.UsedTotal(c);
      s.healthy = buddy_->IsNodeHealthy(n);
      out.push_back(s);
    }
  }
  return out;
}

absl::Status SchedulerImpl::CheckInvariants() const {
  const cellalloc::CellForest& f = *forest_;
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  HIVED_RETURN_IF_ERROR(buddy_->CheckInvariants());
  HIVED_RETURN_IF_ERROR(pusage_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(vusage_.CheckInvariants());
  const size_t n = static_cast<size_t>(f.num_cells());
  // (1) Leaves and groups.
  std::vector<int32_t> seen_user(n, 0), seen_reserver(n, 0);
  HIVED_RETURN_IF_ERROR(groups_.CheckInvariants());
  // Per-request scratch is empty between calls; the cached decision is well formed.
  HIVED_RETURN_IF_ERROR(cache_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(placer_.CheckInvariants());
  std::vector<int32_t> doomed(static_cast<size_t>(f.num_chains()), 0);
  for (const VCell& c : v_) doomed[c.chain.value()] += c.doomed ? 1 : 0;
  HIVED_RETURN_IF_ERROR(health_.CheckInvariants(doomed));
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive) continue;
    GroupId id = static_cast<GroupId>(gi);
    for (size_t i = 0; i < g.pleaves.size(); ++i) {
      CellId p = g.pleaves[i];
      if (f.level(p) != 1) return fail("(1) group ", g.name, " holds a non-leaf cell");
      if (g.state == GState::kPreempting) {
        if (p_reserver_[p.value()] != id) {
          return fail("(1) preempting group ", g.name, " does not reserve leaf ", f.address(p));
        }
        ++seen_reserver[p.value()];
      } else {
        if (p_user_[p.value()] != id) {
          return fail("(1) group ", g.name, " does not use leaf ", f.address(p));
        }
        ++seen_user[p.value()];
      }
      VCellId v = g.vleaves[i];
      if (v != kNilId && v_[v].user == id) {
        if (v_[v].bound != p)
          return fail("(4) group ", g.name, " virtual leaf ", VAddress(v),
                      " is not bound to its leaf");
        if (v_[v].vc != g.vc)
          return fail("(5) group ", g.name, " uses a virtual cell of another VC");
      }
      if (v != kNilId && g.running < 0 && g.state != GState::kPreempting) {
        return fail("(1) opportunistic group ", g.name, " holds a virtual leaf");
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    CellId p(static_cast<uint32_t>(i));
    if (f.level(p) != 1) continue;
    GroupId u = p_user_[i], r = p_reserver_[i];
    if ((u != kNilId) != (seen_user[i] == 1) || seen_user[i] > 1) {
      return fail("(1) leaf ", f.address(p), " user does not match the groups");
    }
    if ((r != kNilId) != (seen_reserver[i] == 1) || seen_reserver[i] > 1) {
      return fail("(1) leaf ", f.address(p), " reserver does not match the groups");
    }
    Priority want = kFreePriority;
    if (r != kNilId) {
      want = groups_[r].priority;
      if (u != kNilId) {
        // (6) only lower priority work is preempted.
        if (groups_[u].running >= groups_[r].priority) {
          return fail("(6) group ", groups_[u].name, " is preempted by ", groups_[r].name,
                      " without a lower priority");
        }
        if (groups_[u].state != GState::kBeingPreempted) {
          return fail("(6) group ", groups_[u].name, " on a reserved leaf is not being preempted");
        }
      }
    } else if (u != kNilId) {
      want = groups_[u].running;
    }
    if (pusage_.LeafPriority(p) != want) {
      return fail("priority of leaf ", f.address(p), " is ", pusage_.LeafPriority(p), ", expected ",
                  want);
    }
  }
  // (4) Binding symmetry and virtual leaf priorities.
  for (size_t i = 0; i < v_.size(); ++i) {
    const VCell& v = v_[i];
    VCellId id = static_cast<VCellId>(i);
    int32_t bound_kids = 0;
    for (int32_t k = 0; k < v.num_children; ++k) {
      if (!v_[v.first_child + static_cast<VCellId>(k)].bound.IsNil()) ++bound_kids;
    }
    if (bound_kids != v.bound_children) return fail("(4) bound-children count of ", VAddress(id));
    if (v.level == 1) {
      Priority want = v.user == kNilId                               ? kFreePriority
                      : groups_[v.user].state == GState::kPreempting ? groups_[v.user].priority
                                                                     : groups_[v.user].running;
      if (v.user != kNilId && !groups_[v.user].alive)
        return fail("virtual leaf ", VAddress(id), " held by a dead group");
      if (vusage_.LeafPriority(CellId(id)) != want) {
        return fail("priority of virtual leaf ", VAddress(id), " is ",
                    vusage_.LeafPriority(CellId(id)), ", expected ", want);
      }
      if (v.user != kNilId && v.bound.IsNil())
        return fail("(4) used virtual leaf ", VAddress(id), " is unbound");
    }
    if (v.pinned && v.is_root && v.bound.IsNil())
      return fail("pinned cell ", VAddress(id), " is unbound");
    if (v.bound.IsNil()) continue;
    CellId p = v.bound;
    if (p_bound_[p.value()] != id)
      return fail("(4) ", VAddress(id), " -> ", f.address(p), " is not symmetric");
    if (f.level(p) != v.level || f.chain(p) != v.chain) {
      return fail("(4) ", VAddress(id), " is bound to ", f.address(p),
                  " of another level or chain");
    }
    if (v.parent != kNilId && !v_[v.parent].bound.IsNil() && v_[v.parent].bound != f.parent(p)) {
      return fail("(4) ", VAddress(id), " and its parent are bound to unrelated cells");
    }
    if (v.parent != kNilId && v_[v.parent].bound.IsNil()) {
      return fail("(4) ", VAddress(id), " is bound but its parent is not");
    }
    if (v.is_root && buddy_->state(p) != BuddyState::kUsed) {
      return fail("(4) preassigned ", VAddress(id), " is bound to ", f.address(p),
                  " which the allocator does not hold");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    VCellId v = p_bound_[i];
    if (v != kNilId && v_[v].bound.value() != i)
      return fail("(4) physical ", f.address(CellId(static_cast<uint32_t>(i))),
                  " binding is not symmetric");
  }
  // (3) Safety and VC counters.
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      size_t li = static_cast<size_t>(l);
      int32_t sum = 0;
      for (const Vc& vc : vcs_) {
        const VcChainLevel& s = vc.cl[ch.value()][li];
        int32_t unbound = 0;
        for (size_t k = 0; k < s.roots.size(); ++k) {
          bool ub = v_[s.roots[k]].bound.IsNil();
          if (ub) ++unbound;
          if (ub != s.unbound.Contains(static_cast<int32_t>(k))) {
            return fail("unbound set of VC ", vc.name, " is stale at ", VAddress(s.roots[k]));
          }
        }
        if (unbound != s.free)
          return fail("vc_free of VC ", vc.name, " chain ", info.name, " level ", l);
        sum += s.free;
      }
      if (sum != all_vc_free_[ch.value()][li])
        return fail("all_vc_free of chain ", info.name, " level ", l);
      if (buddy_->obtainable(ch, l) < sum) {
        return fail("(3) safety broken at chain ", info.name, " level ", l, ": ",
                    buddy_->obtainable(ch, l), " obtainable < ", sum, " unbound virtual cells");
      }
    }
    // (3') Joint safety: top-down, the free cells left after every VC takes its unbound
    // cells of a level can still be split into the cells the levels below need.
    int64_t left = 0;
    for (CellLevel l = info.top_level; l >= 1; --l) {
      size_t li = static_cast<size_t>(l);
      if (l < info.top_level) left *= info.child_count[li + 1];
      left += buddy_->free_count(ch, l) - all_vc_free_[ch.value()][li];
      if (left < 0) {
        return fail("(3) joint safety broken at chain ", info.name, " level ", l,
                    ": the free cells cannot back the VCs' unbound cells");
      }
    }
  }
  // Views.
  for (const View& view : views_) {
    for (int32_t i = 0; i < view.index.num_nodes(); ++i) {
      uint32_t cell = view.nodes[static_cast<size_t>(i)];
      int32_t k1, k2;
      bool healthy;
      if (view.physical) {
        k1 = pusage_.UsedAt(CellId(cell), kOpportunisticPriority);
        k2 = pusage_.UsedAbove(CellId(cell), kOpportunisticPriority);
        healthy = buddy_->IsHealthy(CellId(cell));
      } else {
        k1 = vusage_.UsedTotal(CellId(cell));
        k2 = 0;
        healthy = v_[cell].bound.IsNil() || buddy_->IsHealthy(v_[cell].bound);
      }
      if (k1 != view.index.key1(i) || k2 != view.index.key2(i) ||
          healthy != view.index.healthy(i)) {
        return fail("node index is stale for node ", i, " of a ",
                    view.physical ? "physical" : "virtual", " view");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hived
