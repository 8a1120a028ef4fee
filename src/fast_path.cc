// The fast path (hived/fast_path.h, issue 29 item 8): `Schedule(request, kPreempting)` and,
// when kPlaced, `Allocate` of its placement in one call, without the placement's strings.
//
// Why it decides as the classic calls do: a new group's decision is the same `Decide` over
// the same state. A plain placement (found, no victims, no overlapping reservation, no lazy
// downgrade, no shields) is committed by the same `HoldLeaves(kReserved)` that `Commit`
// runs, followed by the same steps as the classic path (`Settle`, the cancellation note,
// then `AllocatePreempting`'s: the epoch, the leaves' user, the state). Only the strings
// (`FillPlacement`, the placement comparisons of `Allocate`) are skipped: they decide
// nothing (`Allocate` of the placement `Schedule` returned always matches). Any other
// decision, and a reserved or Preempting group's re-check, take the classic calls
// themselves (`Commit`, `Schedule`, `Allocate`), so they are the same by construction.
#include "hived/fast_path.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

namespace {

// Empties `out` for a new answer, keeping every vector's and string's capacity.
void ResetFast(FastResult* out) {
  out->outcome = Outcome::kWaiting;
  out->handle = GroupHandle();
  out->chain = -1;
  out->pods.clear();
  out->leaves.clear();
  ScheduleResult& d = out->detail;
  d.outcome = Outcome::kWaiting;
  d.placement.chain.clear();
  d.placement.pods.clear();
  d.victims.clear();
  d.reason.clear();
  d.code = ReasonCode::kNone;
  d.cancelled.clear();
  d.cancelled_by.clear();
}

}  // namespace

absl::Status SchedulerImpl::ScheduleAndAllocate(const GroupRequest& request, FastResult* out) {
  ResetFast(out);
  if (groups_.Find(request.name) != kNilId) {
    // A reserved or Preempting group's re-check (or a running group: kAlreadyExists): the
    // classic calls.
    HIVED_ASSIGN_OR_RETURN(out->detail, Schedule(request, Phase::kPreempting));
    out->outcome = out->detail.outcome;
    if (out->outcome != Outcome::kPlaced) return absl::OkStatus();
    HIVED_RETURN_IF_ERROR(Allocate(request, out->detail.placement).status());
    FillFast(groups_.Find(request.name), out->detail.placement, out);
    return absl::OkStatus();
  }
  // As `Schedule` of a new group (schedule.cc): parse, decide.
  HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
  DecideScratch& s = decide_scratch_;
  if (s.placer != &placer_) {  // the first decision (ScheduleNew)
    s.placer = &placer_;
    s.planner = planner_.get();
    s.vslot.assign(vclusters_.cells().size(), -1);
  }
  Decision& d = decision_;
  Decide(req, &s, &d);
  const bool plain =
      d.found && d.victims.empty() && d.overlapping.empty() && d.lazy.empty() && shields_.empty();
  if (plain) {
    // Commit's kPlaced branch (HoldLeaves) and Schedule's epilogue, then Allocate's
    // (AllocatePreempting of a kReserved group).
    const GroupId g = HoldLeaves(req, GState::kReserved, d);
    Settle();
    out->detail.cancelled_by = reservations_.TakeCancelled(request.name);
    ++epoch_;
    Group& grp = groups_[g];
    for (CellId p : grp.pleaves) {
      physical_.SetUser(p, g);
      physical_.SetReserver(p, kNilId);
    }
    grp.state = GState::kRunning;
    out->detail.outcome = Outcome::kPlaced;
    out->outcome = Outcome::kPlaced;
    FillFast(g, req.needs, out);
    needs_pool_.swap(req.needs);
    return absl::OkStatus();
  }
  // Anything else: Commit as the Preempting phase does, then Schedule's epilogue.
  absl::StatusOr<ScheduleResult> result = Commit(req, Phase::kPreempting, &d);
  needs_pool_.swap(req.needs);
  Settle();
  if (!result.ok()) return result.status();
  out->detail = *std::move(result);
  out->detail.cancelled_by = reservations_.TakeCancelled(request.name);
  out->outcome = out->detail.outcome;
  if (out->outcome != Outcome::kPlaced) return absl::OkStatus();
  HIVED_RETURN_IF_ERROR(Allocate(request, out->detail.placement).status());
  FillFast(groups_.Find(request.name), out->detail.placement, out);
  return absl::OkStatus();
}

GroupId SchedulerImpl::FindHandle(GroupHandle handle) const {
  if (handle.IsNil() || handle.slot >= groups_.slots().size()) return kNilId;
  const Group& grp = groups_[handle.slot];
  if (!grp.alive || grp.generation != handle.generation) return kNilId;
  return handle.slot;
}

GroupHandle SchedulerImpl::HandleOf(GroupId g) const {
  GroupHandle h;
  h.slot = g;
  h.generation = groups_[g].generation;
  return h;
}

absl::Status SchedulerImpl::ReleaseGroup(GroupId g) {
  const GState state = groups_[g].state;
  if (state == GState::kPreempting || state == GState::kReserved) {
    return Release(groups_[g].name);  // its kFailedPrecondition, naming the group
  }
  // As Release(name) (groups.cc) without the name's lookup.
  ++epoch_;
  ReleaseInternal(g);
  Settle();
  return absl::OkStatus();
}

void SchedulerImpl::FillFast(GroupId g, const std::vector<int32_t>& needs, FastResult* out) const {
  const Group& grp = groups_[g];
  out->handle = HandleOf(g);
  out->chain = static_cast<int32_t>(grp.chain.value());
  size_t off = 0;
  for (int32_t need : needs) {
    FastPod pod;
    pod.node = static_cast<int32_t>(forest_->node(grp.pleaves[off]).value());
    pod.leaf_begin = static_cast<int32_t>(out->leaves.size());
    pod.leaf_count = need;
    for (int32_t i = 0; i < need; ++i, ++off) {
      out->leaves.push_back(forest_->leaf_index(grp.pleaves[off]));
    }
    out->pods.push_back(pod);
  }
}

void SchedulerImpl::FillFast(GroupId g, const Placement& placement, FastResult* out) const {
  out->handle = HandleOf(g);
  const ChainId chain = forest_->FindChain(placement.chain);
  out->chain = chain.IsNil() ? -1 : static_cast<int32_t>(chain.value());
  for (const PodPlacement& p : placement.pods) {
    FastPod pod;
    const NodeId node = forest_->FindNode(p.node);
    pod.node = node.IsNil() ? -1 : static_cast<int32_t>(node.value());
    pod.leaf_begin = static_cast<int32_t>(out->leaves.size());
    pod.leaf_count = static_cast<int32_t>(p.leaf_cell_indices.size());
    out->leaves.insert(out->leaves.end(), p.leaf_cell_indices.begin(), p.leaf_cell_indices.end());
    out->pods.push_back(pod);
  }
}

}  // namespace hived
