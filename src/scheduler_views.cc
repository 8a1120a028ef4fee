// Status views and invariant checks.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hierarchy/spec_analysis.h"
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

const std::string kNoName;

// A parent cell's state from its children's, one child at a time (no buffer): Used if any
// child is Used; else the children's state when they all share it; else Reserving if any
// child is Reserving, else Reserved if any is Reserved, else Free.
class StateCombiner {
 public:
  void Add(CellState s) {
    if (count_++ == 0) first_ = s;
    any_used_ = any_used_ || s == CellState::kUsed;
    any_reserving_ = any_reserving_ || s == CellState::kReserving;
    any_reserved_ = any_reserved_ || s == CellState::kReserved;
    all_same_ = all_same_ && s == first_;
  }
  CellState Result() const {
    if (count_ == 0) return CellState::kFree;
    if (any_used_) return CellState::kUsed;
    if (all_same_) return first_;
    if (any_reserving_) return CellState::kReserving;
    if (any_reserved_) return CellState::kReserved;
    return CellState::kFree;
  }

 private:
  int32_t count_ = 0;
  CellState first_ = CellState::kFree;
  bool any_used_ = false, any_reserving_ = false, any_reserved_ = false, all_same_ = true;
};

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
  StateCombiner kids;
  for (int32_t k = 0; k < f.num_children(c); ++k) kids.Add(PState(f.child(c, k)));
  return kids.Result();
}

CellState SchedulerImpl::VState(VCellId v) const {
  if (v_[v].level == 1) {
    CellId p = v_[v].bound;
    if (v_[v].user == kNilId || p.IsNil()) return CellState::kFree;
    return PState(p);
  }
  StateCombiner kids;
  for (int32_t k = 0; k < v_[v].num_children; ++k) {
    kids.Add(VState(v_[v].first_child + static_cast<VCellId>(k)));
  }
  return kids.Result();
}

// The status trees are filled in place, depth first: each cell's address (and its bound
// cell's) is its parent's plus one component, so no address is rebuilt from the root, and
// a parent's state is combined from its children's as they are filled. Cost O(cells).
void SchedulerImpl::FillPStatus(CellId c, std::string address, VCellId parent_v,
                                const std::string& parent_vaddr, PhysicalCellStatus* s) const {
  const cellalloc::CellForest& f = *forest_;
  s->cell_type = f.type_info(f.type(c)).name;
  s->address = std::move(address);
  s->level = f.level(c);
  s->is_node_level = f.is_node_level(c);
  s->health = buddy_->IsHealthy(c) ? CellHealth::kHealthy : CellHealth::kBad;
  s->priority = pusage_.MaxPriority(c);
  s->pinned_cell_id = f.pinned_id(c);
  const VCellId v = p_bound_[c.value()];
  if (v != kNilId) {
    s->vc = vcs_[v_[v].vc.value()].name;
    s->virtual_cell = parent_v != kNilId && v_[v].parent == parent_v
                          ? absl::StrCat(parent_vaddr, "/", v_[v].index)
                          : VAddress(v);
  }
  const int32_t n = f.num_children(c);
  if (n == 0) {
    s->state = PState(c);
    return;
  }
  s->children.resize(static_cast<size_t>(n));
  StateCombiner kids;
  for (int32_t k = 0; k < n; ++k) {
    const CellId child = f.child(c, k);
    PhysicalCellStatus& out = s->children[static_cast<size_t>(k)];
    FillPStatus(child, absl::StrCat(s->address, "/", f.own_address(child)), v, s->virtual_cell,
                &out);
    kids.Add(out.state);
  }
  s->state = kids.Result();
}

PhysicalCellStatus SchedulerImpl::PStatus(CellId c) const {
  PhysicalCellStatus s;
  const CellId parent = forest_->parent(c);
  const VCellId parent_v = parent.IsNil() ? kNilId : p_bound_[parent.value()];
  FillPStatus(c, forest_->address(c), parent_v, parent_v == kNilId ? "" : VAddress(parent_v), &s);
  return s;
}

