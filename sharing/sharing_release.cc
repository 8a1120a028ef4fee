// Sharing's GPU bookkeeping and the end of a group (sharing/sharing.h): holders opened and
// released, shares added to and removed from open GPUs, Release, CancelPreemption, and the
// scheduler's victims and cancellations named as the users' groups.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sharing/sharing.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

namespace {

bool Running(GroupState s) {
  return s == GroupState::kAllocated || s == GroupState::kOpportunistic ||
         s == GroupState::kBeingPreempted;
}

}  // namespace

void Sharing::OpenHolder(const std::string& name, const GroupRequest& holder_request) {
  const GroupStatus s = CoreStatus(name);
  HIVED_CHECK(Running(s.state)) << name;
  Holder h;
  h.vc = holder_request.vc;
  h.priority = s.priority;
  const ChainId chain = forest_.FindChain(s.placement.chain);
  for (const PodPlacement& pod : s.placement.pods) {
    const CellId leaf =
        forest_.FindLeaf(chain, forest_.FindNode(pod.node), pod.leaf_cell_indices[0]);
    HIVED_CHECK(!leaf.IsNil());
    h.leaves.push_back(leaf);
    auto it = leaf_types_.find(forest_.chain_info(forest_.chain(leaf)).leaf_type);
    HIVED_CHECK(shares_.Open(leaf, it == leaf_types_.end() ? 0 : it->second.gpu_memory_mib));
    choice_.Touch(forest_.node(leaf).value());
    leaf_use_[leaf.value()].holder = name;
  }
  holders_[name] = std::move(h);
}

void Sharing::AddShare(const std::string& group, const PodShare& s) {
  HIVED_CHECK(shares_.Add(s.leaf, s.milli, s.memory));
  if (!s.mig.empty()) AddMig(group, s);
  choice_.Touch(forest_.node(s.leaf).value());
  std::vector<std::string>& sharers = leaf_use_.at(s.leaf.value()).sharers;
  auto it = std::lower_bound(sharers.begin(), sharers.end(), group);
  if (it == sharers.end() || *it != group) sharers.insert(it, group);
}

void Sharing::AddNodeUse(const PodShare& s, int64_t sign) {
  const size_t n = forest_.node(s.leaf).value();
  choice_.Touch(static_cast<uint32_t>(n));
  node_cpu_used_[n] += sign * s.cpu;
  node_memory_used_[n] += sign * s.host_memory;
}

void Sharing::RemoveShare(const std::string& group, const PodShare& s) {
  HIVED_CHECK(shares_.Remove(s.leaf, s.milli, s.memory));
  if (!s.mig.empty()) RemoveMig(group, s);
  choice_.Touch(forest_.node(s.leaf).value());
  const Group& g = groups_.at(group);
  int32_t left = 0;
  for (const PodShare& o : g.pods) left += o.leaf == s.leaf ? 1 : 0;
  if (left > 1) return;  // another pod of the group stays on this GPU
  std::vector<std::string>& sharers = leaf_use_.at(s.leaf.value()).sharers;
  sharers.erase(std::remove(sharers.begin(), sharers.end(), group), sharers.end());
}

void Sharing::ReleaseHolderIfEmpty(const std::string& name) {
  auto it = holders_.find(name);
  if (it == holders_.end()) return;
  for (CellId leaf : it->second.leaves) {
    if (!shares_.Empty(leaf)) return;
  }
  for (CellId leaf : it->second.leaves) {
    HIVED_CHECK(shares_.Close(leaf));
    choice_.Touch(forest_.node(leaf).value());
    auto use = leaf_use_.find(leaf.value());
    if (!use->second.barred_by.empty()) {  // the evicting group waits for a GPU now closed
      std::vector<CellId>& barred = groups_.at(use->second.barred_by).barred;
      barred.erase(std::remove(barred.begin(), barred.end(), leaf), barred.end());
    }
    leaf_use_.erase(use);
  }
  holders_.erase(it);
  const absl::Status s = whole_.Release(name);
  HIVED_CHECK(s.ok()) << s.message();
}

