// The layer above the whole-GPU core (sharing/layered.h): dispatch, victims, views and
// invariants. Persistence is sharing/layered_state.cc.
#include "sharing/layered.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sharing/sharing.h"
#include "src/internal/status_macros.h"
#include "src/persistence_json_reader.h"
#include "src/scheduler_impl.h"

namespace hived {

absl::StatusOr<std::unique_ptr<LayeredScheduler>> LayeredScheduler::Create(
    const ClusterSpec& spec) {
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<SchedulerImpl> whole, SchedulerImpl::Create(spec));
  std::unique_ptr<LayeredScheduler> s(new LayeredScheduler());
  s->sharing_ = std::make_unique<Sharing>(WholeGpuCore(whole.get()), spec, whole->forest());
  s->whole_ = std::move(whole);
  return s;
}

LayeredScheduler::~LayeredScheduler() = default;

void LayeredScheduler::SyncShields() { sharing_->SyncShields(); }

// A Preempting-phase Schedule that gives up a fractional group's preemption (kWaiting,
// kInfeasible: the group is gone) reports no change to the façade (`changed` is false for
// those outcomes): the group is noted in the change log here.
absl::StatusOr<ScheduleResult> LayeredScheduler::ScheduleShared(const GroupRequest& request,
                                                                Phase phase) {
  const bool had = sharing_->HasGroup(request.name);
  absl::StatusOr<ScheduleResult> result = sharing_->Schedule(request, phase);
  if (had != sharing_->HasGroup(request.name)) whole_->NoteGroupChanged(request.name);
  return Synced(std::move(result));
}

absl::StatusOr<ScheduleResult> LayeredScheduler::Schedule(const GroupRequest& request,
                                                          Phase phase) {
  if (sharing_->Handles(request)) return ScheduleShared(request, phase);
  sharing_->SyncShields();
  absl::StatusOr<ScheduleResult> result = whole_->Schedule(request, phase);
  if (result.ok()) sharing_->TranslateResult(&*result);
  return result;
}

absl::StatusOr<AllocateInfo> LayeredScheduler::Allocate(const GroupRequest& request,
                                                        const Placement& placement) {
  if (sharing_->Handles(request)) return Synced(sharing_->Allocate(request, placement));
  return whole_->Allocate(request, placement);
}

absl::Status LayeredScheduler::Release(std::string_view group) {
  if (sharing_->Handles(group)) return Synced(sharing_->Release(group));
  return whole_->Release(group);
}

absl::Status LayeredScheduler::CancelPreemption(std::string_view group) {
  if (sharing_->Handles(group)) return Synced(sharing_->CancelPreemption(group));
  return whole_->CancelPreemption(group);
}

absl::Status LayeredScheduler::Unreserve(std::string_view group) {
  if (sharing_->Handles(group)) return Synced(sharing_->Unreserve(group));
  return whole_->Unreserve(group);
}

absl::StatusOr<AllocateInfo> LayeredScheduler::Recover(const GroupRequest& request,
                                                       const Placement& placement) {
  if (sharing_->Handles(request)) return Synced(sharing_->Recover(request, placement));
  return whole_->Recover(request, placement);
}

namespace {

absl::Status SharingNoPods(std::string_view group) {
  return absl::FailedPreconditionError(
      absl::StrCat("group ", internal::Quote(group),
                   " shares GPUs (fractional, MIG or CPU-only): it has no per-pod calls"));
}

}  // namespace

bool LayeredScheduler::SharesGpus(std::string_view group) const {
  return sharing_->Handles(group) || sharing_->IsHolder(group);
}

absl::StatusOr<ScheduleResult> LayeredScheduler::Schedule(const GroupRequest& request, Phase phase,
                                                          const ReservationTime& time) {
  if (sharing_->Handles(request)) return ScheduleShared(request, phase);
  sharing_->SyncShields();
  absl::StatusOr<ScheduleResult> result = whole_->Schedule(request, phase, time);
  if (result.ok()) sharing_->TranslateResult(&*result);
  return result;
}

std::vector<ExpiredReservation> LayeredScheduler::ExpireReservations(int64_t now) {
  return Synced(whole_->ExpireReservations(now));
}

