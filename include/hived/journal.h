// hived/journal.h: an append-only journal of a scheduler's state changes, and recovery from
// the last snapshot plus the journal after it (issue 29).
//
// The scheduler is deterministic, so the journal records the mutating calls that succeeded,
// with their arguments: Schedule in the Preempting phase (whatever its outcome), Allocate,
// Recover, AllocateRecord, Release, Unreserve, CancelPreemption, SetNodeHealthy, ApplyConfig
// (the new spec as `ClusterSpecToYaml` writes it, and the stranded-groups option). Filtering
// decisions change nothing and are not written: an Allocate of a Filtering placement is
// replayed as that Schedule(kFiltering) followed by the Allocate. Every record carries a
// sequence number (one more than the previous change's) and the spec fingerprint of the
// cluster (`Scheduler::SpecFingerprint`), so a record out of sequence or for another cluster
// is refused, the state exactly as before. An ApplyConfig record carries the fingerprint of
// the cluster it applies to (the old spec); the records after it carry the new spec's.
//
// Example (a manager with a file journal):
//   hived::FileJournalSink sink = ...;                  // FileJournalSink::Open(path)
//   absl::StatusOr<hived::JournalCheckpoint> cp = scheduler->StartJournal(&sink);
//   // store cp->state and cp->sequence (e.g. in etcd); from now on every change appends a
//   // record to `sink`. After a crash:
//   absl::StatusOr<std::string> bytes = hived::ReadJournalFile(path);
//   auto restored = hived::Scheduler::RecoverFromJournal(spec, *cp, *bytes, &report);
//
// Encoding (compact binary, little-endian; docs/integration.md, "A journal"): a record is
// a frame `[u32 body size][u32 CRC-32 of the body][body]`; the body is `[u8 op][varint
// sequence][u64 fingerprint]` then the op's arguments (strings as varint length + bytes,
// integers as zigzag varints, requests and placements field by field in declaration order).
// A journal is records back to back; a crash while appending leaves at most one incomplete
// record at the end (a torn tail), which the reader reports and ignores.
//
// Invariants of `ReadJournal` (checked; errors name the record and its byte offset):
//  (1) every complete frame's CRC matches and its body is read to its last byte, with no
//      byte left over; ops, phases, states and booleans are known values;
//  (2) integers fit their fields; strings are at most `kMaxStateStringBytes`, names at most
//      `kMaxNameBytes` (hived/state.h); a record is at most `kMaxJournalRecordBytes`;
//  (3) only the last frame may be incomplete (`torn_tail_bytes`);
//  (4) an ApplyConfig record's spec loads (`LoadClusterSpecString`: valid) and is exactly
//      the YAML `ClusterSpecToYaml` writes for it.
//
// Thread safety: the codec functions are pure. A sink is called under the scheduler's
// exclusive lock (one call at a time); `MemoryJournalSink`'s data must not be read while its
// scheduler may change.
#ifndef HIVED_JOURNAL_H_
#define HIVED_JOURNAL_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/export.h"
#include "hived/schedule_result.h"
#include "hived/state.h"

