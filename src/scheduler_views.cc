// Status views: groups, cell trees, VC usage, capacity and nodes.
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

std::string SchedulerImpl::NodeOfV(VCellId v) const {
  CellId p = vclusters_.cell(v).bound;
  if (p.IsNil() || forest_->node(p).IsNil()) return std::string();
  return forest_->node_name(forest_->node(p));
}

void SchedulerImpl::FillPlacement(ChainId ch, const std::vector<int32_t>& needs,
                                  const std::vector<CellId>& pleaves,
                                  const std::vector<VCellId>& vleaves, Placement* out) const {
  const cellalloc::CellForest& f = *forest_;
  out->chain = f.chain_info(ch).name;
  // Each element is constructed from its value (no value-initialization first).
  out->pods.clear();
  out->pods.reserve(needs.size());
  size_t off = 0;
  for (size_t k = 0; k < needs.size(); ++k) {
    PodPlacement& pod = out->pods.emplace_back();
    const size_t n = static_cast<size_t>(needs[k]);
    pod.leaf_cell_number = needs[k];
    pod.node = f.node_name(f.node(pleaves[off]));
    pod.leaf_cell_indices.reserve(n);
    pod.preassigned_cell_types.reserve(n);
    for (size_t i = 0; i < n; ++i, ++off) {
      pod.leaf_cell_indices.push_back(f.leaf_index(pleaves[off]));
      VCellId v = vleaves[off];
      if (v != kNilId) {
        pod.preassigned_cell_types.push_back(
            f.type_info(vclusters_.cell(vclusters_.cell(v).root).type).name);
      } else {
        pod.preassigned_cell_types.emplace_back();
      }
    }
  }
}

namespace {

const std::string kNoName;

// A group's pod sizes as ParseRequest orders them (ascending): the `needs` of its decision.
std::vector<int32_t> NeedsOf(const std::vector<GroupMember>& members) {
  std::vector<int32_t> needs;
  for (const GroupMember& m : members) {
    for (int32_t k = 0; k < m.pod_number; ++k) needs.push_back(m.leaf_cell_number);
  }
  std::sort(needs.begin(), needs.end());
  return needs;
}

}  // namespace

Placement SchedulerImpl::PlacementOf(const Group& g) const {
  if (g.given_placement != nullptr) return *g.given_placement;
  Placement out;
  FillPlacement(g.chain, NeedsOf(g.members), g.pleaves, g.vleaves, &out);
  return out;
}

bool SchedulerImpl::PlacementMatches(const Group& g, const Placement& given, bool exact) const {
  if (g.given_placement != nullptr) {
    if (!exact) return Reservations::PlacementDifference(*g.given_placement, given).empty();
    const Placement& a = *g.given_placement;
    auto same_pod = [](const PodPlacement& x, const PodPlacement& y) {
      return x.leaf_cell_number == y.leaf_cell_number && x.node == y.node &&
             x.leaf_cell_indices == y.leaf_cell_indices &&
             x.preassigned_cell_types == y.preassigned_cell_types &&
             x.mig_profile == y.mig_profile && x.mig_start == y.mig_start;
    };
    return a.chain == given.chain &&
           std::equal(a.pods.begin(), a.pods.end(), given.pods.begin(), given.pods.end(), same_pod);
  }
  // PlacementDifference's tests, against what FillPlacement would write.
  const cellalloc::CellForest& f = *forest_;
  if (given.chain != f.chain_info(g.chain).name) return false;
  const std::vector<int32_t> needs = NeedsOf(g.members);
  if (given.pods.size() != needs.size()) return false;
  size_t off = 0;
  for (size_t k = 0; k < needs.size(); ++k) {
    const PodPlacement& pod = given.pods[k];
    const size_t n = static_cast<size_t>(needs[k]);
    if (pod.leaf_cell_number != needs[k] || pod.leaf_cell_indices.size() != n ||
        off + n > g.pleaves.size() || pod.node != f.node_name(f.node(g.pleaves[off]))) {
      return false;
    }
    if (exact && (!pod.mig_profile.empty() || pod.mig_start != -1)) return false;
    const bool types = exact || !pod.preassigned_cell_types.empty();
    if (types && pod.preassigned_cell_types.size() != n) return false;
    for (size_t i = 0; i < n; ++i, ++off) {
      if (pod.leaf_cell_indices[i] != f.leaf_index(g.pleaves[off])) return false;
      if (!types) continue;
      const VCellId v = g.vleaves[off];
      const std::string& want =
          v != kNilId ? f.type_info(vclusters_.cell(vclusters_.cell(v).root).type).name : kNoName;
      if (pod.preassigned_cell_types[i] != want) return false;
    }
  }
  return true;
}

