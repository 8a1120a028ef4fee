// Helpers shared by the simulator tests.
#ifndef HIVED_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_

#include <string>
#include <utility>

#include "hived/config.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/engine.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"

namespace hived::sim::testing {

inline std::string TestPath(const std::string& relative) {
  return std::string(HIVED_SOURCE_DIR) + "/tests/testdata/" + relative;
}

inline ClusterSpec LoadSpec(const std::string& relative) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(TestPath(relative));
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  return *spec;
}

inline Trace LoadTrace(const std::string& relative, TraceFormat format = TraceFormat::kHived) {
  absl::StatusOr<Trace> trace = ReadTraceFile(TestPath(relative), format, {});
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  return *trace;
}

// The record of the job whose trace id is `id` (fails the test when there is none).
inline const JobRecord& JobById(const Trace& trace, const EngineResult& result,
                                const std::string& id) {
  for (size_t j = 0; j < trace.jobs.size(); ++j) {
    if (trace.jobs[j].id == id) return result.records[j];
  }
  FAIL("no job " << id);
  return result.records.front();
}

// Replays `trace` on `spec` under `policy` with the invariants checked after every event
// (unless `options` asks for another interval); any error fails the test case.
inline EngineResult Replay(PolicyKind policy, const ClusterSpec& spec, const SpecInfo& info,
                           const Trace& trace, const PolicyOptions& policy_options,
                           EngineOptions options = {}) {
  auto backend =
      MakeSchedulerBackend(policy, spec, static_cast<int32_t>(trace.jobs.size()), policy_options);
  INFO(backend.status().ToString());
  REQUIRE(backend.ok());
  if (options.check_invariants_every == 0) options.check_invariants_every = 1;
  Engine engine(info, backend->get(), options);
  absl::StatusOr<EngineResult> r = engine.Run(trace, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

}  // namespace hived::sim::testing

#endif  // HIVED_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_
