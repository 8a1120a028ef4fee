#include "sim/policies/policy_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {

// The job factories (hived_backend.cc, private_backend.cc, quota_backend.cc).
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
// The pod factories (fill_policy.cc).
std::unique_ptr<FillPolicy> MakeLibraryFill(const FillPolicyContext& context, int32_t node_count);
std::unique_ptr<FillPolicy> MakeHivedModelFill(const FillPolicyContext& context,
                                               int32_t node_count);
std::unique_ptr<FillPolicy> MakeBestFitFill(const FillPolicyContext& context, int32_t node_count);
std::unique_ptr<FillPolicy> MakeGpuPackingFill(const FillPolicyContext& context,
                                               int32_t node_count);
std::unique_ptr<FillPolicy> MakeGpuClusteringFill(const FillPolicyContext& context,
                                                  int32_t node_count);
std::unique_ptr<FillPolicy> MakeDotProductFill(const FillPolicyContext& context,
                                               int32_t node_count);
std::unique_ptr<FillPolicy> MakeRandomFill(const FillPolicyContext& context, int32_t node_count);
std::unique_ptr<FillPolicy> MakeFgdFill(const FillPolicyContext& context, int32_t node_count);
std::unique_ptr<FillPolicy> MakeFgdExactFill(const FillPolicyContext& context, int32_t node_count);

namespace {

constexpr uint32_t kPoolOptions = kPolicyTakesPlacement;

// A policy of the fill model only.
constexpr PolicyInfo PodPolicy(PolicyKind kind, std::string_view name, std::string_view description,
                               PolicyInfo::PodFactory make) {
  return {kind, name, "", 0, nullptr, description, make};
}

const PolicyInfo kPolicies[] = {
    {PolicyKind::kHived, "hived",
     "HiveD: each VC's reserved cells guaranteed, idle cells lent to opportunistic jobs", 0,
     &MakeHivedBackend, "this project's placement: the library places every pod", &MakeLibraryFill},
    {PolicyKind::kQuota, "quota",
     "the HiveD paper's quota baseline: one shared pool, each VC capped at its quota's GPUs",
     kPoolOptions, &MakeElasticBackend, "", nullptr},
    {PolicyKind::kPrivate, "private",
     "each VC on a private cluster of its reserved cells (the baseline of hived's anomaly)", 0,
     &MakePrivateBackend, "", nullptr},
    {PolicyKind::kYarnCs, "yarn-cs",
     "YARN's Capacity Scheduler: idle GPUs lent up to a VC's maximum, taken back only with "
     "--reclaim-after",
     kPoolOptions | kPolicyTakesReclaimAfter | kPolicyTakesMaxCapacity, &MakeElasticBackend, "",
     nullptr},
    {PolicyKind::kElasticQuota, "elastic-quota",
     "elastic quotas (Kueue cohorts, ElasticQuota): idle GPUs lent, reclaimed by preemption",
     kPoolOptions | kPolicyTakesMaxCapacity, &MakeElasticBackend, "", nullptr},
    PodPolicy(PolicyKind::kHivedModel, "hived-model",
              "the simulator's stranded-milli model of hived's rule, for comparison",
              &MakeHivedModelFill),
    PodPolicy(PolicyKind::kFgd, "fgd",
              "FGD: where the node's fragmentation grows least, scored as the published "
              "simulator does",
              &MakeFgdFill),
    PodPolicy(PolicyKind::kFgdExact, "fgd-exact",
              "FGD scored by the exact fragmentation change (no sigmoid, no rounding)",
              &MakeFgdExactFill),
    PodPolicy(PolicyKind::kBestFit, "best-fit", "Tetris-style best fit on CPU and GPU leftovers",
              &MakeBestFitFill),
    PodPolicy(PolicyKind::kGpuPacking, "gpu-packing",
              "shared GPUs first, then free GPUs on used nodes, then idle nodes",
              &MakeGpuPackingFill),
    PodPolicy(PolicyKind::kGpuClustering, "gpu-clustering", "pods of the same kind together",
              &MakeGpuClusteringFill),
    PodPolicy(PolicyKind::kDotProduct, "dot-product",
              "Tetris's alignment: the smallest dot product of free and requested resources",
              &MakeDotProductFill),
    PodPolicy(PolicyKind::kRandom, "random", "a feasible node uniformly at random (seeded)",
              &MakeRandomFill),
};

std::vector<const PolicyInfo*> Serving(PolicyModel model) {
  std::vector<const PolicyInfo*> out;
  for (const PolicyInfo& p : kPolicies) {
    if (p.Serves(model)) out.push_back(&p);
  }
  return out;
}

// "a, b or c".
std::string Prose(const std::vector<std::string_view>& names, const char* last_glue) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* glue = i == 0 ? "" : i + 1 == names.size() ? last_glue : ", ";
    absl::StrAppend(&out, glue, Av(names[i]));
  }
  return out;
}

