// Sharing's host groups: node CPU and host memory for whole-GPU pods, and CPU-only pods
// (sharing/sharing.h, "Host groups"; docs/gpu-sharing.md).
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sharing/sharing.h"
#include "src/group_record.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

bool IsHostRequest(const GroupRequest& r) {
  bool host = false;
  for (const GroupMember& m : r.members) {
    // A MIG pod's CPU and host memory are the MIG path's (counted like a fractional pod's).
    if (m.gpu_milli != 0 || !m.mig_profile.empty()) return false;
    host = host || m.leaf_cell_number == 0 || m.cpu_milli != 0 || m.memory_mib != 0;
  }
  return host;
}

namespace {

// The request the scheduler sees for a whole host group: no CPU or memory.
GroupRequest Stripped(const GroupRequest& r) {
  GroupRequest s = r;
  for (GroupMember& m : s.members) {
    m.cpu_milli = 0;
    m.memory_mib = 0;
  }
  return s;
}

bool CpuOnly(const GroupRequest& r) {
  return !r.members.empty() && r.members.front().leaf_cell_number == 0;
}

}  // namespace

const Sharing::HostGroup* Sharing::CpuOnlyGroup(std::string_view name) const {
  if (host_groups_.empty()) return nullptr;
  auto it = host_groups_.find(name);
  return it != host_groups_.end() && it->second.cpu_only ? &it->second : nullptr;
}

// The checks of a host request (kInvalidArgument / kNotFound naming the group).
static absl::Status CheckHost(const GroupRequest& r, bool vc_exists) {
  if (r.name.empty()) return absl::InvalidArgumentError("group name is empty");
  if (IsHolderName(r.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": names starting with ", kHolderPrefix, " are reserved"));
  }
  if (r.priority < kOpportunisticPriority || r.priority > kMaxGuaranteedPriority) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": priority ", r.priority,
                                                   " is outside -1..", kMaxGuaranteedPriority));
  }
  const bool cpu_only = CpuOnly(r);
  int64_t pods = 0;
  for (const GroupMember& m : r.members) {
    if (m.pod_number <= 0 || m.leaf_cell_number < 0 || (m.leaf_cell_number == 0) != cpu_only ||
        m.gpu_memory_mib != 0 || m.cpu_milli < 0 || m.memory_mib < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name,
          ": a host group's members need a positive podNumber, no GPU memory, "
          "no negative CPU or memory, and are all CPU-only (leafCellNumber 0) or all whole "
          "(got ",
          m.pod_number, " x ", m.leaf_cell_number, ")"));
    }
    pods += m.pod_number;
    if (pods > kMaxGroupPods) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": too many pods (more than ", kMaxGroupPods, " in all members)"));
    }
  }
  if (cpu_only &&
      (!r.leaf_cell_type.empty() || !r.leaf_cell_types.empty() || !r.pinned_cell_id.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", r.name, ": a CPU-only group names no leaf cell type and no pinned cell"));
  }
  if (!vc_exists) return absl::NotFoundError(absl::StrCat("VC ", r.vc, " does not exist"));
  return absl::OkStatus();
}

