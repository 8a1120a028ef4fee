// Sharing: fractional groups on GPUs opened by holder groups (sharing/sharing.h).
#include "sharing/sharing.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::kGpuMilli;

bool IsHolderName(std::string_view name) { return absl::StartsWith(ToAbsl(name), kHolderPrefix); }

bool IsFractional(const GroupRequest& request) {
  for (const GroupMember& m : request.members) {
    if (m.gpu_milli != 0 || !m.mig_profile.empty()) return true;
  }
  return false;
}

Sharing::Sharing(WholeGpuCore whole, const ClusterSpec& spec, const cellalloc::CellForest& forest)
    : whole_(whole), forest_(forest) {
  const size_t nodes = static_cast<size_t>(forest.num_nodes());
  node_cpu_.assign(nodes, 0);
  node_memory_.assign(nodes, 0);
  node_cpu_used_.assign(nodes, 0);
  node_memory_used_.assign(nodes, 0);
  for (const LeafCellTypeSpec& t : spec.leaf_cell_types) leaf_types_[t.name] = t;
  for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
    std::vector<std::string>& types = vc_types_[vc.name];
    for (const VirtualCellSpec& c : vc.virtual_cells) {
      const std::string type = c.cell_type.substr(c.cell_type.rfind('.') + 1);
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
    }
  }
  // Node resources: from the node-level physical cells (a node of several chains takes the
  // largest declaration; validation allows one per node name only where they agree).
  std::vector<const PhysicalCellSpec*> stack;
  for (const PhysicalCellSpec& c : spec.physical_cells) stack.push_back(&c);
  while (!stack.empty()) {
    const PhysicalCellSpec* c = stack.back();
    stack.pop_back();
    if (c->cpu_milli > 0 || c->memory_mib > 0) {
      const NodeId n = forest.FindNode(c->cell_address);
      if (!n.IsNil()) {
        node_cpu_[n.value()] = std::max(node_cpu_[n.value()], c->cpu_milli);
        node_memory_[n.value()] = std::max(node_memory_[n.value()], c->memory_mib);
        nodes_declare_ = true;
      }
    }
    for (const PhysicalCellSpec& child : c->cell_children) stack.push_back(&child);
  }
  for (size_t n = 0; n < nodes; ++n) {
    max_node_cpu_ = std::max(max_node_cpu_, node_cpu_[n]);
    max_node_memory_ = std::max(max_node_memory_, node_memory_[n]);
  }
  InitMig(spec);
}

bool Sharing::Handles(const GroupRequest& request) const {
  // Every whole-GPU Schedule and Allocate asks: no lookup while no fractional group lives.
  return IsFractional(request) || IsHolderName(request.name) || IsHostRequest(request) ||
         (!groups_.empty() && groups_.find(request.name) != groups_.end());
}

bool Sharing::Handles(std::string_view group) const {
  // Every whole-GPU Release asks: no copy of the name, no lookup while none lives.
  return IsHolderName(group) || (!groups_.empty() && groups_.find(group) != groups_.end()) ||
         (!host_groups_.empty() && host_groups_.find(group) != host_groups_.end());
}

