// libFuzzer target for the scenario loader (sim/scenario/scenario_loader.cc): any bytes must give a
// scenario or located errors, never a crash, a leak, an exception or unbounded memory; a
// loaded scenario respects the limits.
//
// Build (clang only):
//   cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHIVED_BUILD_FUZZERS=ON
//   cmake --build build/fuzz --target scenario_fuzz
// Run on the committed corpus, the scenarios and the bad scenarios:
//   build/fuzz/fuzz/scenario_fuzz -max_total_time=30 -dict=tests/fuzz/scenario.dict \
//       build/fuzz/scenario-corpus tests/fuzz/scenario-corpus tests/scenarios \
//       tests/testdata/bad-scenarios
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  hived::sim::ScenarioLimits limits;
  limits.max_yaml_nodes = 1 << 16;  // keeps each input fast; the logic is the same
  const absl::StatusOr<hived::sim::Scenario> scenario =
      hived::sim::LoadScenarioString(yaml, "fuzz.yaml", limits);
  if (!scenario.ok()) {
    // Every error line is located: "fuzz.yaml:" then a line number or a message.
    const std::string message(scenario.status().message());
    if (message.rfind("fuzz.yaml:", 0) != 0) __builtin_trap();
    return 0;
  }
  for (const hived::sim::ScenarioStep& step : scenario->steps) {
    if (step.location.line < 1) __builtin_trap();
    if (const auto* schedule = std::get_if<hived::sim::ScheduleStep>(&step.action)) {
      int64_t pods = 0;
      for (const hived::GroupMember& m : schedule->request.members) {
        if (m.pod_number > 0) pods += m.pod_number;
      }
      if (pods > limits.max_pods_per_request) __builtin_trap();
    }
  }
  return 0;
}
