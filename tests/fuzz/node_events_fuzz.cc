// libFuzzer target for node-event files: any bytes give a located error or events sorted by
// time, within the time limit, with usable node names.
//
// Build and run: see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/trace/node_events.h"
#include "tests/fuzz/sim_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hived::sim;        // NOLINT(google-build-using-namespace): a test driver
  using namespace hived::sim::fuzz;  // NOLINT(google-build-using-namespace)
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<NodeEvent>> events = ParseNodeEvents(text, "events.csv");
  if (!events.ok()) {
    RequireLocatedError(events.status(), "events.csv");
    return 0;
  }
  Time previous = 0;
  for (const NodeEvent& e : *events) {
    RequireTime(e.time);
    Require(e.time >= previous);
    previous = e.time;
    RequireName(e.node);
    Require(e.line >= 2);
  }
  return 0;
}
