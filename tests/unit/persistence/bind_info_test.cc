// ImportHivedBindInfo (issue 12): HiveD's `pod-bind-info` and `pod-scheduling-spec`
// annotations, as HiveD writes them (Go yaml.v2: block lists, hived-reference.md §3.2), on
// HiveD's basic example cluster (§1.4), then replayed with Allocate.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace {

using hived::GroupRecord;

// The third pod of a gang of one 2-GPU pod and two 1-GPU pods in VC1 (its K80-NODE).
constexpr const char* kBindInfo = R"(node: 10.151.41.20
leafCellIsolation:
- 3
cellChain: 3-K80-NODE
affinityGroupBindInfo:
- podPlacements:
  - physicalNode: 10.151.41.20
    physicalLeafCellIndices:
    - 0
    - 1
    preassignedCellTypes:
    - K80-NODE
    - K80-NODE
- podPlacements:
  - physicalNode: 10.151.41.20
    physicalLeafCellIndices:
    - 2
    preassignedCellTypes:
    - K80-NODE
  - physicalNode: 10.151.41.20
    physicalLeafCellIndices:
    - 3
    preassignedCellTypes:
    - K80-NODE
)";

constexpr const char* kSpec = R"(virtualCluster: VC1
priority: 10
leafCellType: K80
leafCellNumber: 1
lazyPreemptionEnable: true
affinityGroup:
  name: default/train-42
  members:
  - podNumber: 1
    leafCellNumber: 2
  - podNumber: 2
    leafCellNumber: 1
)";

// An opportunistic pod: its preassigned cell type is empty.
constexpr const char* kOpportunisticBindInfo = R"(node: 10.151.41.22
leafCellIsolation:
- 1
cellChain: 3-K80-NODE
affinityGroupBindInfo:
- podPlacements:
  - physicalNode: 10.151.41.22
    physicalLeafCellIndices:
    - 1
    preassignedCellTypes:
    - ""
)";

TEST_CASE("ImportHivedBindInfo: reads HiveD's annotations into a record", "[persistence][unit]") {
  auto rec = hived::ImportHivedBindInfo(kBindInfo, kSpec);
  REQUIRE(rec.ok());
  CHECK(rec->request.name == "default/train-42");
  CHECK(rec->request.vc == "VC1");
  CHECK(rec->request.priority == 10);
  CHECK(rec->request.leaf_cell_type == "K80");
  CHECK(rec->request.lazy_preemption);
  REQUIRE(rec->request.members.size() == 2);
  CHECK(rec->request.members[0].pod_number == 1);
  CHECK(rec->request.members[0].leaf_cell_number == 2);
  CHECK(rec->request.members[1].pod_number == 2);
  CHECK(rec->request.members[1].leaf_cell_number == 1);
  CHECK(rec->state == hived::GroupState::kAllocated);
  CHECK(rec->placement.chain == "3-K80-NODE");
  // Pods by leaf cell number (the 1-GPU pods first), as hived's placements.
  REQUIRE(rec->placement.pods.size() == 3);
  CHECK(rec->placement.pods[0].leaf_cell_indices == std::vector<int32_t>{2});
  CHECK(rec->placement.pods[1].leaf_cell_indices == std::vector<int32_t>{3});
  CHECK(rec->placement.pods[2].leaf_cell_indices == std::vector<int32_t>{0, 1});
  CHECK(rec->placement.pods[2].preassigned_cell_types ==
        std::vector<std::string>{"K80-NODE", "K80-NODE"});
  CHECK(rec->virtual_leaf_cells.empty());

  // Moving both groups over: HiveD's recovery rule binds VC1's K80-NODE to 10.151.41.20.
  auto spec = hived::LoadClusterSpecFile(hived::testing::HivedConfigsDir() + "/basic.yaml");
  REQUIRE(spec.ok());
  auto s = hived::Scheduler::Create(*spec);
  REQUIRE(s.ok());
  auto info = (*s)->Recover(rec->request, rec->placement);
  REQUIRE(info.ok());
  CHECK_FALSE(info->downgraded);
  CHECK((*s)->GetGroup("default/train-42").state == hived::GroupState::kAllocated);
  auto vc1 = (*s)->VirtualCluster("VC1");
  REQUIRE(vc1.ok());
  REQUIRE(vc1->size() == 1);
  CHECK_THAT((*vc1)[0].physical_cell, Catch::EndsWith("10.151.41.20"));

  auto opp = hived::ImportHivedBindInfo(kOpportunisticBindInfo,
                                        "virtualCluster: VC2\npriority: -1\nleafCellNumber: "
                                        "1\naffinityGroup:\n  name: default/opp\n");
  REQUIRE(opp.ok());
  CHECK(opp->state == hived::GroupState::kOpportunistic);
  info = (*s)->Recover(opp->request, opp->placement);
  REQUIRE(info.ok());
  CHECK_FALSE(info->downgraded);
  CHECK((*s)->GetGroup("default/opp").state == hived::GroupState::kOpportunistic);
  REQUIRE((*s)->CheckInvariants().ok());

  // A record whose preassigned type the cluster does not have is downgraded (HiveD: lazy
  // preempted), with the reason.
  auto s2 = hived::Scheduler::Create(*spec);
  REQUIRE(s2.ok());
  auto other = hived::ImportHivedBindInfo(
      absl::StrReplaceAll(kBindInfo, {{"- K80-NODE", "- V100-NODE"}}), kSpec);
  REQUIRE(other.ok());
  info = (*s2)->Recover(other->request, other->placement);
  REQUIRE(info.ok());
  CHECK(info->downgraded);
  CHECK_THAT(info->reason, Catch::Contains("V100-NODE"));
}

