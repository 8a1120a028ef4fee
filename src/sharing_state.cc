// Sharing's persistence (src/sharing.h, docs/state-format.md): the records of running
// fractional groups, Restore's replay of holders and fractional groups, and the rule that a
// share reserved on an open GPU is never a victim (invariant 8).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"
#include "src/sharing.h"

namespace hived {

namespace {

GroupRecord RecordOf(const GroupRequest& request, const Placement& placement, bool guaranteed) {
  GroupRecord rec;
  rec.request = request;
  rec.request.suggested_nodes.reset();
  rec.placement = placement;
  rec.state = guaranteed ? GroupState::kAllocated : GroupState::kOpportunistic;
  return rec;
}

}  // namespace

void Sharing::AppendRecords(std::vector<GroupRecord>* out) const {
  for (const auto& [name, g] : groups_) {
    if (g.stage == Stage::kRunning) out->push_back(RecordOf(g.request, g.placement, g.guaranteed));
  }
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
  return RecordOf(g.request, g.placement, g.guaranteed);
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
    internal::FlagScope in(&in_core_);
    int32_t ignored = 0;
    info = core_->RestoreGroup(kept, &ignored);
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
      }
    }
    if (!why.empty()) {
      skipped->push_back(
          absl::StrCat("pod ", i, " on ", pod.node, ":", pod.leaf_cell_indices[0], ": ", why));
      continue;
    }
    Take(leaf, a, &t);
    pods.push_back({leaf, a.milli, a.memory, a.cpu, a.host_memory, true});
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

bool SchedulerImpl::ReservedSharesWait(const std::vector<CellId>& pleaves,
                                       ScheduleResult* result) const {
  if (!sharing_->AnyReserved()) return false;
  std::vector<std::string> held;
  for (CellId p : pleaves) {
    const GroupId u = p_user_[p.value()];
    if (u != kNilId) sharing_->AppendReservedOn(groups_[u].name, &held);
  }
  if (held.empty()) return false;
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  result->outcome = Outcome::kWaiting;
  result->placement = Placement();
  result->victims.clear();
  result->code = ReasonCode::kReservationOverlap;
  result->reason =
      absl::StrCat("the placement overlaps the reservation of group(s) ", absl::StrJoin(held, ", "),
                   " (shares of GPUs it would preempt), held until Allocate or "
                   "Unreserve");
  return true;
}

}  // namespace hived
