// The three-rack cluster of the VirtualClusters and recovery unit tests: the allocator,
// health and virtual clusters built from it as the scheduler builds them.
#ifndef HIVED_TESTS_UNIT_SCHEDULER_THREE_RACKS_H_
#define HIVED_TESTS_UNIT_SCHEDULER_THREE_RACKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "hived/config.h"
#include "src/cluster_state.h"
#include "src/health.h"
#include "src/virtual_clusters.h"
#include "support/catch.h"

namespace hived::testdata {

// Three racks of two 4-GPU nodes; node n2 is pinned by beta. alpha: a node and two
// 2-GPU cells; beta: a rack and the pinned node.
inline constexpr char kYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    G-2:
      childCellType: G
      childCellNumber: 2
    G-NODE:
      childCellType: G-2
      childCellNumber: 2
      isNodeLevel: true
    G-RACK:
      childCellType: G-NODE
      childCellNumber: 2
  physicalCells:
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n0
    - cellAddress: n1
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n2
      pinnedCellId: P1
    - cellAddress: n3
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n4
    - cellAddress: n5
virtualClusters:
  alpha:
    virtualCells:
    - cellType: G-RACK.G-NODE
      cellNumber: 1
    - cellType: G-RACK.G-NODE.G-2
      cellNumber: 2
  beta:
    virtualCells:
    - cellType: G-RACK
      cellNumber: 1
    pinnedCells:
    - pinnedCellId: P1
)yaml";

// Two racks of two 2-GPU nodes, every GPU reserved: a holds a GPU and a rack, b a GPU and
// a node. Once b's GPU is bound on m0, the free cells are a GPU (m0), a node (m1) and a rack
// (rack 1): every level of the chain is tight, the node level included (the joint safety
// tests: recovery_binding_test.cc, tests/regression/joint_safety_test.cc).
inline constexpr char kTightNodesYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    G-NODE:
      childCellType: G
      childCellNumber: 2
      isNodeLevel: true
    G-RACK:
      childCellType: G-NODE
      childCellNumber: 2
  physicalCells:
  - cellType: G-RACK
    cellChildren:
    - cellAddress: m0
    - cellAddress: m1
  - cellType: G-RACK
    cellChildren:
    - cellAddress: m2
    - cellAddress: m3
virtualClusters:
  a:
    virtualCells:
    - cellType: G-RACK.G-NODE.G
      cellNumber: 1
    - cellType: G-RACK
      cellNumber: 1
  b:
    virtualCells:
    - cellType: G-RACK.G-NODE.G
      cellNumber: 1
    - cellType: G-RACK.G-NODE
      cellNumber: 1
)yaml";

inline constexpr CellLevel kLeaf = 1, kPair = 2, kNode = 3, kRack = 4;

// The allocator, health and virtual clusters of kYaml (or of another config whose top
// chain is G-RACK), built as the scheduler builds them.
struct Fixture {
  cellalloc::CellForest forest;
  cellalloc::BuddyAllocator buddy;
  Health health;
  std::vector<state::View> views;
  VirtualClusters vc;
  ChainId ch;

  Fixture(cellalloc::CellForest f, const char* yaml)
      : forest(std::move(f)), buddy(&forest), health(&forest, &buddy) {
    ClusterSpec spec = *LoadClusterSpecString(yaml);
    REQUIRE(vc.Build(spec, &forest, &buddy, &health).ok());
    vc.AddViews(spec, &views);
    REQUIRE(vc.BindPinned().ok());
    ch = forest.FindChain("G-RACK");
  }

  // The first cell of `level` the allocator can hand out (Nil when none).
  CellId Available(CellLevel level, size_t skip = 0) const {
    for (int32_t i = 0; i < forest.num_cells(); ++i) {
      CellId c(static_cast<uint32_t>(i));
      if (forest.level(c) == level && buddy.IsAvailable(c) && skip-- == 0) return c;
    }
    return CellId::Nil();
  }
  VCellId Root(const std::string& vc_name, CellLevel level, size_t i = 0) const {
    const VcId v = vc.FindVc(vc_name);
    return vc.vcs()[v.value()].cl[ch.value()][static_cast<size_t>(level)].roots.at(i);
  }
  int32_t Free(const std::string& vc_name, CellLevel level) const {
    const VcId v = vc.FindVc(vc_name);
    return vc.vcs()[v.value()].cl[ch.value()][static_cast<size_t>(level)].free;
  }
  int32_t AllFree(CellLevel level) const { return vc.all_free(ch)[static_cast<size_t>(level)]; }
  // The first leaf (lowest id) below virtual cell `v`, and below physical cell `p`.
  VCellId FirstVLeaf(VCellId v) const {
    while (vc.cells()[v].level > 1) v = vc.cells()[v].first_child;
    return v;
  }
  CellId FirstPLeaf(CellId p) const {
    while (forest.level(p) > 1) p = forest.child(p, 0);
    return p;
  }
};

inline Fixture MakeFixture(const char* yaml = kYaml) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(yaml);
  REQUIRE(spec.ok());
  absl::StatusOr<cellalloc::CellForest> forest = cellalloc::CellForest::Build(*spec);
  REQUIRE(forest.ok());
  return Fixture(*std::move(forest), yaml);
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SCHEDULER_THREE_RACKS_H_
