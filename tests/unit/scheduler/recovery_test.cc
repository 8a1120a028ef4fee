// Recovery (src/recovery.h): ResolvePlacement over the design forest. A valid placement
// resolves to its leaves in pod order (invariants 1, 2); an unknown node, an index the
// node does not have, a leaf listed twice or pods that do not match the members are
// kInvalidArgument naming the group and the pod; kIgnore skips and names missing leaves.
#include "src/recovery.h"

#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "support/catch.h"
#include "unit/scheduler/two_pod_placement.h"

namespace hived {
namespace {

using Fixture = testdata::DesignTwoPods;
// Group "g": pods of 1 and 2 leaves on the first node with at least 3 leaves.
Fixture Make() { return testdata::MakeDesignTwoPods(); }

std::string Error(const Fixture& x, const Placement& p, MissingLeaves m = MissingLeaves::kError) {
  ResolvedPlacement out;
  absl::Status s = ResolvePlacement(x.forest, x.request, p, m, &out);
  REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST_CASE("Recovery: a valid placement resolves to its leaves in pod order", "[scheduler][unit]") {
  Fixture x = Make();
  for (MissingLeaves m : {MissingLeaves::kError, MissingLeaves::kIgnore}) {
    ResolvedPlacement out;
    REQUIRE(ResolvePlacement(x.forest, x.request, x.placement, m, &out).ok());
    CHECK(out.leaves == x.leaves);
    CHECK(out.types == std::vector<const std::string*>(3, nullptr));
    CHECK(out.missing.empty());
    for (CellId c : out.leaves) CHECK(x.forest.level(c) == 1);
  }
  // Preassigned types are passed through per leaf.
  Placement typed = x.placement;
  typed.pods[1].preassigned_cell_types = {"A", "B"};
  ResolvedPlacement out;
  REQUIRE(ResolvePlacement(x.forest, x.request, typed, MissingLeaves::kError, &out).ok());
  REQUIRE(out.types.size() == 3);
  CHECK(out.types[0] == nullptr);
  CHECK(*out.types[2] == "B");
}

TEST_CASE("Recovery: invalid placements are kInvalidArgument naming the group and pod",
          "[scheduler][unit]") {
  Fixture x = Make();
  Placement p = x.placement;
  p.pods[1].leaf_cell_indices[1] = 99;
  CHECK(Error(x, p).find("group g, pod 1 on node " + p.pods[1].node +
                         ": leaf cell 99 is not in the cluster") == 0);
  p = x.placement;
  p.pods[0].node = "no-such-node";
  CHECK(Error(x, p) == "group g, pod 0: node no-such-node is not in the cluster");
  p = x.placement;
  p.pods[1].leaf_cell_indices[1] = p.pods[1].leaf_cell_indices[0];
  CHECK(Error(x, p).find("is listed twice") != std::string::npos);
  p = x.placement;
  p.pods[1].leaf_cell_indices.pop_back();
  CHECK(Error(x, p).find("group g, pod 1 on node") == 0);
  p = x.placement;
  p.pods.pop_back();
  CHECK(Error(x, p).find("1 pod(s) with 2 leaf cells missing") != std::string::npos);
  p = x.placement;
  p.pods[0].preassigned_cell_types = {"A", "B"};
  CHECK(Error(x, p).find("preassigned cell types") != std::string::npos);
  // Duplicates and shape errors are errors in either mode.
  p = x.placement;
  p.pods[1].leaf_cell_indices[1] = p.pods[1].leaf_cell_indices[0];
  CHECK(Error(x, p, MissingLeaves::kIgnore).find("is listed twice") != std::string::npos);
}

TEST_CASE("Recovery: kIgnore skips leaves the cluster does not have and names them",
          "[scheduler][unit]") {
  Fixture x = Make();
  Placement p = x.placement;
  p.pods[1].leaf_cell_indices[1] = 99;
  p.pods[0].node = "gone";
  ResolvedPlacement out;
  REQUIRE(ResolvePlacement(x.forest, x.request, p, MissingLeaves::kIgnore, &out).ok());
  CHECK(out.leaves == std::vector<CellId>{x.leaves[1]});
  CHECK(out.types.size() == out.leaves.size());
  CHECK(out.missing ==
        std::vector<std::string>{"gone:" + std::to_string(x.placement.pods[0].leaf_cell_indices[0]),
                                 p.pods[1].node + ":99"});
}

}  // namespace
}  // namespace hived