namespace hived {

// The largest record the reader accepts (a Recover of a 1M-pod gang would not fit; such a
// gang is far beyond `kMaxGroupPods` in practice too).
inline constexpr int64_t kMaxJournalRecordBytes = int64_t{16} << 20;

enum class JournalOp : uint8_t {
  kSchedule = 1,          // Schedule(request, phase) (the Preempting phase)
  kAllocate = 2,          // Allocate(request, placement); Filtering first when not reserved
  kRecover = 3,           // Recover(request, placement)
  kAllocateRecord = 4,    // AllocateRecord(record)
  kRelease = 5,           // Release(name)
  kUnreserve = 6,         // Unreserve(name)
  kCancelPreemption = 7,  // CancelPreemption(name)
  kSetNodeHealthy = 8,    // SetNodeHealthy(name, healthy)
  kApplyConfig = 9,       // ApplyConfig(spec, {apply_stranded ? kApply : kRefuse})
};
HIVED_EXPORT const char* JournalOpName(JournalOp op);

// One change. Only the fields of `op` are written and read; the others stay default.
struct JournalRecord {
  uint64_t sequence = 0;
  uint64_t fingerprint = 0;  // SpecFingerprint's 16 hex digits as a number
  JournalOp op = JournalOp::kRelease;
  GroupRequest request;  // kSchedule, kAllocate, kRecover
  Phase phase = Phase::kPreempting;
  Placement placement;          // kAllocate, kRecover
  GroupRecord record;           // kAllocateRecord
  std::string name;             // the group (kRelease, kUnreserve, kCancelPreemption) or node
  bool healthy = false;         // kSetNodeHealthy
  ClusterSpec spec;             // kApplyConfig: the new spec
  bool apply_stranded = false;  // kApplyConfig: ApplyConfigOptions::Stranded::kApply
};

// Appends `record`'s frame to `out`.
HIVED_EXPORT void AppendJournalRecord(const JournalRecord& record, std::string* out);

struct JournalContents {
  std::vector<JournalRecord> records;  // in journal order
  int64_t torn_tail_bytes = 0;         // an incomplete last frame (a crash while appending)
};
// Errors: kInvalidArgument "journal record N at byte B: ..." for a bad frame or field.
HIVED_EXPORT absl::StatusOr<JournalContents> ReadJournal(std::string_view bytes);

// Where a scheduler writes its records (`Scheduler::StartJournal`): each call is one whole
// frame. A sink error stops the journal (`Scheduler::JournalStatus`).
class HIVED_EXPORT JournalSink {
 public:
  virtual ~JournalSink();
  virtual absl::Status Append(std::string_view frame) = 0;
};

// Keeps the journal in memory (tests, or a manager that ships it elsewhere itself).
class HIVED_EXPORT MemoryJournalSink final : public JournalSink {
 public:
  absl::Status Append(std::string_view frame) override;
  const std::string& data() const { return data_; }
  void Clear() { data_.clear(); }

 private:
  std::string data_;
};

// Appends to a file (created if missing), through stdio's buffer: `Flush` hands the
// buffered records to the kernel, `Sync` also waits for the disk (fsync). A record is
// durable only after `Sync`; records not yet flushed are lost with the process.
class HIVED_EXPORT FileJournalSink final : public JournalSink {
 public:
  // Errors: kUnavailable naming the path and errno when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<FileJournalSink>> Open(const std::string& path);
  ~FileJournalSink() override;
  FileJournalSink(const FileJournalSink&) = delete;
  FileJournalSink& operator=(const FileJournalSink&) = delete;
  absl::Status Append(std::string_view frame) override;
  absl::Status Flush();
  absl::Status Sync();

 private:
  FileJournalSink(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
};
// The whole file (at most `kMaxStateBytes` * 4). Errors: kUnavailable, kInvalidArgument.
HIVED_EXPORT absl::StatusOr<std::string> ReadJournalFile(const std::string& path);

// A snapshot the journal continues: `state` is `SaveState` at sequence `sequence`; the
// records after it have sequence `sequence + 1`, `+ 2`, ...
struct JournalCheckpoint {
  std::string state;
  uint64_t sequence = 0;
  std::string fingerprint;  // the cluster's SpecFingerprint
};

struct JournalRecoveryReport {
  RestoreReport restore;        // of the checkpoint's state
  uint64_t last_sequence = 0;   // the last record applied (the checkpoint's when none)
  int64_t records_applied = 0;  // records after the checkpoint (earlier ones are skipped)
  int64_t torn_tail_bytes = 0;
  // Records whose call failed when replayed (a reservation made before the checkpoint is
  // not in it, as with `Restore`: its Allocate fails): "record N (Allocate g1): ...".
  std::vector<std::string> failed;
};

}  // namespace hived

#endif  // HIVED_JOURNAL_H_
