// The extender's per-pod calls: a filter's reservation of a gang and the slots it promises,
// allocation of a promised slot, a deleted pod's release, and recovery of the running pods
// (extender.h 1, 2, 5 and 6; the routes are in extender.cc and extender_bind.cc).
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hived/state.h"
#include "server/extender.h"
#include "yaml-cpp/yaml.h"

namespace hived::server {

using nlohmann::json;

// ---- a filter's reservation -----------------------------------------------------------

absl::Status Extender::OpenGang(const GroupRequest& request, std::string* wait_reason) {
  const GroupState before = scheduler_->GetGroup(request.name).state;
  absl::StatusOr<ScheduleResult> reserved =
      scheduler_->Schedule(request, Phase::kPreempting, TimeNow());
  if (!reserved.ok()) return reserved.status();
  if (reserved->outcome != Outcome::kPlaced) {
    // The state changed since the Filtering decision. Filter never starts a preemption:
    // a reservation this call made is given up (one made before, by preempt, is kept).
    GroupState now = scheduler_->GetGroup(request.name).state;
    if (before == GroupState::kAbsent && now != GroupState::kAbsent) {
      if (absl::Status s = scheduler_->Unreserve(request.name); !s.ok()) return s;
    }
    *wait_reason = reserved->outcome == Outcome::kPreempting
                       ? "the cells decided were taken meanwhile; would preempt now"
                       : reserved->reason;
    return absl::OkStatus();
  }
  Gang gang;
  gang.request = request;
  // The group's placement carries the preassigned cell types (the bind info needs them).
  gang.placement = scheduler_->GetGroup(request.name).placement;
  gang.slots.resize(gang.placement.pods.size());
  gangs_[request.name] = std::move(gang);
  preempting_pods_.erase(request.name);
  return absl::OkStatus();
}

absl::Status Extender::AllocateSlot(const std::string& group, size_t slot_index) {
  Gang& gang = gangs_.at(group);
  Slot& slot = gang.slots[slot_index];
  if (slot.allocated) return absl::OkStatus();
  const PodPlacement& p = gang.placement.pods[slot_index];
  Pod pod;
  pod.name = slot.uid;
  pod.uid = slot.uid;
  pod.leaf_cell_number = p.leaf_cell_number;
  pod.node = p.node;
  pod.first_leaf_index = p.leaf_cell_indices.empty() ? -1 : p.leaf_cell_indices[0];
  absl::StatusOr<PodAllocation> allocation =
      scheduler_->AllocatePod(gang.request, gang.placement, pod);
  if (!allocation.ok()) return allocation.status();
  if (allocation->pod.index != static_cast<int32_t>(slot_index)) {
    return absl::InternalError(absl::StrCat("pod ", slot.pod_key, " of group ", group,
                                            " was allocated slot ", allocation->pod.index,
                                            ", not its promised slot ", slot_index));
  }
  gang.running = true;
  slot.allocated = true;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Extender::TakeSlot(Gang& gang, const PodInfo& pod,
                                               int32_t leaf_cell_number) {
  int32_t configured = 0;
  for (size_t i = 0; i < gang.placement.pods.size(); ++i) {
    if (gang.placement.pods[i].leaf_cell_number != leaf_cell_number) continue;
    ++configured;
    if (!gang.slots[i].uid.empty()) continue;
    gang.slots[i].uid = pod.uid;
    gang.slots[i].pod_key = pod.Key();
    pods_[pod.uid] = PodRef{gang.request.name, i};
    return gang.placement.pods[i].node;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Requesting more pods than the configured number for ", leaf_cell_number,
                   " leaf cells (", configured, " pods) in affinity group ", gang.request.name));
}

// ---- cluster events -------------------------------------------------------------------

void Extender::ForgetPod(const std::string& uid, const PodInfo& pod) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    // The preemptor of a Preempting group going away gives up its reservation.
    absl::StatusOr<SchedulingSpec> spec = specs_.Parse(pod);
    if (!spec.ok()) return;
    GroupStatus g = scheduler_->GetGroup(spec->affinity_group_name);
    if ((g.state == GroupState::kPreempting || g.state == GroupState::kReserved) &&
        gangs_.count(g.name) == 0) {
      std::set<std::string>& preemptors = preempting_pods_[g.name];
      preemptors.erase(pod.uid);
      if (preemptors.empty()) {
        (void)scheduler_->Unreserve(g.name);
        preempting_pods_.erase(g.name);
      }
    }
    return;
  }
  const std::string group = it->second.group;
  Gang& gang = gangs_.at(group);
  const size_t index = it->second.slot;
  const bool allocated = gang.slots[index].allocated;
  gang.slots[index] = Slot{};
  pods_.erase(it);
  if (allocated) {
    absl::StatusOr<PodRelease> released = scheduler_->ReleasePod(group, uid);
    if (!released.ok()) metrics_.CountApiError("release");
    // The gang's last bound pod: the gang is released; pods only promised a slot of it
    // filter again.
    if (!released.ok() || *released == PodRelease::kGang) DropGang(group);
    return;
  }
  const bool any = std::any_of(gang.slots.begin(), gang.slots.end(),
                               [](const Slot& s) { return !s.uid.empty(); });
  if (!any && !gang.running) {
    // No pod holds a promise of the reservation any more.
    if (!scheduler_->Unreserve(group).ok()) metrics_.CountApiError("unreserve");
    DropGang(group);
  }
}