absl::StatusOr<Sharing::Parsed> Sharing::Parse(const GroupRequest& r) const {
  if (absl::StartsWith(r.name, kHolderPrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": names starting with ", kHolderPrefix, " are reserved"));
  }
  HIVED_RETURN_IF_ERROR(ValidateRequest(r));
  Parsed p;
  p.guaranteed = r.priority >= kMinGuaranteedPriority;
  if (!r.pinned_cell_id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": a fractional group cannot use a pinned cell"));
  }
  if (!r.leaf_cell_type.empty() && !r.leaf_cell_types.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": set leaf_cell_type or leaf_cell_types, not both"));
  }
  p.types = r.leaf_cell_types;
  if (!r.leaf_cell_type.empty()) p.types.push_back(r.leaf_cell_type);
  for (const std::string& t : p.types) {
    if (forest_.ChainsOfLeafType(t).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", r.name, ": leaf cell type ", t, " does not exist in the cluster"));
    }
    auto it = leaf_types_.find(t);
    if (it != leaf_types_.end() && it->second.sharing == SharingMode::kNone) {
      return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": leaf cell type ", t,
                                                     " is not shared (sharingMode: none)"));
    }
  }
  const int64_t max_cpu = max_node_cpu_;
  const int64_t max_memory = max_node_memory_;
  const bool mig = IsMig(r);  // its members are checked by ParseMig
  for (const GroupMember& m : r.members) {
    if (!mig && (m.gpu_milli < 1 || m.gpu_milli > kGpuMilli || m.leaf_cell_number != 1 ||
                 m.gpu_memory_mib < 0 || m.cpu_milli < 0 || m.memory_mib < 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": a fractional member needs gpu_milli in 1..", kGpuMilli,
          ", leafCellNumber 1 and no negative amounts (got gpu_milli ", m.gpu_milli,
          ", leafCellNumber ", m.leaf_cell_number, "); a group is all fractional or all whole"));
    }
    if ((m.cpu_milli > 0 && nodes_declare_ && m.cpu_milli > max_cpu) ||
        (m.memory_mib > 0 && nodes_declare_ && m.memory_mib > max_memory)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": a pod asks ", m.cpu_milli, " CPU milli and ", m.memory_mib,
          " MiB host memory; the largest node has ", max_cpu, " and ", max_memory));
    }
    for (int32_t k = 0; k < m.pod_number; ++k) {
      p.pods.push_back({m.gpu_milli, m.gpu_memory_mib, m.cpu_milli, m.memory_mib});
    }
  }
  if (mig) HIVED_RETURN_IF_ERROR(ParseMig(r, &p));
  return p;
}

bool Sharing::TypeAllowed(const Parsed& p, CellId leaf) const {
  if (p.types.empty()) return true;
  const std::string& t = forest_.chain_info(forest_.chain(leaf)).leaf_type;
  return std::find(p.types.begin(), p.types.end(), t) != p.types.end();
}

bool Sharing::NodeRoom(CellId leaf, const PodAsk& a, const Tentative& t) const {
  const uint32_t n = forest_.node(leaf).value();
  int64_t cpu = node_cpu_used_[n] + a.cpu;
  int64_t memory = node_memory_used_[n] + a.host_memory;
  auto it = t.node.find(n);
  if (it != t.node.end()) {
    cpu += it->second.first;
    memory += it->second.second;
  }
  return (node_cpu_[n] == 0 || cpu <= node_cpu_[n]) &&
         (node_memory_[n] == 0 || memory <= node_memory_[n]);
}

bool Sharing::Compatible(const GroupRequest& r, bool guaranteed, CellId leaf) const {
  const LeafUse& use = leaf_use_.at(leaf.value());
  const Holder& h = holders_.at(use.holder);
  if (guaranteed) return h.vc == r.vc && h.priority == r.priority;
  if (h.priority < kMinGuaranteedPriority) return true;
  if (!use.barred_by.empty()) return false;
  auto it = leaf_types_.find(forest_.chain_info(forest_.chain(leaf)).leaf_type);
  return it != leaf_types_.end() && it->second.sharing == SharingMode::kProtected;
}

CellId Sharing::Place(const GroupRequest& r, const Parsed& p, const PodAsk& a, const Tentative& t,
                      bool evict, std::string* preferred) const {
  if (!a.mig.empty()) return PlaceMig(r, p, a, t, evict);
  if (nodes_declare_ && !evict && t.gpu.empty() && t.node.empty() && t.excluded.empty()) {
    return PlaceStranded(r, p, a, t, preferred);
  }
  CellId best;
  int32_t best_left = kGpuMilli + 1;
  for (const auto& [id, gpu] : shares_.open()) {
    const CellId leaf(id);
    if (std::find(t.excluded.begin(), t.excluded.end(), id) != t.excluded.end()) continue;
    if (mig_.Used(leaf) > 0) continue;  // a GPU with MIG instances takes no fractional share
    if (!TypeAllowed(p, leaf) || !Compatible(r, p.guaranteed, leaf) || !NodeRoom(leaf, a, t)) {
      continue;
    }
    int32_t extra_milli = 0;
    int64_t extra_memory = 0;
    auto it = t.gpu.find(id);
    if (it != t.gpu.end()) {
      extra_milli = it->second.first;
      extra_memory = it->second.second;
    }
    if (evict) {  // the guests' shares count as free; a GPU another group evicts is its
      const std::string& by = leaf_use_.at(id).barred_by;
      if (!by.empty() && by != r.name) continue;
      for (const std::string& g : Guests(leaf)) {
        for (const PodShare& s : groups_.at(g).pods) {
          if (s.leaf == leaf) {
            extra_milli -= s.milli;
            extra_memory -= s.memory;
          }
        }
      }
    }
    if (!shares_.Fits(leaf, a.milli, a.memory, extra_milli, extra_memory)) continue;
    const int32_t left = kGpuMilli - gpu.used_milli - extra_milli - a.milli;
    if (left < best_left) {  // strict: ties keep the lowest leaf id
      best_left = left;
      best = leaf;
    }
  }
  return best;
}

