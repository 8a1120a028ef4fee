// libFuzzer target for the group-record reader (`GroupRecordFromJson`) and its replay
// (`AllocateRecord`): any bytes give kInvalidArgument with a bounded message, or a record
// that writes back to JSON that reads to the same record; replayed into a fresh scheduler
// it is a status (never a crash), the invariants hold, and the state saved then is a fixed
// point after one restart (tests/fuzz/state_fuzz_check.h).
//
// Build and run: see tests/fuzz/README.md (seeds: tests/fuzz/corpus/group_record).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tests/fuzz/state_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hived::fuzz::Require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<hived::GroupRecord> record = hived::GroupRecordFromJson(text);
  if (!record.ok()) {
    hived::fuzz::RequireReaderError(record.status());
    return 0;
  }
  const std::string json = hived::GroupRecordToJson(*record);
  absl::StatusOr<hived::GroupRecord> again = hived::GroupRecordFromJson(json);
  Require(again.ok(), "a written record does not read", again.status().message());
  Require(hived::GroupRecordToJson(*again) == json, "record JSON round trip differs", json);

  absl::StatusOr<std::unique_ptr<hived::Scheduler>> s =
      hived::Scheduler::Create(hived::fuzz::TwoRacks());
  Require(s.ok(), "Create failed");
  absl::StatusOr<hived::AllocateInfo> info = (*s)->AllocateRecord(*record);
  if (!info.ok()) {
    Require(!info.status().message().empty(), "empty error message");
    Require((*s)->GetGroup(record->request.name).state == hived::GroupState::kAbsent,
            "a refused record left its group behind", record->request.name);
  }
  hived::fuzz::RequireFixedPoint(hived::fuzz::SaveOrDie(**s));
  return 0;
}