void SchedulerImpl::FillVStatus(VCellId v, std::string address, CellId parent_p,
                                const std::string& parent_paddr, VirtualCellStatus* s) const {
  const cellalloc::CellForest& f = *forest_;
  s->cell_type = f.type_info(v_[v].type).name;
  s->address = std::move(address);
  s->level = v_[v].level;
  const CellId p = v_[v].bound;
  s->health = p.IsNil() || buddy_->IsHealthy(p) ? CellHealth::kHealthy : CellHealth::kBad;
  s->priority = vusage_.MaxPriority(CellId(v));
  if (!p.IsNil()) {
    s->physical_cell = !parent_p.IsNil() && f.parent(p) == parent_p
                           ? absl::StrCat(parent_paddr, "/", f.own_address(p))
                           : f.address(p);
  }
  if (v_[v].pinned && v_[v].is_root) s->pinned_cell_id = f.pinned_id(p);
  const int32_t n = v_[v].num_children;
  if (n == 0) {
    s->state = VState(v);
    return;
  }
  s->children.resize(static_cast<size_t>(n));
  StateCombiner kids;
  for (int32_t k = 0; k < n; ++k) {
    const VCellId child = v_[v].first_child + static_cast<VCellId>(k);
    VirtualCellStatus& out = s->children[static_cast<size_t>(k)];
    FillVStatus(child, absl::StrCat(s->address, "/", v_[child].index), p, s->physical_cell, &out);
    kids.Add(out.state);
  }
  s->state = kids.Result();
}

