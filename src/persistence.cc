// Persistence, the core's part (sharing/layered_state.cc composes it with Sharing's): every
// running group's record, and the recovery of one (Allocate's recovery path, preferring the
// recorded virtual cells), the bindings history, bad nodes and doomed marks.
// The format is docs/state-format.md; its JSON is persistence_json.cc.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/group_record.h"
#include "src/internal/status_macros.h"
#include "src/persistence_json.h"
#include "src/persistence_json_reader.h"
#include "src/recovery.h"
#include "src/scheduler_impl.h"

namespace hived {

GroupRecord SchedulerImpl::Record(const Group& g) const {
  GroupRequest r;
  r.name = g.name;
  r.vc = g.vc_name();
  r.priority = g.priority;
  r.leaf_cell_type = g.notes().leaf_type;
  r.pinned_cell_id = g.notes().pinned_id;
  r.lazy_preemption = g.lazy;
  r.members = g.members;
  // A group being preempted is saved as running: its preemptor's reservation is not
  // persisted (the manager schedules the preemptor again after the restart).
  GroupRecord rec =
      RunningRecord(std::move(r), PlacementOf(g), g.running >= kMinGuaranteedPriority);
  if (g.running < kMinGuaranteedPriority && g.priority >= kMinGuaranteedPriority) {
    rec.downgrade_reason = g.notes().downgrade_reason;
    rec.preemptor = g.notes().preemptor;
  }
  // The virtual leaves, one per leaf of the placement. A group restored partially (leaves
  // the cluster no longer has were skipped) keeps its whole placement but holds only the
  // leaves the cluster has: those get their virtual cells, the skipped ones "" (a restore
  // skips them again, or, in a cluster that has them again, re-derives theirs). Without
  // them the next restore would re-derive every virtual cell, not the ones held (issue 29).
  rec.pods = PodRecordsOf(g);  // src/pods.cc
  const bool any =
      std::any_of(g.vleaves.begin(), g.vleaves.end(), [](VCellId v) { return v != kNilId; });
  if (!any) return rec;
  const cellalloc::CellForest& f = *forest_;
  size_t held = 0;  // the next of the group's leaves (`pleaves`, in placement order)
  for (const PodPlacement& pod : rec.placement.pods) {
    for (int32_t idx : pod.leaf_cell_indices) {
      const bool kept = held < g.pleaves.size() && f.leaf_index(g.pleaves[held]) == idx &&
                        f.node_name(f.node(g.pleaves[held])) == pod.node;
      const VCellId v = kept ? g.vleaves[held++] : kNilId;
      rec.virtual_leaf_cells.push_back(v == kNilId ? "" : vclusters_.Address(v));
    }
  }
  if (held != g.pleaves.size()) rec.virtual_leaf_cells.clear();  // not in placement order
  return rec;
}

void SchedulerImpl::SaveStateTo(internal::SavedState* out) const {
  internal::SavedState& state = *out;
  const cellalloc::CellForest& f = *forest_;
  for (int32_t n = 0; n < f.num_nodes(); ++n) {
    const NodeId node(static_cast<uint32_t>(n));
    if (!buddy_->IsNodeHealthy(node)) state.bad_nodes.push_back(f.node_name(node));
  }
  for (const Group& g : groups_.slots()) {
    // Preempting groups are not persisted (as in HiveD): the manager schedules them again.
    if (g.alive && g.state != GState::kPreempting && g.state != GState::kReserved) {
      state.groups.push_back(Record(g));
    }
  }
  state.config = ConfigFingerprint();
  SaveBindings(&state);
}

std::string SchedulerImpl::ConfigFingerprint() const {
  // FNV-1a over every physical cell (type, address) and every VC's preassigned and pinned
  // cells (type, pinned id), in id order: a change of topology, names or reservations
  // changes it; comments and key order in the config file do not.
  uint64_t h = 0xcbf29ce484222325ULL;
  auto add = [&h](std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    h = (h ^ 0xffu) * 0x100000001b3ULL;  // separator
  };
  const cellalloc::CellForest& f = *forest_;
  for (int32_t i = 0; i < f.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    add(f.type_info(f.type(c)).name);
    add(f.own_address(c));
  }
  for (const Vc& vc : vclusters_.vcs()) {
    add(vc.name);
    for (VCellId r : vc.roots) {
      add(f.type_info(vclusters_.cell(r).type).name);
      add(vclusters_.cell(r).pinned ? f.pinned_id(vclusters_.cell(r).bound) : std::string_view());
    }
  }
  return absl::StrCat(absl::Hex(h, absl::kZeroPad16));
}

void SchedulerImpl::SaveBindings(internal::SavedState* state) const {
  const cellalloc::CellForest& f = *forest_;
  for (VCellId v = 0; v < vclusters_.cells().size(); ++v) {
    const VCell& c = vclusters_.cell(v);
    // Cells with usage are on a running (or preempting) group's path: its record binds
    // them (listed still when bound as bad: that mark decides whether they unbind).
    // Pinned roots are bound at construction.
    if (c.bound.IsNil() || (c.is_root && c.pinned)) continue;
    if (vclusters_.usage().UsedTotal(CellId(v)) > 0 && !c.bad_bound) continue;
    state->bindings.push_back({vclusters_.Address(v), f.address(c.bound), c.bad_bound});
  }
  for (const Vc& vc : vclusters_.vcs()) {
    for (const auto& per_chain : vc.cl) {
      for (const VcChainLevel& slot : per_chain) {
        for (VCellId r : slot.doomed) state->doomed.push_back(vclusters_.Address(r));
      }
    }
  }
}

bool SchedulerImpl::RestoreBindings(const internal::SavedState& state, RestoreReport* report) {
  if (state.bindings.empty() && state.doomed.empty()) return true;
  if (state.config != ConfigFingerprint()) {
    report->notes.push_back(
        "$.config: the cluster's cells or VCs changed since the state was saved: its virtual "
        "bindings are not restored (recovery re-derives the groups' virtual cells)");
    return false;
  }
  const cellalloc::CellForest& f = *forest_;
  absl::flat_hash_map<std::string, CellId> by_address;
  for (int32_t i = 0; i < f.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    by_address.emplace(f.address(c), c);
  }
  for (size_t i = 0; i < state.bindings.size(); ++i) {
    const internal::SavedBinding& b = state.bindings[i];
    const VCellId v = FindVirtualCell(b.virtual_cell);
    auto p_it = by_address.find(b.physical_cell);
    std::string problem;
    if (v != kNilId && p_it != by_address.end() && vclusters_.cell(v).bound == p_it->second) {
      vclusters_.SetBadBound(v, b.bad);  // bound by a group's record
      continue;
    }
    if (v == kNilId) {
      problem = absl::StrCat("no virtual cell ", b.virtual_cell);
    } else if (p_it == by_address.end()) {
      problem = absl::StrCat("no physical cell ", b.physical_cell);
    } else if (!vclusters_.cell(v).bound.IsNil() || vclusters_.BoundTo(p_it->second) != kNilId) {
      problem = "one of the cells is bound already";
    } else if (vclusters_.cell(v).level != f.level(p_it->second) ||
               vclusters_.cell(v).chain != f.chain(p_it->second)) {
      problem = "the cells differ in chain or level";
    } else if (vclusters_.cell(v).is_root
                   ? !buddy_->IsAvailable(p_it->second)
                   : vclusters_.cell(vclusters_.cell(v).parent).bound != f.parent(p_it->second)) {
      problem = vclusters_.cell(v).is_root ? "the physical cell is not free"
                                           : "the parents are not bound to each other";
    }
    if (!problem.empty()) {
      report->notes.push_back(absl::StrCat("$.bindings[", i, "]: ", problem, "; skipped"));
      continue;
    }
    const CellId p = p_it->second;
    if (vclusters_.cell(v).is_root) {
      if (!SafeToBind(f, *buddy_, vclusters_, v, p)) {
        report->notes.push_back(
            absl::StrCat("$.bindings[", i, "]: binding it would break the VCs' safety; skipped"));
        continue;
      }
      vclusters_.AllocatePreassigned(v, p);
    } else {
      vclusters_.BindCell(v, p);
    }
    vclusters_.SetBadBound(v, b.bad);
  }
  return true;
}

void SchedulerImpl::RestoreDoomed(const internal::SavedState& state, RestoreReport* report) {
  // Marking the nodes bad bound bad cells inside bound regions to free virtual children;
  // the saved bindings say which ones history bound: undo the others (children first).
  absl::flat_hash_set<VCellId> saved;
  for (const internal::SavedBinding& b : state.bindings)
    saved.insert(FindVirtualCell(b.virtual_cell));
  for (VCellId v = static_cast<VCellId>(vclusters_.cells().size()); v-- > 0;) {
    const VCell& c = vclusters_.cell(v);
    if (c.bound.IsNil() || c.is_root || !c.bad_bound || c.bound_children > 0 ||
        vclusters_.usage().UsedTotal(CellId(v)) > 0 || saved.contains(v)) {
      continue;
    }
    vclusters_.UnbindCell(v);
  }
  for (size_t i = 0; i < state.doomed.size(); ++i) {
    const VCellId r = FindVirtualCell(state.doomed[i]);
    if (r == kNilId || !vclusters_.cell(r).is_root || vclusters_.cell(r).pinned ||
        vclusters_.cell(r).bound.IsNil() || vclusters_.cell(r).doomed) {
      report->notes.push_back(absl::StrCat("$.doomedCells[", i, "]: ", state.doomed[i],
                                           " is not a bound preassigned cell; skipped"));
      continue;
    }
    vclusters_.MarkDoomed(r);
  }
}

absl::StatusOr<GroupRecord> SchedulerImpl::GetGroupRecord(std::string_view name) const {
  const GroupId g = groups_.Find(name);
  if (g == kNilId) {
    return absl::NotFoundError(absl::StrCat("group ", ToAbsl(name), " is not known"));
  }
  if (groups_[g].state == GState::kPreempting || groups_[g].state == GState::kReserved) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name), " is ",
                     groups_[g].state == GState::kReserved ? "reserved" : "preempting",
                     ", not running: it has no record"));
  }
  return Record(groups_[g]);
}

