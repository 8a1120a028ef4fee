#include "cellalloc/buddy_allocator.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "hived/cluster_spec.h"
#include "support/catch.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

CellForest MustBuild(const ClusterSpec& spec) {
  absl::StatusOr<CellForest> forest = CellForest::Build(spec);
  INFO(forest.status().ToString());
  REQUIRE(forest.ok());
  return *std::move(forest);
}

void RequireValid(const BuddyAllocator& alloc) {
  absl::Status status = alloc.CheckInvariants();
  INFO(status.ToString());
  REQUIRE(status.ok());
}

std::vector<int32_t> FreeCounts(const BuddyAllocator& alloc, ChainId ch) {
  std::vector<int32_t> out;
  for (CellLevel l = 1; l <= alloc.forest().chain_info(ch).top_level; ++l) {
    out.push_back(alloc.free_count(ch, l));
  }
  return out;
}

std::vector<int32_t> Obtainable(const BuddyAllocator& alloc, ChainId ch) {
  std::vector<int32_t> out;
  for (CellLevel l = 1; l <= alloc.forest().chain_info(ch).top_level; ++l) {
    out.push_back(alloc.obtainable(ch, l));
  }
  return out;
}

std::vector<int32_t> BadFree(const BuddyAllocator& alloc, ChainId ch) {
  std::vector<int32_t> out;
  for (CellLevel l = 1; l <= alloc.forest().chain_info(ch).top_level; ++l) {
    out.push_back(alloc.bad_free(ch, l));
  }
  return out;
}

std::vector<CellId> FreeList(const BuddyAllocator& alloc, ChainId ch, CellLevel level) {
  std::vector<CellId> out;
  alloc.ForEachFree(ch, level, [&](CellId c) {
    out.push_back(c);
    return true;
  });
  return out;
}

// One rack of 2 DGX-1-like nodes: levels GPU 1, switch 2, socket 3, node 4, rack 5.
TEST_CASE("BuddyAllocator: starts with only top-level cells free", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(2, 2));
  BuddyAllocator alloc(&forest);
  RequireValid(alloc);
  const ChainId ch(0);
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{0, 0, 0, 0, 2});
  CHECK(Obtainable(alloc, ch) == std::vector<int32_t>{32, 16, 8, 4, 2});
  CHECK(alloc.state(CellId(0)) == BuddyState::kFree);
  CHECK(alloc.state(forest.child(CellId(0), 0)) == BuddyState::kCovered);
  CHECK(alloc.IsAvailable(forest.first_leaf(CellId(1))));
  CHECK(FreeList(alloc, ch, 5) == std::vector<CellId>{CellId(0), CellId(1)});
}

TEST_CASE("BuddyAllocator: splits a higher-level cell down through every level",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(1, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const CellId gpu = alloc.Allocate(ch, 1);
  RequireValid(alloc);
  REQUIRE_FALSE(gpu.IsNil());
  CHECK(gpu == forest.first_leaf(CellId(0)));
  CHECK(alloc.state(gpu) == BuddyState::kUsed);
  // Each split left one free buddy at every level below the rack.
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{1, 1, 1, 1, 0});
  CHECK(Obtainable(alloc, ch) == std::vector<int32_t>{15, 7, 3, 1, 0});
  for (CellId a = forest.parent(gpu); !a.IsNil(); a = forest.parent(a)) {
    CHECK(alloc.state(a) == BuddyState::kSplit);
  }
  // The next GPU takes the free buddy without splitting.
  const CellId gpu2 = alloc.Allocate(ch, 1);
  CHECK(forest.parent(gpu2) == forest.parent(gpu));
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{0, 1, 1, 1, 0});
  RequireValid(alloc);
  // A third one splits the free switch only (the lowest level with a free cell).
  const CellId gpu3 = alloc.Allocate(ch, 1);
  CHECK(forest.parent(forest.parent(gpu3)) == forest.parent(forest.parent(gpu)));
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{1, 0, 1, 1, 0});
  RequireValid(alloc);
}

TEST_CASE("BuddyAllocator: merges buddies back up on release", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(1, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const CellId a = alloc.Allocate(ch, 1);
  const CellId b = alloc.Allocate(ch, 1);
  const CellId c = alloc.Allocate(ch, 2);
  alloc.Release(a);
  RequireValid(alloc);
  CHECK(alloc.state(a) == BuddyState::kFree);  // b still holds its buddy
  alloc.Release(b);
  RequireValid(alloc);
  CHECK(alloc.state(a) == BuddyState::kCovered);
  CHECK(alloc.state(forest.parent(a)) == BuddyState::kFree);
  CHECK(alloc.state(CellId(0)) == BuddyState::kSplit);  // c still holds the rack
  alloc.Release(c);
  RequireValid(alloc);
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{0, 0, 0, 0, 1});
  CHECK(Obtainable(alloc, ch) == std::vector<int32_t>{16, 8, 4, 2, 1});
  CHECK(alloc.state(CellId(0)) == BuddyState::kFree);
}