absl::StatusOr<ScheduleResult> Sharing::ScheduleHost(const GroupRequest& r, Phase phase) {
  HIVED_RETURN_IF_ERROR(CheckHost(r, vc_types_.count(r.vc) > 0));
  const bool cpu_only = CpuOnly(r);
  if (host_groups_.count(r.name) > 0 || groups_.count(r.name) > 0 ||
      (cpu_only && CoreState(r.name) != GroupState::kAbsent)) {
    return absl::AlreadyExistsError(absl::StrCat("group ", r.name, " already exists"));
  }
  pending_ = Pending();
  std::vector<PodAsk> pods;
  PodAsk big;
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number; ++k) pods.push_back({0, 0, m.cpu_milli, m.memory_mib});
    big.cpu = std::max(big.cpu, m.cpu_milli);
    big.host_memory = std::max(big.host_memory, m.memory_mib);
  }
  ScheduleResult result;
  int64_t max_cpu = 0, max_memory = 0;
  for (size_t n = 0; n < node_cpu_.size(); ++n) {
    max_cpu = std::max(max_cpu, node_cpu_[n]);
    max_memory = std::max(max_memory, node_memory_[n]);
  }
  if (nodes_declare_ &&
      ((max_cpu > 0 && big.cpu > max_cpu) || (max_memory > 0 && big.host_memory > max_memory))) {
    result.outcome = Outcome::kInfeasible;
    result.code = ReasonCode::kPodTooLarge;
    result.reason =
        absl::StrCat("group ", r.name, ": a pod asks ", big.cpu, " CPU milli and ", big.host_memory,
                     " MiB host memory; the largest node has ", max_cpu, " and ", max_memory);
    return result;
  }
  std::vector<bool> suggested(node_cpu_.size(), !r.suggested_nodes.has_value());
  if (r.suggested_nodes.has_value()) {
    for (const std::string& name : *r.suggested_nodes) {
      const NodeId n = forest_.FindNode(name);
      if (!n.IsNil()) suggested[n.value()] = true;
    }
  }
  auto room = [&](size_t n, int64_t cpu, int64_t memory) {
    return (node_cpu_[n] == 0 || node_cpu_used_[n] + cpu <= node_cpu_[n]) &&
           (node_memory_[n] == 0 || node_memory_used_[n] + memory <= node_memory_[n]);
  };
  if (cpu_only) {
    // Each pod on the node whose stranded GPU milli grows least (ties: the first node).
    std::map<size_t, std::pair<int64_t, int64_t>> taken;  // this gang's earlier pods
    for (const PodAsk& a : pods) {
      ShareChoice::ShapeCache* cache = choice_.CacheOf({a.cpu, a.host_memory, 0, 0, ~uint64_t{0}});
      size_t best = node_cpu_.size();
      double best_change = 0;
      for (size_t n = 0; n < node_cpu_.size(); ++n) {
        const NodeId node(static_cast<uint32_t>(n));
        // Looked up, never inserted: most nodes hold none of the gang's pods.
        const auto found = taken.find(n);
        const std::pair<int64_t, int64_t> t =
            found == taken.end() ? std::pair<int64_t, int64_t>{0, 0} : found->second;
        if (!suggested[n] || !whole_.NodeHealthy(node) ||
            !room(n, t.first + a.cpu, t.second + a.host_memory)) {
          continue;
        }
        const ShareChoice::Shape shape{a.cpu, a.host_memory, 0, 0, ~uint64_t{0}};
        const uint32_t node32 = static_cast<uint32_t>(n);
        double change = 0;
        if (t.first == 0 && t.second == 0) {  // cached while the node is unchanged
          change = choice_.ChangeAt(
              cache, shape, node32, CoreUsed(node32), [&] { return NodeStateOf(node32); },
              ShareChoice::kAnyFreeLeaf);
        } else {  // the gang's earlier pods on this node
          ShareChoice::NodeState s = NodeStateOf(node32);
          if (s.cpu_left >= 0) s.cpu_left -= t.first;
          if (s.memory_left >= 0) s.memory_left -= t.second;
          change = choice_.Change(s, shape, -1);
        }
        if (best == node_cpu_.size() || change < best_change) {
          best = n;
          best_change = change;
        }
      }
      if (best == node_cpu_.size()) {
        result.outcome = Outcome::kWaiting;
        result.code = ReasonCode::kInsufficientCapacity;
        result.reason = absl::StrCat("group ", r.name, ": no healthy suggested node has ", a.cpu,
                                     " CPU milli and ", a.host_memory, " MiB host memory free");
        result.placement = Placement();
        return result;
      }
      taken[best].first += a.cpu;
      taken[best].second += a.host_memory;
      PodPlacement pod;
      pod.node = forest_.node_name(NodeId(static_cast<uint32_t>(best)));
      result.placement.pods.push_back(std::move(pod));
    }
    result.outcome = Outcome::kPlaced;
    return result;
  }
  // Whole GPUs: the scheduler decides, on the nodes with room for the largest pod.
  GroupRequest core_request = Stripped(r);
  std::vector<uint32_t> roomy;  // by node id; their names only when the scheduler needs them
  if (nodes_declare_) {
    for (size_t n = 0; n < node_cpu_.size(); ++n) {
      if (suggested[n] && room(n, big.cpu, big.host_memory)) {
        roomy.push_back(static_cast<uint32_t>(n));
      }
    }
  }
  // The node choice counts the nodes' CPU and host memory with the group's earlier pods on
  // the same node (src/node_room.h), each pod's ask in the order of the parsed request's
  // `needs` (its pods by leaf count): one decision, nothing undone for lack of CPU.
  hived::NodeRoom asks{&node_cpu_, &node_cpu_used_, &node_memory_, &node_memory_used_, nullptr, {},
                       {}};
  if (nodes_declare_) {
    for (uint32_t i : PodsInNeedsOrder(r)) {
      asks.pod_cpu.push_back(pods[i].cpu);
      asks.pod_memory.push_back(pods[i].host_memory);
    }
  }
  const hived::NodeRoom* const node_room = nodes_declare_ ? &asks : nullptr;
  auto suggest_roomy = [&] {
    std::vector<std::string> names;
    names.reserve(roomy.size());
    for (uint32_t n : roomy) names.push_back(forest_.node_name(NodeId(n)));
    core_request.suggested_nodes = std::move(names);
  };
  absl::StatusOr<ScheduleResult> core;
  {
    // One pod: the node where it strands least first (share_choice.h); the scheduler
    // decides the leaves, and all nodes with room when it cannot place it there.
    if (nodes_declare_ && pods.size() == 1) {
      const int32_t need = r.members.front().leaf_cell_number;
      std::vector<std::string> types;
      if (!r.leaf_cell_type.empty()) types.push_back(r.leaf_cell_type);
      const ShareChoice::Shape shape{big.cpu, big.host_memory, cellalloc::kGpuMilli, need,
                                     TypeMask(types)};
      ShareChoice::ShapeCache* cache = choice_.CacheOf(shape);
      double best = std::numeric_limits<double>::infinity();
      bool found = false;
      uint32_t best_node = 0;
      for (uint32_t n : roomy) {
        const double change = choice_.ChangeAt(
            cache, shape, n, CoreUsed(n), [&] { return NodeStateOf(n); },
            ShareChoice::kAnyFreeLeaf);
        if (change < best) {
          best = change;
          best_node = n;
          found = true;
        }
      }
      if (found) {
        core_request.suggested_nodes =
            std::vector<std::string>{forest_.node_name(NodeId(best_node))};
        // One decision there, applied only when it places (else nothing changed).
        core = ScheduleWhole(core_request, phase, node_room, /*only_placed=*/true);
      }
    }
    if (!core.ok() || core->outcome != Outcome::kPlaced) {
      if (nodes_declare_) suggest_roomy();
      core = ScheduleWhole(core_request, phase, node_room);
    }
  }
  if (!core.ok() || core->outcome != Outcome::kPlaced) {
    if (core.ok()) TranslateVictims(&core->victims);
    return core;
  }
  return core;
}

