// Sharing's reservations and recovery: Reserve, the Allocate of what Schedule decided,
// Unreserve, Recover (sharing/sharing.h; hived/scheduler.h rules 7-8).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sharing/sharing.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

void Sharing::Reserve(const GroupRequest& r, const Parsed& p, Decision d) {
  Group& g = groups_[r.name];
  g.request = r;
  g.guaranteed = p.guaranteed;
  g.types = TypeMask(p.types);
  if (g.stage != Stage::kReserved) ++reserved_;
  g.stage = Stage::kReserved;
  g.barred.clear();
  g.holder = std::move(d.holder);
  g.holder_request = std::move(d.holder_request);
  g.holder_placement = std::move(d.holder_placement);
  g.placement = std::move(d.placement);
  g.pods = std::move(d.pods);
  for (const PodShare& s : g.pods) {
    if (s.open) AddShare(r.name, s);
    AddNodeUse(s, +1);
  }
}

absl::Status Sharing::CheckHolder(const std::string& group, bool guaranteed, const GroupRequest& h,
                                  const Placement& hp) const {
  const absl::StatusOr<AllocateInfo> core = whole_.PreviewAllocate(h, hp);
  if (!core.ok()) {
    return absl::Status(core.status().code(), absl::StrCat("group ", group, ": its holder ", h.name,
                                                           ": ", core.status().message()));
  }
  if (core->downgraded && guaranteed) {  // its shares would leave the VC's cells
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", group, ": the VC cannot hold these leaf cells now (", core->reason, ")"));
  }
  return absl::OkStatus();
}

void Sharing::AllocateHolder(bool guaranteed, const GroupRequest& h, const Placement& hp) {
  // Decided by `CheckHolder` over this state: the core's Allocate runs the same decision.
  const absl::StatusOr<AllocateInfo> core = whole_.Allocate(h, hp);
  HIVED_CHECK(core.ok()) << h.name << ": " << core.status().ToString();
  HIVED_CHECK(!(core->downgraded && guaranteed)) << h.name << ": " << core->reason;
}

absl::StatusOr<AllocateInfo> Sharing::CommitReserved(const std::string& name,
                                                     bool holder_allocated) {
  Group& g = groups_.at(name);
  if (!holder_allocated && !g.holder.empty() && CoreState(g.holder) == GroupState::kAbsent) {
    // A Preempting holder (its victims gone) that an overlapping preemptor cancelled, as
    // the scheduler cancels Preempting whole groups: the reservation lost its new leaves.
    const std::string holder = g.holder;
    g.holder.clear();
    HIVED_RETURN_IF_ERROR(DropReservation(name));
    return absl::FailedPreconditionError(
        absl::StrCat("group ", name, ": the preemption reserving its new leaves (", holder,
                     ") was cancelled by an overlapping preemptor; Schedule it again"));
  }
  if (!g.holder.empty()) {
    if (!holder_allocated) {
      HIVED_RETURN_IF_ERROR(CheckHolder(name, g.guaranteed, g.holder_request, g.holder_placement));
      AllocateHolder(g.guaranteed, g.holder_request, g.holder_placement);
    }
    OpenHolder(g.holder, g.holder_request);
    for (PodShare& s : g.pods) {
      if (s.open) continue;
      s.open = true;
      AddShare(name, s);
    }
  }
  if (g.stage == Stage::kReserved) --reserved_;
  g.stage = Stage::kRunning;
  g.holder.clear();
  g.holder_request = GroupRequest();
  g.holder_placement = Placement();
  g.request.suggested_nodes.reset();
  pending_ = Pending();
  NoteAdmitted(g.request, g.types);
  return AllocateInfo();
}

absl::Status Sharing::DropReservation(const std::string& name) {
  Group& g = groups_.at(name);
  std::vector<std::string> holders;
  while (!g.pods.empty()) {  // pod by pod: RemoveShare reads the group's remaining pods
    const PodShare s = g.pods.back();
    if (s.open) {
      holders.push_back(leaf_use_.at(s.leaf.value()).holder);
      RemoveShare(name, s);
    }
    AddNodeUse(s, -1);
    g.pods.pop_back();
  }
  const absl::Status cancelled = CancelHolder(&g);
  if (g.stage == Stage::kReserved) --reserved_;
  groups_.erase(name);
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  for (const std::string& h : holders) ReleaseHolderIfEmpty(h);
  pending_ = Pending();
  return cancelled;
}

