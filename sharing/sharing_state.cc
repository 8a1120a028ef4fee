// Sharing's persistence (sharing/sharing.h, docs/state-format.md): the records of running
// fractional groups, Restore's replay of holders and fractional groups, and the rule that a
// share reserved on an open GPU is never a victim (invariant 8).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sharing/sharing.h"
#include "src/group_record.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/persistence_json.h"
#include "src/scheduler_impl.h"

namespace hived {

namespace {

// The MIG GPUs by physical address (Restore's look-up of `migLayouts`).
std::map<std::string, CellId> MigGpus(const cellalloc::CellForest& forest,
                                      const cellalloc::MigLayouts& mig) {
  std::map<std::string, CellId> out;
  for (int32_t i = 0; i < forest.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    if (forest.leaf_index(c) < 0) continue;
    if (mig.geometry(forest.chain_info(forest.chain(c)).leaf_type) == nullptr) continue;
    out.emplace(forest.address(c), c);
  }
  return out;
}

}  // namespace

void Sharing::AppendRecords(std::vector<GroupRecord>* out) const {
  for (const auto& [name, g] : groups_) {
    if (g.stage != Stage::kRunning) continue;
    out->push_back(RunningRecord(g.request, g.placement, g.guaranteed));
    FillMigPlacement(name, &out->back().placement);
  }
  AppendHostRecords(out);
}

absl::StatusOr<GroupRecord> Sharing::GetRecord(std::string_view name) const {
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    return absl::NotFoundError(absl::StrCat("group ", ToAbsl(name), " is not known"));
  }
  const Group& g = it->second;
  if (g.stage != Stage::kRunning) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", ToAbsl(name), " is ", g.stage == Stage::kReserved ? "reserved" : "preempting",
        ", not running: it has no record"));
  }
  GroupRecord rec = RunningRecord(g.request, g.placement, g.guaranteed);
  FillMigPlacement(name, &rec.placement);
  return rec;
}