absl::Status Sharing::Release(std::string_view name) {
  if (host_groups_.count(name) > 0) return ReleaseHost(name);
  const std::string group(name);
  if (IsHolder(group) || IsHolderName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", group, " holds GPUs for sharing; release the groups on them"));
  }
  auto git = groups_.find(group);
  if (git == groups_.end())
    return absl::NotFoundError(absl::StrCat("group ", group, " is not running"));
  if (git->second.stage != Stage::kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", group,
                     git->second.stage == Stage::kReserved
                         ? " is reserved, not running; use Unreserve"
                         : " is preempting, not running; use CancelPreemption"));
  }
  std::vector<std::string> holders;
  // Remove pod by pod from a copy: RemoveShare reads the group's remaining pods.
  std::vector<PodShare> pods = git->second.pods;
  while (!git->second.pods.empty()) {
    const PodShare s = git->second.pods.back();
    RemoveShare(group, s);
    AddNodeUse(s, -1);
    git->second.pods.pop_back();
  }
  for (const PodShare& s : pods) holders.push_back(leaf_use_.at(s.leaf.value()).holder);
  groups_.erase(git);
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  for (const std::string& h : holders) ReleaseHolderIfEmpty(h);
  pending_ = Pending();
  return absl::OkStatus();
}

absl::Status Sharing::CancelPreemption(std::string_view name) {
  if (host_groups_.count(name) > 0) return HostNotPending(name, /*cancel=*/true);
  const std::string group(name);
  if (IsHolderName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", group, " holds GPUs for sharing; it is not cancelled directly"));
  }
  auto git = groups_.find(group);
  if (git == groups_.end())
    return absl::NotFoundError(absl::StrCat("group ", group, " is not known"));
  if (git->second.stage != Stage::kPreempting) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", group, " is not preempting",
                     git->second.stage == Stage::kReserved ? "; use Unreserve" : ""));
  }
  HIVED_RETURN_IF_ERROR(CancelHolder(&git->second));
  Bar(group, false);
  groups_.erase(git);
  pending_ = Pending();
  return absl::OkStatus();
}

void Sharing::TranslateVictims(std::vector<std::string>* victims) const {
  bool any = false;
  std::vector<std::string> out;
  for (const std::string& v : *victims) {
    auto h = holders_.find(v);
    if (h == holders_.end()) {
      out.push_back(v);
      continue;
    }
    any = true;
    for (CellId leaf : h->second.leaves) {
      for (const std::string& g : leaf_use_.at(leaf.value()).sharers) out.push_back(g);
    }
  }
  if (!any) return;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  *victims = std::move(out);
}

void Sharing::TranslateCancelled(std::vector<std::string>* cancelled) const {
  for (std::string& c : *cancelled) {
    if (!IsHolderName(c)) continue;
    for (const auto& [name, g] : groups_) {
      if (g.stage == Stage::kPreempting && g.holder == c) {
        c = name;
        break;
      }
    }
  }
  std::sort(cancelled->begin(), cancelled->end());
}

void Sharing::TranslateResult(ScheduleResult* result) const {
  TranslateVictims(&result->victims);
  if (!result->cancelled.empty()) TranslateCancelled(&result->cancelled);
}

absl::StatusOr<ScheduleResult> Sharing::ScheduleWhole(const GroupRequest& request, Phase phase,
                                                      const hived::NodeRoom* room,
                                                      bool only_placed) {
  SyncShields();
  absl::StatusOr<ScheduleResult> result = whole_.Schedule(
      request, phase, room,
      only_placed ? WholeGpuCore::Apply::kOnlyPlaced : WholeGpuCore::Apply::kAnyOutcome);
  if (result.ok()) TranslateResult(&*result);
  return result;
}

void Sharing::SyncShields() {
  if (reserved_ == 0 && shields_.empty()) return;  // the common case: O(1)
  WholeGpuCore::Shields want = ReservedShields();
  if (want == shields_) return;
  shields_ = want;
  whole_.SetShields(std::move(want));
}

std::map<std::string, std::vector<std::string>, std::less<>> Sharing::ReservedShields() const {
  WholeGpuCore::Shields want;
  if (reserved_ > 0) {
    std::vector<std::string> holders;  // of GPUs with a reserved share
    for (const auto& [name, g] : groups_) {
      if (g.stage != Stage::kReserved) continue;
      for (const PodShare& s : g.pods) {
        if (s.open) holders.push_back(leaf_use_.at(s.leaf.value()).holder);
      }
    }
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    for (const std::string& h : holders) {
      std::vector<std::string> on;
      AppendReservedOn(h, &on);
      if (!on.empty()) want.emplace(h, std::move(on));
    }
  }
  return want;
}

}  // namespace hived
