// A Scheduler's journal: writing records (src/journal_hook.h), replaying one, and recovery
// from a checkpoint plus the journal after it (`Scheduler::RecoverFromJournal`).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "sharing/layered.h"
#include "src/internal/status_macros.h"
#include "src/journal_codec.h"
#include "src/journal_hook.h"

namespace hived {

absl::Status SchedulerJournal::Journaled(std::string_view call) const {
  HIVED_RETURN_IF_ERROR(Usable());
  if (sink_ == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      absl::string_view(call.data(), call.size()),
      " is not journaled yet: refused while a journal is started (StopJournal first)"));
}

uint64_t SchedulerJournal::Fingerprint(const LayeredScheduler& impl) {
  if (!have_fingerprint_) {
    fingerprint_ = internal::FingerprintValue(impl.ConfigFingerprint());
    have_fingerprint_ = true;
  }
  return fingerprint_;
}

absl::StatusOr<JournalCheckpoint> SchedulerJournal::Start(const LayeredScheduler& impl,
                                                          JournalSink* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("StartJournal: a null sink");
  JournalCheckpoint cp;
  cp.state = impl.SaveState();
  cp.sequence = sequence_;
  cp.fingerprint = impl.ConfigFingerprint();
  fingerprint_ = internal::FingerprintValue(cp.fingerprint);
  have_fingerprint_ = true;
  sink_ = sink;
  broken_ = absl::OkStatus();
  return cp;
}

void SchedulerJournal::Stop() {
  sink_ = nullptr;
  broken_ = absl::OkStatus();
}

bool SchedulerJournal::Begin(JournalOp op) {
  ++sequence_;
  if (sink_ == nullptr) return false;
  buffer_.clear();
  frame_ = internal::BeginFrame(&buffer_, op, sequence_, fingerprint_);
  return true;
}

void SchedulerJournal::Finish() {
  internal::EndFrame(&buffer_, frame_);
  absl::Status s = sink_->Append(buffer_);
  if (!s.ok()) {
    broken_ = absl::FailedPreconditionError(
        absl::StrCat("the journal failed at sequence ", sequence_,
                     " (that change took effect; its record ", "may be missing): ", s.ToString(),
                     "; StartJournal again (a new checkpoint) or ", "StopJournal"));
    sink_ = nullptr;
  }
}

void SchedulerJournal::Schedule(const GroupRequest& request, Phase phase) {
  if (!Begin(JournalOp::kSchedule)) return;
  internal::PutRequest(&buffer_, request);
  buffer_.push_back(static_cast<char>(phase));
  Finish();
}

void SchedulerJournal::Allocate(JournalOp op, const GroupRequest& request,
                                const Placement& placement) {
  if (!Begin(op)) return;
  internal::PutRequest(&buffer_, request);
  internal::PutPlacement(&buffer_, placement);
  Finish();
}

void SchedulerJournal::AllocateRecord(const GroupRecord& record) {
  if (!Begin(JournalOp::kAllocateRecord)) return;
  internal::PutRecord(&buffer_, record);
  Finish();
}

void SchedulerJournal::Named(JournalOp op, std::string_view name) {
  if (!Begin(op)) return;
  internal::PutString(&buffer_, name);
  Finish();
}

namespace {

// Bytes of the names under `cell` (each is written into the YAML at least once).
size_t NameBytes(const PhysicalCellSpec& cell) {
  size_t n = cell.cell_type.size() + cell.cell_address.size() + cell.pinned_cell_id.size();
  for (const PhysicalCellSpec& child : cell.cell_children) n += NameBytes(child);
  return n;
}

// A lower bound of the size of `ClusterSpecToYaml(spec)`: the bytes of its names.
size_t NameBytes(const ClusterSpec& spec) {
  size_t n = 0;
  for (const CellTypeSpec& t : spec.cell_types) n += t.name.size() + t.child_cell_type.size();
  for (const PhysicalCellSpec& cell : spec.physical_cells) n += NameBytes(cell);
  for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
    n += vc.name.size();
    for (const VirtualCellSpec& cell : vc.virtual_cells) n += cell.cell_type.size();
    for (const PinnedCellSpec& pin : vc.pinned_cells) n += pin.pinned_cell_id.size();
  }
  return n;
}

}  // namespace

absl::StatusOr<std::string> ConfigRecordYaml(const ClusterSpec& spec, int64_t max_record_bytes) {
  // The body's op, sequence, fingerprint, the spec's length and the flag: at most 29 bytes.
  constexpr size_t kOverhead = 32;
  const size_t limit = static_cast<size_t>(std::max<int64_t>(max_record_bytes, 0));
  auto over = [&](size_t bytes, const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ApplyConfig: the new spec's journal record would be over the limit of ", max_record_bytes,
        " bytes (", what, bytes, " bytes): StopJournal, ApplyConfig, then StartJournal"));
  };
  // Names over the limit already: refused without writing the YAML (a hostile spec's).
  const size_t names = NameBytes(spec);
  if (names + kOverhead > limit) return over(names, "the spec's names alone are ");
  std::string yaml = ClusterSpecToYaml(spec);
  if (yaml.size() + kOverhead > limit) return over(yaml.size(), "the spec's YAML is ");
  return yaml;
}

absl::StatusOr<std::string> SchedulerJournal::ConfigYaml(const ClusterSpec& spec) const {
  if (sink_ == nullptr) return std::string();
  return ConfigRecordYaml(spec, kMaxJournalRecordBytes);
}

