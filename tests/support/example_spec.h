// tests/support/example_spec.h: a config of config/examples/ (in every clone), loaded for a
// test; the test fails at once if it does not load.
#ifndef HIVED_TESTS_SUPPORT_EXAMPLE_SPEC_H_
#define HIVED_TESTS_SUPPORT_EXAMPLE_SPEC_H_

#include <string>

#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "support/catch.h"

namespace hived::testing {

inline ClusterSpec ExampleSpec(const std::string& name) {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/" + name);
  REQUIRE(spec.ok());
  return *spec;
}

}  // namespace hived::testing

#endif  // HIVED_TESTS_SUPPORT_EXAMPLE_SPEC_H_
