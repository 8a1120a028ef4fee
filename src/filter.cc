// Filtering under the shared lock: `Filter` answers `Schedule(request, kFiltering)` for a
// new whole-GPU group over const state, so filters run concurrently with each other and
// with views (include/hived/scheduler.h "Thread safety"). What the Schedule path writes
// while deciding is per call here: the Placer's marks and taken leaves, the planner's
// overlay and the Decide buffers come from a pooled `FilterScratch`, the needs buffer too;
// the kPlaced decision an `Allocate` may run goes to this thread's slot in `Reservations`
// (src/reservations.h: a slot per thread, so concurrent filters write no common line).
// The epoch is only read (every writer holds the exclusive lock), so a stored decision is
// stamped with the state it was made on and re-checked (matched, epoch included) when applied.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/scheduler_impl.h"

namespace hived {

bool SchedulerImpl::ReportOnly(Decision* d, ScheduleResult* result) const {
  // Decide only. A placement that needs lazy downgrades is reported as a preemption
  // whose victims include the groups that would be downgraded.
  std::vector<GroupId>& victims = d->victims;
  for (auto it = d->lazy.rbegin(); it != d->lazy.rend(); ++it) {
    if (std::find(victims.begin(), victims.end(), *it) == victims.end()) victims.push_back(*it);
  }
  if (!d->lazy.empty()) {
    result->reason = "lazily preemptible victims would be downgraded to opportunistic";
    result->code = ReasonCode::kLazyDowngrade;
  }
  if (!d->overlapping.empty()) {
    *result = *OverlapWait(d->overlapping, result);  // always ok
    return false;
  }
  if (!victims.empty()) {
    result->outcome = Outcome::kPreempting;
    for (GroupId g : victims) result->victims.push_back(groups_[g].name);
    std::sort(result->victims.begin(), result->victims.end());
    return false;
  }
  result->outcome = Outcome::kPlaced;
  return d->lazy.empty();  // the virtual cells are valid only without the downgrades
}

std::unique_ptr<SchedulerImpl::FilterScratch> SchedulerImpl::TakeFilterScratch() const {
  if (std::unique_ptr<FilterScratch> s = filter_pool_.Take()) return s;
  // The first call on this many threads at once: a scratch over the same const inputs as
  // `placer_` and `planner_`.
  auto s = std::make_unique<FilterScratch>();
  s->placer = Placer(forest_.get(), &vclusters_.cells(), &physical_.usage(), &vclusters_.usage());
  s->planner = std::make_unique<cellalloc::BuddyPlanner>(buddy_.get(), &physical_.usage());
  s->scratch.placer = &s->placer;
  s->scratch.planner = s->planner.get();
  s->scratch.vslot.assign(vclusters_.cells().size(), -1);
  return s;
}

void SchedulerImpl::GiveFilterScratch(std::unique_ptr<FilterScratch> s) const {
  filter_pool_.Give(std::move(s));
}

std::optional<absl::StatusOr<ScheduleResult>> SchedulerImpl::Filter(
    const GroupRequest& request) const {
  const GroupId existing = groups_.Find(request.name);
  if (existing != kNilId) {
    const GState state = groups_[existing].state;
    if (state != GState::kPreempting && state != GState::kReserved) {
      return absl::StatusOr<ScheduleResult>(
          absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running")));
    }
    return std::nullopt;  // RecheckPreempting
  }
  std::unique_ptr<FilterScratch> fs = TakeFilterScratch();
  struct GiveBack {  // every return below gives the (empty) scratch back
    const SchedulerImpl* impl;
    std::unique_ptr<FilterScratch>* fs;
    ~GiveBack() { impl->GiveFilterScratch(std::move(*fs)); }
  } give_back{this, &fs};

  absl::StatusOr<Req> parsed = ParseRequest(request, &fs->needs);
  if (!parsed.ok()) return absl::StatusOr<ScheduleResult>(parsed.status());
  Req& req = *parsed;
  Decision& d = fs->decision;
  Decide(req, &fs->scratch, &d);
  ScheduleResult result;
  if (!d.found) {
    result.outcome = d.outcome;
    result.reason = std::move(d.reason);
    result.code = d.code;
  } else {
    FillPlacement(d.chain, req.needs, d.pleaves, d.vleaves, &result.placement);
    if (!ShieldedWait(d.pleaves, &result) && ReportOnly(&d, &result)) {
      reservations_.StoreFiltered(request, epoch_, d.chain, req.needs, &d.pleaves, &d.vleaves);
    }
  }
  fs->needs.swap(req.needs);
  if (const std::string* by = reservations_.CancelledBy(request.name)) result.cancelled_by = *by;
  return absl::StatusOr<ScheduleResult>(std::move(result));
}

}  // namespace hived