absl::StatusOr<std::optional<ScheduleResult>> Sharing::RecheckReserved(const GroupRequest& r,
                                                                       Phase phase) {
  const Group& g = groups_.at(r.name);
  std::string why;
  for (const PodShare& s : g.pods) {
    if (!why.empty()) break;
    const NodeId n = forest_.node(s.leaf);
    const std::string& node = forest_.node_name(n);
    if (!whole_.NodeHealthy(n)) {
      why = absl::StrCat("node ", node, " is bad");
    } else if (r.suggested_nodes.has_value() &&
               std::find(r.suggested_nodes->begin(), r.suggested_nodes->end(), node) ==
                   r.suggested_nodes->end()) {
      why = absl::StrCat("node ", node, " is not suggested");
    }
    if (!why.empty()) break;
  }
  ScheduleResult result;
  if (why.empty()) {
    result.outcome = Outcome::kPlaced;
    result.placement = g.placement;
    return std::optional<ScheduleResult>(std::move(result));
  }
  if (phase == Phase::kPreempting) {  // re-placed by the caller
    HIVED_RETURN_IF_ERROR(DropReservation(r.name));
    return std::optional<ScheduleResult>();
  }
  result.outcome = Outcome::kWaiting;
  result.code = ReasonCode::kReservationBlocked;
  result.placement = g.placement;
  result.reason = absl::StrCat("the reservation of group ", r.name, " is blocked: ", why,
                               "; schedule in the Preempting phase to re-place it");
  return std::optional<ScheduleResult>(std::move(result));
}

absl::StatusOr<AllocateInfo> Sharing::AllocateDecided(const GroupRequest& r, const Parsed& p,
                                                      const Placement& placement) {
  auto git = groups_.find(r.name);
  const bool decided =
      pending_.group == r.name && pending_.epoch == whole_.epoch() &&
      Reservations::RequestDifference(pending_.request, r).empty() &&
      Reservations::PlacementDifference(pending_.decision.placement, placement).empty();
  if (!decided && pending_.group == r.name && pending_.epoch == whole_.epoch()) {
    std::string diff = Reservations::RequestDifference(pending_.request, r);
    if (diff.empty()) {
      diff = Reservations::PlacementDifference(pending_.decision.placement, placement);
    }
    return absl::FailedPreconditionError(
        absl::StrCat("group ", r.name, ": not what Schedule decided (Filtering phase): ", diff));
  }
  if (!decided && git != groups_.end()) {
    const std::string* by =
        git->second.holder.empty() ? nullptr : whole_.CancelledBy(git->second.holder);
    if (by != nullptr) {
      return absl::FailedPreconditionError(Reservations::CancelledMessage(r.name, *by));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", r.name, " is preempting: Schedule it again (Preempting phase) once its ",
        "victims are gone, which reserves its placement, then Allocate it"));
  }
  if (!decided) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group ", r.name,
        " has no reservation: Schedule it first (the Preempting phase reserves a kPlaced "
        "placement; a Filtering one is taken only by the Allocate right after it), or use "
        "Recover for a placement from elsewhere"));
  }
  if (!pending_.decision.holder.empty()) {  // refused before anything changes
    HIVED_RETURN_IF_ERROR(CheckHolder(r.name, p.guaranteed, pending_.decision.holder_request,
                                      pending_.decision.holder_placement));
  }
  Decision d = std::move(pending_.decision);
  pending_ = Pending();
  const bool own = git != groups_.end() && !d.holder.empty() && d.holder == git->second.holder;
  if (!d.holder.empty()) {
    AllocateHolder(p.guaranteed, d.holder_request, d.holder_placement);
    if (!own) ++next_holder_;
  }
  if (git != groups_.end()) {  // a preempting group: its other holder and bars are given up
    if (!own) HIVED_RETURN_IF_ERROR(CancelHolder(&git->second));
    Bar(r.name, false);
  }
  Reserve(r, p, std::move(d));
  return CommitReserved(r.name, /*holder_allocated=*/true);
}

absl::Status Sharing::Unreserve(std::string_view name) {
  if (host_groups_.count(name) > 0) return HostNotPending(name, /*cancel=*/false);
  const std::string group(name);
  if (IsHolderName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", group, " holds GPUs for sharing; it is not unreserved directly"));
  }
  auto git = groups_.find(group);
  if (git == groups_.end()) {
    return absl::NotFoundError(absl::StrCat("group ", group, " is not known"));
  }
  if (git->second.stage == Stage::kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", group, " holds no reservation (it runs); use Release"));
  }
  if (git->second.stage == Stage::kPreempting) return CancelPreemption(name);
  return DropReservation(group);
}

