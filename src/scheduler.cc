// The public façade: forwards to LayeredScheduler (sharing/layered.h) under the reader/writer lock
// that makes a Scheduler safe to share between threads (see "Thread safety" in hived/scheduler.h).
#include "hived/scheduler.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sharing/layered.h"
#include "sharing/layered_config_change.h"
#include "src/groups_snapshot.h"
#include "src/internal/status_macros.h"
#include "src/journal_hook.h"
#include "src/rw_lock.h"
#include "src/schedule_changed.h"

namespace hived {

// The reader/writer lock of "Thread safety" (hived/scheduler.h): writer-preferring, readers
// without a shared cache line (src/rw_lock.h).
class Scheduler::Lock : public RwLock {};

namespace {

absl::Status CheckOptions(const SchedulerOptions& options) {
  if (options.change_log_capacity < 0 || options.change_log_capacity > kMaxChangeLogCapacity) {
    return absl::InvalidArgumentError(absl::StrCat("SchedulerOptions::change_log_capacity is ",
                                                   options.change_log_capacity, ": must be in [0, ",
                                                   kMaxChangeLogCapacity, "] (0: no change feed)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const ClusterSpec& spec) {
  return Create(spec, SchedulerOptions());
}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const ClusterSpec& spec,
                                                             const SchedulerOptions& options) {
  HIVED_RETURN_IF_ERROR(CheckOptions(options));
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<LayeredScheduler> impl, LayeredScheduler::Create(spec));
  // Version 0 is the state built; the ring is sized (allocated) now, once.
  impl->ResetChangeLog(static_cast<size_t>(options.change_log_capacity));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<LayeredScheduler> impl)
    : lock_(std::make_unique<Lock>()),
      impl_(std::move(impl)),
      journal_(std::make_unique<SchedulerJournal>()),
      groups_(std::make_unique<GroupsSnapshot>()) {}

// Restore builds a new scheduler that no other thread can see yet: no lock.
absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Restore(
    const ClusterSpec& spec, std::string_view state, RestoreReport* report, RestoreOptions options,
    const SchedulerOptions& scheduler_options) {
  HIVED_RETURN_IF_ERROR(CheckOptions(scheduler_options));
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<LayeredScheduler> impl,
                         LayeredScheduler::Restore(spec, state, report, options));
  // Version 0 is the state restored.
  impl->ResetChangeLog(static_cast<size_t>(scheduler_options.change_log_capacity));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}
std::string Scheduler::SpecFingerprint() const {
  Lock::Shared hold(*lock_);
  return impl_->ConfigFingerprint();
}
absl::StatusOr<std::string> Scheduler::SaveState() const {
  Lock::Shared hold(*lock_);
  return impl_->SaveState();
}
absl::StatusOr<GroupRecord> Scheduler::GetGroupRecord(std::string_view group) const {
  Lock::Shared hold(*lock_);
  return impl_->GetGroupRecord(group);
}
absl::StatusOr<AllocateInfo> Scheduler::AllocateRecord(const GroupRecord& record) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<AllocateInfo> info = impl_->RestoreGroup(record, /*ignored_leaves=*/nullptr);
  if (info.ok()) journal_->AllocateRecord(record);
  impl_->EndChange(epoch, info.ok(), record.request.name);
  return info;
}
Scheduler::~Scheduler() = default;

// Mutations: exclusive. A Filtering-phase `Schedule` of a new whole-GPU group changes
// nothing and decides over const state with a per-call scratch (`LayeredScheduler::Filter`,
// src/filter.cc): shared, concurrent with views and other filters. The requests `Filter`
// declines (sharing's, a reserved or Preempting group's re-check) take the exclusive path.
absl::StatusOr<ScheduleResult> Scheduler::Schedule(const GroupRequest& request, Phase phase) {
  if (phase == Phase::kFiltering) {
    Lock::Shared hold(*lock_);
    std::optional<absl::StatusOr<ScheduleResult>> filtered = impl_->Filter(request);
    if (filtered.has_value()) return *std::move(filtered);
  }
  Lock::Exclusive hold(*lock_);
  if (phase == Phase::kPreempting) HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<ScheduleResult> result = impl_->Schedule(request, phase);
  if (result.ok() && phase == Phase::kPreempting) journal_->Schedule(request, phase);
  const bool changed =
      phase == Phase::kPreempting && result.ok() && ScheduleChangedState(result->outcome, *result);
  impl_->EndChange(epoch, changed, request.name, result.ok() ? &*result : nullptr);
  return result;
}
absl::StatusOr<AllocateInfo> Scheduler::Allocate(const GroupRequest& request,
                                                 const Placement& placement) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<AllocateInfo> info = impl_->Allocate(request, placement);
  if (info.ok()) journal_->Allocate(JournalOp::kAllocate, request, placement);
  impl_->EndChange(epoch, info.ok(), request.name);
  return info;
}
absl::Status Scheduler::Release(std::string_view group) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->Release(group);
  if (status.ok()) journal_->Named(JournalOp::kRelease, group);
  impl_->EndChange(epoch, status.ok(), group);
  return status;
}
absl::Status Scheduler::CancelPreemption(std::string_view group) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->CancelPreemption(group);
  if (status.ok()) journal_->Named(JournalOp::kCancelPreemption, group);
  impl_->EndChange(epoch, status.ok(), group);
  return status;
}
absl::Status Scheduler::Unreserve(std::string_view group) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->Unreserve(group);
  if (status.ok()) journal_->Named(JournalOp::kUnreserve, group);
  impl_->EndChange(epoch, status.ok(), group);
  return status;
}
absl::StatusOr<AllocateInfo> Scheduler::Recover(const GroupRequest& request,
                                                const Placement& placement) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<AllocateInfo> info = impl_->Recover(request, placement);
  if (info.ok()) journal_->Allocate(JournalOp::kRecover, request, placement);
  impl_->EndChange(epoch, info.ok(), request.name);
  return info;
}
absl::StatusOr<PodAllocation> Scheduler::AllocatePod(const GroupRequest& request,
                                                     const Placement& placement, const Pod& pod) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("AllocatePod"));
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<PodAllocation> out = impl_->AllocatePod(request, placement, pod);
  impl_->EndChange(epoch, out.ok(), request.name);
  return out;
}

