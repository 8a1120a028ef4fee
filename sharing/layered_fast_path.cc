// The fast path's entry in the layer above the core (hived/fast_path.h; the core's part:
// src/fast_path.cc): sharing requests have no fast path, and a whole-GPU request is
// scheduled as `LayeredScheduler::Schedule` schedules it.
#include <string>

#include "absl/strings/str_cat.h"
#include "hived/fast_path.h"
#include "sharing/layered.h"
#include "sharing/sharing.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

namespace {

absl::Status StaleHandle(GroupHandle handle) {
  return absl::NotFoundError(absl::StrCat("group handle ", handle.slot, "/", handle.generation,
                                          " names no live group (nil, released or forged)"));
}

}  // namespace

// The layer above: sharing requests have no fast path; a whole-GPU request is scheduled as
// `LayeredScheduler::Schedule` does (shields synced first, victims translated after).
absl::Status LayeredScheduler::ScheduleAndAllocate(const GroupRequest& request, FastResult* out) {
  if (sharing_->Handles(request)) {
    *out = FastResult();
    return absl::FailedPreconditionError(
        absl::StrCat("group ", request.name,
                     " shares GPUs (fractional, MIG or CPU-only): the fast path takes whole-GPU "
                     "requests only; use Schedule and Allocate"));
  }
  sharing_->SyncShields();
  HIVED_RETURN_IF_ERROR(whole_->ScheduleAndAllocate(request, out));
  if (out->outcome != Outcome::kPlaced || !out->detail.cancelled.empty()) {
    sharing_->TranslateResult(&out->detail);
  }
  return absl::OkStatus();
}

absl::Status LayeredScheduler::Release(GroupHandle handle) {
  const GroupId g = whole_->FindHandle(handle);
  if (g == kNilId) return StaleHandle(handle);
  const std::string& name = whole_->group(g).name;
  if (SharesGpus(name)) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", name, " shares GPUs: release it by name (Release)"));
  }
  return whole_->ReleaseGroup(g);
}

absl::StatusOr<GroupHandle> LayeredScheduler::HandleOf(std::string_view group) const {
  const GroupId g = whole_->FindGroup(group);
  if (g == kNilId || SharesGpus(group)) {
    return absl::NotFoundError(
        absl::StrCat("group ", ToAbsl(group), " is not a running whole-GPU group"));
  }
  const GState state = whole_->group(g).state;
  if (state == GState::kReserved || state == GState::kPreempting) {
    return absl::NotFoundError(
        absl::StrCat("group ", ToAbsl(group), " holds a reservation: Allocate it first"));
  }
  return whole_->HandleOf(g);
}

absl::StatusOr<std::string> LayeredScheduler::GroupName(GroupHandle handle) const {
  const GroupId g = whole_->FindHandle(handle);
  if (g == kNilId) return StaleHandle(handle);
  return whole_->group(g).name;
}

int32_t LayeredScheduler::NodeCount() const { return whole_->forest().num_nodes(); }

std::string_view LayeredScheduler::NodeName(int32_t node) const {
  const cellalloc::CellForest& f = whole_->forest();
  if (node < 0 || node >= f.num_nodes()) return {};
  return f.node_name(NodeId(static_cast<uint32_t>(node)));
}

std::string_view LayeredScheduler::ChainName(int32_t chain) const {
  const cellalloc::CellForest& f = whole_->forest();
  if (chain < 0 || chain >= f.num_chains()) return {};
  return f.chain_info(ChainId(static_cast<uint32_t>(chain))).name;
}

}  // namespace hived
