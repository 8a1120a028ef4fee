// libFuzzer target for the journal reader (`ReadJournal`) and its replay
// (`Scheduler::ApplyJournalRecord`): any bytes give kInvalidArgument with a bounded message,
// or records (and a torn tail) that encode back to the same bytes; replayed, as the next
// records of the fuzz cluster, each is applied or its call's error reported, never a crash
// (an ApplyConfig record moves the follower onto its spec, or fails with the state as before);
// a record refused (another cluster, out of sequence) leaves the state exactly as before;
// the invariants hold, and the state saved is a fixed point after one restart
// (tests/fuzz/state_fuzz_check.h).
//
// Build and run: see tests/fuzz/README.md (seeds: tests/fuzz/corpus/journal).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hived/journal.h"
#include "tests/fuzz/state_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hived::fuzz::Require;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<hived::JournalContents> read = hived::ReadJournal(bytes);
  if (!read.ok()) {
    hived::fuzz::RequireReaderError(read.status());
    return 0;
  }
  Require(read->torn_tail_bytes >= 0 && static_cast<size_t>(read->torn_tail_bytes) <= size,
          "torn tail out of range");
  std::string again;
  for (const hived::JournalRecord& r : read->records) hived::AppendJournalRecord(r, &again);
  Require(again == bytes.substr(0, size - static_cast<size_t>(read->torn_tail_bytes)),
          "journal round trip differs");

  absl::StatusOr<std::unique_ptr<hived::Scheduler>> s =
      hived::Scheduler::Create(hived::fuzz::TwoRacks());
  Require(s.ok(), "Create failed");
  hived::MemoryJournalSink sink;
  absl::StatusOr<hived::JournalCheckpoint> cp = (*s)->StartJournal(&sink);
  Require(cp.ok(), "StartJournal failed");
  // The current cluster's fingerprint as a number (an ApplyConfig record changes it).
  auto fingerprint_of = [](const hived::Scheduler& scheduler) {
    uint64_t v = 0;
    for (char c : scheduler.SpecFingerprint()) {
      v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return v;
  };
  // The records as the next ones of this cluster: as written, a record is refused unless
  // its sequence and fingerprint happen to match.
  hived::Scheduler& follower = **s;
  for (const hived::JournalRecord& original : read->records) {
    const uint64_t fingerprint = fingerprint_of(follower);
    hived::JournalRecord r = original;
    const std::string before = hived::fuzz::SaveOrDie(follower);
    if (follower.ApplyJournalRecord(r).code() == absl::StatusCode::kFailedPrecondition &&
        (r.fingerprint != fingerprint || r.sequence != follower.JournalSequence() + 1)) {
      Require(hived::fuzz::SaveOrDie(follower) == before, "a refused record changed the state");
    }
    r.fingerprint = fingerprint;
    r.sequence = follower.JournalSequence() + 1;
    std::string error;
    const std::string prior = hived::fuzz::SaveOrDie(follower);
    const absl::Status st = follower.ApplyJournalRecord(r, &error);
    if (r.op == hived::JournalOp::kApplyConfig) {
      // A config change that fails (it would strand a group) is returned, nothing changed.
      if (!st.ok()) {
        Require(hived::fuzz::SaveOrDie(follower) == prior, "a failed config change changed state");
      }
    } else {
      Require(st.ok(), "a record of this cluster in sequence refused", st.message());
    }
    Require(follower.CheckInvariants().ok(), "invariants", follower.CheckInvariants().message());
  }
  // A live scheduler's saved state omits its reservations (as HiveD's does: they are lost
  // in a restart), so the first restore may differ from the live state (a bad cell that a
  // reservation covered becomes doomed). The fixed point holds from the first restart on.
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> restarted =
      hived::Scheduler::Restore(follower.spec(), hived::fuzz::SaveOrDie(follower));
  Require(restarted.ok(), "the follower's saved state does not restore",
          restarted.ok() ? absl::string_view() : restarted.status().message());
  hived::fuzz::RequireFixedPoint(hived::fuzz::SaveOrDie(**restarted), follower.spec());
  return 0;
}
