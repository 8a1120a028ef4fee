// Placer (src/placer.h): the leaf choice inside a node on a physical node of HiveD's design
// config, checked against rule 5 and the Placer's invariants directly (the node choice is
// checked against two reference implementations in tests/unit/scheduler_oracle/).
#include "src/placer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "support/catch.h"
#include "unit/scheduler/design_forest.h"

namespace hived {
namespace {

struct World {
  cellalloc::CellForest forest;
  cellalloc::PriorityUsage pusage;
  cellalloc::PriorityUsage vusage;
  std::vector<state::VCell> vcells;
};

World MakeWorld() {
  World w{testdata::DesignForest(), {}, {}, {}};
  const size_t n = static_cast<size_t>(w.forest.num_cells());
  std::vector<CellId> parents(n);
  std::vector<int32_t> leaves(n);
  for (size_t i = 0; i < n; ++i) {
    parents[i] = w.forest.parent(CellId(static_cast<uint32_t>(i)));
    leaves[i] = w.forest.leaf_count(CellId(static_cast<uint32_t>(i)));
  }
  w.pusage = cellalloc::PriorityUsage(std::move(parents), std::move(leaves));
  return w;
}

// The first node cell with 8 leaves (a DGX1 node: socket / PCI switch / GPU pairs).
CellId EightLeafNode(const cellalloc::CellForest& f) {
  for (int32_t i = 0; i < f.num_nodes(); ++i) {
    const CellId c = f.node_cells(NodeId(static_cast<uint32_t>(i)))[0];
    if (f.leaf_count(c) == 8 && f.level(c) == 4) return c;
  }
  FAIL("no 8-leaf node of 4 levels in the design config");
  return CellId::Nil();
}

// The lowest common ancestor level of `leaves`.
CellLevel SpanLevel(const cellalloc::CellForest& f, const std::vector<uint32_t>& leaves) {
  CellId x(leaves.front());
  auto covers = [&](CellId c) {
    return std::all_of(leaves.begin(), leaves.end(), [&](uint32_t l) {
      for (CellId y(l); !y.IsNil(); y = f.parent(y)) {
        if (y == c) return true;
      }
      return false;
    });
  };
  while (!covers(x)) x = f.parent(x);
  return f.level(x);
}

TEST_CASE("Placer: a pod takes the lowest cell holding it, free leaves first, never twice",
          "[scheduler][unit]") {
  World w = MakeWorld();
  const cellalloc::CellForest& f = w.forest;
  Placer placer(&f, &w.vcells, &w.pusage, &w.vusage);
  REQUIRE(placer.CheckInvariants().ok());
  const CellId node = EightLeafNode(f);

  // Rule 5: 2 leaves come from one PCI switch (level 2), 4 from one socket (level 3).
  std::vector<uint32_t> two, four;
  placer.ChooseLeaves<true>(node.value(), 2, kOpportunisticPriority, &two);
  REQUIRE(two.size() == 2);
  CHECK(SpanLevel(f, two) == 2);
  placer.ChooseLeaves<true>(node.value(), 4, kOpportunisticPriority, &four);
  REQUIRE(four.size() == 4);
  CHECK(SpanLevel(f, four) == 3);
  // Invariant 2: the second pod avoids the first pod's leaves.
  for (uint32_t l : four) CHECK(std::find(two.begin(), two.end(), l) == two.end());
  CHECK_FALSE(placer.CheckInvariants().ok());  // scratch in use
  placer.ClearTaken();
  REQUIRE(placer.CheckInvariants().ok());  // invariant 1

  // A leaf used at priority 5: a priority-3 pod cannot take it; a priority-7 pod takes the
  // free leaves first and the used one only when it needs all of them.
  const CellId used(f.first_leaf(node).value());
  w.pusage.SetLeafPriority(used, 5);
  std::vector<uint32_t> low;
  placer.ChooseLeaves<true>(node.value(), 7, 3, &low);
  CHECK(std::find(low.begin(), low.end(), used.value()) == low.end());
  placer.ClearTaken();
  std::vector<uint32_t> high;
  placer.ChooseLeaves<true>(node.value(), 8, 7, &high);
  REQUIRE(high.size() == 8);
  CHECK(high.back() == used.value());  // preemptible leaves after the free ones
  placer.ClearTaken();
  REQUIRE(placer.CheckInvariants().ok());
}

TEST_CASE("Placer: CheckInvariants reports suggested nodes left marked", "[scheduler][unit]") {
  World w = MakeWorld();
  Placer placer(&w.forest, &w.vcells, &w.pusage, &w.vusage);
  placer.suggested().Mark({w.forest.node_name(NodeId(0))});
  const absl::Status st = placer.CheckInvariants();
  CHECK(st.code() == absl::StatusCode::kInternal);
  CHECK(std::string(st.message()).find("(1)") != std::string::npos);
  placer.suggested().Clear();
  CHECK(placer.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
