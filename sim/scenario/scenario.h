// sim/scenario/scenario.h: what-if scenarios for the scheduler, as plain data (the simulator's test
// language; not part of the library's API).
//
// A scenario names a cluster config and lists steps: schedule a group (and check the
// result), allocate, release, cancel, flip node health, restart from the running groups'
// placements, and check the state (a group's state, a VC's virtual cells, capacity, nodes).
// `LoadScenarioFile` reads the YAML form (documented in the README, "Scenario files");
// `hived-sim scenario FILE...` runs them. Every optional expectation is a `std::optional`:
// absent means "not checked".
//
// Example:
//   absl::StatusOr<hived::sim::Scenario> scenario = hived::sim::LoadScenarioFile("t.yaml");
//   if (!scenario.ok()) { std::cerr << scenario.status().message() << "\n"; return 2; }
//   for (const hived::sim::ScenarioStep& step : scenario->steps) Run(step);
//
// Thread safety: plain values; the loader has no shared state.
#ifndef HIVED_SIM_SCENARIO_SCENARIO_H_
#define HIVED_SIM_SCENARIO_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/schedule_result.h"
#include "hived/status_view.h"
#include "hived/types.h"

namespace hived::sim {

// Where a step (or key) was written: 1-based line and column.
struct ScenarioLocation {
  std::string file;
  int32_t line = 0;
  int32_t column = 0;
};

// The outcome a `schedule` step expects. `kError` means `Schedule` returned a status.
enum class ExpectedOutcome { kPlaced, kPreempting, kWaiting, kInfeasible, kError };

// One expected pod placement: its node and device indices, in pod order.
struct ExpectedPod {
  std::string node;
  std::vector<int32_t> leaf_cells;
};

// An expected error of a step: a status code (when given) and a message substring.
struct ExpectedError {
  std::optional<absl::StatusCode> code;
  std::string message_substring;  // empty: any message
};

// `expect:` of a `schedule` step. Every field is optional.
struct ScheduleExpectation {
  std::optional<ExpectedOutcome> outcome;
  std::optional<std::vector<ExpectedPod>> placement;  // exactly these pods, in order
  std::optional<std::vector<std::string>> victims;    // exactly these groups (any order)
  std::optional<std::string> reason;           // substring of the wait reason or error message
  std::vector<std::string> reason_absent;      // substrings the reason must not contain
  std::optional<absl::StatusCode> error_code;  // for outcome `error`
  std::optional<std::string> chain;            // the placement's chain
  // Nodes no pod may use (e.g. a pinned cell's nodes for a non-pinned request).
  std::vector<std::string> nodes_absent;
  // When set, every pod must be on one of these nodes.
  std::optional<std::vector<std::string>> nodes_within;
};

// `schedule:`: schedule a group and check the result. A kPlaced group is allocated at once
// unless `allocate` is false.
struct ScheduleStep {
  GroupRequest request;
  Phase phase = Phase::kPreempting;
  ScheduleExpectation expect;
  bool allocate = true;
  // Expectations on the immediate allocation (only checked when it happens).
  std::optional<bool> expect_downgraded;
};

// `allocate: <group>`: allocate a group at the placement of its last `schedule` result
// (a Preempting group whose victims are gone, or a group scheduled with `allocate: false`).
// The map form `allocate: {group: g, chain: C, placement: [...]}` allocates at the given
// placement instead (each pod's `leaf_cell_number` is its number of leaf cells), e.g. to
// check that a placement not matching the group's members is rejected. With `recover: true`
// it calls `Recover` (a placement from elsewhere) instead of `Allocate`.
struct AllocateStep {
  std::string group;
  std::optional<std::vector<ExpectedPod>> placement;
  std::string chain;
  bool recover = false;
  std::optional<ExpectedError> expect_error;
  std::optional<bool> expect_downgraded;
};

struct ReleaseStep {
  std::string group;
  std::optional<ExpectedError> expect_error;
};

// `cancel: <group>` (CancelPreemption) or `unreserve: <group>` (Unreserve).
struct CancelStep {
  std::string group;
  std::optional<ExpectedError> expect_error;
  bool unreserve = false;
};

// `setNodeBad:` / `setNodeHealthy:`.
struct NodeHealthStep {
  std::string node;
  bool healthy = true;
  std::optional<ExpectedError> expect_error;
};

// `expectGroup:`: the group's state and, optionally, how it runs.
struct ExpectGroupStep {
  std::string group;
  std::optional<GroupState> state;
  std::optional<Priority> priority;
  std::optional<std::string> preemptor;
  std::optional<std::string> downgrade_reason;  // substring
  std::optional<std::vector<ExpectedPod>> placement;
};

// `expectVirtualCells:`: the VC's cells of a type (the dotted path as in the config, or
// just the last type name), counted by health; `bound` counts cells bound to physical
// cells. Counted over the whole virtual tree, pinned cells included.
struct ExpectVirtualCellsStep {
  std::string vc;
  std::string cell_type;
  std::optional<int32_t> healthy;
  std::optional<int32_t> bad;
  std::optional<int32_t> bound;
};

// `expectCapacity:`: one row of `Scheduler::Capacity()` (chain plus level or cell type).
struct ExpectCapacityStep {
  std::string chain;
  std::optional<CellLevel> level;
  std::string cell_type;  // used when `level` is absent
  std::optional<int32_t> free;
  std::optional<int32_t> obtainable;
  std::optional<int32_t> bad_free;
  std::optional<int32_t> vc_unbound;
};

// `expectNode:`: one row of `Scheduler::Nodes()`.
struct ExpectNodeStep {
  std::string node;
  std::optional<int32_t> free_leaf_cells;
  std::optional<bool> healthy;
};

// `expectUsage:`: one row of `Scheduler::VcUsages()`.
struct ExpectUsageStep {
  std::string vc;
  std::string leaf_cell_type;
  std::optional<int32_t> guaranteed;
  std::optional<int32_t> opportunistic;
};

// `restart:`: build a new scheduler from `config_file` (empty: the scenario's config),
// mark the nodes that were bad bad again, then `Recover` every running group's placement
// in a seeded shuffled order. Reserved and Preempting groups are not persisted (as in
// HiveD); they are scheduled again, in name order, in the Preempting phase. `downgraded`, when set,
// names exactly the groups whose replay reported a downgrade.
struct RestartStep {
  std::string config;       // as written, relative to the scenario file; may be empty
  std::string config_file;  // resolved path; empty: the scenario's config
  std::optional<std::vector<std::string>> downgraded;
};

using ScenarioAction =
    std::variant<ScheduleStep, AllocateStep, ReleaseStep, CancelStep, NodeHealthStep,
                 ExpectGroupStep, ExpectVirtualCellsStep, ExpectCapacityStep, ExpectNodeStep,
                 ExpectUsageStep, RestartStep>;

struct ScenarioStep {
  ScenarioLocation location;
  ScenarioAction action;
};

struct Scenario {
  std::string file;         // the scenario file as given
  std::string config;       // `config:` as written
  std::string config_file;  // resolved against the scenario file's folder
  uint64_t seed = 1;        // `seed:`; drives the restart replay order
  std::string description;  // `description:`, optional
  std::vector<ScenarioStep> steps;
};

// Limits on one scenario file, so that any input ends quickly with a located error.
struct ScenarioLimits {
  int64_t max_input_bytes = int64_t{16} << 20;  // file size, checked while reading
  int64_t max_yaml_nodes = int64_t{1} << 20;    // YAML nodes, counted before the tree is built
  int32_t max_errors = 100;                     // located errors kept; the rest are counted
  int64_t max_pods_per_request = 100000;        // sum of `podNumber` over a group's members
};

// Loads a scenario. kNotFound when the file cannot be read; kInvalidArgument naming
// "file:line:col: what is wrong" for every bad key or value (all problems at once, up to
// `max_errors`), and for a file beyond the limits.
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path,
                                          const ScenarioLimits& limits = {});
absl::StatusOr<Scenario> LoadScenarioString(std::string_view yaml, std::string_view file_name,
                                            const ScenarioLimits& limits = {});

// The name used in the YAML form, for messages: "placed", ..., "error".
const char* ExpectedOutcomeName(ExpectedOutcome outcome);

}  // namespace hived::sim

#endif  // HIVED_SIM_SCENARIO_SCENARIO_H_