absl::StatusOr<PodAllocation> LayeredScheduler::AllocatePod(const GroupRequest& request,
                                                            const Placement& placement,
                                                            const Pod& pod) {
  if (sharing_->Handles(request) || SharesGpus(request.name)) return SharingNoPods(request.name);
  return whole_->AllocatePod(request, placement, pod);
}

absl::StatusOr<PodRelease> LayeredScheduler::ReleasePod(std::string_view group,
                                                        std::string_view pod) {
  if (SharesGpus(group)) return SharingNoPods(group);
  return whole_->ReleasePod(group, pod);
}

absl::StatusOr<PodStatus> LayeredScheduler::GetPod(std::string_view group,
                                                   std::string_view pod) const {
  if (SharesGpus(group)) return SharingNoPods(group);
  return whole_->GetPod(group, pod);
}

absl::StatusOr<PodAllocation> LayeredScheduler::RecoverPod(const GroupRecord& record,
                                                           const Pod& pod) {
  if (sharing_->Handles(record.request) || SharesGpus(record.request.name)) {
    return SharingNoPods(record.request.name);
  }
  return whole_->RecoverPod(record, pod);
}

std::optional<absl::StatusOr<ScheduleResult>> LayeredScheduler::Filter(
    const GroupRequest& request) const {
  if (sharing_->Handles(request) || sharing_->AnyReserved() || !whole_->shields().empty()) {
    return std::nullopt;
  }
  std::optional<absl::StatusOr<ScheduleResult>> result = whole_->Filter(request);
  if (result.has_value() && result->ok()) sharing_->TranslateResult(&**result);
  return result;
}

uint64_t LayeredScheduler::epoch() const { return whole_->epoch(); }
uint64_t LayeredScheduler::version() const { return whole_->version(); }
absl::StatusOr<StateChanges> LayeredScheduler::Changes(uint64_t since) const {
  return whole_->Changes(since);
}
// The change log is exact for Sharing's groups too: a holder noted by the core (its leaves'
// usage, its state) notes the groups sharing its GPUs, whose status follows the holder's, and
// a GPU's bar changed notes its sharers (Sharing::ForEachDependent).
void LayeredScheduler::EndChange(uint64_t epoch_before, bool changed, std::string_view group,
                                 const ScheduleResult* result) {
  std::vector<std::string> holders;
  whole_->ForEachPendingGroup([&](std::string_view g) {
    if (IsHolderName(g) && (holders.empty() || holders.back() != g)) holders.emplace_back(g);
  });
  sharing_->ForEachDependent(holders, [&](std::string_view g) { whole_->NoteGroupChanged(g); });
  whole_->EndChange(epoch_before, changed, group, result);
}
void LayeredScheduler::NoteNodeChanged(std::string_view node) { whole_->NoteNodeChanged(node); }
void LayeredScheduler::ResetChangeLog(size_t capacity) {
  sharing_->ForgetDependents();
  whole_->ResetChangeLog(capacity);
}
size_t LayeredScheduler::change_log_capacity() const { return whole_->change_log_capacity(); }

std::vector<GroupStatus> LayeredScheduler::Groups(std::string_view after, int32_t limit) const {
  std::vector<GroupStatus> out = whole_->Groups(after, limit);
  if (limit <= 0) return out;
  // Sharing's groups (fractional, CPU-only), as `Groups()` lists them: merged in by name.
  std::vector<GroupStatus> shared;
  sharing_->AppendStatuses(&shared);
  if (!shared.empty()) {
    for (GroupStatus& s : shared) {
      if (std::string_view(s.name) > after) out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(),
              [](const GroupStatus& a, const GroupStatus& b) { return a.name < b.name; });
    if (out.size() > static_cast<size_t>(limit)) out.resize(static_cast<size_t>(limit));
  }
  return out;
}

std::string LayeredScheduler::ConfigFingerprint() const { return whole_->ConfigFingerprint(); }

absl::Status LayeredScheduler::SetNodeHealthy(std::string_view node, bool healthy) {
  return whole_->SetNodeHealthy(node, healthy);
}

GroupStatus LayeredScheduler::GetGroup(std::string_view group) const {
  if (sharing_->HasGroup(group)) return sharing_->Status(group);
  return whole_->GetGroup(group);
}