TEST_CASE("ImportHivedBindInfo: legacy keys and a bind info without a spec",
          "[persistence][unit]") {
  const std::string legacy =
      absl::StrReplaceAll(kBindInfo, {{"physicalLeafCellIndices", "physicalGpuIndices"}});
  auto rec = hived::ImportHivedBindInfo(legacy);
  REQUIRE(rec.ok());
  CHECK(rec->request.name.empty());
  CHECK(rec->request.vc.empty());
  CHECK(rec->placement.pods.size() == 3);
  const std::string old_spec = absl::StrReplaceAll(
      kSpec, {{"leafCellType", "gpuType"}, {"    leafCellNumber", "    gpuNumber"}});
  auto rec2 = hived::ImportHivedBindInfo(kBindInfo, old_spec);
  REQUIRE(rec2.ok());
  CHECK(rec2->request.leaf_cell_type == "K80");
}

TEST_CASE("ImportHivedBindInfo: malformed annotations are located errors", "[persistence][unit]") {
  struct Case {
    std::string bind_info;
    std::string spec;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"node: [a\ncellChain: x\n", "", "pod-bind-info:"},
      {"- a\n- b\n", "", "pod-bind-info:1:1: expected a mapping, got a list"},
      {"", "", "pod-bind-info: expected a mapping, got nothing"},
      {"node: n\naffinityGroupBindInfo: []\n", "", "cellChain: missing"},
      {absl::StrReplaceAll(kBindInfo, {{"    - 3\n", "    - x\n"}}), "",
       "pod-bind-info:22:7: affinityGroupBindInfo[1].podPlacements[1]."
       "physicalLeafCellIndices[0]: expected an integer, got `x`"},
      {absl::StrReplaceAll(kBindInfo, {{"    - 3\n", "    - -3\n"}}), "",
       "physicalLeafCellIndices[0]: integer `-3` is out of range"},
      {absl::StrReplaceAll(kBindInfo, {{"    - 3\n", ""}}), "",
       "pod-bind-info:20:5: affinityGroupBindInfo[1].podPlacements[1].physicalLeafCellIndices: "
       "missing"},
      {absl::StrReplaceAll(kBindInfo, {{"    - 3\n    preassignedCellTypes:\n    - K80-NODE\n",
                                        "    - 3\n    - 4\n    preassignedCellTypes:\n    - "
                                        "K80-NODE\n    - K80-NODE\n"}}),
       "",
       "affinityGroupBindInfo[1].podPlacements[1].physicalLeafCellIndices: 2 leaf cells, but "
       "the member's first pod has 1"},
      {absl::StrReplaceAll(kBindInfo, {{"    - 2\n", "    - 2\n    - 4\n"}}), "",
       "affinityGroupBindInfo[1].podPlacements[0].preassignedCellTypes: expected a list of 2"},
      {absl::StrReplaceAll(kOpportunisticBindInfo,
                           {{"physicalNode: 10.151.41.22", "physicalNod: x"}}),
       "", "affinityGroupBindInfo[0].podPlacements[0].physicalNode: missing"},
      {absl::StrReplaceAll(kOpportunisticBindInfo, {{"cellChain: 3-K80-NODE\n", ""}}), "",
       "pod-bind-info:1:1: cellChain: missing"},
      {kBindInfo, "priority: 10\n", "pod-scheduling-spec:1:1: virtualCluster: missing"},
      {kBindInfo, absl::StrReplaceAll(kSpec, {{"priority: 10", "priority: 1001"}}),
       "pod-scheduling-spec:2:11: priority:"},
      {kBindInfo,
       absl::StrReplaceAll(kSpec, {{"lazyPreemptionEnable: true", "lazyPreemptionEnable: maybe"}}),
       "pod-scheduling-spec:5:23: lazyPreemptionEnable: expected true or false"},
      {kBindInfo, absl::StrReplaceAll(kSpec, {{"  - podNumber: 2", "  - podNumber: 3"}}),
       "affinityGroup.members: do not match the pods of pod-bind-info"},
      {kBindInfo, "virtualCluster: VC1\naffinityGroup: {name: [x]}\n",
       "affinityGroup.name: expected a string, got a list"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bind_info, c.spec);
    auto rec = hived::ImportHivedBindInfo(c.bind_info, c.spec);
    REQUIRE_FALSE(rec.ok());
    CHECK(rec.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(rec.status().message()), Catch::Contains(c.expect));
  }
}

}  // namespace
