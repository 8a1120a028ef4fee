// Health (src/health.h): deferred health work, doomed counts and the search for a bad cell
// to doom, on HiveD's design config with a bad node.
#include "src/health.h"

#include <string>
#include <vector>

#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "support/catch.h"
#include "unit/scheduler/design_forest.h"

namespace hived {
namespace {

using testdata::DesignForest;

TEST_CASE("Health: dirty chains are listed once, in marking order, and handed over",
          "[scheduler][unit]") {
  const cellalloc::CellForest f = DesignForest();
  cellalloc::BuddyAllocator buddy(&f);
  Health h(&f, &buddy);
  const std::vector<int32_t> none(static_cast<size_t>(f.num_chains()), 0);
  REQUIRE(h.CheckInvariants(none).ok());
  REQUIRE(f.num_chains() >= 2);
  h.MarkDirty(ChainId(1));
  h.MarkDirty(ChainId(0));
  h.MarkDirty(ChainId(1));
  CHECK(h.HasDirty());
  CHECK(std::string(h.CheckInvariants(none).message()).find("(3)") != std::string::npos);
  CHECK(h.TakeDirty() == std::vector<ChainId>{ChainId(1), ChainId(0)});  // invariant 1
  CHECK_FALSE(h.HasDirty());

  VCellId v = kNilId;
  CHECK_FALSE(h.PopBadBound(&v));
  h.NoteBadBound(4);
  h.NoteBadBound(9);
  CHECK_FALSE(h.CheckInvariants(none).ok());
  CHECK(h.PopBadBound(&v));
  CHECK(v == 9);  // latest first
  CHECK(h.PopBadBound(&v));
  CHECK(v == 4);
  REQUIRE(h.CheckInvariants(none).ok());

  h.AddDoomed(ChainId(0));
  CHECK(h.doomed(ChainId(0)) == 1);
  CHECK(h.ChainHasBadOrDoomed(ChainId(0)));
  const absl::Status st = h.CheckInvariants(none);  // the caller counts none: (2)
  CHECK(st.code() == absl::StatusCode::kInternal);
  CHECK(std::string(st.message()).find("(2)") != std::string::npos);
  h.RemoveDoomed(ChainId(0));
  CHECK(h.CheckInvariants(none).ok());
}

TEST_CASE("Health: a bad node's free cells are found at every level up to the chain's top",
          "[scheduler][unit]") {
  const cellalloc::CellForest f = DesignForest();
  cellalloc::BuddyAllocator buddy(&f);
  Health h(&f, &buddy);
  // Every chain is healthy at first: nothing to doom.
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    const ChainId ch(static_cast<uint32_t>(c));
    CHECK_FALSE(h.ChainHasBadOrDoomed(ch));
    for (CellLevel l = 1; l <= f.chain_info(ch).top_level; ++l) {
      CHECK(h.FindBadFreeCell(ch, l).IsNil());
    }
  }
  const NodeId bad(0);
  const CellId node = f.node_cells(bad)[0];
  const ChainId ch = f.chain(node);
  buddy.SetNodeHealthy(bad, false);
  CHECK(h.ChainHasBadOrDoomed(ch));
  // Invariant 4: a bad cell of the asked level, reached through bad cells, on the bad node
  // at or below node level.
  for (CellLevel l = 1; l <= f.chain_info(ch).top_level; ++l) {
    const CellId c = h.FindBadFreeCell(ch, l);
    REQUIRE_FALSE(c.IsNil());
    CHECK(f.level(c) == l);
    CHECK_FALSE(buddy.IsHealthy(c));
    if (l <= f.chain_info(ch).node_level) CHECK(f.node(c) == bad);
  }
  // Taken cells are not offered: allocate the node cell, nothing at or below it is free.
  REQUIRE(buddy.AllocateCell(node));
  for (CellLevel l = 1; l <= f.chain_info(ch).node_level; ++l) {
    CHECK(h.FindBadFreeCell(ch, l).IsNil());
  }
  buddy.Release(node);
  buddy.SetNodeHealthy(bad, true);
  CHECK_FALSE(h.ChainHasBadOrDoomed(ch));
}

}  // namespace
}  // namespace hived
