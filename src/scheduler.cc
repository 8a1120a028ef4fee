// The public façade: forwards to SchedulerImpl.
#include "hived/scheduler.h"

#include <utility>

#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const ClusterSpec& spec) {
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<SchedulerImpl> impl, SchedulerImpl::Create(spec));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Restore(const ClusterSpec& spec,
                                                              std::string_view state,
                                                              RestoreReport* report) {
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<SchedulerImpl> impl,
                         SchedulerImpl::Restore(spec, state, report));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}
absl::StatusOr<std::string> Scheduler::SaveState() const { return impl_->SaveState(); }
absl::StatusOr<GroupRecord> Scheduler::GetGroupRecord(std::string_view group) const {
  return impl_->GetGroupRecord(group);
}
absl::StatusOr<AllocateInfo> Scheduler::AllocateRecord(const GroupRecord& record) {
  int32_t ignored = 0;
  return impl_->RestoreGroup(record, &ignored);
}

Scheduler::Scheduler(std::unique_ptr<SchedulerImpl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

absl::StatusOr<ScheduleResult> Scheduler::Schedule(const GroupRequest& request, Phase phase) {
  return impl_->Schedule(request, phase);
}
absl::StatusOr<AllocateInfo> Scheduler::Allocate(const GroupRequest& request,
                                                 const Placement& placement) {
  return impl_->Allocate(request, placement);
}
absl::Status Scheduler::Release(std::string_view group) { return impl_->Release(group); }
absl::Status Scheduler::CancelPreemption(std::string_view group) {
  return impl_->CancelPreemption(group);
}
absl::Status Scheduler::SetNodeHealthy(std::string_view node, bool healthy) {
  return impl_->SetNodeHealthy(node, healthy);
}
GroupStatus Scheduler::GetGroup(std::string_view group) const { return impl_->GetGroup(group); }
std::vector<GroupStatus> Scheduler::Groups() const { return impl_->Groups(); }
std::vector<PhysicalCellStatus> Scheduler::PhysicalCluster() const {
  return impl_->PhysicalCluster();
}
absl::StatusOr<std::vector<VirtualCellStatus>> Scheduler::VirtualCluster(
    std::string_view vc) const {
  return impl_->VirtualCluster(vc);
}
std::vector<VcUsage> Scheduler::VcUsages() const { return impl_->VcUsages(); }
std::vector<ChainLevelCapacity> Scheduler::Capacity() const { return impl_->Capacity(); }
std::vector<NodeStatus> Scheduler::Nodes() const { return impl_->Nodes(); }
const ClusterSpec& Scheduler::spec() const { return impl_->spec(); }
absl::Status Scheduler::CheckInvariants() const { return impl_->CheckInvariants(); }

}  // namespace hived
