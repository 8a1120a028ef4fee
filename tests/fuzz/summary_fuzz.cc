// libFuzzer target for summary reading (`hived-sim compare` and `plot`): any bytes give a
// located error or a summary; a summary read is written back as valid UTF-8 JSON that reads
// again to the same figures.
//
// Build and run: see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/common/json.h"
#include "sim/metrics/metrics.h"
#include "tests/fuzz/sim_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hived::sim;        // NOLINT(google-build-using-namespace): a test driver
  using namespace hived::sim::fuzz;  // NOLINT(google-build-using-namespace)
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<JsonValue> json = ParseJson(text, "summary.json");
  if (!json.ok()) {
    RequireLocatedError(json.status(), "summary.json");
    return 0;
  }
  absl::StatusOr<Summary> summary = SummaryFromJson(*json);
  if (!summary.ok()) return 0;  // not a summary: compare reports the schema
  const std::string written = SummaryToJson(*summary);
  Require(!FindInvalidUtf8(written).has_value());
  absl::StatusOr<JsonValue> again = ParseJson(written, "again.json");
  Require(again.ok());
  absl::StatusOr<Summary> reread = SummaryFromJson(*again);
  Require(reread.ok());
  Require(reread->vcs.size() == summary->vcs.size());
  Require(reread->all.submitted == summary->all.submitted);
  Require(reread->info.policy == summary->info.policy);
  return 0;
}
