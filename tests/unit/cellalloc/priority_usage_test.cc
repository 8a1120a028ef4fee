#include "cellalloc/priority_usage.h"

#include <cstdint>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "support/catch.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

TEST_CASE("PriorityUsage: counts leaves per priority in every ancestor", "[cellalloc][unit]") {
  absl::StatusOr<CellForest> forest = CellForest::Build(testing::BasicSpec());
  REQUIRE(forest.ok());
  PriorityUsage usage = PriorityUsage::ForForest(*forest);
  const CellId rack(0);
  const CellId node = forest->child(rack, 0);
  const CellId leaf0 = forest->first_leaf(node);
  const CellId leaf1(leaf0.value() + 1);
  const CellId leaf2(leaf0.value() + 2);
  CHECK(usage.num_cells() == forest->num_cells());
  CHECK(usage.MaxPriority(node) == kFreePriority);
  CHECK(usage.FreeLeavesFor(node, kOpportunisticPriority) == 4);

  usage.SetLeafPriority(leaf0, 5);
  usage.SetLeafPriority(leaf1, kOpportunisticPriority);
  usage.SetLeafPriority(leaf2, 5);
  REQUIRE(usage.CheckInvariants().ok());
  CHECK(usage.LeafPriority(leaf0) == 5);
  CHECK(usage.LeafPriority(CellId(leaf0.value() + 3)) == kFreePriority);
  CHECK(usage.UsedAt(node, 5) == 2);
  CHECK(usage.UsedAt(rack, kOpportunisticPriority) == 1);
  CHECK(usage.UsedAt(rack, 3) == 0);
  CHECK(usage.UsedTotal(rack) == 3);
  CHECK(usage.UsedAbove(node, 4) == 2);
  CHECK(usage.UsedAbove(node, 5) == 0);
  CHECK(usage.UsedAtOrAbove(node, 5) == 2);
  CHECK(usage.UsedAtOrAbove(node, kOpportunisticPriority) == 3);
  CHECK(usage.MaxPriority(rack) == 5);
  CHECK(usage.MaxPriority(forest->child(rack, 1)) == kFreePriority);
  // An opportunistic request takes only free leaves; priority 6 may preempt the rest.
  CHECK(usage.FreeLeavesFor(node, kOpportunisticPriority) == 1);
  CHECK(usage.FreeLeavesFor(node, 0) == 2);
  CHECK(usage.FreeLeavesFor(node, 5) == 2);
  CHECK(usage.FreeLeavesFor(node, 6) == 4);
  CHECK(usage.FreeLeavesFor(rack, 6) == 12);

  usage.SetLeafPriority(leaf0, 7);  // re-prioritise
  usage.SetLeafPriority(leaf2, kFreePriority);
  REQUIRE(usage.CheckInvariants().ok());
  CHECK(usage.MaxPriority(rack) == 7);
  CHECK(usage.UsedAt(rack, 5) == 0);
  CHECK(usage.UsedTotal(node) == 2);
  usage.SetLeafPriority(leaf0, kFreePriority);
  usage.SetLeafPriority(leaf1, kFreePriority);
  REQUIRE(usage.CheckInvariants().ok());
  CHECK(usage.UsedTotal(rack) == 0);
  CHECK(usage.MaxPriority(rack) == kFreePriority);
  CHECK(usage.MemoryBytes() > 0);
}

TEST_CASE("PriorityUsage: several priorities in one cell reuse side lists without growing",
          "[cellalloc][unit]") {
  absl::StatusOr<CellForest> forest = CellForest::Build(testing::BasicSpec());
  REQUIRE(forest.ok());
  PriorityUsage usage = PriorityUsage::ForForest(*forest);
  const CellId rack(0);
  const CellId leaf0 = forest->first_leaf(forest->child(rack, 0));
  const CellId leaf1(leaf0.value() + 1);
  const CellId leaf2(leaf0.value() + 2);
  size_t bytes = 0;
  for (int round = 0; round < 50; ++round) {
    // A middle, a highest and a lowest priority arrive, then leave in another order: the
    // inline entry moves to the side list and back.
    usage.SetLeafPriority(leaf0, 5);
    usage.SetLeafPriority(leaf1, 9);
    usage.SetLeafPriority(leaf2, kOpportunisticPriority);
    REQUIRE(usage.CheckInvariants().ok());
    CHECK(usage.MaxPriority(rack) == 9);
    CHECK(usage.UsedAt(rack, 5) == 1);
    CHECK(usage.UsedAbove(rack, kOpportunisticPriority) == 2);
    CHECK(usage.FreeLeavesFor(rack, 5) == usage.leaf_count(rack) - 2);
    usage.SetLeafPriority(leaf1, kFreePriority);  // the highest leaves: 5 moves inline
    REQUIRE(usage.CheckInvariants().ok());
    CHECK(usage.MaxPriority(rack) == 5);
    usage.SetLeafPriority(leaf2, 7);  // re-prioritised above 5
    usage.SetLeafPriority(leaf0, kFreePriority);
    REQUIRE(usage.CheckInvariants().ok());
    CHECK(usage.MaxPriority(rack) == 7);
    CHECK(usage.UsedTotal(rack) == 1);
    usage.SetLeafPriority(leaf2, kFreePriority);
    REQUIRE(usage.CheckInvariants().ok());
    CHECK(usage.MaxPriority(rack) == kFreePriority);
    if (round == 1) bytes = usage.MemoryBytes();         // after the lists reached their sizes
    if (round > 1) CHECK(usage.MemoryBytes() == bytes);  // freed side lists are reused
  }
}

TEST_CASE("PriorityUsage: works on any parent array (virtual cells)", "[cellalloc][unit]") {
  // A root with two leaves, and a lone root leaf.
  PriorityUsage usage({CellId::Nil(), CellId(0), CellId(0), CellId::Nil()}, {2, 1, 1, 1});
  usage.SetLeafPriority(CellId(2), 100);
  usage.SetLeafPriority(CellId(3), 1);
  REQUIRE(usage.CheckInvariants().ok());
  CHECK(usage.UsedAt(CellId(0), 100) == 1);
  CHECK(usage.FreeLeavesFor(CellId(0), 100) == 1);
  CHECK(usage.MaxPriority(CellId(3)) == 1);
  CHECK(usage.leaf_count(CellId(0)) == 2);
}

}  // namespace
}  // namespace hived::cellalloc