absl::StatusOr<AllocateInfo> Sharing::AllocateHost(const GroupRequest& r,
                                                   const Placement& placement, bool recover) {
  HIVED_RETURN_IF_ERROR(CheckHost(r, vc_types_.count(r.vc) > 0));
  if (host_groups_.count(r.name) > 0 || groups_.count(r.name) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("group ", r.name, " is already running"));
  }
  HostGroup g;
  g.request = r;
  g.cpu_only = CpuOnly(r);
  g.placement = placement;
  // The placement lists the pods as the scheduler does (by leaf count, ties in member order:
  // `PodsInNeedsOrder`); a CPU-only group's pods all need 0 leaves, so in member order.
  std::vector<HostPod> asked;
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number; ++k) asked.push_back({0, m.cpu_milli, m.memory_mib});
  }
  for (uint32_t i : PodsInNeedsOrder(r)) g.pods.push_back(asked[i]);
  if (placement.pods.size() != g.pods.size()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": the placement has ",
                                                   placement.pods.size(), " pods, the request ",
                                                   g.pods.size()));
  }
  std::map<uint32_t, std::pair<int64_t, int64_t>> use;
  for (size_t i = 0; i < g.pods.size(); ++i) {
    const NodeId n = forest_.FindNode(placement.pods[i].node);
    if (n.IsNil()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": pod ", i, " is on unknown node ", placement.pods[i].node));
    }
    if (g.cpu_only && !placement.pods[i].leaf_cell_indices.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", r.name, ": CPU-only pod ", i, " names leaf cells"));
    }
    g.pods[i].node = n.value();
    use[n.value()].first += g.pods[i].cpu;
    use[n.value()].second += g.pods[i].host_memory;
  }
  for (const auto& [n, u] : use) {
    if ((node_cpu_[n] > 0 && node_cpu_used_[n] + u.first > node_cpu_[n]) ||
        (node_memory_[n] > 0 && node_memory_used_[n] + u.second > node_memory_[n])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", r.name, ": node ", forest_.node_name(NodeId(n)), " has not ", u.first,
          " CPU milli and ", u.second, " MiB host memory free (schedule it again)"));
    }
  }
  AllocateInfo info;
  if (!g.cpu_only) {
    const GroupRequest core_request = Stripped(r);
    HIVED_ASSIGN_OR_RETURN(info, recover ? whole_.Recover(core_request, placement)
                                         : whole_.Allocate(core_request, placement));
  }
  for (const HostPod& p : g.pods) {
    choice_.Touch(p.node);
    node_cpu_used_[p.node] += p.cpu;
    node_memory_used_[p.node] += p.host_memory;
  }
  host_groups_.emplace(r.name, std::move(g));
  pending_ = Pending();
  NoteAdmitted(r, ~uint64_t{0});
  return info;
}

