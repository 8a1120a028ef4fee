// Pods within gangs (scheduler.h "Pods"; HiveD's AddAllocatedPod / DeleteAllocatedPod,
// hived-reference §2.8, §2.9, §2.13): allocating, releasing, finding and recovering one pod
// of a whole-GPU group, and the pods in views and records.
//
// Where the state lives: `Group::pods` (src/group_table.h), null for a gang allocated whole,
// whose every slot is allocated and named by its index. The whole-gang path (`Allocate`,
// `Release`) never reads or writes it (Remove frees it), so it costs nothing there; the
// first per-pod call on a group makes it (`Track`). Pod changes change no leaf, so they do
// not bump the scheduler's epoch (a Filtering decision stays valid across them).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/persistence_json_reader.h"
#include "src/scheduler_impl.h"

namespace hived {
namespace {

using internal::Quote;

bool Running(const Group& g) {
  return g.state == GState::kRunning || g.state == GState::kBeingPreempted;
}

// The index an untracked gang's pod named `name` has ("3" -> 3), or -1.
int32_t IndexName(std::string_view name, size_t slots) {
  int32_t index = -1;
  if (!absl::SimpleAtoi(ToAbsl(name), &index) || index < 0 || static_cast<size_t>(index) >= slots ||
      absl::StrCat(index) != name) {
    return -1;
  }
  return index;
}

absl::Status CheckPodNames(std::string_view group, const Pod& pod) {
  if (pod.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", Quote(group), ": a pod needs a name"));
  }
  if (static_cast<int64_t>(pod.name.size()) > kMaxNameBytes ||
      static_cast<int64_t>(pod.uid.size()) > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", Quote(group), ": pod ", Quote(pod.name), "'s ",
                     static_cast<int64_t>(pod.name.size()) > kMaxNameBytes ? "name" : "uid",
                     " is longer than ", kMaxNameBytes, " bytes"));
  }
  return absl::OkStatus();
}

// The slot `pod` takes in `placement` (HiveD's rule: the first free pod of its size; with a
// node and first leaf, the pod that starts there); `taken(i)` names slot i's pod (a
// std::string), empty when free. Errors as AllocatePod's.
template <typename Taken>
absl::StatusOr<int32_t> ChooseSlot(std::string_view group, const Placement& placement,
                                   const Pod& pod, const Taken& taken) {
  const auto& pods = placement.pods;
  int32_t of_size = 0;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].leaf_cell_number != pod.leaf_cell_number) continue;
    ++of_size;
    if (!pod.node.empty() && (pods[i].node != pod.node || pods[i].leaf_cell_indices.empty() ||
                              pods[i].leaf_cell_indices.front() != pod.first_leaf_index)) {
      continue;
    }
    const std::string by = taken(i);
    if (by.empty()) return static_cast<int32_t>(i);
    if (!pod.node.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group ", Quote(group), ": the pod on node ", Quote(pod.node), " at leaf cell ",
          pod.first_leaf_index, " (slot ", i, ") is taken by pod ", Quote(by)));
    }
  }
  if (of_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("group ", Quote(group), " has no pod of ",
                                                   pod.leaf_cell_number, " leaf cells (pod ",
                                                   Quote(pod.name), ")"));
  }
  if (!pod.node.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", Quote(group), " has no pod of ", pod.leaf_cell_number,
                     " leaf cells starting on node ", Quote(pod.node), " at leaf cell ",
                     pod.first_leaf_index, " (pod ", Quote(pod.name), ")"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("group ", Quote(group), ": requesting more pods than the configured number for ",
                   pod.leaf_cell_number, " leaf cells (", of_size, " pods); pod ", Quote(pod.name),
                   " has no free slot"));
}

// Makes `g`'s pods explicit: every slot allocated and named by its index.
GroupPods& Track(Group& g, size_t slots) {
  if (g.pods == nullptr) {
    g.pods = std::make_unique<GroupPods>();
    g.pods->slots.resize(slots);
    for (size_t i = 0; i < slots; ++i) g.pods->slots[i].name = absl::StrCat(i);
    g.pods->allocated = static_cast<int32_t>(slots);
  }
  return *g.pods;
}

