// Sharing's views and invariants (sharing/sharing.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sharing/sharing.h"
#include "src/scheduler_impl.h"

namespace hived {

GroupStatus Sharing::Status(std::string_view name) const {
  GroupStatus s;
  s.name = std::string(name);
  s.request.name = s.name;
  if (const HostGroup* h = CpuOnlyGroup(name); h != nullptr) {
    s.vc = h->request.vc;
    s.request = h->request;
    s.priority = h->request.priority;
    s.placement = h->placement;
    s.state = h->request.priority >= kMinGuaranteedPriority ? GroupState::kAllocated
                                                            : GroupState::kOpportunistic;
    return s;
  }
  auto it = groups_.find(s.name);
  if (it == groups_.end()) return s;
  const Group& g = it->second;
  s.vc = g.request.vc;
  s.request = g.request;
  s.priority = g.request.priority;
  if (g.stage == Stage::kPreempting) {
    s.state = GroupState::kPreempting;
    return s;
  }
  s.placement = g.placement;
  FillMigPlacement(name, &s.placement);
  if (g.stage == Stage::kReserved) {
    s.state = GroupState::kReserved;
    return s;
  }
  s.state = g.guaranteed ? GroupState::kAllocated : GroupState::kOpportunistic;
  // Being preempted when a holder of one of its GPUs is.
  for (const PodShare& pod : g.pods) {
    const GroupStatus h = CoreStatus(leaf_use_.at(pod.leaf.value()).holder);
    if (h.state == GroupState::kBeingPreempted) {
      s.state = GroupState::kBeingPreempted;
      s.preemptor = h.preemptor;
      break;
    }
  }
  if (s.state != GroupState::kBeingPreempted) {  // evicted by a protected guaranteed group
    for (const PodShare& pod : g.pods) {
      const std::string& by = leaf_use_.at(pod.leaf.value()).barred_by;
      if (!by.empty()) {
        s.state = GroupState::kBeingPreempted;
        s.preemptor = by;
        break;
      }
    }
  }
  return s;
}

void Sharing::AppendStatuses(std::vector<GroupStatus>* out) const {
  for (const auto& [name, g] : groups_) out->push_back(Status(name));
  for (const auto& [name, g] : host_groups_) {
    if (g.cpu_only) out->push_back(Status(name));
  }
}

void Sharing::FillLeaf(CellId leaf, PhysicalCellStatus* s) const {
  FillMigLeaf(leaf, s);
  if (!shares_.IsOpen(leaf)) return;
  const cellalloc::GpuShares::Gpu& gpu = shares_.gpu(leaf);
  const LeafUse& use = leaf_use_.at(leaf.value());
  s->shared_milli = gpu.used_milli;
  s->shared_gpu_memory_mib = gpu.used_memory;
  s->sharing_holder = use.holder;
  s->sharers = use.sharers;
}

absl::Status Sharing::CheckInvariants() const {
  auto fail = [](auto... parts) {
    return absl::InternalError(absl::StrCat("sharing: ", parts...));
  };
  if (absl::Status s = shares_.CheckInvariants(); !s.ok()) return s;
  if (absl::Status s = CheckMig(); !s.ok()) return s;
  // (8) and sharing/layered.h (L1): the core's shields are the reserved shares.
  if (whole_.shields() != ReservedShields() || shields_ != whole_.shields()) {
    return fail("(8) the core's shields are not the reserved shares per holder");
  }
  // (1) holders and open GPUs.
  size_t holder_leaves = 0;
  for (const auto& [name, h] : holders_) {
    const GroupStatus s = CoreStatus(name);
    if (s.state != GroupState::kAllocated && s.state != GroupState::kOpportunistic &&
        s.state != GroupState::kBeingPreempted) {
      return fail("(1) holder ", name, " is ", GroupStateName(s.state));
    }
    if (s.priority != h.priority || s.vc != h.vc || s.placement.pods.size() != h.leaves.size()) {
      return fail("(1) holder ", name, " runs at ", s.priority, " in ", s.vc, " with ",
                  s.placement.pods.size(), " leaves; recorded ", h.priority, " in ", h.vc);
    }
    bool any_share = false;
    for (CellId leaf : h.leaves) {
      auto it = leaf_use_.find(leaf.value());
      if (!shares_.IsOpen(leaf) || it == leaf_use_.end() || it->second.holder != name) {
        return fail("(1) leaf ", leaf.value(), " of holder ", name, " is not open for it");
      }
      any_share = any_share || !shares_.Empty(leaf);
    }
    if (!any_share) return fail("(5) holder ", name, " has no share");
    holder_leaves += h.leaves.size();
  }
  if (holder_leaves != shares_.open().size() || leaf_use_.size() != shares_.open().size()) {
    return fail("(1) ", shares_.open().size(), " open GPUs, ", holder_leaves, " holder leaves");
  }
  // (2), (3), (4): recompute the sums from the groups.
  std::map<uint32_t, std::pair<int64_t, int64_t>> gpu;
  std::map<uint32_t, std::vector<std::string>> sharers;
  std::vector<int64_t> cpu(node_cpu_.size(), 0);
  std::vector<int64_t> memory(node_memory_.size(), 0);
  for (const auto& [name, g] : groups_) {
    if (g.stage == Stage::kPreempting) {
      // Its holder preempts, or was cancelled by an overlapping preemptor (the next Schedule
      // of the group schedules it again); it never runs without the group.
      const GroupState hs = g.holder.empty() ? GroupState::kAbsent : CoreState(g.holder);
      if (hs != GroupState::kPreempting && hs != GroupState::kAbsent) {
        return fail("(1) preempting group ", name, "'s holder ", g.holder, " is ",
                    GroupStateName(hs));
      }
      for (CellId leaf : g.barred) {
        auto it = leaf_use_.find(leaf.value());
        if (it != leaf_use_.end() && it->second.barred_by != name &&
            !it->second.barred_by.empty()) {
          return fail("(6) leaf ", leaf.value(), " barred by ", it->second.barred_by, ", not ",
                      name);
        }
      }
      continue;
    }
    if (absl::Status s = CheckReservation(name, g); !s.ok()) return s;
    for (const PodShare& pod : g.pods) {
      cpu[forest_.node(pod.leaf).value()] += pod.cpu;
      memory[forest_.node(pod.leaf).value()] += pod.host_memory;
      if (!pod.open) continue;  // (7): checked above
      auto it = leaf_use_.find(pod.leaf.value());
      if (it == leaf_use_.end()) return fail("(2) group ", name, " on a GPU not open");
      const Holder& h = holders_.at(it->second.holder);
      const bool protected_type = [&] {
        auto t = leaf_types_.find(forest_.chain_info(forest_.chain(pod.leaf)).leaf_type);
        return t != leaf_types_.end() && t->second.sharing == SharingMode::kProtected;
      }();
      const bool ok = g.guaranteed ? h.vc == g.request.vc && h.priority == g.request.priority
                                   : h.priority < kMinGuaranteedPriority || protected_type;
      if (!ok)
        return fail("(3) group ", name, " shares GPU ", pod.leaf.value(), " of holder ",
                    it->second.holder);
      gpu[pod.leaf.value()].first += pod.milli;
      gpu[pod.leaf.value()].second += pod.memory;
      sharers[pod.leaf.value()].push_back(name);
    }
  }
  for (const auto& [id, g] : shares_.open()) {
    const auto sum = gpu[id];
    std::vector<std::string> names = sharers[id];
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (sum.first != g.used_milli || sum.second != g.used_memory) {
      return fail("(2) leaf ", id, ": groups hold ", sum.first, " milli, ", sum.second,
                  " MiB; GpuShares ", g.used_milli, ", ", g.used_memory);
    }
    const LeafUse& use = leaf_use_.at(id);
    if (names != use.sharers) return fail("(2) leaf ", id, ": sharers list differs");
    if (!use.barred_by.empty()) {
      auto b = groups_.find(use.barred_by);
      if (b == groups_.end() || b->second.stage != Stage::kPreempting ||
          std::find(b->second.barred.begin(), b->second.barred.end(), CellId(id)) ==
              b->second.barred.end()) {
        return fail("(6) leaf ", id, " barred by ", use.barred_by, ", which does not bar it");
      }
    }
  }
  const int64_t reserved = std::count_if(groups_.begin(), groups_.end(), [](const auto& g) {
    return g.second.stage == Stage::kReserved;
  });
  if (reserved != reserved_) return fail("(7) ", reserved, " reserved groups, counted ", reserved_);
  AddHostUse(&cpu, &memory);
  for (const auto& [name, g] : host_groups_) {  // a whole host group runs in the scheduler
    const GroupState st = g.cpu_only ? GroupState::kAllocated : CoreState(name);
    if (st != GroupState::kAllocated && st != GroupState::kOpportunistic &&
        st != GroupState::kBeingPreempted) {
      return fail("(4) host group ", name, " is ", GroupStateName(st), " in the scheduler");
    }
  }
  if (absl::Status s = choice_.CheckInvariants(); !s.ok()) return s;

  for (size_t n = 0; n < cpu.size(); ++n) {
    if (cpu[n] != node_cpu_used_[n] || memory[n] != node_memory_used_[n] ||
        (node_cpu_[n] > 0 && cpu[n] > node_cpu_[n]) ||
        (node_memory_[n] > 0 && memory[n] > node_memory_[n])) {
      return fail("(4) node ", forest_.node_name(NodeId(static_cast<uint32_t>(n))), ": ", cpu[n],
                  " CPU milli and ", memory[n], " MiB used of ", node_cpu_[n], " and ",
                  node_memory_[n]);
    }
  }
  return absl::OkStatus();
}

absl::Status Sharing::CheckReservation(const std::string& name, const Group& g) const {
  auto fail = [&](auto... parts) {
    return absl::InternalError(absl::StrCat("sharing: (7) group ", name, ": ", parts...));
  };
  if (g.pods.size() + static_cast<size_t>(g.unaccounted) != g.placement.pods.size()) {
    return fail("pods and placement differ");
  }
  if (g.stage == Stage::kRunning) {
    if (!g.holder.empty()) return fail("runs with holder ", g.holder);
    for (const PodShare& pod : g.pods) {
      if (!pod.open) return fail("runs on a GPU not open");
    }
    return absl::OkStatus();
  }
  std::vector<CellId> held;  // the holder's reserved leaves
  if (!g.holder.empty()) {
    const GroupStatus h = CoreStatus(g.holder);
    if (h.state != GroupState::kReserved || IsHolder(g.holder)) {
      return fail("holder ", g.holder, " is ", GroupStateName(h.state));
    }
    const ChainId chain = forest_.FindChain(h.placement.chain);
    for (const PodPlacement& pod : h.placement.pods) {
      held.push_back(forest_.FindLeaf(chain, forest_.FindNode(pod.node), pod.leaf_cell_indices[0]));
    }
  }
  std::vector<CellId> used;
  for (const PodShare& pod : g.pods) {
    if (pod.open) continue;
    if (shares_.IsOpen(pod.leaf) || std::find(held.begin(), held.end(), pod.leaf) == held.end() ||
        std::find(used.begin(), used.end(), pod.leaf) != used.end()) {
      return fail("a pod on leaf ", pod.leaf.value(), " that its holder does not reserve alone");
    }
    used.push_back(pod.leaf);
  }
  if (used.size() != held.size())
    return fail(held.size(), " reserved leaves, ", used.size(), " used");
  return absl::OkStatus();
}

}  // namespace hived
