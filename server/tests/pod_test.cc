// HiveD's pod contract (hived-reference.md §3.2): opt-in, the spec's defaults, validation
// and legacy keys, and the bind info the server writes (read back by ImportHivedBindInfo).
#include "server/pod.h"

#include <string>
#include <vector>

#include "hived/state.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

using hived::server::ParsePod;
using hived::server::ParseSchedulingSpec;
using hived::server::PodInfo;
using hived::server::testing::MakePod;

absl::StatusOr<hived::server::SchedulingSpec> SpecOf(const std::string& yaml) {
  absl::StatusOr<PodInfo> pod = ParsePod(MakePod("p", "uid-p", yaml));
  REQUIRE(pod.ok());
  return ParseSchedulingSpec(*pod);
}

std::string ErrorOf(const std::string& yaml) {
  auto spec = SpecOf(yaml);
  REQUIRE_FALSE(spec.ok());
  return std::string(spec.status().message());
}

}  // namespace

TEST_CASE("ParsePod: reads the opt-in limit from containers and init containers",
          "[server][unit]") {
  nlohmann::json pod = MakePod("p", "u1", "virtualCluster: VC1\nleafCellNumber: 1\n");
  auto info = ParsePod(pod);
  REQUIRE(info.ok());
  CHECK(info->scheduling_enabled);
  CHECK(info->Key() == "default/p");
  nlohmann::json off = MakePod("p", "u1", "", /*opt_in=*/false);
  CHECK_FALSE(ParsePod(off)->scheduling_enabled);
  off["spec"]["initContainers"] = {
      {{"name", "init"},
       {"resources", {{"limits", {{"hivedscheduler.microsoft.com/pod-scheduling-enable", 1}}}}}}};
  CHECK(ParsePod(off)->scheduling_enabled);
  off["spec"]["initContainers"][0]["resources"]["limits"]
     ["hivedscheduler.microsoft.com/pod-scheduling-enable"] = "0";
  CHECK_FALSE(ParsePod(off)->scheduling_enabled);
  CHECK_FALSE(ParsePod(nlohmann::json::array()).ok());
  CHECK_FALSE(ParsePod(nlohmann::json{{"metadata", {{"name", "x"}}}}).ok());  // no uid
}

TEST_CASE("ParseSchedulingSpec: HiveD's defaults", "[server][unit]") {
  auto spec = SpecOf("virtualCluster: VC1\nleafCellNumber: 2\n");
  REQUIRE(spec.ok());
  CHECK(spec->priority == 0);
  CHECK(spec->ignore_k8s_suggested_nodes);
  CHECK_FALSE(spec->lazy_preemption_enable);
  CHECK(spec->affinity_group_name == "default/p");
  REQUIRE(spec->members.size() == 1);
  CHECK(spec->members[0].pod_number == 1);
  CHECK(spec->members[0].leaf_cell_number == 2);
}

TEST_CASE("ParseSchedulingSpec: legacy gpu* keys are HiveD's leafCell* keys", "[server][unit]") {
  auto spec = SpecOf(
      "virtualCluster: VC2\npriority: 10\ngpuType: DGX1-P100\ngpuNumber: 4\n"
      "affinityGroup:\n  name: job-a\n  members:\n  - podNumber: 2\n    gpuNumber: 4\n");
  REQUIRE(spec.ok());
  CHECK(spec->leaf_cell_type == "DGX1-P100");
  CHECK(spec->leaf_cell_number == 4);
  CHECK(spec->members[0].leaf_cell_number == 4);
  CHECK(spec->members[0].pod_number == 2);
  hived::GroupRequest r = hived::server::ToGroupRequest(*spec);
  CHECK(r.name == "job-a");
  CHECK(r.priority == 10);
}

TEST_CASE("ParseSchedulingSpec: HiveD's validation rules", "[server][unit]") {
  CHECK(ErrorOf("priority: 1\nleafCellNumber: 1\n") == "VirtualCluster is empty");
  CHECK(ErrorOf("virtualCluster: VC1\npriority: -2\nleafCellNumber: 1\n") ==
        "Priority is less than -1");
  CHECK(ErrorOf("virtualCluster: VC1\npriority: 1001\nleafCellNumber: 1\n") ==
        "Priority is greater than 1000");
  CHECK(ErrorOf("virtualCluster: VC1\nleafCellNumber: 0\n") == "LeafCellNumber is non-positive");
  CHECK(ErrorOf("virtualCluster: VC1\nleafCellNumber: 1\naffinityGroup:\n  name: ''\n"
                "  members:\n  - {podNumber: 1, leafCellNumber: 1}\n") ==
        "AffinityGroup.Name is empty");
  CHECK(ErrorOf("virtualCluster: VC1\nleafCellNumber: 1\naffinityGroup:\n  name: g\n"
                "  members:\n  - {podNumber: 0, leafCellNumber: 1}\n") ==
        "AffinityGroup.Members has non-positive PodNumber");
  CHECK(ErrorOf("virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  name: g\n"
                "  members:\n  - {podNumber: 1, leafCellNumber: 1}\n")
            .find("does not contains current Pod") != std::string::npos);
  CHECK(ErrorOf("virtualCluster: VC1\npriority: -1\npinnedCellId: VC1-YQW-CT1\n"
                "leafCellNumber: 1\n") ==
        "opportunistic pod not supported to use pinned cell VC1-YQW-CT1");
  CHECK(ErrorOf("virtualCluster: VC1\npriority: high\nleafCellNumber: 1\n").find("wrong type") !=
        std::string::npos);
  CHECK(ErrorOf("{virtualCluster: [").find("Failed to unmarshal") != std::string::npos);
  CHECK(ErrorOf("- a list\n").find("expected a YAML mapping") != std::string::npos);
  // No annotation at all.
  nlohmann::json pod = MakePod("p", "u", "");
  pod["metadata"]["annotations"] = nlohmann::json::object();
  CHECK_FALSE(ParseSchedulingSpec(*ParsePod(pod)).ok());
}

