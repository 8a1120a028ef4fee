// The example at the top of hived/scheduler.h, compiled here as C++17 with -Wpedantic
// (designated initialisers would not compile) and run on a small cluster. snippets_test.cc
// checks that the header shows exactly this code.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"

namespace hived {
namespace {

absl::Status HeaderExample() {
  // [snippet: scheduler.h example]
  auto spec = hived::LoadClusterSpecFile("cluster.yaml");
  if (!spec.ok()) return spec.status();
  auto scheduler = hived::Scheduler::Create(*spec);
  if (!scheduler.ok()) return scheduler.status();
  hived::GroupRequest req;
  req.name = "g1";
  req.vc = "VC1";
  req.members = {{/*pod_number=*/1, /*leaf_cell_number=*/8}};
  auto result = (*scheduler)->Schedule(req, hived::Phase::kPreempting);
  if (!result.ok()) return result.status();
  if (result->outcome == hived::Outcome::kPlaced) {
    auto info = (*scheduler)->Allocate(req, result->placement);
    if (!info.ok()) return info.status();
    if (info->downgraded) std::cerr << "g1 runs opportunistically: " << info->reason;
  }
  // [end snippet]
  if (result->outcome != Outcome::kPlaced) return absl::InternalError("g1 was not placed");
  if ((*scheduler)->GetGroup("g1").state != GroupState::kAllocated) {
    return absl::InternalError("g1 does not run");
  }
  return absl::OkStatus();
}

hived::ClusterSpec SpecExample() {
  // [snippet: cluster_spec.h example]
  hived::ClusterSpec spec;
  spec.cell_types = {{"K80-2GPU", "K80", 2, false},
                     {"K80-NODE", "K80-2GPU", 2, true},
                     {"3-K80-NODE", "K80-NODE", 3, false}};
  hived::PhysicalCellSpec rack;
  rack.cell_type = "3-K80-NODE";
  for (const char* node : {"10.151.41.20", "10.151.41.21", "10.151.41.22"}) {
    hived::PhysicalCellSpec cell;
    cell.cell_address = node;
    rack.cell_children.push_back(cell);
  }
  rack.cell_children[1].pinned_cell_id = "VC2-K80";
  spec.physical_cells = {rack};
  spec.virtual_clusters = {{"VC1", {{"3-K80-NODE.K80-NODE", 1}}, {}},
                           {"VC2", {{"3-K80-NODE.K80-NODE", 1}}, {{"VC2-K80"}}}};
  // [end snippet]
  return spec;
}

TEST_CASE("hived/cluster_spec.h: the header example is HiveD's basic config, in C++17",
          "[api][unit]") {
  const ClusterSpec spec = SpecExample();
  CHECK(ValidateClusterSpec(spec).empty());
  absl::StatusOr<ClusterSpec> basic = LoadClusterSpecFile(
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/hived-configs/basic.yaml");
  REQUIRE(basic.ok());
  CHECK(ClusterSpecToYaml(spec) == ClusterSpecToYaml(*basic));
}

constexpr char kCluster[] = R"(physicalCluster:
  cellTypes:
    NODE: {childCellType: GPU, childCellNumber: 8, isNodeLevel: true}
  physicalCells:
  - {cellType: NODE, cellAddress: node-0}
virtualClusters:
  VC1:
    virtualCells: [{cellType: NODE, cellNumber: 1}]
)";

TEST_CASE("hived/scheduler.h: the header example compiles as C++17 and runs", "[api][unit]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("hived-header-example-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cluster.yaml") << kCluster;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const absl::Status status = HeaderExample();
  std::filesystem::current_path(before);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  INFO(status.ToString());
  CHECK(status.ok());
}

}  // namespace
}  // namespace hived