TEST_CASE("BuddyAllocator: handles fan-outs of 3 and 16", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::FlatSpec(1, 3, 16));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  std::vector<CellId> used;
  for (int i = 0; i < 17; ++i) used.push_back(alloc.Allocate(ch, 1));
  RequireValid(alloc);
  CHECK(forest.parent(used[0]) == forest.child(CellId(0), 0));
  CHECK(forest.parent(used[16]) == forest.child(CellId(0), 1));
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{15, 1, 0});
  CHECK(Obtainable(alloc, ch) == std::vector<int32_t>{31, 1, 0});
  CHECK(alloc.Allocate(ch, 2) == forest.child(CellId(0), 2));
  CHECK(alloc.Allocate(ch, 2).IsNil());
  CHECK(alloc.Allocate(ch, 3).IsNil());
  for (CellId c : used) alloc.Release(c);
  RequireValid(alloc);
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{0, 2, 0});
  alloc.Release(forest.child(CellId(0), 2));
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{0, 0, 1});
  RequireValid(alloc);
}

TEST_CASE("BuddyAllocator: allocates a specific available cell", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(1, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const CellId node1 = forest.child(CellId(0), 1);
  const CellId leaf = CellId(forest.first_leaf(node1).value() + 5);
  REQUIRE(alloc.AllocateCell(leaf));
  RequireValid(alloc);
  CHECK(alloc.state(leaf) == BuddyState::kUsed);
  CHECK(alloc.state(forest.child(CellId(0), 0)) == BuddyState::kFree);
  CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{1, 1, 1, 1, 0});
  SECTION("not a used cell, its descendants or a split cell") {
    CHECK_FALSE(alloc.AllocateCell(leaf));
    CHECK_FALSE(alloc.AllocateCell(node1));  // split
    CHECK_FALSE(alloc.AllocateCell(CellId::Nil()));
    const CellId sw = alloc.Allocate(ch, 2);
    CHECK_FALSE(alloc.AllocateCell(forest.first_leaf(sw)));  // inside a used cell
    RequireValid(alloc);
  }
  SECTION("a free cell and a cell covered by a free cell") {
    CHECK(alloc.AllocateCell(forest.child(CellId(0), 0)));
    CHECK(alloc.AllocateCell(CellId(forest.first_leaf(node1).value() + 1)));
    RequireValid(alloc);
    CHECK(FreeCounts(alloc, ch) == std::vector<int32_t>{2, 2, 0, 0, 0});
  }
}

