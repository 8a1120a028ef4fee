// TakenLeaves (src/taken_leaves.h): per-cell counts of the leaves a choice has taken.
#include "src/taken_leaves.h"

#include <cstdint>
#include <vector>

#include "support/catch.h"

namespace hived {
namespace {

// A binary tree of 7 cells: 0 is the node cell, 1-2 its children, 3-6 the leaves.
uint32_t Parent(uint32_t c) { return (c - 1) / 2; }

TEST_CASE("TakenLeaves: counts taken leaves on their paths and clears them", "[scheduler][unit]") {
  TakenLeaves t;
  t.Reset(7);
  REQUIRE(t.IsClear());
  t.Take(3, /*is_free=*/true, 0, Parent);
  t.Take(4, /*is_free=*/false, 0, Parent);
  t.Take(5, /*is_free=*/true, 0, Parent);
  // Invariant 2: totals and free counts per cell.
  CHECK(t.total(0) == 3);
  CHECK(t.free(0) == 2);
  CHECK(t.total(1) == 2);
  CHECK(t.free(1) == 1);
  CHECK(t.total(2) == 1);
  CHECK(t.free(2) == 1);
  CHECK(t.total(4) == 1);
  CHECK(t.free(4) == 0);
  CHECK(t.total(6) == 0);
  for (uint32_t c = 0; c < 7; ++c) {
    CHECK(t.free(c) >= 0);
    CHECK(t.free(c) <= t.total(c));
  }
  CHECK_FALSE(t.IsClear());
  t.Clear();
  CHECK(t.IsClear());  // invariant 1
}

TEST_CASE("TakenLeaves: counts stop at the given top cell", "[scheduler][unit]") {
  TakenLeaves t;
  t.Reset(7);
  t.Take(6, /*is_free=*/true, 2, Parent);  // the choice is inside cell 2
  CHECK(t.total(6) == 1);
  CHECK(t.total(2) == 1);
  CHECK(t.total(0) == 0);
  t.Clear();
  CHECK(t.IsClear());
}

}  // namespace
}  // namespace hived
