// Sharing's MIG pods (sharing/sharing.h invariant (9); docs/gpu-sharing.md, "MIG"). A MIG pod
// is a share whose milli is its profile's compute and which holds one instance of a GPU's
// layout (cellalloc/mig_layout.h): the holders, VC and priority rules, reservations,
// preemption and recovery are the fractional ones; this file adds the instance.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "sharing/sharing.h"
#include "src/internal/check.h"
#include "src/persistence_json.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::MigGeometry;
using cellalloc::MigLayout;

namespace {

// The owner of an instance in a Tentative copy: no group's name (Parse rejects names with
// the holders' prefix), so an eviction's what-if never frees it.
constexpr char kTentativeOwner[] = "hived-share/tentative";

}  // namespace

bool IsMig(const GroupRequest& request) {
  for (const GroupMember& m : request.members) {
    if (!m.mig_profile.empty()) return true;
  }
  return false;
}

void Sharing::InitMig(const ClusterSpec& spec) {
  for (const LeafCellTypeSpec& t : spec.leaf_cell_types) {
    const ResolvedMigGeometry r = ResolveMigGeometry(t);
    if (r.profiles.empty()) continue;
    MigGeometry g;
    g.compute_slices = r.compute_slices;
    g.memory_slices = r.memory_slices;
    for (const MigProfileSpec& p : r.profiles) {
      g.profiles.push_back({p.name, p.compute_slices, p.memory_slices, p.starts});
    }
    mig_.AddGeometry(t.name, std::move(g));
  }
}

absl::Status Sharing::ParseMig(const GroupRequest& r, Parsed* p) const {
  int32_t first_pod = 0;
  std::vector<std::string> profiles;  // per member
  for (size_t i = 0; i < r.members.size(); ++i) {
    const GroupMember& m = r.members[i];
    const auto where = [&] {
      return absl::StrCat("group ", r.name, ", pod ", first_pod, " (member ", i, "): ");
    };
    if (m.mig_profile.empty() || m.gpu_milli != 0 || m.leaf_cell_number != 1 ||
        m.gpu_memory_mib != 0 || m.cpu_milli < 0 || m.memory_mib < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "a MIG member needs a mig_profile, gpu_milli 0, gpu_memory_mib 0 (the ",
          "profile's memory), leafCellNumber 1 and no negative amounts (got mig_profile `",
          m.mig_profile, "`, gpu_milli ", m.gpu_milli, ", leafCellNumber ", m.leaf_cell_number,
          "); a group is all MIG, all fractional or all whole"));
    }
    profiles.push_back(m.mig_profile);
    first_pod += m.pod_number;
  }
  // The allowed types: as asked (each must have every profile), else every MIG type with
  // all of them (leaf type name order).
  std::vector<std::string> types;
  if (!p->types.empty()) {
    for (const std::string& t : p->types) {
      const MigGeometry* g = mig_.geometry(t);
      for (size_t i = 0; i < profiles.size(); ++i) {
        if (g == nullptr || g->Find(profiles[i]) < 0) {
          std::vector<std::string> names;
          if (g != nullptr) {
            for (const cellalloc::MigProfile& q : g->profiles) names.push_back(q.name);
          }
          return absl::InvalidArgumentError(absl::StrCat(
              "group ", r.name, ", member ", i, ": leaf cell type ", t,
              g == nullptr ? " declares no MIG geometry"
                           : absl::StrCat(" has no MIG profile `", profiles[i], "` (it has ",
                                          absl::StrJoin(names, ", "), ")")));
        }
      }
      types.push_back(t);
    }
  } else {
    for (const auto& [name, spec] : leaf_types_) {
      const MigGeometry* g = mig_.geometry(name);
      if (g == nullptr || forest_.ChainsOfLeafType(name).empty()) continue;
      bool all = true;
      for (const std::string& q : profiles) all = all && g->Find(q) >= 0;
      if (all) types.push_back(name);
    }
    if (types.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", r.name, ": no GPU type in the cluster has MIG profile(s) ",
                       absl::StrJoin(profiles, ", ")));
    }
  }
  // A pod's milli must mean the same compute on every allowed type (its share's size).
  size_t pod = 0;
  for (size_t i = 0; i < r.members.size(); ++i) {
    int32_t milli = -1;
    for (const std::string& t : types) {
      const MigGeometry* g = mig_.geometry(t);
      const int32_t m = g->Milli(g->Find(profiles[i]));
      if (milli >= 0 && m != milli) {
        return absl::InvalidArgumentError(
            absl::StrCat("group ", r.name, ", member ", i, ": MIG profile `", profiles[i],
                         "` is a different share of the GPU on the allowed types (", milli, " and ",
                         m, " milli on ", t, "); allow types that agree"));
      }
      milli = m;
    }
    for (int32_t k = 0; k < r.members[i].pod_number; ++k, ++pod) {
      p->pods[pod].milli = milli;
      p->pods[pod].memory = 0;
      p->pods[pod].mig = profiles[i];
    }
  }
  p->types = std::move(types);
  return absl::OkStatus();
}

