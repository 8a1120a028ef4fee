// sim/policies/policy_registry.h: every policy of the simulator in one place. Per policy its
// name (as the command line, summary.json and sweep.csv spell it), a one-line description,
// the `run` options it takes and its factory. Parsing and naming policies, the help texts
// of `run`, `sweep`, `plan`, `fill` and `openb-replay`, the checks of policy options and the
// sweep's `--policy` axis all read these tables; the policies' names appear nowhere else in
// the code.
//
// Two kinds of policy, for two models of a cluster:
//   - job policies (`PolicyKind`): the backends of the job replay (`run`, `sweep`, `plan`),
//     each a `ClusterBackend` over `hived::Scheduler` (sim/policies/scheduler_backend.h
//     describes them in full);
//   - fill policies (`FillPolicyKind`): node and GPU choice on the fill model of openb pod
//     lists (`fill`, `openb-replay`, `run --format openb`; sim/policies/fill_policy.h).
//
// Example:
//   absl::StatusOr<PolicyKind> kind = ParsePolicyKind("yarn-cs");
//   if (kind.ok() && JobPolicyOf(*kind).Takes(kPolicyTakesReclaimAfter)) ...
//   auto backend = JobPolicyOf(*kind).make(*kind, spec, job_count, options);
//
// Thread safety: immutable tables.
#ifndef HIVED_SIM_POLICIES_POLICY_REGISTRY_H_
#define HIVED_SIM_POLICIES_POLICY_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hived/cluster_spec.h"
#include "sim/engine/cluster_backend.h"
#include "sim/policies/fill_policy.h"
#include "sim/policies/scheduler_backend.h"

namespace hived::sim {

// The `run` options a job policy takes (bits of `JobPolicyInfo::options`).
inline constexpr uint32_t kPolicyTakesPlacement = 1u << 0;     // --placement
inline constexpr uint32_t kPolicyTakesReclaimAfter = 1u << 1;  // --reclaim-after
inline constexpr uint32_t kPolicyTakesMaxCapacity = 1u << 2;   // --max-capacity

struct JobPolicyInfo {
  PolicyKind kind;
  std::string_view name;
  std::string_view description;  // one line, for help texts and the docs' policy table
  uint32_t options;              // kPolicyTakes* bits
  absl::StatusOr<std::unique_ptr<ClusterBackend>> (*make)(PolicyKind kind, const ClusterSpec& spec,
                                                          int32_t job_count,
                                                          const PolicyOptions& options);

  bool Takes(uint32_t option) const { return (options & option) != 0; }
};

struct FillPolicyInfo {
  FillPolicyKind kind;
  std::string_view name;
  std::string_view description;  // one line
};

// The job policies in the order help texts list them (`hived` first, the default).
absl::Span<const JobPolicyInfo> JobPolicies();
const JobPolicyInfo& JobPolicyOf(PolicyKind kind);

// The fill policies in the order help texts list them (`hived` first, the default).
absl::Span<const FillPolicyInfo> FillPolicies();
const FillPolicyInfo& FillPolicyOf(FillPolicyKind kind);

// The names joined by `separator` ("hived|quota|..." for a flag's value name).
std::string JobPolicyNames(std::string_view separator);
std::string FillPolicyNames(std::string_view separator);

// The job policies taking `option`, as prose: "yarn-cs", "yarn-cs and elastic-quota",
// "quota, yarn-cs and elastic-quota".
std::string JobPoliciesTaking(uint32_t option);

// One line per policy, "  name  description" (names padded to one width; no newline after
// the last), for the description of a command's help.
std::string JobPolicyTable();
std::string FillPolicyTable();

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_POLICY_REGISTRY_H_
