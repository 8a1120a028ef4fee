// src/journal_hook.h: a Scheduler's journal (hived/journal.h): the change sequence, the sink
// and the record of each successful mutation, written by the façade (src/scheduler.cc)
// right after the call, under the exclusive lock.
//
// Invariants:
//  (1) `sequence()` counts the journaled changes since Create or Restore (or the checkpoint
//      a recovery started from, plus the records it applied), journal started or not;
//  (2) while started and not broken, every change made through the façade has exactly one
//      record in the sink, with the next sequence number;
//  (3) once broken (a sink error), no mutation runs until the journal is started again or
//      stopped.
//
// Thread safety: not thread-safe; the façade's exclusive lock serializes every call (the
// const accessors under the shared lock).
#ifndef HIVED_SRC_JOURNAL_HOOK_H_
#define HIVED_SRC_JOURNAL_HOOK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/journal.h"
#include "hived/schedule_result.h"
#include "hived/state.h"

namespace hived {

class LayeredScheduler;

// The YAML of `spec` for an ApplyConfig journal record, or kInvalidArgument when that record
// would be over `max_record_bytes` (`kMaxJournalRecordBytes` in the scheduler; no reader takes
// a longer record). Refused before the YAML is written when the spec's names alone are over.
absl::StatusOr<std::string> ConfigRecordYaml(const ClusterSpec& spec, int64_t max_record_bytes);

class SchedulerJournal {
 public:
  // kFailedPrecondition when broken (invariant 3), naming the sink's error.
  absl::Status Usable() const { return broken_; }
  // kFailedPrecondition while a journal is started, for a call the journal has no record
  // for yet (the per-pod calls, the timed Schedule, ExpireReservations): refused rather
  // than left out of a recovery.
  absl::Status Journaled(std::string_view call) const;

  absl::StatusOr<JournalCheckpoint> Start(const LayeredScheduler& impl, JournalSink* sink);
  void Stop();
  // kFailedPrecondition, naming the record's sequence, for a record of another cluster than
  // `impl`'s or not the next in sequence.
  absl::Status Check(const LayeredScheduler& impl, const JournalRecord& record);
  // Validates `record` (`Check`) and replays its call on `impl`; see
  // `Scheduler::ApplyJournalRecord`. Not for kApplyConfig (the façade swaps `impl`).
  absl::Status Apply(LayeredScheduler& impl, const JournalRecord& record, std::string* call_error);

  // One successful change each (invariant 2).
  void Schedule(const GroupRequest& request, Phase phase);
  void Allocate(JournalOp op, const GroupRequest& request, const Placement& placement);
  void AllocateRecord(const GroupRecord& record);
  void Named(JournalOp op, std::string_view name);
  void SetNodeHealthy(std::string_view node, bool healthy);
  // Before an ApplyConfig: the YAML of `spec` for its record when a journal is started (""
  // otherwise); kInvalidArgument when that record would be over `kMaxJournalRecordBytes`
  // (no reader would take it).
  absl::StatusOr<std::string> ConfigYaml(const ClusterSpec& spec) const;
  // `impl` is the scheduler ApplyConfig swapped in, `yaml` from `ConfigYaml`: its record
  // carries the old spec's fingerprint (the cluster it applies to); every later one the new
  // spec's.
  void ApplyConfig(const LayeredScheduler& impl, std::string_view yaml, bool apply_stranded);
  // A replayed ApplyConfig record (`Check`ed) took effect: `impl` is the new scheduler.
  void ConfigReplayed(const LayeredScheduler& impl, uint64_t sequence);

  uint64_t sequence() const { return sequence_; }
  void set_sequence(uint64_t sequence) { sequence_ = sequence; }

 private:
  // Starts the next record in `buffer_`; false when no sink (the sequence still counts).
  bool Begin(JournalOp op);
  void Finish();
  uint64_t Fingerprint(const LayeredScheduler& impl);

  uint64_t sequence_ = 0;
  uint64_t fingerprint_ = 0;  // the spec's, computed on first use
  bool have_fingerprint_ = false;
  JournalSink* sink_ = nullptr;
  size_t frame_ = 0;
  std::string buffer_;  // the record being written, reused
  absl::Status broken_;
};

}  // namespace hived

#endif  // HIVED_SRC_JOURNAL_HOOK_H_
