// PhysicalCells (src/physical_cells.h): the physical side of the cluster state on the
// three-rack cluster of three_racks.h; each invariant holds after building and after legal
// changes, and CheckInvariants names the invariant a broken state breaks.
#include "src/physical_cells.h"

#include <string>
#include <utility>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "hived/config.h"
#include "support/catch.h"
#include "unit/scheduler/three_racks.h"

namespace hived {
namespace {

using testdata::kLeaf;
using testdata::kNode;
using testdata::kYaml;

struct Physical {
  cellalloc::CellForest forest;
  std::vector<state::View> views;
  PhysicalCells cells;

  explicit Physical(cellalloc::CellForest f) : forest(std::move(f)) {
    cells.Build(&forest);
    cells.AddViews(&views);
  }
  CellId First(CellLevel level, int skip = 0) const {
    for (int32_t i = 0; i < forest.num_cells(); ++i) {
      CellId c(static_cast<uint32_t>(i));
      if (forest.level(c) == level && skip-- == 0) return c;
    }
    return CellId::Nil();
  }
};

Physical Make() {
  ClusterSpec spec = *LoadClusterSpecString(kYaml);
  absl::StatusOr<cellalloc::CellForest> forest = cellalloc::CellForest::Build(spec);
  REQUIRE(forest.ok());
  return Physical(*std::move(forest));
}

bool Breaks(const absl::Status& s, const std::string& invariant) {
  return !s.ok() && std::string(s.message()).find(invariant) != std::string::npos;
}

TEST_CASE("PhysicalCells: builds every leaf free and one view per chain in topology order",
          "[scheduler][unit]") {
  Physical p = Make();
  REQUIRE(p.cells.CheckInvariants(p.views).ok());
  REQUIRE(p.views.size() == 1);  // one chain
  const state::View& view = p.views[0];
  CHECK(view.physical);
  REQUIRE(view.nodes.size() == 6);
  CHECK(view.total_leaves == 24);
  for (size_t k = 0; k < view.nodes.size(); ++k) {
    const CellId node(view.nodes[k]);
    CHECK(p.forest.is_node_level(node));
    CHECK(p.cells.view_pos(node) == static_cast<int32_t>(k));
    CHECK(p.cells.node_cell(node) == node);
    if (k > 0) CHECK(p.forest.address(CellId(view.nodes[k - 1])) < p.forest.address(node));
  }
  for (int32_t i = 0; i < p.forest.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    if (p.forest.level(c) == kLeaf) {
      CHECK(p.cells.user(c) == kNilId);
      CHECK(p.cells.reserver(c) == kNilId);
      CHECK(p.cells.usage().LeafPriority(c) == kFreePriority);
      CHECK(p.forest.is_node_level(p.cells.node_cell(c)));
    }
    if (p.forest.level(c) > kNode) {
      CHECK(p.cells.node_cell(c).IsNil());
      CHECK(p.cells.view_pos(c) == -1);
    }
  }
}

TEST_CASE("PhysicalCells: a used or reserved leaf counts in the usage up to the top",
          "[scheduler][unit]") {
  Physical p = Make();
  const CellId leaf = p.First(kLeaf, 5);
  const CellId node = p.cells.node_cell(leaf);
  p.cells.SetUser(leaf, 7);
  CHECK(p.cells.SetLeafPriority(leaf, 3) == kFreePriority);
  CHECK(p.cells.CheckInvariants(p.views).ok());
  CHECK(p.cells.usage().UsedTotal(node) == 1);
  CHECK(p.cells.usage().MaxPriority(node) == 3);
  // Reserving: a higher-priority reserver over the user.
  p.cells.SetReserver(leaf, 8);
  CHECK(p.cells.SetLeafPriority(leaf, 5) == 3);
  CHECK(p.cells.CheckInvariants(p.views).ok());
  // The user leaves (Reserved), then the reserver (Free).
  p.cells.SetUser(leaf, kNilId);
  CHECK(p.cells.CheckInvariants(p.views).ok());
  p.cells.SetReserver(leaf, kNilId);
  CHECK(p.cells.SetLeafPriority(leaf, kFreePriority) == 5);
  CHECK(p.cells.CheckInvariants(p.views).ok());
  CHECK(p.cells.usage().UsedTotal(node) == 0);
}

TEST_CASE("PhysicalCells: CheckInvariants names the invariant a broken state breaks",
          "[scheduler][unit]") {
  SECTION("(1) a user on a cell that is not a leaf") {
    Physical p = Make();
    p.cells.SetUser(p.First(kNode), 1);
    CHECK(Breaks(p.cells.CheckInvariants(p.views), "(1)"));
  }
  SECTION("(4) a held leaf that is free, and a used leaf nobody holds") {
    Physical p = Make();
    const CellId leaf = p.First(kLeaf, 2);
    p.cells.SetReserver(leaf, 4);
    CHECK(Breaks(p.cells.CheckInvariants(p.views), "(4)"));
    p.cells.SetReserver(leaf, kNilId);
    p.cells.SetLeafPriority(leaf, 2);
    CHECK(Breaks(p.cells.CheckInvariants(p.views), "(4)"));
  }
  SECTION("(3) a view whose nodes are not in their recorded positions") {
    Physical p = Make();
    std::swap(p.views[0].nodes[0], p.views[0].nodes[1]);
    CHECK(Breaks(p.cells.CheckInvariants(p.views), "(3)"));
  }
  SECTION("(3) a missing physical view") {
    Physical p = Make();
    std::vector<state::View> none;
    CHECK(Breaks(p.cells.CheckInvariants(none), "(3)"));
  }
}

}  // namespace
}  // namespace hived
