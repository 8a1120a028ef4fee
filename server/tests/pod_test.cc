// HiveD's pod contract (hived-reference.md §3.2): opt-in, the spec's defaults, validation
// and legacy keys, and the bind info the server writes (read back by ImportHivedBindInfo).
#include "server/pod.h"

#include <string>

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