absl::Status Sharing::ReleaseHost(std::string_view name) {
  auto it = host_groups_.find(name);
  if (!it->second.cpu_only) {
    HIVED_RETURN_IF_ERROR(whole_.Release(name));
  }
  for (const HostPod& p : it->second.pods) {
    choice_.Touch(p.node);
    node_cpu_used_[p.node] -= p.cpu;
    node_memory_used_[p.node] -= p.host_memory;
  }
  host_groups_.erase(it);
  pending_ = Pending();
  return absl::OkStatus();
}

absl::Status Sharing::HostNotPending(std::string_view name, bool cancel) {
  if (host_groups_.find(name)->second.cpu_only) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name), cancel ? " is not preempting" : " is not reserved"));
  }
  return cancel ? whole_.CancelPreemption(name) : whole_.Unreserve(name);
}

void Sharing::AddHostUse(std::vector<int64_t>* cpu, std::vector<int64_t>* memory) const {
  for (const auto& [name, g] : host_groups_) {
    for (const HostPod& p : g.pods) {
      (*cpu)[p.node] += p.cpu;
      (*memory)[p.node] += p.host_memory;
    }
  }
}

ShareChoice::NodeState Sharing::NodeStateOf(uint32_t node) const {
  ShareChoice::NodeState s;
  s.cpu_left = node_cpu_[node] > 0 ? node_cpu_[node] - node_cpu_used_[node] : -1;
  s.memory_left = node_memory_[node] > 0 ? node_memory_[node] - node_memory_used_[node] : -1;
  const std::vector<std::string>& types = forest_.leaf_types();
  for (CellId cell : forest_.node_cells(NodeId(node))) {
    if (s.type < 0) {
      const std::string& type = forest_.chain_info(forest_.chain(cell)).leaf_type;
      s.type = static_cast<int32_t>(std::find(types.begin(), types.end(), type) - types.begin());
    }
    const uint32_t first = forest_.first_leaf(cell).value();
    const uint32_t count = static_cast<uint32_t>(forest_.leaf_count(cell));
    for (uint32_t leaf = first; leaf < first + count; ++leaf) {
      if (shares_.IsOpen(CellId(leaf))) {
        s.free.push_back(cellalloc::kGpuMilli - shares_.gpu(CellId(leaf)).used_milli);
      } else {
        s.free.push_back(whole_.UsedLeaves(CellId(leaf)) > 0 ? 0 : cellalloc::kGpuMilli);
      }
    }
  }
  return s;
}

// Persistence (docs/state-format.md, version 3): a host group's record is its request as
// asked (with CPU and memory) and its placement; Restore re-counts the nodes' use from the
// restored groups (AllocateHost), never from a saved total.
void Sharing::AppendHostRecords(std::vector<GroupRecord>* out) const {
  for (const auto& [name, g] : host_groups_) {
    GroupRecord rec;
    if (CpuOnlyRecord(name, &rec)) out->push_back(std::move(rec));  // whole: the scheduler's
  }
}

bool Sharing::CpuOnlyRecord(std::string_view name, GroupRecord* out) const {
  const HostGroup* g = CpuOnlyGroup(name);
  if (g == nullptr) return false;
  *out = RunningRecord(g->request, g->placement, g->request.priority >= kMinGuaranteedPriority);
  return true;
}

void Sharing::CompleteHostRecord(GroupRecord* rec) const {
  if (host_groups_.empty()) return;
  auto it = host_groups_.find(rec->request.name);
  if (it == host_groups_.end() || it->second.cpu_only) return;
  // The scheduler sees the request without CPU and memory (Stripped); same pods.
  rec->request.members = it->second.request.members;
}

}  // namespace hived
