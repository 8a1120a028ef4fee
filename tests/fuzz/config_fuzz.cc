// libFuzzer target for the config loader: any bytes must give a located error list or a spec,
// never a crash, a leak or an exception; and a spec that loads must survive a YAML round trip.
//
// Build (clang only):
//   cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHIVED_BUILD_FUZZERS=ON
//   cmake --build build/fuzz --target config_fuzz
// Run on the seed corpus of good and bad configs (new inputs go to the first directory):
//   mkdir -p build/fuzz/corpus
//   build/fuzz/fuzz/config_fuzz -max_total_time=60 -dict=tests/fuzz/config.dict \
//       build/fuzz/corpus tests/testdata/bad-configs config/examples tests/testdata/hived-configs
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hived/config.h"
#include "unit/config/spec_equal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  const hived::ConfigLoadResult result = hived::LoadClusterSpecDetailed(yaml, "fuzz.yaml");
  for (const hived::ConfigError& error : result.errors) {
    // Every error is located and says something.
    if (error.line < 1 || error.column < 1 || error.message.empty()) __builtin_trap();
  }
  // The report must cope with whatever part of a spec was loaded.
  const hived::CapacityReport report = hived::ComputeCapacityReport(result.spec);
  if (result.ok()) {
    for (const hived::ChainCapacity& chain : report.chains) {
      for (const hived::CapacityLevel& level : chain.levels) {
        if (level.slack < 0) __builtin_trap();  // a valid config fits
      }
    }
    const std::string written = hived::ClusterSpecToYaml(result.spec);
    const hived::ConfigLoadResult again = hived::LoadClusterSpecDetailed(written, "round-trip");
    if (!again.ok() || again.spec != result.spec) __builtin_trap();
  }
  return 0;
}
