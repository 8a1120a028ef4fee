// sim/policies/policy_kind.h: the one id of a policy. Everything else about a policy (its
// name, description, options and factories) is its entry in the registry
// (sim/policies/policy_registry.h); this header is apart so the backends can name their own
// kind without the registry's factories.
//
// A policy serves one or both models of a cluster: the job replay (`run`, `sweep`, `plan`;
// a `ClusterBackend`, sim/policies/scheduler_backend.h) and the fill model of openb pod
// lists (`fill`, `run --format openb`; a `FillPolicy`, sim/policies/fill_policy.h). `kHived`
// serves both: the library places jobs and pods alike.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_POLICIES_POLICY_KIND_H_
#define HIVED_SIM_POLICIES_POLICY_KIND_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace hived::sim {

enum class PolicyKind {
  // Both models.
  kHived,
  // Job replays only.
  kQuota,
  kPrivate,
  kYarnCs,
  kElasticQuota,
  // The fill model only.
  kHivedModel,
  kFgd,
  kFgdExact,
  kBestFit,
  kGpuPacking,
  kGpuClustering,
  kDotProduct,
  kRandom,
};

// Which model a policy is asked for.
enum class PolicyModel { kJobs, kPods };

// The policy of `model` named `name`. Errors: kInvalidArgument listing the model's names
// (and saying which model a policy of the other one serves).
absl::StatusOr<PolicyKind> ParsePolicy(std::string_view name, PolicyModel model);
// ParsePolicy(name, PolicyModel::kJobs).
absl::StatusOr<PolicyKind> ParsePolicyKind(std::string_view name);
// The name as the command line, summary.json and sweep.csv spell it.
std::string_view PolicyKindName(PolicyKind kind);

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_POLICY_KIND_H_
