// SuggestedNodes (src/suggested_nodes.h): marks and per-cell counts for one request, checked
// against its invariants on HiveD's design config (several chains, nodes in more than one).
#include "src/suggested_nodes.h"

#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "support/catch.h"
#include "unit/scheduler/design_forest.h"

namespace hived {
namespace {

using testdata::DesignForest;

TEST_CASE("SuggestedNodes: counts each suggested node once in every cell above it",
          "[scheduler][unit]") {
  const cellalloc::CellForest f = DesignForest();
  SuggestedNodes s(&f);
  REQUIRE(s.CheckInvariants().ok());
  CHECK_FALSE(s.active());
  REQUIRE(f.num_nodes() >= 2);
  const NodeId n0(0), n1(1);
  CHECK(s.Allows(n0));  // off: every node is allowed

  // A name given twice and an unknown name: n0 counts once, the unknown one not at all.
  s.Mark({f.node_name(n0), "no-such-node", f.node_name(n0)});
  REQUIRE(s.CheckInvariants().ok());
  CHECK(s.active());
  CHECK(s.Allows(n0));
  CHECK_FALSE(s.Allows(n1));
  for (CellId c : f.node_cells(n0)) {
    for (CellId x = c; !x.IsNil(); x = f.parent(x)) CHECK(s.cell_count(x) == 1);
  }
  cellalloc::PlanContext context;
  s.FillPlanContext(&context);
  REQUIRE(context.node_suggested != nullptr);
  CHECK((*context.node_suggested)[n0.value()] == 1);
  CHECK((*context.cell_suggested)[f.node_cells(n0)[0].value()] == 1);

  s.Clear();
  REQUIRE(s.CheckInvariants().ok());
  for (int32_t c = 0; c < f.num_cells(); ++c)
    CHECK(s.cell_count(CellId(static_cast<uint32_t>(c))) == 0);
  cellalloc::PlanContext unfiltered;
  s.FillPlanContext(&unfiltered);
  CHECK(unfiltered.node_suggested == nullptr);
  CHECK(unfiltered.cell_suggested == nullptr);
}

TEST_CASE("SuggestedNodes: two nodes under one parent count two there", "[scheduler][unit]") {
  const cellalloc::CellForest f = DesignForest();
  SuggestedNodes s(&f);
  // Every pair of nodes: the lowest common cell above both counts 2; marks clear exactly.
  for (int32_t a = 0; a < f.num_nodes(); ++a) {
    for (int32_t b = a + 1; b < f.num_nodes(); ++b) {
      const NodeId na(static_cast<uint32_t>(a)), nb(static_cast<uint32_t>(b));
      s.Mark({f.node_name(na), f.node_name(nb)});
      REQUIRE(s.CheckInvariants().ok());
      for (CellId ca : f.node_cells(na)) {
        for (CellId cb : f.node_cells(nb)) {
          for (CellId x = f.parent(ca); !x.IsNil(); x = f.parent(x)) {
            bool above_b = false;
            for (CellId y = cb; !y.IsNil(); y = f.parent(y)) above_b = above_b || y == x;
            if (above_b) CHECK(s.cell_count(x) >= 2);
          }
        }
      }
      s.Clear();
    }
  }
  REQUIRE(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