MigLayout Sharing::MigLayoutOf(CellId leaf, const Tentative& t) const {
  auto it = t.mig.find(leaf.value());
  if (it != t.mig.end()) return it->second;
  if (const MigLayout* l = mig_.find(leaf)) return *l;
  return MigLayout(mig_.geometry(forest_.chain_info(forest_.chain(leaf)).leaf_type));
}

CellId Sharing::PlaceMig(const GroupRequest& r, const Parsed& p, const PodAsk& a,
                         const Tentative& t, bool evict) const {
  CellId best;
  MigLayout::Choice best_choice;
  int32_t best_used = -1;
  for (const auto& [id, gpu] : shares_.open()) {
    const CellId leaf(id);
    if (std::find(t.excluded.begin(), t.excluded.end(), id) != t.excluded.end()) continue;
    const MigGeometry* g = mig_.geometry(forest_.chain_info(forest_.chain(leaf)).leaf_type);
    const int32_t profile = g == nullptr ? -1 : g->Find(a.mig);
    if (profile < 0 || gpu.shares > mig_.Used(leaf)) continue;  // not MIG, or fractional shares
    if (!TypeAllowed(p, leaf) || !Compatible(r, p.guaranteed, leaf) || !NodeRoom(leaf, a, t)) {
      continue;
    }
    MigLayout layout = MigLayoutOf(leaf, t);
    if (evict) {  // the guests' instances count as free; a GPU another group evicts is its
      const std::string& by = leaf_use_.at(id).barred_by;
      if (!by.empty() && by != r.name) continue;
      layout.FreeOwners(Guests(leaf));
    }
    const std::optional<MigLayout::Choice> c = layout.Choose(profile);
    if (!c.has_value()) continue;
    const int32_t used = layout.used_compute();
    const bool better = best.IsNil() || cellalloc::BetterChoice(*c, best_choice) ||
                        (!cellalloc::BetterChoice(best_choice, *c) && used > best_used);
    if (better) {  // ties keep the lowest leaf id
      best = leaf;
      best_choice = *c;
      best_used = used;
    }
  }
  return best;
}

void Sharing::TakeMig(CellId leaf, const PodAsk& a, Tentative* t) const {
  MigLayout layout = MigLayoutOf(leaf, *t);
  const int32_t profile = layout.geometry().Find(a.mig);
  std::optional<MigLayout::Choice> c = layout.Choose(profile);
  if (!c.has_value()) {  // an eviction (PlaceMig's evict): the guests' instances are free
    layout.FreeOwners(Guests(leaf));
    c = layout.Choose(profile);
  }
  // No choice: a holder's new leaf that a victim still uses (the node room counts only
  // its node there); its instance is chosen when it opens, idle. PlaceMig's and Recover's
  // leaves always have one (they were checked on this very state).
  if (!c.has_value()) return;
  HIVED_CHECK(layout.Take(profile, *c, kTentativeOwner)) << a.mig;
  t->mig.insert_or_assign(leaf.value(), std::move(layout));
}

std::string Sharing::MigRecoverProblem(CellId leaf, const PodAsk& a, const Tentative& t) const {
  auto tentative = t.mig.find(leaf.value());
  const int32_t used = mig_.Used(leaf) + (tentative == t.mig.end() ? 0 : tentative->second.used());
  if (a.mig.empty()) {
    return used > 0 ? "the GPU holds MIG instances; a fractional share cannot join them" : "";
  }
  if (shares_.IsOpen(leaf) && shares_.gpu(leaf).shares > mig_.Used(leaf)) {
    return "the GPU holds fractional shares; a MIG instance cannot join them";
  }
  const MigLayout layout = MigLayoutOf(leaf, t);
  if (!layout.Choose(layout.geometry().Find(a.mig)).has_value()) {
    return absl::StrCat("the GPU's MIG layout has no room for a ", a.mig, " instance");
  }
  return "";
}

