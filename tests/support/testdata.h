// tests/support/testdata.h: where tests find their input files, and how a test that needs
// data a fresh clone does not have says so.
//
// HiveD's example configs and the benchmark config are vendored under tests/testdata/, so
// every test on them runs in a fresh clone. Only the real traces (Philly, openb: megabytes)
// stay in ../shared beside the checkout; a test case that needs them and does not find them
// calls HIVED_SKIP_TEST, which prints the marker CTest's SKIP_REGULAR_EXPRESSION matches
// (tests/CMakeLists.txt): the case is reported "Skipped" in CTest's summary, never
// "Passed". A skipping test case must skip whole: check before testing anything.
#ifndef HIVED_TESTS_SUPPORT_TESTDATA_H_
#define HIVED_TESTS_SUPPORT_TESTDATA_H_

#include <string>

#include "support/catch.h"

namespace hived::testing {

// tests/testdata/<relative> in the source tree.
inline std::string TestdataPath(const std::string& relative) {
  return std::string(HIVED_SOURCE_DIR) + "/tests/testdata/" + relative;
}

// HiveD's own example configs (basic.yaml, design.yaml, feature-*.yaml), vendored.
inline std::string HivedConfigsDir() { return TestdataPath("hived-configs"); }

// The real traces' folder (../shared/traces beside the checkout, or HIVED_SHARED_DIR).
inline std::string SharedTracesDir() { return std::string(HIVED_SHARED_DIR) + "/traces"; }

}  // namespace hived::testing

// The text CTest's SKIP_REGULAR_EXPRESSION looks for (tests/CMakeLists.txt).
#define HIVED_SKIP_MARKER "HIVED_SKIP_TEST: "

// Ends the current test case as skipped: CTest shows it as "Skipped"; `why` is printed.
#define HIVED_SKIP_TEST(why)        \
  do {                              \
    WARN(HIVED_SKIP_MARKER << why); \
    return;                         \
  } while (false)

#endif  // HIVED_TESTS_SUPPORT_TESTDATA_H_