std::vector<GroupStatus> LayeredScheduler::Groups() const {
  std::vector<GroupStatus> out = whole_->Groups();
  sharing_->AppendStatuses(&out);
  std::sort(out.begin(), out.end(),
            [](const GroupStatus& a, const GroupStatus& b) { return a.name < b.name; });
  return out;
}

void LayeredScheduler::FillLeaves(uint32_t cell, PhysicalCellStatus* s) const {
  const cellalloc::CellForest& f = whole_->forest();
  const CellId c(cell);
  const int32_t n = f.num_children(c);
  if (n == 0) {
    sharing_->FillLeaf(c, s);
    return;
  }
  for (int32_t k = 0; k < n; ++k) {
    FillLeaves(f.child(c, k).value(), &s->children[static_cast<size_t>(k)]);
  }
}

std::vector<PhysicalCellStatus> LayeredScheduler::PhysicalCluster() const {
  std::vector<PhysicalCellStatus> out = whole_->PhysicalCluster();
  // The core's order: top-level cells by id.
  const cellalloc::CellForest& f = whole_->forest();
  std::vector<CellId> tops;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    for (CellId t : f.chain_info(ChainId(static_cast<uint32_t>(c))).top_cells) tops.push_back(t);
  }
  std::sort(tops.begin(), tops.end());
  for (size_t i = 0; i < tops.size(); ++i) FillLeaves(tops[i].value(), &out[i]);
  return out;
}

absl::StatusOr<std::vector<VirtualCellStatus>> LayeredScheduler::VirtualCluster(
    std::string_view vc) const {
  return whole_->VirtualCluster(vc);
}
std::vector<VcUsage> LayeredScheduler::VcUsages() const { return whole_->VcUsages(); }
std::vector<ChainLevelCapacity> LayeredScheduler::Capacity() const { return whole_->Capacity(); }
std::vector<NodeStatus> LayeredScheduler::Nodes() const { return whole_->Nodes(); }
PhysicalClusterTable LayeredScheduler::PhysicalClusterAsTable() const {
  return whole_->PhysicalClusterAsTable();
}
absl::StatusOr<std::vector<NodeStatus>> LayeredScheduler::GetNode(std::string_view node) const {
  return whole_->GetNode(node);
}

absl::StatusOr<std::vector<PhysicalCellStatus>> LayeredScheduler::PhysicalNode(
    std::string_view node) const {
  HIVED_ASSIGN_OR_RETURN(std::vector<PhysicalCellStatus> out, whole_->PhysicalNode(node));
  const cellalloc::CellForest& f = whole_->forest();
  const std::vector<CellId>& cells = f.node_cells(f.FindNode(node));
  for (size_t i = 0; i < cells.size(); ++i) FillLeaves(cells[i].value(), &out[i]);
  return out;
}

absl::StatusOr<std::vector<PhysicalCellStatus>> LayeredScheduler::PhysicalChain(
    std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(std::vector<PhysicalCellStatus> out, whole_->PhysicalChain(chain));
  const cellalloc::CellForest& f = whole_->forest();
  const std::vector<CellId>& tops = f.chain_info(f.FindChain(chain)).top_cells;
  for (size_t i = 0; i < tops.size(); ++i) FillLeaves(tops[i].value(), &out[i]);
  return out;
}

void LayeredScheduler::FillChain(ChainSummary* s) const {
  sharing_->FillMigChain(whole_->forest().FindChain(s->chain), s);  // MIG counters
}

std::vector<ChainSummary> LayeredScheduler::ChainSummaries() const {
  std::vector<ChainSummary> out = whole_->ChainSummaries();
  for (ChainSummary& s : out) FillChain(&s);
  return out;
}

absl::StatusOr<ChainSummary> LayeredScheduler::GetChainSummary(std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(ChainSummary s, whole_->GetChainSummary(chain));
  FillChain(&s);
  return s;
}

std::vector<VcSummary> LayeredScheduler::VcSummaries() const { return whole_->VcSummaries(); }
absl::StatusOr<std::vector<VcSummary>> LayeredScheduler::GetVcSummary(std::string_view vc) const {
  return whole_->GetVcSummary(vc);
}
const ClusterSpec& LayeredScheduler::spec() const { return whole_->spec(); }

absl::Status LayeredScheduler::CheckInvariants() const {
  HIVED_RETURN_IF_ERROR(whole_->CheckInvariants());
  return sharing_->CheckInvariants();
}

}  // namespace hived
