#include "sim/policies/policy_registry.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {

// The factories (hived_backend.cc, private_backend.cc, quota_backend.cc).
absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeHivedBackend(PolicyKind kind,
                                                                 const ClusterSpec& spec,
                                                                 int32_t job_count,
                                                                 const PolicyOptions& options);
absl::StatusOr<std::unique_ptr<ClusterBackend>> MakePrivateBackend(PolicyKind kind,
                                                                   const ClusterSpec& spec,
                                                                   int32_t job_count,
                                                                   const PolicyOptions& options);
absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeElasticBackend(PolicyKind kind,
                                                                   const ClusterSpec& spec,
                                                                   int32_t job_count,
                                                                   const PolicyOptions& options);

namespace {

constexpr uint32_t kPoolOptions = kPolicyTakesPlacement;

const JobPolicyInfo kJobPolicies[] = {
    {PolicyKind::kHived, "hived",
     "HiveD: each VC's reserved cells guaranteed, idle cells lent to opportunistic jobs", 0,
     &MakeHivedBackend},
    {PolicyKind::kQuota, "quota",
     "the HiveD paper's quota baseline: one shared pool, each VC capped at its quota's GPUs",
     kPoolOptions, &MakeElasticBackend},
    {PolicyKind::kPrivate, "private",
     "each VC on a private cluster of its reserved cells (the baseline of hived's anomaly)", 0,
     &MakePrivateBackend},
    {PolicyKind::kYarnCs, "yarn-cs",
     "YARN's Capacity Scheduler: idle GPUs lent up to a VC's maximum, taken back only with "
     "--reclaim-after",
     kPoolOptions | kPolicyTakesReclaimAfter | kPolicyTakesMaxCapacity, &MakeElasticBackend},
    {PolicyKind::kElasticQuota, "elastic-quota",
     "elastic quotas (Kueue cohorts, ElasticQuota): idle GPUs lent, reclaimed by preemption",
     kPoolOptions | kPolicyTakesMaxCapacity, &MakeElasticBackend},
};

const FillPolicyInfo kFillPolicies[] = {
    {FillPolicyKind::kHived, "hived", "this project's placement: the library places every pod"},
    {FillPolicyKind::kHivedModel, "hived-model",
     "the simulator's stranded-milli model of hived's rule, for comparison"},
    {FillPolicyKind::kFgd, "fgd",
     "FGD: where the node's fragmentation grows least, scored as the published simulator does"},
    {FillPolicyKind::kFgdExact, "fgd-exact",
     "FGD scored by the exact fragmentation change (no sigmoid, no rounding)"},
    {FillPolicyKind::kBestFit, "best-fit", "Tetris-style best fit on CPU and GPU leftovers"},
    {FillPolicyKind::kGpuPacking, "gpu-packing",
     "shared GPUs first, then free GPUs on used nodes, then idle nodes"},
    {FillPolicyKind::kGpuClustering, "gpu-clustering", "pods of the same kind together"},
    {FillPolicyKind::kDotProduct, "dot-product",
     "Tetris's alignment: the smallest dot product of free and requested resources"},
    {FillPolicyKind::kRandom, "random", "a feasible node uniformly at random (seeded)"},
};

template <typename Info>
std::string JoinNames(absl::Span<const Info> table, std::string_view separator) {
  std::string out;
  for (const Info& p : table) {
    absl::StrAppend(&out, out.empty() ? "" : Av(separator), Av(p.name));
  }
  return out;
}

template <typename Info>
std::string Table(absl::Span<const Info> table) {
  size_t width = 0;
  for (const Info& p : table) width = std::max(width, p.name.size());
  std::string out;
  for (const Info& p : table) {
    absl::StrAppend(&out, out.empty() ? "" : "\n", "  ", Av(p.name),
                    std::string(width + 2 - p.name.size(), ' '), Av(p.description));
  }
  return out;
}

}  // namespace

absl::Span<const JobPolicyInfo> JobPolicies() { return kJobPolicies; }

const JobPolicyInfo& JobPolicyOf(PolicyKind kind) {
  for (const JobPolicyInfo& p : kJobPolicies) {
    if (p.kind == kind) return p;
  }
  return kJobPolicies[0];  // unreachable: every kind has a row (policy_registry_test)
}

absl::Span<const FillPolicyInfo> FillPolicies() { return kFillPolicies; }

const FillPolicyInfo& FillPolicyOf(FillPolicyKind kind) {
  for (const FillPolicyInfo& p : kFillPolicies) {
    if (p.kind == kind) return p;
  }
  return kFillPolicies[0];  // unreachable: every kind has a row (policy_registry_test)
}

std::string JobPolicyNames(std::string_view separator) {
  return JoinNames(JobPolicies(), separator);
}

std::string FillPolicyNames(std::string_view separator) {
  return JoinNames(FillPolicies(), separator);
}

std::string JobPoliciesTaking(uint32_t option) {
  std::vector<std::string_view> names;
  for (const JobPolicyInfo& p : kJobPolicies) {
    if (p.Takes(option)) names.push_back(p.name);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* glue = i == 0 ? "" : i + 1 == names.size() ? " and " : ", ";
    absl::StrAppend(&out, glue, Av(names[i]));
  }
  return out;
}

std::string JobPolicyTable() { return Table(JobPolicies()); }

std::string FillPolicyTable() { return Table(FillPolicies()); }

// Parsing and naming (declared in scheduler_backend.h and fill_policy.h).

absl::StatusOr<PolicyKind> ParsePolicyKind(std::string_view name) {
  for (const JobPolicyInfo& p : kJobPolicies) {
    if (p.name == name) return p.kind;
  }
  std::string expected = JobPolicyNames(", ");
  const size_t last = expected.rfind(", ");
  if (last != std::string::npos) expected.replace(last, 2, " or ");
  return absl::InvalidArgumentError(
      absl::StrCat("unknown policy '", Av(name), "' (expected ", expected, ")"));
}

std::string_view PolicyKindName(PolicyKind kind) { return JobPolicyOf(kind).name; }

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeSchedulerBackend(
    PolicyKind kind, const ClusterSpec& spec, int32_t job_count,
    const PolicyOptions& policy_options) {
  return JobPolicyOf(kind).make(kind, spec, job_count, policy_options);
}

std::optional<FillPolicyKind> ParseFillPolicy(std::string_view name) {
  for (const FillPolicyInfo& p : kFillPolicies) {
    if (p.name == name) return p.kind;
  }
  return std::nullopt;
}

std::string_view FillPolicyName(FillPolicyKind kind) { return FillPolicyOf(kind).name; }

}  // namespace hived::sim
