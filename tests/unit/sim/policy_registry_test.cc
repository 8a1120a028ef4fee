#include "sim/policies/policy_registry.h"

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "hived/config.h"
#include "sim/cli/commands.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"

namespace hived::sim {
namespace {

// Every job policy kind, spelled out here rather than taken from the registry.
constexpr PolicyKind kEveryJobPolicy[] = {PolicyKind::kHived, PolicyKind::kQuota,
                                          PolicyKind::kPrivate, PolicyKind::kYarnCs,
                                          PolicyKind::kElasticQuota};

TEST_CASE("Policy registry: every policy has one row serving its models, names parse back",
          "[sim][unit]") {
  REQUIRE(Policies().size() ==
          std::size(kEveryJobPolicy) + std::size(testing::kEveryPodPolicy) - 1);
  std::set<std::string_view> names;
  std::set<PolicyKind> kinds;
  for (const PolicyInfo& p : Policies()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK(kinds.insert(p.kind).second);
    CHECK((p.Serves(PolicyModel::kJobs) || p.Serves(PolicyModel::kPods)));
    for (PolicyModel model : {PolicyModel::kJobs, PolicyModel::kPods}) {
      CHECK(p.Serves(model) == !p.Description(model).empty());
      CHECK(p.Description(model).find('\n') == std::string_view::npos);
    }
    CHECK((p.options == 0 || p.Serves(PolicyModel::kJobs)));
  }
  for (PolicyKind kind : kEveryJobPolicy) {
    const PolicyInfo& p = PolicyOf(kind);
    CHECK(p.kind == kind);
    CHECK(p.Serves(PolicyModel::kJobs));
    CHECK(PolicyKindName(kind) == p.name);
    absl::StatusOr<PolicyKind> parsed = ParsePolicyKind(p.name);
    REQUIRE(parsed.ok());
    CHECK(*parsed == kind);
  }
  for (PolicyKind kind : testing::kEveryPodPolicy) {
    const PolicyInfo& p = PolicyOf(kind);
    INFO(p.name);
    CHECK(p.kind == kind);
    CHECK(p.Serves(PolicyModel::kPods));
    absl::StatusOr<PolicyKind> parsed = ParsePolicy(p.name, PolicyModel::kPods);
    REQUIRE(parsed.ok());
    CHECK(*parsed == kind);
  }
  // The names as the command line, summary.json and the docs spell them.
  CHECK(JobPolicyNames("|") == "hived|quota|private|yarn-cs|elastic-quota");
  CHECK(PolicyNames(PolicyModel::kPods, ", ") ==
        "hived, hived-model, fgd, fgd-exact, best-fit, gpu-packing, gpu-clustering, "
        "dot-product, random");
  CHECK(Policies()[0].kind == PolicyKind::kHived);  // the default of both, listed first
  CHECK(PolicyOf(PolicyKind::kHived).Serves(PolicyModel::kPods));
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
  absl::StatusOr<PolicyKind> pod = ParsePolicy("first-fit", PolicyModel::kPods);
  REQUIRE_FALSE(pod.ok());
  CHECK(pod.status().message() ==
        "unknown policy 'first-fit' (expected hived, hived-model, fgd, fgd-exact, best-fit, "
        "gpu-packing, gpu-clustering, dot-product or random)");
}

TEST_CASE("Policy registry: a policy of the other model is refused naming the one it serves",
          "[sim][unit]") {
  absl::StatusOr<PolicyKind> fgd = ParsePolicyKind("fgd");
  REQUIRE_FALSE(fgd.ok());
  CHECK(fgd.status().message() ==
        "policy 'fgd' places pods of openb lists only (fill, run --format openb); job traces "
        "take hived, quota, private, yarn-cs or elastic-quota");
  absl::StatusOr<PolicyKind> quota = ParsePolicy("quota", PolicyModel::kPods);
  REQUIRE_FALSE(quota.ok());
  CHECK(quota.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(quota.status().message().find("replays job traces only") != absl::string_view::npos);
}

TEST_CASE("Policy registry: each factory refuses a kind of the other model", "[sim][unit]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
      MakeSchedulerBackend(PolicyKind::kFgd, *spec, /*job_count=*/4);
  REQUIRE_FALSE(backend.ok());
  CHECK(backend.status().message() == "policy fgd does not replay job traces");
  CHECK(MakeFillPolicy(PolicyKind::kQuota, {}, 0) == nullptr);
  CHECK(MakeFillPolicy(PolicyKind::kBestFit, {}, 0) != nullptr);
}

TEST_CASE("Policy registry: the options each job policy takes, in prose for the messages",
          "[sim][unit]") {
  CHECK(JobPoliciesTaking(kPolicyTakesPlacement) == "quota, yarn-cs and elastic-quota");
  CHECK(JobPoliciesTaking(kPolicyTakesReclaimAfter) == "yarn-cs");
  CHECK(JobPoliciesTaking(kPolicyTakesMaxCapacity) == "yarn-cs and elastic-quota");
  CHECK_FALSE(PolicyOf(PolicyKind::kHived).Takes(kPolicyTakesPlacement));
  CHECK_FALSE(PolicyOf(PolicyKind::kPrivate).Takes(kPolicyTakesMaxCapacity));
  CHECK(PolicyOf(PolicyKind::kElasticQuota).Takes(kPolicyTakesMaxCapacity));
  CHECK_FALSE(PolicyOf(PolicyKind::kElasticQuota).Takes(kPolicyTakesReclaimAfter));
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

TEST_CASE("Job backends refuse a start on one node only and stay as they were", "[sim][unit]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  SimJob job;
  job.index = 0;
  job.vc = 0;
  job.gpus = 1;
  job.members = {GangMember{1, 1}};
  for (PolicyKind kind : kEveryJobPolicy) {
    INFO(PolicyKindName(kind));
    absl::StatusOr<std::unique_ptr<ClusterBackend>> made =
        MakeSchedulerBackend(kind, *spec, /*job_count=*/4);
    REQUIRE(made.ok());
    ClusterBackend& backend = **made;
    TryOptions one_node;
    one_node.only_node = 0;
    absl::StatusOr<StartAttempt> refused = backend.TryStart(job, one_node);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(refused.status().message().find("on node 0 only") != absl::string_view::npos);
    CHECK(backend.used_gpus() == 0);
    CHECK(backend.schedule_calls() == 0);
    // Anywhere, the same job starts: the refusal changed nothing.
    absl::StatusOr<StartAttempt> started = backend.TryStart(job, TryOptions{});
    REQUIRE(started.ok());
    CHECK(started->kind == StartAttempt::Kind::kStarted);
    CHECK(backend.used_gpus() == 1);
    CHECK(backend.RunGpus(0).node == -1);  // no single GPUs modelled: the default
    CHECK(backend.allocation_ratio() ==
          static_cast<double>(backend.used_gpus()) / static_cast<double>(backend.total_gpus()));
    REQUIRE(backend.Release(job).ok());
    CHECK(backend.CheckInvariants().ok());
  }
}

TEST_CASE("Policy registry: the help tables list one padded line per policy", "[sim][unit]") {
  const std::string table = PolicyTable(PolicyModel::kJobs);
  CHECK(table.rfind("  hived          HiveD:", 0) == 0);
  CHECK(table.find("\n  elastic-quota  elastic quotas") != std::string::npos);
  CHECK(table.back() != '\n');
  CHECK(std::count(table.begin(), table.end(), '\n') + 1 ==
        static_cast<std::ptrdiff_t>(std::size(kEveryJobPolicy)));
  const std::string fill = PolicyTable(PolicyModel::kPods);
  CHECK(fill.rfind("  hived           this project's placement", 0) == 0);
  CHECK(std::count(fill.begin(), fill.end(), '\n') + 1 ==
        static_cast<std::ptrdiff_t>(std::size(testing::kEveryPodPolicy)));
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
        static_cast<std::ptrdiff_t>(2 + std::size(kEveryJobPolicy) +
                                    std::size(testing::kEveryPodPolicy)));
  CHECK(md.find("| `yarn-cs` | run, sweep, plan | YARN's Capacity Scheduler") != std::string::npos);
  CHECK(md.find("| `--placement`, `--reclaim-after`, `--max-capacity` |\n") != std::string::npos);
  CHECK(md.find("| `hived` | run, sweep, plan | HiveD: ") != std::string::npos);
  CHECK(md.find("| `fgd` | fill, openb-replay, run --format openb | FGD: ") != std::string::npos);
  CHECK(md.find("| `hived` | fill, openb-replay, run --format openb | this project's placement") !=
        std::string::npos);
}

TEST_CASE("Policy registry: the docs hold the current policy table", "[sim][unit]") {
  std::ifstream in(std::string(HIVED_SOURCE_DIR) + "/docs/simulator.md", std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  // When this fails: `hived-sim policies --markdown` prints the table to paste.
  CHECK(text.str().find(PolicyMarkdown()) != std::string::npos);
}

}  // namespace
}  // namespace hived::sim