VCellId SchedulerImpl::FindVirtualCell(std::string_view address) const {
  // "<vc>/<root>/<index>...": the root is the VC's root in creation order, then each
  // component is a cell's index among its level's cells of that root (children of one cell
  // have consecutive indices).
  std::vector<absl::string_view> parts = absl::StrSplit(ToAbsl(address), '/');
  if (parts.size() < 2) return kNilId;
  const VcId vc_id = vclusters_.FindVc(parts[0]);
  if (vc_id.IsNil()) return kNilId;
  const Vc& vc = vclusters_.vc(vc_id);
  int32_t index = 0;
  if (!absl::SimpleAtoi(parts[1], &index) || index < 0 ||
      static_cast<size_t>(index) >= vc.roots.size()) {
    return kNilId;
  }
  VCellId v = vc.roots[static_cast<size_t>(index)];
  if (vclusters_.cell(v).index != index) return kNilId;
  for (size_t k = 2; k < parts.size(); ++k) {
    if (vclusters_.cell(v).num_children == 0 || !absl::SimpleAtoi(parts[k], &index)) return kNilId;
    const int32_t first = vclusters_.cell(vclusters_.cell(v).first_child).index;
    if (index < first || index >= first + vclusters_.cell(v).num_children) return kNilId;
    v = vclusters_.cell(v).first_child + static_cast<VCellId>(index - first);
  }
  return v;
}