VirtualCellStatus SchedulerImpl::VStatus(VCellId v) const {
  VirtualCellStatus s;
  FillVStatus(v, VAddress(v), CellId(), "", &s);
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

// The flat table: one row per cell, appended depth first; strings go to the table's text,
// each address component once (full addresses are joined on demand), a bound virtual
// cell's address extended from its parent's row when the parent is bound to its parent.
void SchedulerImpl::AppendPRows(CellId c, int32_t parent_row, int64_t default_index,
                                const std::vector<uint8_t>& explicit_levels,
                                PhysicalClusterTable* t) const {
  const cellalloc::CellForest& f = *forest_;
  auto span_from = [t](size_t begin) {
    return TextSpan{static_cast<uint32_t>(begin), static_cast<uint32_t>(t->text.size() - begin)};
  };
  const int32_t row_index = static_cast<int32_t>(t->rows.size());
  t->rows.emplace_back();
  PhysicalCellRow row;
  row.parent = parent_row;
  row.num_children = f.num_children(c);
  row.level = f.level(c);
  row.is_node_level = f.is_node_level(c);
  row.health = buddy_->IsHealthy(c) ? CellHealth::kHealthy : CellHealth::kBad;
  row.priority = pusage_.MaxPriority(c);
  row.cell_type = static_cast<int32_t>(f.type(c).value());
  row.default_index = default_index;
  size_t begin = t->text.size();
  if (explicit_levels[static_cast<size_t>(row.level)] != 0) {
    if (const std::string* name = f.explicit_address(c)) {
      t->text += *name;
      row.own_address = span_from(begin);
    }
  }
  const VCellId v = p_bound_[c.value()];
  if (v != kNilId) {
    row.vc = static_cast<int32_t>(v_[v].vc.value());
    begin = t->text.size();
    const CellId parent = f.parent(c);
    if (parent_row >= 0 && v_[v].parent != kNilId && p_bound_[parent.value()] == v_[v].parent) {
      const TextSpan pv = t->rows[static_cast<size_t>(parent_row)].virtual_cell;
      t->text.append(t->text, pv.offset, pv.size);  // a self-append is safe
      absl::StrAppend(&t->text, "/", v_[v].index);
    } else {
      t->text += VAddress(v);
    }
    row.virtual_cell = span_from(begin);
  }
  const std::string& pinned =
      explicit_levels[static_cast<size_t>(row.level)] & 2 ? f.pinned_id(c) : kNoName;
  if (!pinned.empty()) {
    begin = t->text.size();
    t->text += pinned;
    row.pinned_cell_id = span_from(begin);
  }
  t->rows[static_cast<size_t>(row_index)] = row;
  if (row.num_children == 0) {
    t->rows[static_cast<size_t>(row_index)].state = PState(c);
    return;
  }
  StateCombiner kids;
  for (int32_t k = 0; k < row.num_children; ++k) {
    const size_t child_row = t->rows.size();
    AppendPRows(f.child(c, k), row_index,
                hierarchy::DefaultChildIndex(default_index, row.is_node_level, row.num_children, k),
                explicit_levels, t);
    kids.Add(t->rows[child_row].state);
  }
  t->rows[static_cast<size_t>(row_index)].state = kids.Result();
}

PhysicalClusterTable SchedulerImpl::PhysicalClusterAsTable() const {
  const cellalloc::CellForest& f = *forest_;
  PhysicalClusterTable t;
  t.cell_types.reserve(static_cast<size_t>(f.num_types()));
  for (int32_t i = 0; i < f.num_types(); ++i) {
    t.cell_types.push_back(f.type_info(CellTypeId(static_cast<uint32_t>(i))).name);
  }
  for (const Vc& vc : vcs_) t.vcs.push_back(vc.name);
  t.rows.reserve(static_cast<size_t>(f.num_cells()));
  t.text.reserve(static_cast<size_t>(f.num_cells()) * 12);
  std::vector<CellId> tops;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    for (CellId top : f.chain_info(ChainId(static_cast<uint32_t>(c))).top_cells)
      tops.push_back(top);
  }
  std::sort(tops.begin(), tops.end());
  // Bit 1: the levels that have explicit addresses (usually only nodes'); bit 2: those with
  // pinned cells. Other levels skip those lookups.
  CellLevel max_level = 1;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    max_level = std::max(max_level, f.chain_info(ChainId(static_cast<uint32_t>(c))).top_level);
  }
  std::vector<uint8_t> explicit_levels(static_cast<size_t>(max_level) + 1, 0);
  for (const auto& [cell, name] : f.explicit_addresses()) {
    explicit_levels[static_cast<size_t>(f.level(CellId(cell)))] |= 1;
  }
  for (const auto& [cell, id] : f.pinned_ids()) {
    explicit_levels[static_cast<size_t>(f.level(CellId(cell)))] |= 2;
  }
  for (CellId top : tops) {
    AppendPRows(top, -1, static_cast<int64_t>(top.value()), explicit_levels, &t);
  }
  return t;
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
  // One pass over the VCs' cells and one over the groups: O(cells of VCs' roots + groups'
  // leaves), not VCs x groups.
  const cellalloc::CellForest& f = *forest_;
  const std::vector<std::string>& types = f.leaf_types();
  std::vector<size_t> type_of_chain(static_cast<size_t>(f.num_chains()));
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    const std::string& t = f.chain_info(ChainId(static_cast<uint32_t>(c))).leaf_type;
    type_of_chain[static_cast<size_t>(c)] =
        static_cast<size_t>(std::find(types.begin(), types.end(), t) - types.begin());
  }
  std::vector<VcUsage> table(vcs_.size() * types.size());  // [vc][leaf type]
  for (size_t vc = 0; vc < vcs_.size(); ++vc) {
    for (size_t t = 0; t < types.size(); ++t) {
      table[vc * types.size() + t].vc = vcs_[vc].name;
      table[vc * types.size() + t].leaf_cell_type = types[t];
    }
    for (VCellId r : vcs_[vc].roots) {
      table[vc * types.size() + type_of_chain[v_[r].chain.value()]].reserved_leaf_cells +=
          f.type_info(v_[r].type).leaf_count;
    }
  }
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive || g.vc.IsNil() || g.state == GState::kPreempting) continue;
    for (CellId p : g.pleaves) {
      if (p_user_[p.value()] != gi) continue;
      VcUsage& u = table[g.vc.value() * types.size() + type_of_chain[f.chain(p).value()]];
      ++(g.running >= 0 ? u.guaranteed_used_leaf_cells : u.opportunistic_used_leaf_cells);
    }
  }
  std::vector<VcUsage> out;
  for (VcUsage& u : table) {
    if (u.reserved_leaf_cells > 0 || u.guaranteed_used_leaf_cells > 0 ||
        u.opportunistic_used_leaf_cells > 0) {
      out.push_back(std::move(u));
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

NodeStatus SchedulerImpl::NStatus(NodeId n, CellId c) const {
  const cellalloc::CellForest& f = *forest_;
  NodeStatus s;
  s.name = f.node_name(n);
  s.leaf_cell_type = f.chain_info(f.chain(c)).leaf_type;
  s.total_leaf_cells = f.leaf_count(c);
  s.free_leaf_cells = s.total_leaf_cells - pusage_.UsedTotal(c);
  s.healthy = buddy_->IsNodeHealthy(n);
  return s;
}

std::vector<NodeStatus> SchedulerImpl::Nodes() const {
  const cellalloc::CellForest& f = *forest_;
  std::vector<NodeStatus> out;
  for (int32_t i = 0; i < f.num_nodes(); ++i) {
    NodeId n(static_cast<uint32_t>(i));
    for (CellId c : f.node_cells(n)) out.push_back(NStatus(n, c));
  }
  return out;
}

// ---- Filtered views and summaries (issue 12 item 5) --------------------------------------

namespace {

absl::Status Unknown(const char* what, std::string_view name) {
  return absl::NotFoundError(
      absl::StrCat(what, " ", absl::string_view(name.data(), name.size()), " does not exist"));
}

}  // namespace

absl::StatusOr<NodeId> SchedulerImpl::FindNodeOrError(std::string_view node) const {
  const NodeId n = forest_->FindNode(node);
  if (n.IsNil()) return Unknown("node", node);
  return n;
}

absl::StatusOr<ChainId> SchedulerImpl::FindChainOrError(std::string_view chain) const {
  const ChainId ch = forest_->FindChain(chain);
  if (ch.IsNil()) return Unknown("chain", chain);
  return ch;
}

absl::StatusOr<std::vector<NodeStatus>> SchedulerImpl::GetNode(std::string_view node) const {
  HIVED_ASSIGN_OR_RETURN(const NodeId n, FindNodeOrError(node));
  std::vector<NodeStatus> out;
  for (CellId c : forest_->node_cells(n)) out.push_back(NStatus(n, c));
  return out;
}

absl::StatusOr<std::vector<PhysicalCellStatus>> SchedulerImpl::PhysicalNode(
    std::string_view node) const {
  HIVED_ASSIGN_OR_RETURN(const NodeId n, FindNodeOrError(node));
  std::vector<PhysicalCellStatus> out;
  for (CellId c : forest_->node_cells(n)) out.push_back(PStatus(c));
  return out;
}

absl::StatusOr<std::vector<PhysicalCellStatus>> SchedulerImpl::PhysicalChain(
    std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(const ChainId ch, FindChainOrError(chain));
  const std::vector<CellId>& tops = forest_->chain_info(ch).top_cells;
  std::vector<PhysicalCellStatus> out(tops.size());
  for (size_t i = 0; i < tops.size(); ++i) {
    FillPStatus(tops[i], forest_->address(tops[i]), kNilId, "", &out[i]);
  }
  return out;
}

// What the summaries need from the groups, in one pass: per chain the leaves reserved by
// preempting groups and not used (CellState kReserved); per VC and chain the virtual leaves
// its preempting groups hold and the physical leaves its opportunistic groups use.
SchedulerImpl::GroupTally SchedulerImpl::TallyGroups() const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  GroupTally t;
  t.reserved_free.assign(chains, 0);
  t.vc_reserved.assign(vcs_.size() * chains, 0);
  t.vc_opportunistic.assign(vcs_.size() * chains, 0);
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive) continue;
    if (g.state == GState::kPreempting) {
      for (size_t i = 0; i < g.pleaves.size(); ++i) {
        const size_t ch = f.chain(g.pleaves[i]).value();
        if (p_user_[g.pleaves[i].value()] == kNilId) ++t.reserved_free[ch];
        if (!g.vc.IsNil() && g.vleaves[i] != kNilId) ++t.vc_reserved[g.vc.value() * chains + ch];
      }
    } else if (g.running < 0 && !g.vc.IsNil()) {
      for (CellId p : g.pleaves) {
        if (p_user_[p.value()] == gi)
          ++t.vc_opportunistic[g.vc.value() * chains + f.chain(p).value()];
      }
    }
  }
  return t;
}