void Sharing::Take(CellId leaf, const PodAsk& a, Tentative* t) const {
  auto& g = t->gpu[leaf.value()];
  g.first += a.milli;
  g.second += a.memory;
  auto& n = t->node[forest_.node(leaf).value()];
  n.first += a.cpu;
  n.second += a.host_memory;
  if (!a.mig.empty()) TakeMig(leaf, a, t);
}

std::vector<std::string> Sharing::Guests(CellId leaf) const {
  std::vector<std::string> out;
  auto it = leaf_use_.find(leaf.value());
  if (it == leaf_use_.end()) return out;
  if (holders_.at(it->second.holder).priority < kMinGuaranteedPriority) return out;
  for (const std::string& g : it->second.sharers) {  // a reserved guest is never a victim
    const Group& guest = groups_.at(g);
    if (!guest.guaranteed && guest.stage == Stage::kRunning) out.push_back(g);
  }
  return out;
}

std::optional<std::vector<std::string>> Sharing::RoomyNodes(const Parsed& p,
                                                            const std::string& type) const {
  if (!nodes_declare_) return std::nullopt;
  PodAsk big;
  for (const PodAsk& a : p.pods) {
    big.cpu = std::max(big.cpu, a.cpu);
    big.host_memory = std::max(big.host_memory, a.host_memory);
  }
  // The node's leaf types as a mask (one compare per node), when the forest has at most 64.
  IndexLeaves();
  const uint64_t want =
      !type.empty() && forest_.leaf_types().size() <= 64 ? TypeMask({type}) : uint64_t{0};
  const bool by_mask = want != 0;
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(forest_.num_nodes()));
  for (int32_t n = 0; n < forest_.num_nodes(); ++n) {
    const NodeId node(static_cast<uint32_t>(n));
    bool has_type = type.empty() || (by_mask && (node_types_[node.value()] & want) != 0);
    if (!by_mask) {
      for (CellId c : forest_.node_cells(node)) {
        has_type = has_type || forest_.chain_info(forest_.chain(c)).leaf_type == type;
      }
    }
    const size_t i = static_cast<size_t>(n);
    if (has_type && (node_cpu_[i] == 0 || node_cpu_used_[i] + big.cpu <= node_cpu_[i]) &&
        (node_memory_[i] == 0 || node_memory_used_[i] + big.host_memory <= node_memory_[i])) {
      out.push_back(forest_.node_name(node));
    }
  }
  return out;
}

GroupRequest Sharing::HolderRequest(const GroupRequest& r, const Parsed& p, const std::string& name,
                                    const std::string& type, int32_t pods) const {
  GroupRequest h;
  h.name = name;
  h.vc = r.vc;
  h.priority = r.priority;
  h.leaf_cell_type = type;
  h.members = {{pods, 1}};
  h.suggested_nodes = RoomyNodes(p, type);
  return h;
}

void Sharing::FillPlacementPod(CellId leaf, PodPlacement* pod) const {
  pod->leaf_cell_number = 1;
  pod->node = forest_.node_name(forest_.node(leaf));
  pod->leaf_cell_indices = {forest_.leaf_index(leaf)};
}

GroupStatus Sharing::CoreStatus(const std::string& group) const {
  // As the public GetGroup answers (sharing/layered.h): a fractional or CPU-only group's status
  // is this component's (ParseFor: a name a CPU-only group runs under already exists);
  // anything else, a holder's or a whole group's, the core's.
  if (HasGroup(group)) return Status(group);
  return whole_.GetGroup(group);
}

GroupState Sharing::CoreState(const std::string& group) const {
  if (HasGroup(group)) return Status(group).state;
  return whole_.GetGroupState(group);
}

}  // namespace hived