void Extender::OnPodDeleted(const json& pod) {
  absl::StatusOr<PodInfo> info = ParsePod(pod);
  if (!info.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ForgetPod(info->uid, *info);
}

void Extender::OnPodUpdated(const json& pod) {
  absl::StatusOr<PodInfo> info = ParsePod(pod);
  if (!info.ok() || !info->Terminated()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ForgetPod(info->uid, *info);
}

void Extender::ReconcilePods(const std::vector<json>& pods) {
  std::set<std::string> live;
  for (const json& object : pods) {
    absl::StatusOr<PodInfo> pod = ParsePod(object);
    if (pod.ok() && !pod->Terminated()) live.insert(pod->uid);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, PodInfo>> gone;
  for (const auto& [uid, ref] : pods_) {
    if (live.count(uid) > 0) continue;
    PodInfo info;
    info.uid = uid;
    gone.emplace_back(uid, info);
  }
  for (const auto& [uid, info] : gone) ForgetPod(uid, info);
}

void Extender::OnNodeHealth(const std::string& node, bool healthy) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status s = scheduler_->SetNodeHealthy(node, healthy);
  (void)s;  // a node the config does not have is not HiveD's: ignored, as HiveD does
}

// ---- recovery -------------------------------------------------------------------------

RecoveryReport Extender::Recover(const std::vector<json>& pod_objects) {
  RecoveryReport report;
  std::vector<PodInfo> pods;
  for (const json& object : pod_objects) {
    absl::StatusOr<PodInfo> pod = ParsePod(object);
    if (!pod.ok() || pod->Terminated() || pod->node_name.empty()) continue;
    if (pod->annotations.count(kAnnotationPodBindInfo) == 0) continue;
    pods.push_back(*std::move(pod));
  }
  std::sort(pods.begin(), pods.end(),
            [](const PodInfo& a, const PodInfo& b) { return a.Key() < b.Key(); });
  // Pods of one gang share their spec text: parse each text that names its group once (a
  // spec without `affinityGroup` is named after its pod: parsed per pod).
  std::map<std::string, absl::StatusOr<SchedulingSpec>> specs;
  std::lock_guard<std::mutex> lock(mu_);
  for (const PodInfo& pod : pods) {
    auto text = pod.annotations.find(kAnnotationPodSchedulingSpec);
    absl::StatusOr<SchedulingSpec> spec = absl::UnknownError("");
    if (text != pod.annotations.end() && text->second.find("affinityGroup") != std::string::npos) {
      auto cached = specs.find(text->second);
      if (cached == specs.end())
        cached = specs.emplace(text->second, ParseSchedulingSpec(pod)).first;
      spec = cached->second;
    } else {
      spec = ParseSchedulingSpec(pod);
    }
    if (!spec.ok()) {
      report.problems.push_back(absl::StrCat(pod.Key(), ": ", spec.status().message()));
      continue;
    }
    const std::string& bind_info = pod.annotations.at(kAnnotationPodBindInfo);
    const std::string& group = spec->affinity_group_name;
    // The gang's record as this pod carries it: hived's own record of earlier versions
    // first (the same virtual cells again), else HiveD's bind info (HiveD's rule). A later
    // pod of a running group only attaches (its record is not read).
    GroupRecord record;
    bool have_record = false;
    if (auto own = pod.annotations.find(kAnnotationGroupRecord); own != pod.annotations.end()) {
      absl::StatusOr<GroupRecord> saved = GroupRecordFromJson(own->second);
      if (saved.ok() && saved->request.name == group) {
        record = *std::move(saved);
        have_record = true;
      }
    }
    if (!have_record) {
      absl::StatusOr<GroupRecord> imported =
          ImportHivedBindInfo(bind_info, text == pod.annotations.end() ? "" : text->second);
      if (!imported.ok()) {
        report.problems.push_back(absl::StrCat(pod.Key(), ": ", imported.status().message()));
        continue;
      }
      record = *std::move(imported);
      record.request.name = group;
      record.request.vc = spec->virtual_cluster;
      record.request.priority = spec->priority;
    }
    // The pod's slot: its node and first leaf index (from the isolation annotation, else
    // from the bind info).
    Pod member;
    member.name = pod.uid;
    member.uid = pod.uid;
    member.leaf_cell_number = spec->leaf_cell_number;
    member.node = pod.node_name;
    if (auto iso = pod.annotations.find(kAnnotationPodLeafCellIsolation);
        iso != pod.annotations.end() && !iso->second.empty()) {
      member.first_leaf_index = std::atoi(iso->second.c_str());
    } else {
      try {
        YAML::Node root = YAML::Load(bind_info);
        member.node = root["node"].as<std::string>(member.node);
        YAML::Node leaves = root["leafCellIsolation"];
        if (leaves.IsSequence() && leaves.size() > 0) {
          member.first_leaf_index = leaves[0].as<int32_t>(-1);
        }
      } catch (const YAML::Exception& e) {
        report.problems.push_back(absl::StrCat(pod.Key(), ": pod-bind-info: ", e.what()));
        continue;
      }
    }
    absl::StatusOr<PodAllocation> allocation = scheduler_->RecoverPod(record, member);
    if (!allocation.ok()) {
      report.problems.push_back(absl::StrCat(pod.Key(), ": ", allocation.status().message()));
      continue;
    }
    if (allocation->started_gang) {
      ++report.groups_recovered;
      if (allocation->info.downgraded) ++report.groups_downgraded;
      Gang gang;
      gang.request = record.request;
      gang.placement = scheduler_->GetGroup(group).placement;
      gang.slots.resize(gang.placement.pods.size());
      gang.running = true;
      gangs_[group] = std::move(gang);
    }
    Gang& gang = gangs_.at(group);
    const auto index = static_cast<size_t>(allocation->pod.index);
    Slot& slot = gang.slots.at(index);
    slot.uid = pod.uid;
    slot.pod_key = pod.Key();
    slot.bound = true;
    slot.allocated = true;
    pods_[pod.uid] = PodRef{group, index};
    ++report.pods_recovered;
  }
  metrics_.CountPodsRecovered(report.pods_recovered);
  return report;
}

}  // namespace hived::server