absl::StatusOr<AllocateInfo> SchedulerImpl::RestoreGroup(const GroupRecord& rec,
                                                         int32_t* ignored_leaves,
                                                         const RecoverFn& recover) {
  if (!rec.pods.empty()) HIVED_RETURN_IF_ERROR(CheckPodRecords(rec));  // src/pods.cc
  GroupRequest request = rec.request;
  // A recorded downgrade is kept: the group runs opportunistically, as it did.
  const bool was_downgraded =
      rec.state == GroupState::kOpportunistic && rec.request.priority >= kMinGuaranteedPriority;
  // A CPU-only group is not the scheduler's (sharing/sharing.h, host groups): it runs as asked.
  const bool cpu_only =
      !rec.request.members.empty() && rec.request.members[0].leaf_cell_number == 0;
  if (cpu_only && was_downgraded) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", rec.request.name, ": a CPU-only group runs as asked (allocated exactly when ",
        "its priority is at least 0), not ", GroupStateName(rec.state)));
  }
  if (was_downgraded) request.priority = kOpportunisticPriority;
  recover_hints_.clear();
  if (!rec.virtual_leaf_cells.empty()) {
    // The hints follow the leaves recovery holds: a leaf the cluster no longer has (which
    // `Recover` skips, reporting it missing in placement order) takes no hint.
    ResolvedPlacement resolved;
    if (!ResolvePlacement(*forest_, request, rec.placement, MissingLeaves::kIgnore, &resolved)
             .ok()) {
      resolved.missing.clear();  // Recover reports the error
    }
    size_t leaf = 0, missing = 0;
    for (const PodPlacement& pod : rec.placement.pods) {
      for (int32_t idx : pod.leaf_cell_indices) {
        const std::string address =
            leaf < rec.virtual_leaf_cells.size() ? rec.virtual_leaf_cells[leaf] : std::string();
        ++leaf;
        if (missing < resolved.missing.size() &&
            resolved.missing[missing] == absl::StrCat(pod.node, ":", idx)) {
          ++missing;
          continue;
        }
        recover_hints_.push_back(address.empty() ? kNilId : FindVirtualCell(address));
      }
    }
  }
  absl::StatusOr<AllocateInfo> info =
      recover ? recover(request, rec.placement) : Recover(request, rec.placement, ignored_leaves);
  recover_hints_.clear();
  if (!info.ok()) return info;
  SetPodRecords(rec);    // src/pods.cc
  if (was_downgraded) {  // (a CPU-only group has no slot here: it never is, checked above)
    Group& grp = groups_[groups_.Find(request.name)];
    grp.priority = rec.request.priority;
    grp.SetNote(&GroupNotes::downgrade_reason, rec.downgrade_reason);
    grp.SetNote(&GroupNotes::preemptor, rec.preemptor);
    info->downgraded = true;
    // The recorded reason, then what this restore skipped (leaves the cluster lacks), which
    // the report must name too.
    info->reason = info->reason.empty() || rec.downgrade_reason.empty()
                       ? absl::StrCat(rec.downgrade_reason, info->reason)
                       : absl::StrCat(rec.downgrade_reason, "; ", info->reason);
  }
  return info;
}

absl::Status SchedulerImpl::RestoreCells(const internal::SavedState& state, RestoreReport* report) {
  RestoreReport& out = *report;
  const bool same_cluster = RestoreBindings(state, &out);
  for (const std::string& node : state.bad_nodes) {
    absl::Status s = SetNodeHealthy(node, /*healthy=*/false);
    if (absl::IsNotFound(s)) {
      out.unknown_nodes.push_back(node);
    } else if (!s.ok()) {
      return s;
    }
  }
  // Last: marking the nodes bad would give back a doomed cell whose node is still healthy
  // at that moment, and doom it again later, in another order.
  if (same_cluster) RestoreDoomed(state, &out);
  return absl::OkStatus();
}

}  // namespace hived
