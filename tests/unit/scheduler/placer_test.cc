// Placer (src/placer.h): the leaf choice inside a node on a physical node of HiveD's design
// config, checked against rule 5 and the Placer's invariants directly (the node choice is
// checked against two reference implementations in tests/unit/scheduler_oracle/).
#include "src/placer.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "support/catch.h"
#include "support/property_knobs.h"
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

// A one-leaf pod (the walk-down path of ChooseLeaves) against rule 5's reference: the
// first free leaf not yet taken in depth-first order, else the first one used below the
// pod's priority. Random leaf priorities and request priorities; pods taken one after the
// other until the node has no usable leaf left.
TEST_CASE(
    "Placer: a one-leaf pod takes the first free leaf depth-first, else the first "
    "preemptible one",
    "[scheduler][property]") {
  World w = MakeWorld();
  const cellalloc::CellForest& f = w.forest;
  Placer placer(&f, &w.vcells, &w.pusage, &w.vusage);
  const CellId node = EightLeafNode(f);
  std::vector<CellId> dfs;  // the node's leaves in depth-first order
  std::vector<CellId> stack = {node};
  while (!stack.empty()) {
    const CellId c = stack.back();
    stack.pop_back();
    if (f.level(c) == 1) {
      dfs.push_back(c);
      continue;
    }
    for (int32_t k = f.num_children(c) - 1; k >= 0; --k) stack.push_back(f.child(c, k));
  }
  REQUIRE(dfs.size() == 8);
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 200);
       ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    for (CellId l : dfs) {
      const uint64_t r = rng() % 4;
      w.pusage.SetLeafPriority(
          l, r == 0 ? kFreePriority : static_cast<Priority>(rng() % 12) - 1);  // -1..10
    }
    const Priority q = static_cast<Priority>(rng() % 12) - 1;
    CAPTURE(q);
    std::vector<bool> taken(dfs.size(), false);
    for (int pod = 0; pod < 8; ++pod) {
      int32_t expected = -1;
      for (size_t i = 0; i < dfs.size() && expected < 0; ++i) {
        if (!taken[i] && w.pusage.LeafPriority(dfs[i]) == kFreePriority) {
          expected = static_cast<int32_t>(i);
        }
      }
      for (size_t i = 0; i < dfs.size() && expected < 0; ++i) {
        const Priority p = w.pusage.LeafPriority(dfs[i]);
        if (!taken[i] && p != kFreePriority && p < q) expected = static_cast<int32_t>(i);
      }
      if (expected < 0) break;  // no usable leaf: the caller never asks
      std::vector<uint32_t> got;
      placer.ChooseLeaves<true>(node.value(), 1, q, &got);
      REQUIRE(got.size() == 1);
      CHECK(got[0] == dfs[static_cast<size_t>(expected)].value());
      taken[static_cast<size_t>(expected)] = true;
    }
    placer.ClearTaken();
    REQUIRE(placer.CheckInvariants().ok());
  }
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