// The slot of allocated pod `name` in `g`, or -1.
int32_t FindPod(const Group& g, size_t slots, std::string_view name) {
  if (g.pods == nullptr) return IndexName(name, slots);
  for (size_t i = 0; i < g.pods->slots.size(); ++i) {
    if (g.pods->slots[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

absl::Status NotAllocated(std::string_view group, std::string_view pod) {
  return absl::NotFoundError(
      absl::StrCat("pod ", Quote(pod), " of group ", Quote(group), " is not allocated"));
}

}  // namespace

absl::StatusOr<PodAllocation> SchedulerImpl::AllocatePod(const GroupRequest& request,
                                                         const Placement& placement,
                                                         const Pod& pod) {
  HIVED_RETURN_IF_ERROR(CheckPodNames(request.name, pod));
  const GroupId existing = groups_.Find(request.name);
  PodAllocation out;
  if (existing != kNilId && Running(groups_[existing])) {
    Group& grp = groups_[existing];
    Placement current = PlacementOf(grp);
    if (FindPod(grp, current.pods.size(), pod.name) >= 0) {
      return absl::AlreadyExistsError(absl::StrCat("pod ", Quote(pod.name), " of group ",
                                                   Quote(grp.name), " is already allocated"));
    }
    HIVED_ASSIGN_OR_RETURN(const int32_t slot,
                           ChooseSlot(grp.name, current, pod, [&](size_t i) -> std::string {
                             if (grp.pods == nullptr) return absl::StrCat(i);
                             return grp.pods->slots[i].name;
                           }));
    GroupPods& pods = Track(grp, current.pods.size());
    pods.slots[static_cast<size_t>(slot)] = PodSlot{pod.name, pod.uid};
    ++pods.allocated;
    out.pod = PodStatus{grp.name, pod.name, pod.uid, slot,
                        std::move(current.pods[static_cast<size_t>(slot)])};
    return out;
  }
  // The first pod runs the gang: its slot is checked on the given placement first, which
  // `Allocate` then requires to be the group's.
  HIVED_ASSIGN_OR_RETURN(const int32_t slot, ChooseSlot(request.name, placement, pod,
                                                        [](size_t) { return std::string(); }));
  HIVED_ASSIGN_OR_RETURN(out.info, Allocate(request, placement));
  out.started_gang = true;
  Group& grp = groups_[groups_.Find(request.name)];
  const Placement current = PlacementOf(grp);
  grp.pods = std::make_unique<GroupPods>();
  grp.pods->slots.resize(current.pods.size());
  grp.pods->slots[static_cast<size_t>(slot)] = PodSlot{pod.name, pod.uid};
  grp.pods->allocated = 1;
  out.pod = PodStatus{grp.name, pod.name, pod.uid, slot, current.pods[static_cast<size_t>(slot)]};
  return out;
}

absl::StatusOr<PodRelease> SchedulerImpl::ReleasePod(std::string_view group, std::string_view pod) {
  const GroupId g = groups_.Find(group);
  if (g == kNilId) {
    return absl::NotFoundError(
        absl::StrCat("group ", Quote(group), " is not running (pod ", Quote(pod), ")"));
  }
  Group& grp = groups_[g];
  if (!Running(grp)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", Quote(group), " holds a reservation, no pod of it is allocated (pod ", Quote(pod),
        "); use Unreserve"));
  }
  const size_t slots = grp.pods != nullptr ? grp.pods->slots.size() : PlacementOf(grp).pods.size();
  const int32_t slot = FindPod(grp, slots, pod);
  if (slot < 0) return NotAllocated(group, pod);
  const int32_t allocated = grp.pods != nullptr ? grp.pods->allocated : static_cast<int32_t>(slots);
  if (allocated == 1) {
    HIVED_RETURN_IF_ERROR(Release(group));
    return PodRelease::kGang;
  }
  GroupPods& pods = Track(grp, slots);
  pods.slots[static_cast<size_t>(slot)] = PodSlot{};
  --pods.allocated;
  return PodRelease::kPodOnly;
}

absl::StatusOr<PodStatus> SchedulerImpl::GetPod(std::string_view group,
                                                std::string_view pod) const {
  const GroupId g = groups_.Find(group);
  if (g == kNilId || !Running(groups_[g])) {
    return absl::NotFoundError(
        absl::StrCat("group ", Quote(group), " is not running (pod ", Quote(pod), ")"));
  }
  const Group& grp = groups_[g];
  Placement current = PlacementOf(grp);
  const int32_t slot = FindPod(grp, current.pods.size(), pod);
  if (slot < 0) return NotAllocated(group, pod);
  PodStatus out{grp.name, std::string(pod), "", slot,
                std::move(current.pods[static_cast<size_t>(slot)])};
  if (grp.pods != nullptr) out.uid = grp.pods->slots[static_cast<size_t>(slot)].uid;
  return out;
}

absl::StatusOr<PodAllocation> SchedulerImpl::RecoverPod(const GroupRecord& record, const Pod& pod) {
  const GroupId existing = groups_.Find(record.request.name);
  if (existing != kNilId && Running(groups_[existing])) {
    return AllocatePod(record.request, record.placement, pod);  // a later pod attaches
  }
  HIVED_RETURN_IF_ERROR(CheckPodNames(record.request.name, pod));
  HIVED_ASSIGN_OR_RETURN(const int32_t slot, ChooseSlot(record.request.name, record.placement, pod,
                                                        [](size_t) { return std::string(); }));
  GroupRecord gang = record;
  gang.pods.clear();
  PodAllocation out;
  HIVED_ASSIGN_OR_RETURN(out.info, RestoreGroup(gang, /*ignored_leaves=*/nullptr));
  out.started_gang = true;
  Group& grp = groups_[groups_.Find(record.request.name)];
  const Placement current = PlacementOf(grp);
  grp.pods = std::make_unique<GroupPods>();
  grp.pods->slots.resize(current.pods.size());
  grp.pods->slots[static_cast<size_t>(slot)] = PodSlot{pod.name, pod.uid};
  grp.pods->allocated = 1;
  out.pod = PodStatus{grp.name, pod.name, pod.uid, slot, current.pods[static_cast<size_t>(slot)]};
  return out;
}

std::vector<PodIdentity> SchedulerImpl::PodsOf(const Group& g) const {
  std::vector<PodIdentity> out;
  if (!Running(g)) return out;
  if (g.pods != nullptr) return PodRecordsOf(g);
  // Untracked: every pod of the placement, by index (one per pod of the members).
  int32_t n = 0;
  if (g.given_placement != nullptr) {
    n = static_cast<int32_t>(g.given_placement->pods.size());
  } else {
    for (const GroupMember& m : g.members) n += m.pod_number;
  }
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) out.push_back(PodIdentity{i, absl::StrCat(i), ""});
  return out;
}

std::vector<PodIdentity> SchedulerImpl::PodRecordsOf(const Group& g) const {
  std::vector<PodIdentity> out;
  if (g.pods == nullptr) return out;
  for (size_t i = 0; i < g.pods->slots.size(); ++i) {
    const PodSlot& slot = g.pods->slots[i];
    if (!slot.name.empty())
      out.push_back(PodIdentity{static_cast<int32_t>(i), slot.name, slot.uid});
  }
  return out;
}

absl::Status SchedulerImpl::CheckPodRecords(const GroupRecord& rec) {
  const std::string& group = rec.request.name;
  std::vector<std::string_view> names;
  int32_t last = -1;
  for (size_t k = 0; k < rec.pods.size(); ++k) {
    const PodIdentity& p = rec.pods[k];
    Pod pod;
    pod.name = p.name;
    pod.uid = p.uid;
    const absl::Status names_ok = CheckPodNames(group, pod);
    if (!names_ok.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("pods[", k, "]: ", names_ok.message()));
    }
    if (p.index <= last || static_cast<size_t>(p.index) >= rec.placement.pods.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", Quote(group), ": pods[", k, "] has slot ", p.index,
                       ", not ascending in [0, ", rec.placement.pods.size(), ")"));
    }
    last = p.index;
    names.push_back(p.name);
  }
  std::sort(names.begin(), names.end());
  auto dup = std::adjacent_find(names.begin(), names.end());
  if (dup != names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", Quote(group), ": pod ", Quote(*dup), " is listed twice"));
  }
  return absl::OkStatus();
}

void SchedulerImpl::SetPodRecords(const GroupRecord& rec) {
  if (rec.pods.empty()) return;
  const GroupId g = groups_.Find(rec.request.name);
  if (g == kNilId) return;
  Group& grp = groups_[g];
  grp.pods = std::make_unique<GroupPods>();
  grp.pods->slots.resize(rec.placement.pods.size());
  for (const PodIdentity& p : rec.pods) {
    grp.pods->slots[static_cast<size_t>(p.index)] = PodSlot{p.name, p.uid};
  }
  grp.pods->allocated = static_cast<int32_t>(rec.pods.size());
}

}  // namespace hived
