// DecisionCache (src/decision_cache.h): an Allocate matches the stored decision only when it
// is exactly that decision at the same epoch; the invariants hold after every operation.
#include "src/decision_cache.h"

#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "support/catch.h"
#include "unit/scheduler/design_forest.h"

namespace hived {
namespace {

struct Fixture {
  cellalloc::CellForest forest;
  ChainId chain;
  std::vector<CellId> leaves;  // two pods: 1 leaf, then 2 leaves, on the first node
  GroupRequest request;
  Placement placement;
};

Fixture Make() {
  Fixture x{testdata::DesignForest(), ChainId(0), {}, {}, {}};
  const cellalloc::CellForest& f = x.forest;
  // The first node cell with at least 3 leaves.
  NodeId n(0);
  while (f.leaf_count(f.node_cells(n)[0]) < 3) {
    n = NodeId(n.value() + 1);
    REQUIRE(n.value() < static_cast<uint32_t>(f.num_nodes()));
  }
  const CellId node = f.node_cells(n)[0];
  x.chain = f.chain(node);
  const CellId first = f.first_leaf(node);
  for (uint32_t i = 0; i < 3; ++i) x.leaves.push_back(CellId(first.value() + i));
  x.request.name = "g";
  x.request.vc = "VC1";
  x.request.priority = 1;
  x.request.members = {{1, 1}, {1, 2}};
  x.placement.chain = f.chain_info(x.chain).name;
  PodPlacement a;
  a.node = f.node_name(n);
  a.leaf_cell_number = 1;
  a.leaf_cell_indices = {f.leaf_index(x.leaves[0])};
  PodPlacement b = a;
  b.leaf_cell_number = 2;
  b.leaf_cell_indices = {f.leaf_index(x.leaves[1]), f.leaf_index(x.leaves[2])};
  x.placement.pods = {a, b};
  return x;
}

TEST_CASE("DecisionCache: matches exactly the stored decision at the same epoch",
          "[scheduler][unit]") {
  Fixture x = Make();
  DecisionCache cache;
  REQUIRE(cache.CheckInvariants().ok());
  CHECK_FALSE(cache.Matches(x.request, x.placement, x.forest, 0));  // empty

  std::vector<CellId> pleaves = x.leaves;
  std::vector<VCellId> vleaves = {7, 8, 9};
  cache.Store("g", 5, x.chain, {1, 2}, &pleaves, &vleaves);
  REQUIRE(cache.CheckInvariants().ok());
  CHECK(cache.pleaves() == x.leaves);
  CHECK(cache.vleaves() == std::vector<VCellId>{7, 8, 9});
  CHECK(cache.Matches(x.request, x.placement, x.forest, 5));

  SECTION("a later epoch is stale") {
    CHECK_FALSE(cache.Matches(x.request, x.placement, x.forest, 6));
    CHECK(cache.StoredBefore("g", 6, x.leaves));  // Allocate's own epoch bump
    CHECK_FALSE(cache.StoredBefore("g", 7, x.leaves));
  }
  SECTION("another group, device, pod size or chain does not match") {
    GroupRequest other = x.request;
    other.name = "h";
    CHECK_FALSE(cache.Matches(other, x.placement, x.forest, 5));
    Placement moved = x.placement;
    moved.pods[1].leaf_cell_indices[1] += 100;
    CHECK_FALSE(cache.Matches(x.request, moved, x.forest, 5));
    GroupRequest bigger = x.request;
    bigger.members[1].leaf_cell_number = 3;
    CHECK_FALSE(cache.Matches(bigger, x.placement, x.forest, 5));
    Placement chain = x.placement;
    chain.chain = "no-such-chain";
    CHECK_FALSE(cache.Matches(x.request, chain, x.forest, 5));
  }
  SECTION("invalidated, nothing matches (invariant 2)") {
    cache.Invalidate();
    CHECK_FALSE(cache.Matches(x.request, x.placement, x.forest, 5));
    CHECK(cache.CheckInvariants().ok());
  }
}

TEST_CASE("DecisionCache: CheckInvariants names a decision whose leaves do not fit its pods",
          "[scheduler][unit]") {
  Fixture x = Make();
  DecisionCache cache;
  std::vector<CellId> pleaves = x.leaves;
  std::vector<VCellId> vleaves = {7, 8};  // one short
  cache.Store("g", 1, x.chain, {1, 2}, &pleaves, &vleaves);
  const absl::Status st = cache.CheckInvariants();
  CHECK(st.code() == absl::StatusCode::kInternal);
  CHECK(std::string(st.message()).find("(1)") != std::string::npos);
}

}  // namespace
}  // namespace hived
