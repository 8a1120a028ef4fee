// sim/scenario/scenario_runner_impl.h: the runner of one scenario against a `Scheduler`
// (internal to sim/scenario/; the entry points are in scenario_runner.h). Its steps are
// defined in scenario_runner.cc (schedule, allocate, the run loop) and scenario_actions.cc
// (restart, virtual-cell expectations, the dispatch of every other action).
//
// Thread safety: one runner per scenario; not thread-safe.
#ifndef HIVED_SIM_SCENARIO_SCENARIO_RUNNER_IMPL_H_
#define HIVED_SIM_SCENARIO_SCENARIO_RUNNER_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hived/scheduler.h"
#include "sim/common/json.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_runner.h"

namespace hived::sim::scenario_internal {

class Runner {
 public:
  Runner(const Scenario& scenario, const ScenarioRunOptions& options)
      : scenario_(scenario), options_(options) {}

  ScenarioReport Run();

 private:
  struct StepOutcome {
    std::string kind;
    std::string summary;  // "schedule g1", for the diff header
    JsonObject json;
    std::vector<std::string> failures;
    bool file_error = false;
  };

  absl::Status Build(const std::string& config_file);
  void RunSchedule(const ScheduleStep& step, StepOutcome* out);
  void RunAllocate(const AllocateStep& step, StepOutcome* out);
  void RunRestart(const RestartStep& step, StepOutcome* out);
  void RunExpectVirtualCells(const ExpectVirtualCellsStep& step, StepOutcome* out);
  void RunStep(const ScenarioAction& action, StepOutcome* out);

  const Scenario& scenario_;
  const ScenarioRunOptions& options_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<std::string, GroupRequest> requests_;  // the last request per group name
  std::map<std::string, Placement> placements_;   // the last placed/preempting placement
  std::set<std::string> bad_nodes_;
  int32_t restarts_ = 0;
};

}  // namespace hived::sim::scenario_internal

#endif  // HIVED_SIM_SCENARIO_SCENARIO_RUNNER_IMPL_H_