absl::Status Sharing::CheckSavedState(const internal::SavedState& state) const {
  auto error = [](const std::string& path, auto... parts) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", parts...));
  };
  // The saved layouts, each checked against its GPU's geometry.
  const std::map<std::string, CellId> gpus =
      state.mig_layouts.empty() ? std::map<std::string, CellId>() : MigGpus(forest_, mig_);
  std::map<uint32_t, std::pair<cellalloc::MigLayout, size_t>> layouts;  // leaf -> (layout, index)
  for (size_t k = 0; k < state.mig_layouts.size(); ++k) {
    const internal::SavedMigLayout& l = state.mig_layouts[k];
    const std::string path = absl::StrCat("$.migLayouts[", k, "]");
    auto gpu = gpus.find(l.gpu);
    if (gpu == gpus.end()) continue;  // RestoreMigLayouts notes it
    const std::string& type = forest_.chain_info(forest_.chain(gpu->second)).leaf_type;
    const cellalloc::MigGeometry* geo = mig_.geometry(type);
    std::vector<std::pair<int32_t, int32_t>> instances;
    for (size_t j = 0; j < l.instances.size(); ++j) {
      const int32_t profile = geo->Find(l.instances[j].first);
      if (profile < 0) {
        return error(absl::StrCat(path, ".instances[", j, "]"), "GPU ", l.gpu, " (", type,
                     ") has no MIG profile ", l.instances[j].first);
      }
      instances.emplace_back(profile, l.instances[j].second);
    }
    cellalloc::MigLayout layout(geo);
    if (const std::string why = layout.Restore(instances, l.creations, l.reconfigurations);
        !why.empty()) {
      return error(path, "GPU ", l.gpu, ": ", why);
    }
    if (!layouts.emplace(gpu->second.value(), std::make_pair(std::move(layout), k)).second) {
      return error(absl::StrCat(path, ".gpu"), "GPU ", l.gpu, " has a layout already");
    }
  }
  // The MIG pods' instances, taken on copies of the layouts in document order (the owner is
  // the pod's path, so an overlap names the other pod).
  std::map<uint32_t, cellalloc::MigLayout> claimed;
  std::vector<int64_t> cpu(node_cpu_.size(), 0);
  std::vector<int64_t> memory(node_memory_.size(), 0);
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const GroupRecord& rec = state.groups[i];
    const bool host = IsHostRequest(rec.request) && !IsFractional(rec.request);
    const bool mig = IsMig(rec.request);
    if (!host && !mig) continue;
    // A host group's placement lists its pods by leaf count (`PodsInNeedsOrder`): each
    // placement pod's member, when the request's pod count is sane (else member order).
    std::vector<const GroupMember*> host_member;
    if (host) {
      int64_t total = 0;
      for (const GroupMember& hm : rec.request.members) total += std::max(hm.pod_number, 0);
      if (total <= kMaxGroupPods) {
        std::vector<const GroupMember*> in_order;
        for (const GroupMember& hm : rec.request.members) {
          for (int32_t k = 0; k < hm.pod_number; ++k) in_order.push_back(&hm);
        }
        for (uint32_t j : PodsInNeedsOrder(rec.request)) host_member.push_back(in_order[j]);
      }
    }
    size_t pod_index = 0;
    for (size_t m = 0; m < rec.request.members.size(); ++m) {
      const GroupMember& member = rec.request.members[m];
      for (int32_t k = 0; k < member.pod_number && pod_index < rec.placement.pods.size(); ++k) {
        const PodPlacement& pod = rec.placement.pods[pod_index];
        const std::string ppath = absl::StrCat("$.groups[", i, "].placement.pods[", pod_index, "]");
        ++pod_index;
        const NodeId node = forest_.FindNode(pod.node);
        if (node.IsNil()) continue;  // a node gone: Restore skips or drops the pod
        if (host) {
          const size_t n = node.value();
          const GroupMember& asks =
              pod_index - 1 < host_member.size() ? *host_member[pod_index - 1] : member;
          cpu[n] += asks.cpu_milli;
          memory[n] += asks.memory_mib;
          if ((node_cpu_[n] > 0 && cpu[n] > node_cpu_[n]) ||
              (node_memory_[n] > 0 && memory[n] > node_memory_[n])) {
            return error(ppath, "node ", pod.node, ": the saved host groups use ", cpu[n],
                         " CPU milli and ", memory[n], " MiB host memory up to this pod, of its ",
                         node_cpu_[n], " and ", node_memory_[n], " (0: not declared)");
          }
        }
        if (!mig || member.mig_profile.empty() || pod.leaf_cell_indices.size() != 1) continue;
        const CellId leaf = FindLeaf(pod, Parsed());
        if (leaf.IsNil()) continue;  // a GPU gone: Restore skips the pod (partial)
        const std::string& type = forest_.chain_info(forest_.chain(leaf)).leaf_type;
        const cellalloc::MigGeometry* geo = mig_.geometry(type);
        const int32_t profile = geo == nullptr ? -1 : geo->Find(member.mig_profile);
        if (profile < 0) {
          return error(absl::StrCat("$.groups[", i, "].members[", m, "].migProfile"), "GPU ",
                       pod.node, ":", pod.leaf_cell_indices[0], " is a ", type,
                       geo == nullptr ? ", which has no MIG geometry"
                                      : ", whose MIG geometry has no profile ",
                       geo == nullptr ? "" : member.mig_profile);
        }
        if (pod.mig_start < 0) continue;  // no instance recorded: Restore chooses one
        const std::string spath = absl::StrCat(ppath, ".migStart");
        const std::vector<int32_t>& starts = geo->profiles[static_cast<size_t>(profile)].starts;
        if (std::find(starts.begin(), starts.end(), pod.mig_start) == starts.end()) {
          return error(spath, pod.mig_start, " is not an allowed start of profile ",
                       member.mig_profile, " (", absl::StrJoin(starts, ", "), ")");
        }
        auto saved = layouts.find(leaf.value());
        auto it = claimed.find(leaf.value());
        if (it == claimed.end()) {
          it = claimed
                   .emplace(leaf.value(), saved != layouts.end() ? saved->second.first
                                                                 : cellalloc::MigLayout(geo))
                   .first;
        }
        if (saved != layouts.end()) {
          const auto& inst = saved->second.first.instances();
          const bool has = std::any_of(inst.begin(), inst.end(), [&](const auto& x) {
            return x.profile == profile && x.start == pod.mig_start;
          });
          if (!has) {
            return error(spath, "the saved layout of GPU ", forest_.address(leaf),
                         " ($.migLayouts[", saved->second.second, "]) has no ", member.mig_profile,
                         " instance at ", pod.mig_start);
          }
        }
        if (const std::string why = it->second.TakeAt(profile, pod.mig_start, ppath);
            !why.empty()) {
          return error(spath, "GPU ", pod.node, ":", pod.leaf_cell_indices[0], ": ", why);
        }
      }
    }
  }
  return absl::OkStatus();
}

