#include "sim/policies/policy_registry.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "hived/config.h"
#include "sim/cli/commands.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

// Every job policy kind, spelled out here rather than taken from the registry.
constexpr PolicyKind kEveryJobPolicy[] = {PolicyKind::kHived, PolicyKind::kQuota,
                                          PolicyKind::kPrivate, PolicyKind::kYarnCs,
                                          PolicyKind::kElasticQuota};

TEST_CASE("Policy registry: every job policy has one row, and names parse back to it",
          "[sim][unit]") {
  REQUIRE(JobPolicies().size() == std::size(kEveryJobPolicy));
  std::set<std::string_view> names;
  std::set<PolicyKind> kinds;
  for (const JobPolicyInfo& p : JobPolicies()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK(kinds.insert(p.kind).second);
    CHECK_FALSE(p.description.empty());
    CHECK(p.description.find('\n') == std::string_view::npos);
    CHECK(p.make != nullptr);
  }
  for (PolicyKind kind : kEveryJobPolicy) {
    const JobPolicyInfo& p = JobPolicyOf(kind);
    CHECK(p.kind == kind);
    CHECK(PolicyKindName(kind) == p.name);
    absl::StatusOr<PolicyKind> parsed = ParsePolicyKind(p.name);
    REQUIRE(parsed.ok());
    CHECK(*parsed == kind);
  }
  // The names as the command line, summary.json and the docs spell them.
  CHECK(JobPolicyNames("|") == "hived|quota|private|yarn-cs|elastic-quota");
  CHECK(JobPolicies()[0].kind == PolicyKind::kHived);  // the default, listed first
}

TEST_CASE("Policy registry: an unknown job policy is refused with every name listed",
          "[sim][unit]") {
  absl::StatusOr<PolicyKind> k = ParsePolicyKind("fair");
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(k.status().message() ==
        "unknown policy 'fair' (expected hived, quota, private, yarn-cs or elastic-quota)");
  CHECK_FALSE(ParsePolicyKind("").ok());
  CHECK_FALSE(ParsePolicyKind("Hived").ok());
}

TEST_CASE("Policy registry: the options each job policy takes, in prose for the messages",
          "[sim][unit]") {
  CHECK(JobPoliciesTaking(kPolicyTakesPlacement) == "quota, yarn-cs and elastic-quota");
  CHECK(JobPoliciesTaking(kPolicyTakesReclaimAfter) == "yarn-cs");
  CHECK(JobPoliciesTaking(kPolicyTakesMaxCapacity) == "yarn-cs and elastic-quota");
  CHECK_FALSE(JobPolicyOf(PolicyKind::kHived).Takes(kPolicyTakesPlacement));
  CHECK_FALSE(JobPolicyOf(PolicyKind::kPrivate).Takes(kPolicyTakesMaxCapacity));
  CHECK(JobPolicyOf(PolicyKind::kElasticQuota).Takes(kPolicyTakesMaxCapacity));
  CHECK_FALSE(JobPolicyOf(PolicyKind::kElasticQuota).Takes(kPolicyTakesReclaimAfter));
}

TEST_CASE("Policy registry: each job policy's factory builds its backend", "[sim][unit]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  for (PolicyKind kind : kEveryJobPolicy) {
    INFO(PolicyKindName(kind));
    absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
        MakeSchedulerBackend(kind, *spec, /*job_count=*/4);
    REQUIRE(backend.ok());
    CHECK((*backend)->total_gpus() > 0);
    CHECK((*backend)->used_gpus() == 0);
  }
}

TEST_CASE("Policy registry: every fill policy has one row, and names parse back to it",
          "[sim][unit]") {
  REQUIRE(FillPolicies().size() == std::size(kAllFillPolicies));
  std::set<std::string_view> names;
  for (const FillPolicyInfo& p : FillPolicies()) CHECK(names.insert(p.name).second);
  for (FillPolicyKind kind : kAllFillPolicies) {
    const FillPolicyInfo& p = FillPolicyOf(kind);
    INFO(p.name);
    CHECK(p.kind == kind);
    CHECK(FillPolicyName(kind) == p.name);
    CHECK(ParseFillPolicy(p.name) == kind);
    CHECK_FALSE(p.description.empty());
  }
  CHECK(FillPolicyNames(", ") ==
        "hived, hived-model, fgd, fgd-exact, best-fit, gpu-packing, gpu-clustering, "
        "dot-product, random");
  CHECK_FALSE(ParseFillPolicy("first-fit").has_value());
}

TEST_CASE("Policy registry: the help tables list one padded line per policy", "[sim][unit]") {
  const std::string table = JobPolicyTable();
  CHECK(table.rfind("  hived          HiveD:", 0) == 0);
  CHECK(table.find("\n  elastic-quota  elastic quotas") != std::string::npos);
  CHECK(table.back() != '\n');
  CHECK(std::count(table.begin(), table.end(), '\n') + 1 ==
        static_cast<std::ptrdiff_t>(JobPolicies().size()));
  const std::string fill = FillPolicyTable();
  CHECK(std::count(fill.begin(), fill.end(), '\n') + 1 ==
        static_cast<std::ptrdiff_t>(FillPolicies().size()));
}

}  // namespace
}  // namespace hived::sim

namespace hived::sim {
namespace {

TEST_CASE("Policy registry: the docs' Markdown table has one row per policy, options named",
          "[sim][unit]") {
  const std::string md = PolicyMarkdown();
  CHECK(md.rfind("| policy | commands | description | options |\n|---|---|---|---|\n", 0) == 0);
  CHECK(std::count(md.begin(), md.end(), '\n') ==
        static_cast<std::ptrdiff_t>(2 + JobPolicies().size() + FillPolicies().size()));
  CHECK(md.find("| `yarn-cs` | run, sweep, plan | YARN's Capacity Scheduler") != std::string::npos);
  CHECK(md.find("| `--placement`, `--reclaim-after`, `--max-capacity` |\n") != std::string::npos);
  CHECK(md.find("| `hived` | run, sweep, plan | HiveD: ") != std::string::npos);
  CHECK(md.find("| `fgd` | fill, openb-replay, run --format openb | FGD: ") != std::string::npos);
}

}  // namespace
}  // namespace hived::sim