TEST_CASE("BuddyAllocator: enumerates free cells in config order", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::FlatSpec(2, 3, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const CellId n0 = alloc.Allocate(ch, 2);
  CHECK(n0 == forest.child(CellId(0), 0));
  CHECK(FreeList(alloc, ch, 2) ==
        std::vector<CellId>{forest.child(CellId(0), 1), forest.child(CellId(0), 2)});
  CHECK(alloc.FirstFree(ch, 2) == forest.child(CellId(0), 1));
  CHECK(alloc.NextFree(forest.child(CellId(0), 2)).IsNil());
  CHECK(alloc.FirstFree(ch, 1).IsNil());
  CHECK(alloc.FirstFree(ch, 4).IsNil());
  int visited = 0;
  alloc.ForEachFree(ch, 2, [&](CellId) { return ++visited < 1; });
  CHECK(visited == 1);
}

TEST_CASE("BuddyAllocator: free lists stay in config order whatever the order of calls",
          "[cellalloc][unit]") {
  // Issue 9 step 1: the scheduler reads the allocator's lists directly, so their order
  // must not depend on history (it used to be insertion order, mirrored in config order).
  CellForest forest = MustBuild(testing::FlatSpec(2, 3, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const CellId a = forest.child(CellId(0), 0);
  const CellId b = forest.child(CellId(0), 2);
  const CellId c = forest.child(CellId(1), 1);
  REQUIRE(alloc.AllocateCell(b));
  REQUIRE(alloc.AllocateCell(c));
  REQUIRE(alloc.AllocateCell(a));
  alloc.Release(c);  // released last in rack 1, merges rack 1 back
  alloc.Release(a);
  REQUIRE(alloc.AllocateCell(forest.child(CellId(1), 2)));
  const std::vector<CellId> free = FreeList(alloc, ch, 2);
  CHECK(std::is_sorted(free.begin(), free.end()));  // ids grow in config order per level
  CHECK(free == std::vector<CellId>{forest.child(CellId(0), 0), forest.child(CellId(0), 1),
                                    forest.child(CellId(1), 0), forest.child(CellId(1), 1)});
  RequireValid(alloc);
}

TEST_CASE("BuddyAllocator: keeps chains apart", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  BuddyAllocator alloc(&forest);
  RequireValid(alloc);
  const ChainId ct1 = forest.FindChain("CT1-NODE");
  const ChainId dgx2 = forest.FindChain("DGX2-V100-NODE");
  const ChainId four = forest.FindChain("4-DGX2-V100-NODE");
  CHECK(FreeCounts(alloc, ct1) == std::vector<int32_t>{0, 3});
  const CellId leaf = alloc.Allocate(four, 1);
  CHECK(forest.chain(leaf) == four);
  CHECK(FreeCounts(alloc, dgx2) == std::vector<int32_t>{0, 0, 0, 0, 2});
  CHECK(FreeCounts(alloc, four) == std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1});
  CHECK(Obtainable(alloc, four) == std::vector<int32_t>{127, 63, 31, 15, 7, 3, 1});
  CHECK(alloc.Allocate(ct1, 2) == CellId(0));
  CHECK(alloc.Allocate(ct1, 1) == forest.first_leaf(CellId(1)));
  RequireValid(alloc);
  CHECK(alloc.Allocate(ChainId(99), 1).IsNil());
  CHECK(alloc.Allocate(ChainId::Nil(), 1).IsNil());
  CHECK(alloc.Allocate(ct1, 3).IsNil());
  CHECK(alloc.Allocate(ct1, 0).IsNil());
  CHECK(alloc.obtainable(ct1, 9) == 0);
}

TEST_CASE("BuddyAllocator: ignores the release of a cell that is not used", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(1, 2));
  BuddyAllocator alloc(&forest);
  alloc.Release(CellId(0));                   // free
  alloc.Release(forest.child(CellId(0), 1));  // covered
  alloc.Release(CellId::Nil());
  alloc.Release(CellId(100000));
  RequireValid(alloc);
  CHECK(FreeCounts(alloc, ChainId(0)) == std::vector<int32_t>{0, 0, 0, 0, 1});
}

TEST_CASE("BuddyAllocator: marks cells on a bad node and every ancestor bad", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(2, 2));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const NodeId node = forest.FindNode("v100-r0-n1");
  const CellId node_cell = forest.node_cells(node)[0];
  std::vector<CellId> changed = alloc.SetNodeHealthy(node, false);
  RequireValid(alloc);
  // 8 GPUs, 4 switches, 2 sockets, the node, the rack: lowest level first.
  REQUIRE(changed.size() == 16);
  CHECK(forest.level(changed.front()) == 1);
  CHECK(changed.back() == CellId(0));
  for (size_t i = 1; i < changed.size(); ++i) {
    CHECK(forest.level(changed[i - 1]) <= forest.level(changed[i]));
  }
  CHECK_FALSE(alloc.IsNodeHealthy(node));
  CHECK_FALSE(alloc.IsHealthy(node_cell));
  CHECK_FALSE(alloc.IsHealthy(forest.first_leaf(node_cell)));
  CHECK_FALSE(alloc.IsHealthy(CellId(0)));
  CHECK(alloc.IsHealthy(CellId(1)));
  CHECK(alloc.IsHealthy(forest.child(CellId(0), 0)));
  CHECK(BadFree(alloc, ch) == std::vector<int32_t>{8, 4, 2, 1, 1});
  CHECK(alloc.SetNodeHealthy(node, false).empty());  // no change

  SECTION("allocation moves bad_free with availability") {
    CHECK(alloc.AllocateCell(forest.first_leaf(node_cell)));
    RequireValid(alloc);
    CHECK(BadFree(alloc, ch) == std::vector<int32_t>{7, 3, 1, 0, 0});
    const CellId healthy_node = alloc.Allocate(ch, 4);
    CHECK(healthy_node == forest.child(CellId(0), 0));
    RequireValid(alloc);
    CHECK(BadFree(alloc, ch) == std::vector<int32_t>{7, 3, 1, 0, 0});
  }
  SECTION("a second bad node under the same rack changes the rack only once") {
    const NodeId other = forest.FindNode("v100-r0-n0");
    std::vector<CellId> more = alloc.SetNodeHealthy(other, false);
    CHECK(more.size() == 15);  // the rack was already bad
    RequireValid(alloc);
    CHECK(BadFree(alloc, ch) == std::vector<int32_t>{16, 8, 4, 2, 1});
    CHECK(alloc.SetNodeHealthy(node, true).size() == 15);
    CHECK_FALSE(alloc.IsHealthy(CellId(0)));
    RequireValid(alloc);
  }
  SECTION("recovery restores health and counters") {
    const CellId used = alloc.Allocate(ch, 2);
    std::vector<CellId> back = alloc.SetNodeHealthy(node, true);
    CHECK(back.size() == 16);
    RequireValid(alloc);
    CHECK(BadFree(alloc, ch) == std::vector<int32_t>{0, 0, 0, 0, 0});
    alloc.Release(used);
    RequireValid(alloc);
  }
  CHECK(alloc.SetNodeHealthy(NodeId::Nil(), false).empty());
  CHECK(alloc.SetNodeHealthy(NodeId(1000), false).empty());
}