ChainSummary SchedulerImpl::ChainSummaryOf(ChainId ch, const GroupTally& tally) const {
  const cellalloc::CellForest& f = *forest_;
  const ChainInfo& info = f.chain_info(ch);
  ChainSummary s;
  s.chain = info.name;
  s.leaf_cell_type = info.leaf_type;
  int32_t held = 0;  // leaves with a user or a reserver: their priority is set
  for (CellId top : info.top_cells) {
    s.leaves.total += f.leaf_count(top);
    held += pusage_.UsedTotal(top);
    s.leaves.opportunistic += pusage_.UsedAt(top, kOpportunisticPriority);
  }
  s.leaves.reserved = tally.reserved_free[ch.value()];
  s.leaves.used = held - s.leaves.reserved;
  s.leaves.free = s.leaves.total - held;
  for (uint32_t node_cell : views_[ch.value()].nodes) {
    const CellId c(node_cell);
    ++s.nodes;
    if (!buddy_->IsHealthy(c)) {
      ++s.bad_nodes;
      s.leaves.bad += f.leaf_count(c);
    }
  }
  return s;
}

std::vector<ChainSummary> SchedulerImpl::ChainSummaries() const {
  const GroupTally tally = TallyGroups();
  std::vector<ChainSummary> out;
  for (int32_t c = 0; c < forest_->num_chains(); ++c) {
    out.push_back(ChainSummaryOf(ChainId(static_cast<uint32_t>(c)), tally));
  }
  return out;
}