namespace {

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
    bool used = physical_.user(c) != kNilId, reserved = physical_.reserver(c) != kNilId;
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
  if (vclusters_.cell(v).level == 1) {
    CellId p = vclusters_.cell(v).bound;
    if (vclusters_.cell(v).user == kNilId || p.IsNil()) return CellState::kFree;
    return PState(p);
  }
  StateCombiner kids;
  for (int32_t k = 0; k < vclusters_.cell(v).num_children; ++k) {
    kids.Add(VState(vclusters_.cell(v).first_child + static_cast<VCellId>(k)));
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
  s->priority = physical_.usage().MaxPriority(c);
  s->pinned_cell_id = f.pinned_id(c);
  const VCellId v = vclusters_.BoundTo(c);
  if (v != kNilId) {
    s->vc = vclusters_.vcs()[vclusters_.cell(v).vc.value()].name;
    s->virtual_cell = parent_v != kNilId && vclusters_.cell(v).parent == parent_v
                          ? absl::StrCat(parent_vaddr, "/", vclusters_.cell(v).index)
                          : vclusters_.Address(v);
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
  const VCellId parent_v = parent.IsNil() ? kNilId : vclusters_.BoundTo(parent);
  FillPStatus(c, forest_->address(c), parent_v,
              parent_v == kNilId ? "" : vclusters_.Address(parent_v), &s);
  return s;
}

void SchedulerImpl::FillVStatus(VCellId v, std::string address, CellId parent_p,
                                const std::string& parent_paddr, VirtualCellStatus* s) const {
  const cellalloc::CellForest& f = *forest_;
  s->cell_type = f.type_info(vclusters_.cell(v).type).name;
  s->address = std::move(address);
  s->level = vclusters_.cell(v).level;
  const CellId p = vclusters_.cell(v).bound;
  s->health = p.IsNil() || buddy_->IsHealthy(p) ? CellHealth::kHealthy : CellHealth::kBad;
  s->priority = vclusters_.usage().MaxPriority(CellId(v));
  if (!p.IsNil()) {
    s->physical_cell = !parent_p.IsNil() && f.parent(p) == parent_p
                           ? absl::StrCat(parent_paddr, "/", f.own_address(p))
                           : f.address(p);
  }
  if (vclusters_.cell(v).pinned && vclusters_.cell(v).is_root) s->pinned_cell_id = f.pinned_id(p);
  const int32_t n = vclusters_.cell(v).num_children;
  if (n == 0) {
    s->state = VState(v);
    return;
  }
  s->children.resize(static_cast<size_t>(n));
  StateCombiner kids;
  for (int32_t k = 0; k < n; ++k) {
    const VCellId child = vclusters_.cell(v).first_child + static_cast<VCellId>(k);
    VirtualCellStatus& out = s->children[static_cast<size_t>(k)];
    FillVStatus(child, absl::StrCat(s->address, "/", vclusters_.cell(child).index), p,
                s->physical_cell, &out);
    kids.Add(out.state);
  }
  s->state = kids.Result();
}

VirtualCellStatus SchedulerImpl::VStatus(VCellId v) const {
  VirtualCellStatus s;
  FillVStatus(v, vclusters_.Address(v), CellId(), "", &s);
  return s;
}

namespace {

GroupState StateOf(const Group& g) {
  switch (g.state) {
    case GState::kRunning:
      return g.running >= 0 ? GroupState::kAllocated : GroupState::kOpportunistic;
    case GState::kPreempting:
      return GroupState::kPreempting;
    case GState::kBeingPreempted:
      return GroupState::kBeingPreempted;
    case GState::kReserved:
      return GroupState::kReserved;
  }
  return GroupState::kAbsent;
}

}  // namespace

GroupStatus SchedulerImpl::GStatus(const Group& g) const {
  GroupStatus s;
  s.name = g.name;
  s.vc = g.vc_name();
  s.state = StateOf(g);
  s.priority = g.running;
  s.request.name = g.name;
  s.request.vc = g.vc_name();
  s.request.priority = g.priority;
  s.request.leaf_cell_type = g.notes().leaf_type;
  s.request.pinned_cell_id = g.notes().pinned_id;
  s.request.lazy_preemption = g.lazy;
  s.request.members = g.members;
  s.placement = PlacementOf(g);
  s.preemptor = g.notes().preemptor;
  s.downgrade_reason = g.notes().downgrade_reason;
  s.pods = PodsOf(g);           // src/pods.cc
  FillReservationTimes(g, &s);  // src/reservation_clock.cc
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

GroupState SchedulerImpl::GetGroupState(std::string_view name) const {
  const GroupId g = groups_.Find(name);
  return g == kNilId ? GroupState::kAbsent : StateOf(groups_[g]);
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
  row.priority = physical_.usage().MaxPriority(c);
  row.cell_type = static_cast<int32_t>(f.type(c).value());
  row.default_index = default_index;
  size_t begin = t->text.size();
  if (explicit_levels[static_cast<size_t>(row.level)] != 0) {
    if (const std::string* name = f.explicit_address(c)) {
      t->text += *name;
      row.own_address = span_from(begin);
    }
  }
  const VCellId v = vclusters_.BoundTo(c);
  if (v != kNilId) {
    row.vc = static_cast<int32_t>(vclusters_.cell(v).vc.value());
    begin = t->text.size();
    const CellId parent = f.parent(c);
    if (parent_row >= 0 && vclusters_.cell(v).parent != kNilId &&
        vclusters_.BoundTo(parent) == vclusters_.cell(v).parent) {
      const TextSpan pv = t->rows[static_cast<size_t>(parent_row)].virtual_cell;
      t->text.append(t->text, pv.offset, pv.size);  // a self-append is safe
      absl::StrAppend(&t->text, "/", vclusters_.cell(v).index);
    } else {
      t->text += vclusters_.Address(v);
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
  for (const Vc& vc : vclusters_.vcs()) t.vcs.push_back(vc.name);
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
  const VcId id = vclusters_.FindVc(ToAbsl(vc));
  if (id.IsNil()) return absl::NotFoundError(absl::StrCat("VC ", ToAbsl(vc), " does not exist"));
  std::vector<VirtualCellStatus> out;
  for (VCellId r : vclusters_.vc(id).roots) out.push_back(VStatus(r));
  return out;
}

NodeStatus SchedulerImpl::NStatus(NodeId n, CellId c) const {
  const cellalloc::CellForest& f = *forest_;
  NodeStatus s;
  s.name = f.node_name(n);
  s.leaf_cell_type = f.chain_info(f.chain(c)).leaf_type;
  s.total_leaf_cells = f.leaf_count(c);
  s.free_leaf_cells = s.total_leaf_cells - physical_.usage().UsedTotal(c);
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

}  // namespace hived