TEST_CASE("LeafCellIsolation: the pod's leaf indices joined by commas", "[server][unit]") {
  hived::PodPlacement pod{2, "1.0.0.1", {6, 7}, {"DGX1-P100-NODE", "DGX1-P100-NODE"}};
  CHECK(hived::server::LeafCellIsolation(pod) == "6,7");
  pod.leaf_cell_indices = {3};
  CHECK(hived::server::LeafCellIsolation(pod) == "3");
}

TEST_CASE("SpecCache: the same results as ParseSchedulingSpec and a bounded size",
          "[server][unit]") {
  const std::vector<std::string> texts = {
      "virtualCluster: VC1\nleafCellNumber: 1\n",
      "virtualCluster: VC1\npriority: 2\nleafCellNumber: 2\naffinityGroup:\n  name: g\n"
      "  members:\n  - {podNumber: 2, leafCellNumber: 2}\n",
      "virtualCluster: VC1\ngpuType: DGX2-V100\ngpuNumber: 4\n",
      "virtualCluster: VC1\nleafCellNumber: 2\naffinityGroup:\n  name: g\n"
      "  members:\n  - {podNumber: 1, leafCellNumber: 1}\n",
      "virtualCluster: VC1\npriority: high\nleafCellNumber: 1\n",
      "{virtualCluster: [",
      "- a list\n",
  };
  hived::server::SpecCache cache(3);
  // Two passes (the second partly from the cache) over two pods sharing each text: a spec
  // without affinityGroup must still be named after its own pod.
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& text : texts) {
      for (const char* name : {"p1", "p2"}) {
        absl::StatusOr<PodInfo> pod = ParsePod(MakePod(name, std::string("uid-") + name, text));
        REQUIRE(pod.ok());
        absl::StatusOr<hived::server::SchedulingSpec> want = ParseSchedulingSpec(*pod);
        absl::StatusOr<hived::server::SchedulingSpec> got = cache.Parse(*pod);
        INFO(text << " pod " << name << " pass " << pass);
        REQUIRE(got.ok() == want.ok());
        if (!want.ok()) {
          CHECK(got.status() == want.status());
          continue;
        }
        CHECK(got->virtual_cluster == want->virtual_cluster);
        CHECK(got->priority == want->priority);
        CHECK(got->pinned_cell_id == want->pinned_cell_id);
        CHECK(got->leaf_cell_type == want->leaf_cell_type);
        CHECK(got->leaf_cell_number == want->leaf_cell_number);
        CHECK(got->gang_release_enable == want->gang_release_enable);
        CHECK(got->lazy_preemption_enable == want->lazy_preemption_enable);
        CHECK(got->ignore_k8s_suggested_nodes == want->ignore_k8s_suggested_nodes);
        CHECK(got->affinity_group_name == want->affinity_group_name);
        REQUIRE(got->members.size() == want->members.size());
        for (size_t i = 0; i < want->members.size(); ++i) {
          CHECK(got->members[i].pod_number == want->members[i].pod_number);
          CHECK(got->members[i].leaf_cell_number == want->members[i].leaf_cell_number);
        }
      }
      CHECK(cache.size() <= 3);
    }
  }
  // Each text: one miss per pass (evicted between passes with capacity 3 < 7 texts), the
  // second pod a hit; errors are cached too.
  CHECK(cache.misses() == 14);
  CHECK(cache.hits() == 14);
  CHECK(cache.size() == 3);
  // The missing annotation is refused without touching the cache.
  nlohmann::json bare = MakePod("p", "u", "");
  bare["metadata"]["annotations"] = nlohmann::json::object();
  CHECK_FALSE(cache.Parse(*ParsePod(bare)).ok());
  CHECK(cache.misses() == 14);
}

TEST_CASE("SpecCache: a repeated text stays while others come and go", "[server][unit]") {
  hived::server::SpecCache cache(2);
  auto parse = [&cache](int leaves) {
    std::string text = "virtualCluster: VC1\nleafCellNumber: " + std::to_string(leaves) + "\n";
    return cache.Parse(*ParsePod(MakePod("p", "u", text)));
  };
  REQUIRE(parse(1).ok());
  REQUIRE(parse(2).ok());
  REQUIRE(parse(1).ok());  // 1 is now the most recent: 3 evicts 2
  REQUIRE(parse(3).ok());
  CHECK(cache.hits() == 1);
  REQUIRE(parse(1).ok());
  CHECK(cache.hits() == 2);
  REQUIRE(parse(2).ok());
  CHECK(cache.misses() == 4);
  CHECK(cache.size() == 2);
}

TEST_CASE("SpecCache: capacity 0 keeps nothing and parses as ParseSchedulingSpec",
          "[server][unit]") {
  hived::server::SpecCache cache(0);
  auto pod = *ParsePod(MakePod("p", "u", "virtualCluster: VC1\nleafCellNumber: 2\n"));
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<hived::server::SchedulingSpec> cached = cache.Parse(pod);
    absl::StatusOr<hived::server::SchedulingSpec> direct = ParseSchedulingSpec(pod);
    REQUIRE(cached.ok());
    REQUIRE(direct.ok());
    CHECK(cached->leaf_cell_number == direct->leaf_cell_number);
    CHECK(cached->affinity_group_name == direct->affinity_group_name);
  }
  CHECK(cache.size() == 0);
  CHECK(cache.hits() == 0);
  CHECK(cache.misses() == 3);
}