TEST_CASE("BuddyAllocator: a bad node shared by two chains is bad in both", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  BuddyAllocator alloc(&forest);
  const NodeId node = forest.FindNode("1.0.0.2");
  std::vector<CellId> changed = alloc.SetNodeHealthy(node, false);
  // CT1 node (3 cells) + DGX1 node (15 cells) + the 3-DGX1 rack.
  CHECK(changed.size() == 19);
  RequireValid(alloc);
  CHECK(BadFree(alloc, ChainId(0)) == std::vector<int32_t>{2, 1});
  CHECK(BadFree(alloc, ChainId(1)) == std::vector<int32_t>{8, 4, 2, 1, 1});
}

TEST_CASE("BuddyAllocator: CheckInvariants names the violated invariant", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(1, 2));
  BuddyAllocator alloc(&forest);
  const CellId leaf = alloc.Allocate(ChainId(0), 1);
  RequireValid(alloc);
  auto message = [&alloc]() { return std::string(alloc.CheckInvariants().message()); };
  SECTION("a split cell without a used descendant") {
    alloc.SetStateForTesting(leaf, BuddyState::kCovered);
    CHECK(message().find("invariant (2)") != std::string::npos);
  }
  SECTION("a free cell that is on no list") {
    alloc.SetStateForTesting(leaf, BuddyState::kFree);
    CHECK(message().find("invariant (3)") != std::string::npos);
  }
  SECTION("a covered top-level cell") {
    alloc.SetStateForTesting(CellId(0), BuddyState::kCovered);
    CHECK(message().find("invariant (2) violated at cell 0") != std::string::npos);
  }
  SECTION("a split cell whose children are all free") {
    alloc.Release(leaf);
    alloc.SetStateForTesting(CellId(0), BuddyState::kSplit);
    CHECK(message().find("invariant (2)") != std::string::npos);
  }
  SECTION("a used cell that nobody accounts for") {
    const CellId buddy(leaf.value() + 1);
    alloc.SetStateForTesting(buddy, BuddyState::kUsed);
    CHECK(message().find("invariant (3)") != std::string::npos);
  }
  CHECK(alloc.CheckInvariants().code() == absl::StatusCode::kInternal);
}

TEST_CASE("BuddyAllocator: splits and merges a 3000-level chain", "[cellalloc][unit]") {
  ClusterSpec spec;
  spec.cell_types.push_back({"L1", "GPU", 2, true});
  for (int i = 2; i <= 3000; ++i) {
    spec.cell_types.push_back(
        {"L" + std::to_string(i), "L" + std::to_string(i - 1), i % 500 == 0 ? 2 : 1, false});
  }
  spec.physical_cells = {testing::Top("L3000")};
  CellForest forest = MustBuild(spec);
  REQUIRE(forest.CheckInvariants().ok());
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  const NodeId node = forest.node(forest.first_leaf(CellId(0)));
  alloc.SetNodeHealthy(node, false);
  const CellId leaf = alloc.Allocate(ch, 1);
  REQUIRE_FALSE(leaf.IsNil());
  CHECK(forest.address(leaf).size() > 6000);
  RequireValid(alloc);
  alloc.Release(leaf);
  alloc.SetNodeHealthy(node, true);
  RequireValid(alloc);
  CHECK(alloc.free_count(ch, 3001) == 1);
}

TEST_CASE("BuddyAllocator: reports its memory", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(4, 8));
  BuddyAllocator alloc(&forest);
  CHECK(alloc.MemoryBytes() >= static_cast<size_t>(forest.num_cells()) * 17);
}

}  // namespace
}  // namespace hived::cellalloc