absl::StatusOr<PodRelease> Scheduler::ReleasePod(std::string_view group, std::string_view pod) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("ReleasePod"));
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<PodRelease> out = impl_->ReleasePod(group, pod);
  impl_->EndChange(epoch, out.ok(), group);
  return out;
}

absl::StatusOr<PodAllocation> Scheduler::RecoverPod(const GroupRecord& record, const Pod& pod) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("RecoverPod"));
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<PodAllocation> out = impl_->RecoverPod(record, pod);
  impl_->EndChange(epoch, out.ok(), record.request.name);
  return out;
}

absl::StatusOr<ScheduleResult> Scheduler::Schedule(const GroupRequest& request, Phase phase,
                                                   const ReservationTime& time) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("a timed Schedule"));
  const uint64_t epoch = impl_->epoch();
  absl::StatusOr<ScheduleResult> result = impl_->Schedule(request, phase, time);
  const bool changed =
      phase == Phase::kPreempting && result.ok() && ScheduleChangedState(result->outcome, *result);
  impl_->EndChange(epoch, changed, request.name, result.ok() ? &*result : nullptr);
  return result;
}

std::vector<ExpiredReservation> Scheduler::ExpireReservations(int64_t now) {
  Lock::Exclusive hold(*lock_);
  const uint64_t epoch = impl_->epoch();
  std::vector<ExpiredReservation> out = impl_->ExpireReservations(now);
  for (const ExpiredReservation& e : out) {
    journal_->Named(JournalOp::kUnreserve, e.group);  // an expiry replays as its Unreserve
    impl_->EndChange(epoch, true, e.group);
  }
  if (out.empty()) impl_->EndChange(epoch, false, std::string_view());
  return out;
}

absl::StatusOr<PodStatus> Scheduler::GetPod(std::string_view group, std::string_view pod) const {
  Lock::Shared hold(*lock_);
  return impl_->GetPod(group, pod);
}

absl::Status Scheduler::SetNodeHealthy(std::string_view node, bool healthy) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->SetNodeHealthy(node, healthy);
  if (status.ok()) {
    journal_->SetNodeHealthy(node, healthy);
    impl_->NoteNodeChanged(node);
  }
  impl_->EndChange(epoch, status.ok(), std::string_view());
  return status;
}

