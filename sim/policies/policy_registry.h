// sim/policies/policy_registry.h: every policy of the simulator in one table. Per policy its
// id (`PolicyKind`, sim/policies/policy_kind.h), its name (as the command line, summary.json
// and sweep.csv spell it), a one-line description per model it serves, the `run` options it
// takes and a factory per model: a `ClusterBackend` for job replays (`run`, `sweep`, `plan`;
// sim/policies/scheduler_backend.h) and/or a `FillPolicy` for the fill model of openb pod
// lists (`fill`, `run --format openb`; sim/policies/fill_policy.h). Parsing and naming
// policies, the help texts, the checks of policy options, the sweep's `--policy` axis and the
// docs' policy table (`hived-sim policies --markdown`) all read this table; the policies'
// names appear nowhere else in the code.
//
// Invariants (tests/unit/sim/policy_registry_test.cc): (1) every `PolicyKind` has exactly one
// entry and names are unique; (2) every entry serves at least one model, and has that model's
// description and factory; (3) `hived` is first (the default of both models).
//
// Example:
//   absl::StatusOr<PolicyKind> kind = ParsePolicy("yarn-cs", PolicyModel::kJobs);
//   if (kind.ok() && PolicyOf(*kind).Takes(kPolicyTakesReclaimAfter)) ...
//   auto backend = MakeSchedulerBackend(*kind, spec, job_count, options);
//
// Thread safety: immutable tables.
#ifndef HIVED_SIM_POLICIES_POLICY_REGISTRY_H_
#define HIVED_SIM_POLICIES_POLICY_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hived/cluster_spec.h"
#include "sim/engine/cluster_backend.h"
#include "sim/policies/fill_policy.h"
#include "sim/policies/policy_kind.h"
#include "sim/policies/scheduler_backend.h"

namespace hived::sim {

// The `run` options a job policy takes (bits of `PolicyInfo::options`).
inline constexpr uint32_t kPolicyTakesPlacement = 1u << 0;     // --placement
inline constexpr uint32_t kPolicyTakesReclaimAfter = 1u << 1;  // --reclaim-after
inline constexpr uint32_t kPolicyTakesMaxCapacity = 1u << 2;   // --max-capacity

struct PolicyInfo {
  using JobFactory = absl::StatusOr<std::unique_ptr<ClusterBackend>> (*)(
      PolicyKind kind, const ClusterSpec& spec, int32_t job_count, const PolicyOptions& options);
  using PodFactory = std::unique_ptr<FillPolicy> (*)(const FillPolicyContext& context,
                                                     int32_t node_count);

  PolicyKind kind;
  std::string_view name;
  // As a sharing policy of job replays; `make_job` is null when the policy serves none.
  std::string_view job_description;  // one line, for help texts and the docs' policy table
  uint32_t options;                  // kPolicyTakes* bits
  JobFactory make_job;
  // As a placement policy of the fill model; `make_pod` is null when it serves none.
  std::string_view pod_description;  // one line
  PodFactory make_pod;

  bool Takes(uint32_t option) const { return (options & option) != 0; }
  bool Serves(PolicyModel model) const {
    return model == PolicyModel::kJobs ? make_job != nullptr : make_pod != nullptr;
  }
  std::string_view Description(PolicyModel model) const {
    return model == PolicyModel::kJobs ? job_description : pod_description;
  }
};

// Every policy, in the order help texts list them (`hived` first, the default).
absl::Span<const PolicyInfo> Policies();
const PolicyInfo& PolicyOf(PolicyKind kind);

// The names of `model`'s policies joined by `separator` ("hived|quota|..." for a value name).
std::string PolicyNames(PolicyModel model, std::string_view separator);
inline std::string JobPolicyNames(std::string_view separator) {
  return PolicyNames(PolicyModel::kJobs, separator);
}

// The job policies taking `option`, as prose: "yarn-cs", "yarn-cs and elastic-quota",
// "quota, yarn-cs and elastic-quota".
std::string JobPoliciesTaking(uint32_t option);

// One line per policy of `model`, "  name  description" (names padded to one width; no
// newline after the last), for the description of a command's help.
std::string PolicyTable(PolicyModel model);

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_POLICY_REGISTRY_H_