void Sharing::AddMig(const std::string& group, const PodShare& s) {
  MigLayout& layout = mig_.layout(s.leaf, forest_.chain_info(forest_.chain(s.leaf)).leaf_type);
  const int32_t profile = layout.geometry().Find(s.mig);
  if (s.mig_start >= 0) {  // Restore: the recorded instance (checked by RestoreShared)
    const std::string why = layout.TakeAt(profile, s.mig_start, group);
    HIVED_CHECK(why.empty()) << group << " " << s.mig << "@" << s.mig_start << ": " << why;
    return;
  }
  const std::optional<MigLayout::Choice> c = layout.Choose(profile);
  HIVED_CHECK(c.has_value() && layout.Take(profile, *c, group)) << group << " " << s.mig;
}

void Sharing::RemoveMig(const std::string& group, const PodShare& s) {
  MigLayout& layout = mig_.layout(s.leaf, forest_.chain_info(forest_.chain(s.leaf)).leaf_type);
  HIVED_CHECK(layout.Free(layout.geometry().Find(s.mig), group)) << group << " " << s.mig;
}

absl::Status Sharing::CheckMig() const {
  if (!mig_.any()) return absl::OkStatus();
  if (absl::Status s = mig_.CheckInvariants(); !s.ok()) {
    return absl::InternalError(absl::StrCat("sharing: (9) ", s.message()));
  }
  auto fail = [](auto... parts) {
    return absl::InternalError(absl::StrCat("sharing: (9) ", parts...));
  };
  // Per leaf: (owner, profile) -> instances the groups' open MIG pods hold.
  std::map<uint32_t, std::map<std::pair<std::string, int32_t>, int32_t>> want;
  for (const auto& [name, g] : groups_) {
    if (g.stage == Stage::kPreempting) continue;
    for (const PodShare& pod : g.pods) {
      if (pod.mig.empty() || !pod.open) continue;
      const MigGeometry* geo = mig_.geometry(forest_.chain_info(forest_.chain(pod.leaf)).leaf_type);
      const int32_t profile = geo == nullptr ? -1 : geo->Find(pod.mig);
      if (profile < 0 || pod.milli != geo->Milli(profile)) {
        return fail("group ", name, ": a ", pod.mig, " pod of ", pod.milli, " milli on leaf ",
                    pod.leaf.value(), " of another geometry");
      }
      ++want[pod.leaf.value()][{name, profile}];
    }
  }
  for (const auto& [id, layout] : mig_.layouts()) {
    std::map<std::pair<std::string, int32_t>, int32_t> got;
    for (const MigLayout::Instance& i : layout.instances()) {
      if (!i.owner.empty()) ++got[{i.owner, i.profile}];
    }
    if (got != want[id]) return fail("leaf ", id, ": the used instances are not its MIG pods'");
    if (layout.used() > 0 &&
        (!shares_.IsOpen(CellId(id)) || shares_.gpu(CellId(id)).shares != layout.used())) {
      return fail("leaf ", id, ": ", layout.used(), " instances used on a GPU not open or ",
                  "with other shares");
    }
    want.erase(id);
  }
  for (const auto& [id, pods] : want) {
    if (!pods.empty()) return fail("leaf ", id, ": MIG pods without a layout");
  }
  return absl::OkStatus();
}

void Sharing::FillMigLeaf(CellId leaf, PhysicalCellStatus* s) const {
  const MigLayout* layout = mig_.find(leaf);
  if (layout == nullptr) return;
  for (const MigLayout::Instance& i : layout->instances()) {
    s->mig_instances.push_back(
        {layout->geometry().profiles[static_cast<size_t>(i.profile)].name, i.start, i.owner});
  }
  s->mig_instances_created = layout->creations();
  s->mig_reconfigurations = layout->reconfigurations();
}