// Views: shared, concurrent with each other.
GroupStatus Scheduler::GetGroup(std::string_view group) const {
  Lock::Shared hold(*lock_);
  return impl_->GetGroup(group);
}
// The group list (src/groups_snapshot.h): under the shared lock only the statuses changed
// since the latest snapshot are read; the merge and the caller's copy run without the lock.
std::shared_ptr<const GroupList> Scheduler::CurrentGroups() const {
  const std::shared_ptr<const GroupList> base = groups_->Latest();
  GroupsSnapshot::Update update;
  {
    Lock::Shared hold(*lock_);
    update.version = version_base_ + impl_->version();
    if (base != nullptr && base->version == update.version) return base;
    absl::StatusOr<StateChanges> changes =
        base == nullptr ? absl::StatusOr<StateChanges>(absl::OutOfRangeError("no snapshot"))
                        : ChangesLocked(base->version);
    if (changes.ok()) {
      update.statuses.reserve(changes->groups.size());
      for (const std::string& name : changes->groups) {
        update.statuses.push_back(impl_->GetGroup(name));
        update.statuses.back().name = name;  // a kAbsent status names only its request
      }
    } else {
      update.full = true;
      update.statuses = impl_->Groups();
    }
  }
  return groups_->Advance(base, std::move(update));
}
std::vector<GroupStatus> Scheduler::Groups() const { return GroupsSnapshot::All(*CurrentGroups()); }
std::vector<GroupStatus> Scheduler::Groups(std::string_view after, int32_t limit) const {
  if (limit <= 0) return {};
  return GroupsSnapshot::Page(*CurrentGroups(), after, limit);
}
uint64_t Scheduler::version() const {
  Lock::Shared hold(*lock_);
  return version_base_ + impl_->version();
}
absl::StatusOr<StateChanges> Scheduler::Changes(uint64_t since) const {
  Lock::Shared hold(*lock_);
  return ChangesLocked(since);
}
absl::StatusOr<StateChanges> Scheduler::ChangesLocked(uint64_t since) const {
  if (version_base_ == 0) return impl_->Changes(since);
  const uint64_t now = version_base_ + impl_->version();
  if (since > now) {
    return absl::InvalidArgumentError(
        absl::StrCat("version ", since, " is ahead of the scheduler's state version ", now));
  }
  if (since < version_base_) {
    return absl::OutOfRangeError(absl::StrCat("the cluster config changed at version ",
                                              version_base_,
                                              " (ApplyConfig): the changes since version ", since,
                                              " are not kept; re-read the full views"));
  }
  absl::StatusOr<StateChanges> out = impl_->Changes(since - version_base_);
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat("the changes since version ", since,
                                     " are no longer kept; re-read the full views"));
  }
  out->version += version_base_;
  return out;
}
std::vector<PhysicalCellStatus> Scheduler::PhysicalCluster() const {
  Lock::Shared hold(*lock_);
  return impl_->PhysicalCluster();
}
PhysicalClusterTable Scheduler::PhysicalClusterAsTable() const {
  Lock::Shared hold(*lock_);
  return impl_->PhysicalClusterAsTable();
}
absl::StatusOr<std::vector<VirtualCellStatus>> Scheduler::VirtualCluster(
    std::string_view vc) const {
  Lock::Shared hold(*lock_);
  return impl_->VirtualCluster(vc);
}
std::vector<VcUsage> Scheduler::VcUsages() const {
  Lock::Shared hold(*lock_);
  return impl_->VcUsages();
}
std::vector<ChainLevelCapacity> Scheduler::Capacity() const {
  Lock::Shared hold(*lock_);
  return impl_->Capacity();
}
std::vector<NodeStatus> Scheduler::Nodes() const {
  Lock::Shared hold(*lock_);
  return impl_->Nodes();
}
absl::StatusOr<std::vector<NodeStatus>> Scheduler::GetNode(std::string_view node) const {
  Lock::Shared hold(*lock_);
  return impl_->GetNode(node);
}
absl::StatusOr<std::vector<PhysicalCellStatus>> Scheduler::PhysicalNode(
    std::string_view node) const {
  Lock::Shared hold(*lock_);
  return impl_->PhysicalNode(node);
}
absl::StatusOr<std::vector<PhysicalCellStatus>> Scheduler::PhysicalChain(
    std::string_view chain) const {
  Lock::Shared hold(*lock_);
  return impl_->PhysicalChain(chain);
}
std::vector<ChainSummary> Scheduler::ChainSummaries() const {
  Lock::Shared hold(*lock_);
  return impl_->ChainSummaries();
}
absl::StatusOr<ChainSummary> Scheduler::GetChainSummary(std::string_view chain) const {
  Lock::Shared hold(*lock_);
  return impl_->GetChainSummary(chain);
}
std::vector<VcSummary> Scheduler::VcSummaries() const {
  Lock::Shared hold(*lock_);
  return impl_->VcSummaries();
}
absl::StatusOr<std::vector<VcSummary>> Scheduler::GetVcSummary(std::string_view vc) const {
  Lock::Shared hold(*lock_);
  return impl_->GetVcSummary(vc);
}
absl::Status Scheduler::CheckInvariants() const {
  Lock::Shared hold(*lock_);
  return impl_->CheckInvariants();
}

