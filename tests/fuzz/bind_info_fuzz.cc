// libFuzzer target for `ImportHivedBindInfo` (HiveD's pod-bind-info and pod-scheduling-spec
// annotations; the input is the bind info, then a NUL byte and the scheduling spec): any
// bytes give kInvalidArgument with a bounded message, or a record that survives the JSON
// record format; replayed into a fresh scheduler it is a status (never a crash), the
// invariants hold, and the state saved then is a fixed point after one restart
// (tests/fuzz/state_fuzz_check.h).
//
// Build and run: see tests/fuzz/README.md (seeds: tests/fuzz/corpus/bind_info).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tests/fuzz/state_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hived::fuzz::Require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  const std::string_view bind_info = text.substr(0, nul);
  const std::string_view spec =
      nul == std::string_view::npos ? std::string_view() : text.substr(nul + 1);
  absl::StatusOr<hived::GroupRecord> record = hived::ImportHivedBindInfo(bind_info, spec);
  if (!record.ok()) {
    hived::fuzz::RequireReaderError(record.status());
    return 0;
  }
  // Without a spec the record has no name or VC: the manager supplies them.
  if (record->request.name.empty()) record->request.name = "imported";
  if (record->request.vc.empty()) record->request.vc = "research";
  const std::string json = hived::GroupRecordToJson(*record);
  absl::StatusOr<hived::GroupRecord> again = hived::GroupRecordFromJson(json);
  Require(again.ok(), "an imported record does not read back", again.status().message());
  Require(hived::GroupRecordToJson(*again) == json, "record JSON round trip differs", json);

  absl::StatusOr<std::unique_ptr<hived::Scheduler>> s =
      hived::Scheduler::Create(hived::fuzz::TwoRacks());
  Require(s.ok(), "Create failed");
  absl::StatusOr<hived::AllocateInfo> info = (*s)->AllocateRecord(*record);
  if (!info.ok()) Require(!info.status().message().empty(), "empty error message");
  hived::fuzz::RequireFixedPoint(hived::fuzz::SaveOrDie(**s));
  return 0;
}