void Sharing::FillMigChain(ChainId chain, ChainSummary* s) const {
  for (const auto& [id, layout] : mig_.layouts()) {
    if (forest_.chain(CellId(id)) != chain) continue;
    s->mig_instances_created += layout.creations();
    s->mig_reconfigurations += layout.reconfigurations();
  }
}

void Sharing::AppendMigLayouts(std::vector<internal::SavedMigLayout>* out) const {
  for (const auto& [id, layout] : mig_.layouts()) {
    internal::SavedMigLayout l;
    l.gpu = forest_.address(CellId(id));
    for (const MigLayout::Instance& i : layout.instances()) {
      l.instances.emplace_back(layout.geometry().profiles[static_cast<size_t>(i.profile)].name,
                               i.start);
    }
    l.creations = layout.creations();
    l.reconfigurations = layout.reconfigurations();
    out->push_back(std::move(l));
  }
}

void Sharing::FillMigPlacement(std::string_view group, Placement* placement) const {
  auto it = groups_.find(group);
  if (it == groups_.end() || !IsMig(it->second.request)) return;
  const Group& g = it->second;
  // Per (leaf, profile): the starts of the group's instances there, ascending; the pods on
  // that leaf with that profile take them in pod order (they are interchangeable).
  std::map<std::pair<uint32_t, std::string>, std::vector<int32_t>> starts;
  for (const PodShare& pod : g.pods) {
    if (pod.mig.empty() || !pod.open) continue;
    auto key = std::make_pair(pod.leaf.value(), pod.mig);
    if (starts.count(key) > 0) continue;
    std::vector<int32_t>& list = starts[key];
    const MigLayout* layout = mig_.find(pod.leaf);
    if (layout == nullptr) continue;
    const int32_t profile = layout->geometry().Find(pod.mig);
    for (const MigLayout::Instance& i : layout->instances()) {
      if (i.profile == profile && i.owner == g.request.name) list.push_back(i.start);
    }
  }
  std::map<std::pair<uint32_t, std::string>, size_t> next;
  size_t pod_index = 0;
  for (const GroupMember& m : g.request.members) {
    for (int32_t k = 0; k < m.pod_number && pod_index < placement->pods.size(); ++k) {
      PodPlacement& pod = placement->pods[pod_index++];
      pod.mig_profile = m.mig_profile;
      pod.mig_start = -1;
      // The pod's GPU among the group's MIG leaves (a pod skipped by Restore has none).
      for (const PodShare& s : g.pods) {
        if (s.mig != m.mig_profile || !s.open || pod.leaf_cell_indices.size() != 1 ||
            forest_.leaf_index(s.leaf) != pod.leaf_cell_indices[0] ||
            forest_.node_name(forest_.node(s.leaf)) != pod.node) {
          continue;
        }
        const auto key = std::make_pair(s.leaf.value(), s.mig);
        size_t& n = next[key];
        const std::vector<int32_t>& list = starts[key];
        if (n < list.size()) pod.mig_start = list[n++];
        break;
      }
    }
  }
}

std::string Sharing::TakeRecorded(const std::string& group, CellId leaf, const PodAsk& a,
                                  int32_t start, Tentative* t) const {
  if (start < 0) {  // a fractional pod, or a MIG pod whose instance the rule chooses
    std::string why = MigRecoverProblem(leaf, a, *t);
    if (why.empty()) Take(leaf, a, t);
    return why;
  }
  if (shares_.IsOpen(leaf) && shares_.gpu(leaf).shares > mig_.Used(leaf)) {
    return "the GPU holds fractional shares; a MIG instance cannot join them";
  }
  // The recorded instance, on the layout as this group's earlier pods leave it.
  cellalloc::MigLayout layout = MigLayoutOf(leaf, *t);
  if (std::string why = layout.TakeAt(layout.geometry().Find(a.mig), start, group); !why.empty()) {
    return absl::StrCat("its ", a.mig, " instance at ", start, ": ", why);
  }
  t->mig.insert_or_assign(leaf.value(), std::move(layout));  // Take without TakeMig
  auto& gpu = t->gpu[leaf.value()];
  gpu.first += a.milli;
  gpu.second += a.memory;
  auto& node = t->node[forest_.node(leaf).value()];
  node.first += a.cpu;
  node.second += a.host_memory;
  return std::string();
}

}  // namespace hived