absl::Status Sharing::ResolveRecovered(const GroupRequest& r, const Parsed& p,
                                       const Placement& placement, std::vector<PodShare>* pods,
                                       std::vector<CellId>* fresh) const {
  if (placement.pods.size() != p.pods.size()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": the placement has ",
                                                   placement.pods.size(), " pods, the request ",
                                                   p.pods.size()));
  }
  Tentative t;
  for (size_t i = 0; i < p.pods.size(); ++i) {
    const PodPlacement& pod = placement.pods[i];
    const PodAsk& a = p.pods[i];
    const auto where = [&] {
      return absl::StrCat("group ", r.name, ": pod ", i, " on node ", pod.node);
    };
    if (forest_.FindNode(pod.node).IsNil()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": no such node in the cluster"));
    }
    if (pod.leaf_cell_indices.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": a fractional pod lists one GPU index, not ", pod.leaf_cell_indices.size()));
    }
    const CellId leaf = FindLeaf(pod, p);
    if (leaf.IsNil()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": the node has no GPU ",
                                                     pod.leaf_cell_indices[0],
                                                     " of an allowed leaf cell type"));
    }
    const auto gpu = t.gpu.find(leaf.value());
    const int32_t extra_milli = gpu == t.gpu.end() ? 0 : gpu->second.first;
    const int64_t extra_memory = gpu == t.gpu.end() ? 0 : gpu->second.second;
    bool fits;
    if (shares_.IsOpen(leaf)) {
      const std::string& barred = leaf_use_.at(leaf.value()).barred_by;
      if (!Compatible(r, p.guaranteed, leaf) || (!barred.empty() && !p.guaranteed)) {
        return absl::FailedPreconditionError(
            absl::StrCat(where(), ": GPU ", pod.leaf_cell_indices[0], " is open for sharing by ",
                         leaf_use_.at(leaf.value()).holder, " of another VC or priority",
                         barred.empty() ? "" : absl::StrCat(" (or evicted by ", barred, ")")));
      }
      fits = shares_.Fits(leaf, a.milli, a.memory, extra_milli, extra_memory);
    } else {
      auto type = leaf_types_.find(forest_.chain_info(forest_.chain(leaf)).leaf_type);
      const int64_t capacity = type == leaf_types_.end() ? 0 : type->second.gpu_memory_mib;
      fits = extra_milli + a.milli <= cellalloc::kGpuMilli &&
             (capacity == 0 || extra_memory + a.memory <= capacity);
      if (std::find(fresh->begin(), fresh->end(), leaf) == fresh->end()) fresh->push_back(leaf);
    }
    if (!fits) {
      return absl::FailedPreconditionError(absl::StrCat(where(), ": GPU ", pod.leaf_cell_indices[0],
                                                        " has no room for its ", a.milli,
                                                        " milli and ", a.memory, " MiB"));
    }
    // A MIG pod whose placement names its instance (a record's, GetGroup's) takes that one,
    // as Restore does; without a start the rule chooses, as at Allocate.
    const bool at_start = !a.mig.empty() && pod.mig_start >= 0;
    if (at_start && !pod.mig_profile.empty() && pod.mig_profile != a.mig) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": the placement names a ", pod.mig_profile, " instance, the request ", a.mig));
    }
    if (!NodeRoom(leaf, a, t)) {
      return absl::FailedPreconditionError(
          absl::StrCat(where(), ": the node lacks the pod's CPU or host memory"));
    }
    if (const std::string why = TakeRecorded(r.name, leaf, a, at_start ? pod.mig_start : -1, &t);
        !why.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(where(), ": ", why));
    }
    pods->push_back({leaf, a.milli, a.memory, a.cpu, a.host_memory, true, a.mig,
                     at_start ? pod.mig_start : -1});
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocateInfo> Sharing::Recover(const GroupRequest& r, const Placement& placement) {
  if (IsHostRequest(r)) return AllocateHost(r, placement, /*recover=*/true);
  auto git = groups_.find(r.name);
  if (git != groups_.end() && git->second.stage != Stage::kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", r.name, " holds a reservation: Allocate it, or Unreserve it first"));
  }
  HIVED_ASSIGN_OR_RETURN(Parsed p, ParseFor(r));
  std::vector<PodShare> pods;
  std::vector<CellId> fresh;
  HIVED_RETURN_IF_ERROR(ResolveRecovered(r, p, placement, &pods, &fresh));
  pending_ = Pending();
  // The GPUs not open yet: one holder per chain, recovered by the scheduler (strict). All
  // decided first over const state, chain by chain, by the core's own decision for Recover
  // (`PreviewRecover`: the leaves free and, for a guaranteed group, its virtual cells, safety
  // included): the first of the VC's preassigned cell types (VC order) the group keeps its
  // virtual cells with. The holders' decisions are independent: a holder binds cells of its
  // own chain only, and every rule it is decided by (the leaves' users, the VC's unbound
  // preassigned cells of that chain and level, the allocator's cells and the safety check)
  // is per chain (HiveD's safety is per chain and level), so recovering one holder leaves
  // every other holder's decision as previewed. Then every Recover, which cannot fail.
  std::map<uint32_t, std::vector<CellId>> by_chain;
  for (CellId leaf : fresh) by_chain[forest_.chain(leaf).value()].push_back(leaf);
  std::vector<std::pair<GroupRequest, Placement>> holders;
  static const std::vector<std::string> kNoTypes;
  const auto vt = vc_types_.find(r.vc);  // the VC's preassigned cell types, if any
  const std::vector<std::string>& types =
      p.guaranteed && vt != vc_types_.end() ? vt->second : kNoTypes;
  for (const auto& [chain, leaves] : by_chain) {
    const cellalloc::ChainInfo& info = forest_.chain_info(ChainId(chain));
    GroupRequest h;
    h.name = absl::StrCat(kHolderPrefix, next_holder_ + holders.size());
    h.vc = r.vc;
    h.priority = r.priority;
    h.leaf_cell_type = info.leaf_type;
    h.members = {{static_cast<int32_t>(leaves.size()), 1}};
    Placement hp;
    hp.chain = info.name;
    for (CellId leaf : leaves) {
      PodPlacement pod;
      FillPlacementPod(leaf, &pod);
      hp.pods.push_back(std::move(pod));
    }
    absl::Status failed;
    // Without preassigned types (an opportunistic group, or a VC with none) one preview.
    for (size_t k = 0; k < std::max<size_t>(types.size(), 1); ++k) {
      for (PodPlacement& pod : hp.pods) {
        pod.preassigned_cell_types.clear();
        if (k < types.size()) pod.preassigned_cell_types = {types[k]};
      }
      const absl::StatusOr<AllocateInfo> core = whole_.PreviewRecover(h, hp);
      if (!core.ok()) {
        failed = core.status();
        break;
      }
      failed = absl::OkStatus();
      if (!core->downgraded || !p.guaranteed) break;
      // The holder would run downgraded: the group is not recovered with this type.
      failed = absl::FailedPreconditionError(absl::StrCat("the VC cannot hold GPUs of chain ",
                                                          info.name, " now (", core->reason, ")"));
    }
    if (!failed.ok()) {
      return absl::Status(failed.code(), absl::StrCat("group ", r.name,
                                                      ": reopening its GPUs: ", failed.message()));
    }
    holders.emplace_back(std::move(h), std::move(hp));
  }
  // Applied: each Recover runs the decision just previewed over the same state.
  std::vector<GroupRequest> opened;
  for (const auto& [h, hp] : holders) {
    absl::StatusOr<AllocateInfo> core = whole_.Recover(h, hp);
    HIVED_CHECK(core.ok()) << h.name << ": " << core.status().ToString();
    HIVED_CHECK(!(core->downgraded && p.guaranteed)) << h.name << ": " << core->reason;
    opened.push_back(h);
    ++next_holder_;
  }
  for (const GroupRequest& h : opened) OpenHolder(h.name, h);
  Group& g = groups_[r.name];
  g.request = r;
  g.request.suggested_nodes.reset();
  g.guaranteed = p.guaranteed;
  g.stage = Stage::kRunning;
  g.placement = placement;
  g.pods = std::move(pods);
  for (const PodShare& s : g.pods) {
    AddShare(r.name, s);
    AddNodeUse(s, +1);
  }
  NoteAdmitted(r, TypeMask(p.types));  // a recovered group starts to run, as at Allocate
  return AllocateInfo();
}

}  // namespace hived
