// Helpers shared by the openb tests: the published trace, skipped visibly when absent.
#ifndef HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_

#include <optional>
#include <string>

#include "sim/fill_experiment.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived::sim::testing {

// The folder of the published openb trace (../shared/traces/openb beside the checkout).
inline std::string OpenbDir() { return ::hived::testing::SharedTracesDir() + "/openb/"; }

// The GPU-node list with the pod list `variant` ("default", "cpu050", ...); nullopt when the
// trace is not there, having marked the test case skipped: the caller must return at once.
inline std::optional<FillInputs> LoadPublishedOpenb(const std::string& variant) {
  absl::StatusOr<FillInputs> in =
      LoadFillInputs(OpenbDir() + "openb_node_list_gpu_node.csv",
                     OpenbDir() + "openb_pod_list_" + variant + ".csv", /*skip_bad_rows=*/false);
  if (in.status().code() == absl::StatusCode::kNotFound) {
    WARN(HIVED_SKIP_MARKER "the openb trace is not at " << OpenbDir());
    return std::nullopt;
  }
  INFO(in.status().ToString());
  REQUIRE(in.ok());
  return std::move(*in);
}

}  // namespace hived::sim::testing

#endif  // HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_