void SchedulerJournal::ApplyConfig(const LayeredScheduler& impl, std::string_view yaml,
                                   bool apply_stranded) {
  if (Begin(JournalOp::kApplyConfig)) {
    internal::PutString(&buffer_, yaml);
    buffer_.push_back(apply_stranded ? 1 : 0);
    Finish();
  }
  have_fingerprint_ = false;
  Fingerprint(impl);
}

void SchedulerJournal::ConfigReplayed(const LayeredScheduler& impl, uint64_t sequence) {
  sequence_ = sequence;
  have_fingerprint_ = false;
  Fingerprint(impl);
}

void SchedulerJournal::SetNodeHealthy(std::string_view node, bool healthy) {
  if (!Begin(JournalOp::kSetNodeHealthy)) return;
  internal::PutString(&buffer_, node);
  buffer_.push_back(healthy ? 1 : 0);
  Finish();
}

absl::Status SchedulerJournal::Check(const LayeredScheduler& impl, const JournalRecord& record) {
  const uint64_t mine = Fingerprint(impl);
  if (record.fingerprint != mine) {
    return absl::FailedPreconditionError(
        absl::StrCat("journal record ", record.sequence, " (", JournalOpName(record.op),
                     "): for another cluster (spec fingerprint ",
                     absl::Hex(record.fingerprint, absl::kZeroPad16), ", this cluster's ",
                     absl::Hex(mine, absl::kZeroPad16), ")"));
  }
  if (record.sequence != sequence_ + 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("journal record ", record.sequence, " (", JournalOpName(record.op),
                     "): out of sequence, the next is ", sequence_ + 1));
  }
  return absl::OkStatus();
}

absl::Status SchedulerJournal::Apply(LayeredScheduler& impl, const JournalRecord& record,
                                     std::string* call_error) {
  HIVED_RETURN_IF_ERROR(Check(impl, record));
  absl::Status s;
  switch (record.op) {
    case JournalOp::kSchedule:
      s = impl.Schedule(record.request, record.phase).status();
      break;
    case JournalOp::kAllocate:
      // Not reserved: the Allocate of a Filtering decision, made again first (the state is
      // the one the original call saw, so the decision is the same).
      if (impl.GetGroup(record.request.name).state == GroupState::kAbsent) {
        s = impl.Schedule(record.request, Phase::kFiltering).status();
      }
      if (s.ok()) s = impl.Allocate(record.request, record.placement).status();
      break;
    case JournalOp::kRecover:
      s = impl.Recover(record.request, record.placement).status();
      break;
    case JournalOp::kAllocateRecord:
      s = impl.RestoreGroup(record.record, /*ignored_leaves=*/nullptr).status();
      break;
    case JournalOp::kRelease:
      s = impl.Release(record.name);
      break;
    case JournalOp::kUnreserve:
      s = impl.Unreserve(record.name);
      break;
    case JournalOp::kCancelPreemption:
      s = impl.CancelPreemption(record.name);
      break;
    case JournalOp::kSetNodeHealthy:
      s = impl.SetNodeHealthy(record.name, record.healthy);
      break;
    case JournalOp::kApplyConfig:
      return absl::InternalError("an ApplyConfig record is replayed by the Scheduler");
  }
  if (!s.ok()) {
    const std::string what = absl::StrCat("journal record ", record.sequence, " (",
                                          JournalOpName(record.op), "): ", s.message());
    if (call_error == nullptr) return absl::Status(s.code(), what);
    *call_error = what;
  }
  sequence_ = record.sequence;
  return absl::OkStatus();
}

// An ApplyConfig record: the change made again, atomically. Its failure is always an error
// (never a `call_error`): the records after it are for its spec.
absl::Status Scheduler::ReplayConfig(const JournalRecord& record) {
  HIVED_RETURN_IF_ERROR(journal_->Check(*impl_, record));
  ApplyConfigOptions options;
  if (record.apply_stranded) options.stranded = ApplyConfigOptions::Stranded::kApply;
  absl::StatusOr<RestoreReport> report = SwapConfig(record.spec, options);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat("journal record ", record.sequence,
                                     " (ApplyConfig): ", report.status().message()));
  }
  journal_->ConfigReplayed(*impl_, record.sequence);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::RecoverFromJournal(
    const ClusterSpec& spec, const JournalCheckpoint& checkpoint, std::string_view journal,
    JournalRecoveryReport* report, RestoreOptions options) {
  JournalRecoveryReport local;
  JournalRecoveryReport& out = report != nullptr ? *report : local;
  out = JournalRecoveryReport();
  HIVED_ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(journal));
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> s,
                         Restore(spec, checkpoint.state, &out.restore, options));
  s->journal_->set_sequence(checkpoint.sequence);
  out.torn_tail_bytes = contents.torn_tail_bytes;
  for (const JournalRecord& r : contents.records) {
    if (r.sequence <= checkpoint.sequence) continue;  // before the checkpoint
    std::string failed;
    if (r.op == JournalOp::kApplyConfig) {
      HIVED_RETURN_IF_ERROR(s->ReplayConfig(r));
      ++out.records_applied;
      continue;
    }
    HIVED_RETURN_IF_ERROR(s->journal_->Apply(*s->impl_, r, &failed));
    if (!failed.empty()) out.failed.push_back(std::move(failed));
    ++out.records_applied;
  }
  out.last_sequence = s->journal_->sequence();
  return s;
}

}  // namespace hived