std::vector<std::string_view> Names(PolicyModel model) {
  std::vector<std::string_view> names;
  for (const PolicyInfo* p : Serving(model)) names.push_back(p->name);
  return names;
}

}  // namespace

absl::Span<const PolicyInfo> Policies() { return kPolicies; }

const PolicyInfo& PolicyOf(PolicyKind kind) {
  for (const PolicyInfo& p : kPolicies) {
    if (p.kind == kind) return p;
  }
  return kPolicies[0];  // unreachable: every kind has a row (policy_registry_test)
}

std::string PolicyNames(PolicyModel model, std::string_view separator) {
  std::string out;
  for (const PolicyInfo* p : Serving(model)) {
    absl::StrAppend(&out, out.empty() ? "" : Av(separator), Av(p->name));
  }
  return out;
}

std::string JobPoliciesTaking(uint32_t option) {
  std::vector<std::string_view> names;
  for (const PolicyInfo* p : Serving(PolicyModel::kJobs)) {
    if (p->Takes(option)) names.push_back(p->name);
  }
  return Prose(names, " and ");
}

std::string PolicyTable(PolicyModel model) {
  const std::vector<const PolicyInfo*> policies = Serving(model);
  size_t width = 0;
  for (const PolicyInfo* p : policies) width = std::max(width, p->name.size());
  std::string out;
  for (const PolicyInfo* p : policies) {
    absl::StrAppend(&out, out.empty() ? "" : "\n", "  ", Av(p->name),
                    std::string(width + 2 - p->name.size(), ' '), Av(p->Description(model)));
  }
  return out;
}

// Parsing, naming and the factories' dispatch (declared in policy_kind.h, scheduler_backend.h
// and fill_policy.h).

absl::StatusOr<PolicyKind> ParsePolicy(std::string_view name, PolicyModel model) {
  const PolicyInfo* found = nullptr;
  for (const PolicyInfo& p : kPolicies) {
    if (p.name == name) found = &p;
  }
  if (found != nullptr && found->Serves(model)) return found->kind;
  const std::string expected = Prose(Names(model), " or ");
  if (found != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy '", Av(name), "' ",
        model == PolicyModel::kJobs
            ? "places pods of openb lists only (fill, run --format openb); job traces take "
            : "replays job traces only; openb pod lists take ",
        expected));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown policy '", Av(name), "' (expected ", expected, ")"));
}

absl::StatusOr<PolicyKind> ParsePolicyKind(std::string_view name) {
  return ParsePolicy(name, PolicyModel::kJobs);
}

std::string_view PolicyKindName(PolicyKind kind) { return PolicyOf(kind).name; }

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeSchedulerBackend(
    PolicyKind kind, const ClusterSpec& spec, int32_t job_count,
    const PolicyOptions& policy_options) {
  const PolicyInfo& p = PolicyOf(kind);
  if (p.make_job == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy ", Av(p.name), " does not replay job traces"));
  }
  return p.make_job(kind, spec, job_count, policy_options);
}

std::unique_ptr<FillPolicy> MakeFillPolicy(PolicyKind kind, const FillPolicyContext& context,
                                           int32_t node_count) {
  const PolicyInfo& p = PolicyOf(kind);
  return p.make_pod != nullptr ? p.make_pod(context, node_count) : nullptr;
}

}  // namespace hived::sim
