// sim/scenario/scenario_runner.h: runs scenario files (sim/scenario/scenario.h) against a
// `Scheduler`.
//
// The runner loads the scenario's cluster config, drives a `hived::Scheduler` through the
// steps, checks every expectation and `CheckInvariants()` after every step, and stops a
// scenario at its first failing step with a readable diff (step number, file:line, expected
// vs actual). It uses only the public API.
//
// Example:
//   hived::sim::ScenarioRunOptions options;
//   hived::sim::ScenarioReport report = hived::sim::RunScenarioFile("t.yaml", options);
//   if (report.status != hived::sim::ScenarioStatus::kPassed) std::cout << report.text;
//
// Thread safety: each call is independent; no shared state.
#ifndef HIVED_SIM_SCENARIO_SCENARIO_RUNNER_H_
#define HIVED_SIM_SCENARIO_SCENARIO_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace hived::sim {

struct ScenarioRunOptions {
  // A scenario whose config file (or a restart's config file) does not exist is skipped
  // instead of being a file error (for scenario files kept outside this checkout).
  bool skip_missing_config = false;
  // Limits on reading each scenario file.
  ScenarioLimits limits;
};

enum class ScenarioStatus {
  kPassed,
  kFailed,     // an expectation or invariant failed
  kFileError,  // the scenario or its config could not be loaded
  kSkipped,    // the config is missing and `skip_missing_config` is set
};

// What one step did, for `--json`.
struct ScenarioStepRecord {
  int32_t index = 0;  // 1-based
  ScenarioLocation location;
  std::string json;  // one JSON object with the step's result
  bool passed = true;
};

struct ScenarioReport {
  std::string file;
  ScenarioStatus status = ScenarioStatus::kPassed;
  int32_t steps_run = 0;
  // Human-readable: "PASS file (n steps)", or the failure diff, or the load error.
  std::string text;
  std::vector<ScenarioStepRecord> steps;
};

// Runs one loaded scenario.
ScenarioReport RunScenario(const Scenario& scenario, const ScenarioRunOptions& options);

// Loads `path` and runs it; a load error gives status kFileError.
ScenarioReport RunScenarioFile(const std::string& path, const ScenarioRunOptions& options);

// The report as one JSON object: {"file", "status", "steps": [...]}.
std::string ScenarioReportToJson(const ScenarioReport& report);

// `hived-sim scenario FILE... [--json] [--skip-missing-config]`; `argv[0]` is "scenario".
// Exit codes: 0 all passed; 1 an expectation failed; 2 usage, scenario or config errors;
// 77 every scenario was skipped (missing config with --skip-missing-config).
int ScenarioCommand(int argc, char** argv);

}  // namespace hived::sim

#endif  // HIVED_SIM_SCENARIO_SCENARIO_RUNNER_H_