absl::StatusOr<ChainSummary> SchedulerImpl::GetChainSummary(std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(const ChainId ch, FindChainOrError(chain));
  return ChainSummaryOf(ch, TallyGroups());
}

// Per VC and chain, the leaves of bad nodes inside the physical cells bound to the VC: for
// every bad node cell, the VC bound at or above it owns all its leaves, else the VCs bound
// to the topmost bound cells inside it own theirs. O(nodes + bad nodes' cells).
std::vector<int32_t> SchedulerImpl::VcBadLeaves() const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  std::vector<int32_t> bad(vcs_.size() * chains, 0);
  // `bound` is bound to a VC's cell; `counted` (at or below it) holds the bad leaves.
  auto add = [&](CellId bound, CellId counted) {
    const VCellId v = p_bound_[bound.value()];
    bad[v_[v].vc.value() * chains + f.chain(counted).value()] += f.leaf_count(counted);
  };
  std::vector<CellId> stack;
  for (const View& view : views_) {
    if (!view.physical) continue;
    for (uint32_t node_cell : view.nodes) {
      const CellId c(node_cell);
      if (buddy_->IsHealthy(c)) continue;
      CellId a = c;
      while (!a.IsNil() && p_bound_[a.value()] == kNilId) a = f.parent(a);
      if (!a.IsNil()) {
        add(a, c);
        continue;
      }
      stack.assign(1, c);
      while (!stack.empty()) {
        const CellId x = stack.back();
        stack.pop_back();
        if (p_bound_[x.value()] != kNilId) {
          add(x, x);
          continue;
        }
        for (int32_t k = 0; k < f.num_children(x); ++k) stack.push_back(f.child(x, k));
      }
    }
  }
  return bad;
}

void SchedulerImpl::AppendVcSummaries(size_t vc, const GroupTally& tally,
                                      const std::vector<int32_t>& bad,
                                      std::vector<VcSummary>* out) const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  std::vector<int32_t> total(chains, 0), held(chains, 0);
  for (VCellId r : vcs_[vc].roots) {
    total[v_[r].chain.value()] += f.type_info(v_[r].type).leaf_count;
    held[v_[r].chain.value()] += vusage_.UsedTotal(CellId(r));
  }
  for (size_t ch = 0; ch < chains; ++ch) {
    const size_t k = vc * chains + ch;
    if (total[ch] == 0 && tally.vc_opportunistic[k] == 0) continue;
    const ChainInfo& info = f.chain_info(ChainId(static_cast<uint32_t>(ch)));
    VcSummary s;
    s.vc = vcs_[vc].name;
    s.chain = info.name;
    s.leaf_cell_type = info.leaf_type;
    s.leaves.total = total[ch];
    s.leaves.reserved = tally.vc_reserved[k];
    s.leaves.used = held[ch] - s.leaves.reserved;
    s.leaves.free = total[ch] - held[ch];
    s.leaves.bad = bad[k];
    s.opportunistic_used_leaf_cells = tally.vc_opportunistic[k];
    out->push_back(std::move(s));
  }
}

std::vector<VcSummary> SchedulerImpl::VcSummaries() const {
  const GroupTally tally = TallyGroups();
  const std::vector<int32_t> bad = VcBadLeaves();
  std::vector<VcSummary> out;
  for (size_t vc = 0; vc < vcs_.size(); ++vc) AppendVcSummaries(vc, tally, bad, &out);
  return out;
}

absl::StatusOr<std::vector<VcSummary>> SchedulerImpl::GetVcSummary(std::string_view vc) const {
  auto it = vc_by_name_.find(ToAbsl(vc));
  if (it == vc_by_name_.end()) return Unknown("VC", vc);
  std::vector<VcSummary> out;
  AppendVcSummaries(it->second.value(), TallyGroups(), VcBadLeaves(), &out);
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