void Sharing::RestoreMigLayouts(const internal::SavedState& state,
                                std::vector<std::string>* notes) {
  if (state.mig_layouts.empty()) return;
  const std::map<std::string, CellId> gpus = MigGpus(forest_, mig_);
  for (size_t k = 0; k < state.mig_layouts.size(); ++k) {
    const internal::SavedMigLayout& l = state.mig_layouts[k];
    auto gpu = gpus.find(l.gpu);
    if (gpu == gpus.end()) {
      notes->push_back(absl::StrCat("$.migLayouts[", k, "]: the cluster has no MIG GPU ", l.gpu,
                                    "; its layout is not restored"));
      continue;
    }
    const std::string& type = forest_.chain_info(forest_.chain(gpu->second)).leaf_type;
    cellalloc::MigLayout& layout = mig_.layout(gpu->second, type);
    std::vector<std::pair<int32_t, int32_t>> instances;
    for (const auto& [profile, start] : l.instances) {
      instances.emplace_back(layout.geometry().Find(profile), start);
    }
    const std::string why = layout.Restore(instances, l.creations, l.reconfigurations);
    HIVED_CHECK(why.empty()) << why;  // CheckSavedState checked it
  }
}

absl::StatusOr<AllocateInfo> Sharing::RestoreHolder(const GroupRecord& rec,
                                                    std::vector<std::string>* gone) {
  const std::string& name = rec.request.name;
  // A holder's leaves are all open (invariant 1): the GPUs the cluster no longer has are
  // left out of the holder itself (it is restored with fewer leaves).
  GroupRecord kept = rec;
  kept.placement.pods.clear();
  kept.virtual_leaf_cells.clear();
  const ChainId chain = forest_.FindChain(rec.placement.chain);
  for (size_t i = 0; i < rec.placement.pods.size(); ++i) {
    const PodPlacement& pod = rec.placement.pods[i];
    if (pod.leaf_cell_indices.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", name, ": a sharing holder's pod has one leaf cell, not ",
                       pod.leaf_cell_indices.size()));
    }
    const NodeId node = forest_.FindNode(pod.node);
    const CellId leaf = chain.IsNil() || node.IsNil()
                            ? CellId()
                            : forest_.FindLeaf(chain, node, pod.leaf_cell_indices[0]);
    if (leaf.IsNil()) {
      gone->push_back(absl::StrCat(pod.node, ":", pod.leaf_cell_indices[0]));
      continue;
    }
    kept.placement.pods.push_back(pod);
    if (rec.virtual_leaf_cells.size() == rec.placement.pods.size()) {
      kept.virtual_leaf_cells.push_back(rec.virtual_leaf_cells[i]);
    }
  }
  if (kept.placement.pods.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", name, ": none of the sharing holder's GPUs is in the cluster (",
                     absl::StrJoin(*gone, ", "), ")"));
  }
  kept.request.members = {{static_cast<int32_t>(kept.placement.pods.size()), 1}};
  absl::StatusOr<AllocateInfo> info;
  {
    int32_t ignored = 0;
    info = whole_.RestoreGroup(kept, &ignored);
  }
  if (info.ok()) OpenHolder(name, kept.request);
  return info;
}