// The journal (src/journal_scheduler.cc).
absl::StatusOr<JournalCheckpoint> Scheduler::StartJournal(JournalSink* sink) {
  Lock::Exclusive hold(*lock_);
  return journal_->Start(*impl_, sink);
}
void Scheduler::StopJournal() {
  Lock::Exclusive hold(*lock_);
  journal_->Stop();
}
absl::Status Scheduler::JournalStatus() const {
  Lock::Shared hold(*lock_);
  return journal_->Usable();
}
uint64_t Scheduler::JournalSequence() const {
  Lock::Shared hold(*lock_);
  return journal_->sequence();
}
absl::Status Scheduler::ApplyJournalRecord(const JournalRecord& record, std::string* call_error) {
  Lock::Exclusive hold(*lock_);
  if (record.op == JournalOp::kApplyConfig) return ReplayConfig(record);
  const uint64_t epoch = impl_->epoch();
  absl::Status status = journal_->Apply(*impl_, record, call_error);
  impl_->EndChange(epoch, status.ok(), std::string_view());
  return status;
}

// The spec changes only with `ApplyConfig`: shared, to read which one is current.
const ClusterSpec& Scheduler::spec() const {
  Lock::Shared hold(*lock_);
  return impl_->spec();
}

// Live config change: built off to the side (sharing/layered_config_change.cc), swapped in only
// when it is complete and checked. Exclusive for the whole change, so no mutation slips in between
// the save and the swap.
absl::StatusOr<RestoreReport> Scheduler::ApplyConfig(const ClusterSpec& new_spec,
                                                     ApplyConfigOptions options) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Usable());
  HIVED_ASSIGN_OR_RETURN(const std::string yaml, journal_->ConfigYaml(new_spec));
  HIVED_ASSIGN_OR_RETURN(RestoreReport report, SwapConfig(new_spec, options));
  journal_->ApplyConfig(*impl_, yaml, options.stranded == ApplyConfigOptions::Stranded::kApply);
  return report;
}

absl::StatusOr<RestoreReport> Scheduler::SwapConfig(const ClusterSpec& new_spec,
                                                    ApplyConfigOptions options) {
  RestoreReport report;
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<LayeredScheduler> next,
                         BuildConfigChange(*impl_, new_spec, options, &report));
  next->ResetChangeLog(impl_->change_log_capacity());  // the scheduler's capacity kept
  const uint64_t base = version_base_ + impl_->version() + 1;
  impl_ = std::move(next);
  version_base_ = base;
  ++config_epoch_;
  return report;
}

// The fast path (hived/fast_path.h; src/fast_path.cc): the rules of the classic calls. A
// handle carries the config epoch it was issued in; one from before an `ApplyConfig` names a
// slot of the old group table and is refused.
namespace {
absl::Status StaleHandle(GroupHandle handle) {
  return absl::NotFoundError(absl::StrCat("group handle ", handle.slot, "/", handle.generation,
                                          " was issued before the last ApplyConfig: take a new "
                                          "one with HandleOf"));
}
}  // namespace

absl::Status Scheduler::ScheduleAndAllocate(const GroupRequest& request, FastResult* result) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("ScheduleAndAllocate"));
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->ScheduleAndAllocate(request, result);
  const bool changed = status.ok() && ScheduleChangedState(result->outcome, result->detail);
  impl_->EndChange(epoch, changed, request.name, status.ok() ? &result->detail : nullptr);
  if (status.ok() && !result->handle.IsNil()) result->handle.config_epoch = config_epoch_;
  return status;
}
absl::Status Scheduler::Release(GroupHandle handle) {
  Lock::Exclusive hold(*lock_);
  HIVED_RETURN_IF_ERROR(journal_->Journaled("Release(GroupHandle)"));
  if (!handle.IsNil() && handle.config_epoch != config_epoch_) return StaleHandle(handle);
  const uint64_t epoch = impl_->epoch();
  absl::Status status = impl_->Release(handle);
  impl_->EndChange(epoch, status.ok(), std::string_view());
  return status;
}
absl::StatusOr<GroupHandle> Scheduler::HandleOf(std::string_view group) const {
  Lock::Shared hold(*lock_);
  absl::StatusOr<GroupHandle> handle = impl_->HandleOf(group);
  if (handle.ok()) handle->config_epoch = config_epoch_;
  return handle;
}
absl::StatusOr<std::string> Scheduler::GroupName(GroupHandle handle) const {
  Lock::Shared hold(*lock_);
  if (!handle.IsNil() && handle.config_epoch != config_epoch_) return StaleHandle(handle);
  return impl_->GroupName(handle);
}
// Node and chain ids change only with `ApplyConfig`: shared, to read the current config's.
int32_t Scheduler::NodeCount() const {
  Lock::Shared hold(*lock_);
  return impl_->NodeCount();
}
std::string_view Scheduler::NodeName(int32_t node) const {
  Lock::Shared hold(*lock_);
  return impl_->NodeName(node);
}
std::string_view Scheduler::ChainName(int32_t chain) const {
  Lock::Shared hold(*lock_);
  return impl_->ChainName(chain);
}

}  // namespace hived
