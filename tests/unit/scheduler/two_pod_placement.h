// A two-pod placement on the design forest for the component unit tests: group "g" of VC1
// with pods of 1 and 2 leaves on the first node holding at least 3 leaves.
#ifndef HIVED_TESTS_UNIT_SCHEDULER_TWO_POD_PLACEMENT_H_
#define HIVED_TESTS_UNIT_SCHEDULER_TWO_POD_PLACEMENT_H_

#include <vector>

#include "cellalloc/cell_forest.h"
#include "hived/schedule_result.h"
#include "support/catch.h"
#include "unit/scheduler/design_forest.h"

namespace hived::testdata {

struct TwoPodPlacement {
  ChainId chain;
  std::vector<CellId> leaves;  // pod 0: leaves[0]; pod 1: leaves[1], leaves[2]
  GroupRequest request;
  Placement placement;
};

inline TwoPodPlacement MakeTwoPodPlacement(const cellalloc::CellForest& f) {
  TwoPodPlacement x;
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

// The placement together with the design forest it lives in.
struct DesignTwoPods : TwoPodPlacement {
  cellalloc::CellForest forest;
};

inline DesignTwoPods MakeDesignTwoPods() {
  DesignTwoPods x{{}, DesignForest()};
  static_cast<TwoPodPlacement&>(x) = MakeTwoPodPlacement(x.forest);
  return x;
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SCHEDULER_TWO_POD_PLACEMENT_H_