absl::Status Sharing::RestoreShared(const GroupRecord& rec, std::vector<std::string>* skipped) {
  const GroupRequest& r = rec.request;
  HIVED_ASSIGN_OR_RETURN(Parsed p, ParseFor(r));
  if ((rec.state == GroupState::kAllocated) != p.guaranteed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", r.name, ": a fractional group runs as asked (allocated exactly when its ",
        "priority is at least 0), not ", GroupStateName(rec.state), " at priority ", r.priority));
  }
  if (rec.placement.pods.size() != p.pods.size()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": the placement has ",
                                                   rec.placement.pods.size(), " pods, the request ",
                                                   p.pods.size()));
  }
  Tentative t;
  std::vector<PodShare> pods;
  for (size_t i = 0; i < p.pods.size(); ++i) {
    const PodPlacement& pod = rec.placement.pods[i];
    const PodAsk& a = p.pods[i];
    if (pod.leaf_cell_indices.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": pod ", i, " on node ", pod.node,
          ": a fractional pod lists one GPU index, not ", pod.leaf_cell_indices.size()));
    }
    const CellId leaf = FindLeaf(pod, p);
    std::string why;
    if (leaf.IsNil()) {
      why = "the cluster has no such GPU of an allowed leaf cell type";
    } else if (!shares_.IsOpen(leaf)) {
      why = "the GPU is not open for sharing (no restored holder has it)";
    } else if (!Compatible(r, p.guaranteed, leaf)) {
      why = absl::StrCat("its holder ", leaf_use_.at(leaf.value()).holder,
                         " runs in another VC or at another priority");
    } else {
      const auto gpu = t.gpu.find(leaf.value());
      const bool fits = gpu == t.gpu.end() ? shares_.Fits(leaf, a.milli, a.memory)
                                           : shares_.Fits(leaf, a.milli, a.memory,
                                                          gpu->second.first, gpu->second.second);
      if (!fits) {
        why = absl::StrCat("no room for its ", a.milli, " milli and ", a.memory, " MiB");
      } else if (!NodeRoom(leaf, a, t)) {
        why = "the node lacks its CPU or host memory";
      } else {
        why = TakeRecorded(r.name, leaf, a, a.mig.empty() ? -1 : pod.mig_start, &t);
      }
    }
    if (!why.empty()) {
      skipped->push_back(
          absl::StrCat("pod ", i, " on ", pod.node, ":", pod.leaf_cell_indices[0], ": ", why));
      continue;
    }
    const int32_t start = a.mig.empty() ? -1 : pod.mig_start;
    pods.push_back({leaf, a.milli, a.memory, a.cpu, a.host_memory, true, a.mig, start});
  }
  pending_ = Pending();
  Group& g = groups_[r.name];
  g.request = r;
  g.request.suggested_nodes.reset();
  g.guaranteed = p.guaranteed;
  g.stage = Stage::kRunning;
  g.placement = rec.placement;
  g.pods = std::move(pods);
  g.unaccounted = static_cast<int32_t>(skipped->size());
  for (const PodShare& s : g.pods) {
    AddShare(r.name, s);
    AddNodeUse(s, +1);
  }
  return absl::OkStatus();
}

std::vector<std::string> Sharing::FinishRestore(uint64_t next_holder) {
  // Never below a restored holder's number: new holders must not take a live name.
  next_holder_ = next_holder;
  std::vector<std::string> names;
  for (const auto& [name, h] : holders_) {
    uint64_t n = 0;
    if (absl::SimpleAtoi(absl::string_view(name).substr(sizeof(kHolderPrefix) - 1), &n) &&
        n < std::numeric_limits<uint64_t>::max()) {
      next_holder_ = std::max(next_holder_, n + 1);
    }
    names.push_back(name);
  }
  std::vector<std::string> released;
  for (const std::string& name : names) {
    ReleaseHolderIfEmpty(name);
    if (holders_.count(name) == 0) released.push_back(name);
  }
  pending_ = Pending();
  return released;
}

void Sharing::AppendReservedOn(std::string_view holder, std::vector<std::string>* out) const {
  auto h = holders_.find(std::string(holder));
  if (h == holders_.end()) return;
  for (CellId leaf : h->second.leaves) {
    for (const std::string& g : leaf_use_.at(leaf.value()).sharers) {
      if (groups_.at(g).stage == Stage::kReserved) out->push_back(g);
    }
  }
}

}  // namespace hived
