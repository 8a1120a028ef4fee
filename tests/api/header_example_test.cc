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
