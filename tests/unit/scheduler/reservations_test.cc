// Reservations (src/reservations.h): an Allocate matches the stored Filtering decision only
// when it is exactly that decision at the same epoch; the differences between a reservation
// and an Allocate are named; the invariants hold after every operation.
#include "src/reservations.h"

#include <string>
#include <thread>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "src/rw_lock.h"
#include "support/catch.h"
#include "unit/scheduler/two_pod_placement.h"

namespace hived {
namespace {

using Fixture = testdata::DesignTwoPods;
Fixture Make() { return testdata::MakeDesignTwoPods(); }

TEST_CASE("Reservations: matches exactly the stored decision at the same epoch",
          "[scheduler][unit]") {
  Fixture x = Make();
  Reservations cache;
  REQUIRE(cache.CheckInvariants().ok());
  CHECK_FALSE(cache.MatchesFiltered(x.request, x.placement, x.forest, 0));  // empty

  std::vector<CellId> pleaves = x.leaves;
  std::vector<VCellId> vleaves = {7, 8, 9};
  cache.StoreFiltered(x.request, 5, x.chain, {1, 2}, &pleaves, &vleaves);
  REQUIRE(cache.CheckInvariants().ok());
  CHECK(cache.pleaves() == x.leaves);
  CHECK(cache.vleaves() == std::vector<VCellId>{7, 8, 9});
  CHECK(cache.MatchesFiltered(x.request, x.placement, x.forest, 5));

  SECTION("a later epoch is stale") {
    CHECK_FALSE(cache.MatchesFiltered(x.request, x.placement, x.forest, 6));
  }
  SECTION("another group, device, pod size or chain does not match") {
    GroupRequest other = x.request;
    other.name = "h";
    CHECK_FALSE(cache.MatchesFiltered(other, x.placement, x.forest, 5));
    Placement moved = x.placement;
    moved.pods[1].leaf_cell_indices[1] += 100;
    CHECK_FALSE(cache.MatchesFiltered(x.request, moved, x.forest, 5));
    GroupRequest bigger = x.request;
    bigger.members[1].leaf_cell_number = 3;
    CHECK_FALSE(cache.MatchesFiltered(bigger, x.placement, x.forest, 5));
    Placement chain = x.placement;
    chain.chain = "no-such-chain";
    CHECK_FALSE(cache.MatchesFiltered(x.request, chain, x.forest, 5));
  }
  SECTION("another VC, priority, pinned cell or leaf type does not match") {
    GroupRequest vc = x.request;
    vc.vc = "VC2";
    CHECK_FALSE(cache.MatchesFiltered(vc, x.placement, x.forest, 5));
    GroupRequest priority = x.request;
    priority.priority = 2;
    CHECK_FALSE(cache.MatchesFiltered(priority, x.placement, x.forest, 5));
    GroupRequest pinned = x.request;
    pinned.pinned_cell_id = "VC1-P";
    CHECK_FALSE(cache.MatchesFiltered(pinned, x.placement, x.forest, 5));
    GroupRequest type = x.request;
    type.leaf_cell_type = "K80";
    CHECK_FALSE(cache.MatchesFiltered(type, x.placement, x.forest, 5));
  }
  SECTION("invalidated, nothing matches (invariant 2)") {
    cache.Invalidate();
    CHECK_FALSE(cache.MatchesFiltered(x.request, x.placement, x.forest, 5));
    CHECK(cache.CheckInvariants().ok());
  }
}

TEST_CASE("Reservations: each filtering thread keeps its own last decision", "[scheduler][unit]") {
  Fixture x = Make();
  Reservations cache;
  // Another thread's decision for group h, stored in another slot than this thread's.
  GroupRequest h = x.request;
  h.name = "h";
  std::vector<CellId> h_pleaves = x.leaves;
  std::vector<VCellId> h_vleaves = {4, 5, 6};
  const uint32_t mine = ThisThreadNumber() % 16;  // this thread's slot (16 slots)
  bool stored = false;
  for (int attempt = 0; attempt < 2 && !stored; ++attempt) {  // a thread number on another slot
    std::thread t([&] {
      if (ThisThreadNumber() % 16 == mine) return;
      cache.StoreFiltered(h, 5, x.chain, {1, 2}, &h_pleaves, &h_vleaves);
      stored = true;
    });
    t.join();
  }
  REQUIRE(stored);
  std::vector<CellId> g_pleaves = x.leaves;
  std::vector<VCellId> g_vleaves = {7, 8, 9};
  cache.StoreFiltered(x.request, 5, x.chain, {1, 2}, &g_pleaves, &g_vleaves);
  REQUIRE(cache.CheckInvariants().ok());

  REQUIRE(cache.MatchesFiltered(h, x.placement, x.forest, 5));
  CHECK(cache.vleaves() == std::vector<VCellId>{4, 5, 6});
  REQUIRE(cache.MatchesFiltered(x.request, x.placement, x.forest, 5));
  CHECK(cache.vleaves() == std::vector<VCellId>{7, 8, 9});

  SECTION("a later decision of the same thread replaces its earlier one") {
    std::vector<CellId> i_pleaves = x.leaves;
    std::vector<VCellId> i_vleaves = {1, 2, 3};
    GroupRequest i = x.request;
    i.name = "i";
    cache.StoreFiltered(i, 5, x.chain, {1, 2}, &i_pleaves, &i_vleaves);
    CHECK_FALSE(cache.MatchesFiltered(x.request, x.placement, x.forest, 5));
    CHECK(cache.MatchesFiltered(h, x.placement, x.forest, 5));
  }
  SECTION("Invalidate makes every thread's decision stale") {
    cache.Invalidate();
    CHECK_FALSE(cache.MatchesFiltered(h, x.placement, x.forest, 5));
    CHECK_FALSE(cache.MatchesFiltered(x.request, x.placement, x.forest, 5));
  }
}

TEST_CASE("Reservations: CheckInvariants names a decision whose leaves do not fit its pods",
          "[scheduler][unit]") {
  Fixture x = Make();
  Reservations cache;
  std::vector<CellId> pleaves = x.leaves;
  std::vector<VCellId> vleaves = {7, 8};  // one short
  cache.StoreFiltered(x.request, 1, x.chain, {1, 2}, &pleaves, &vleaves);
  const absl::Status st = cache.CheckInvariants();
  CHECK(st.code() == absl::StatusCode::kInternal);
  CHECK(std::string(st.message()).find("(1)") != std::string::npos);
}

TEST_CASE("Reservations: the first difference between a reservation and an Allocate is named",
          "[scheduler][unit]") {
  Fixture x = Make();
  Group g;
  g.name = "g";
  g.SetNote(&GroupNotes::unknown_vc, "VC1");  // a VC this test has no config for
  g.priority = 1;
  g.members = {{1, 2}, {1, 1}};  // the same pods in another member order
  CHECK(Reservations::RequestDifference(g, x.request).empty());
  CHECK(Reservations::PlacementDifference(x.placement, x.placement).empty());

  GroupRequest r = x.request;
  r.priority = 3;
  CHECK(Reservations::RequestDifference(g, r) == "priority 3, reserved at 1");
  r = x.request;
  r.vc = "VC2";
  CHECK(Reservations::RequestDifference(g, r) == "VC VC2, reserved in VC VC1");
  r = x.request;
  r.members = {{2, 1}, {1, 2}};
  CHECK(Reservations::RequestDifference(g, r) ==
        "pods of [1,1,2] leaf cells, reserved for pods of [1,2] leaf cells");
  r = x.request;
  r.pinned_cell_id = "P";
  CHECK(Reservations::RequestDifference(g, r) == "pinned cell 'P', reserved for ''");
  r = x.request;
  r.leaf_cell_type = "K80";
  CHECK(Reservations::RequestDifference(g, r) == "leaf cell type 'K80', reserved for ''");
  r = x.request;
  r.lazy_preemption = true;
  CHECK(Reservations::RequestDifference(g, r) == "lazy preemption on, reserved with it off");

  // The same comparison for a reservation kept as its request (fractional and MIG groups):
  // pod shapes as a multiset, and the allowed GPU models.
  GroupRequest shared = x.request;
  shared.members = {{2, 1, 500, 1000, 200, 0}};
  shared.leaf_cell_types = {"GA", "GB"};
  r = shared;
  r.members = {{1, 1, 500, 1000, 200, 0}, {1, 1, 500, 1000, 200, 0}};
  CHECK(Reservations::RequestDifference(shared, r).empty());
  r.members[1].gpu_milli = 400;
  CHECK(Reservations::RequestDifference(shared, r) ==
        "other GPU shares, GPU memory, CPU, host memory or MIG profiles than reserved");
  r = shared;
  r.members[0].mig_profile = "1g.5gb";
  CHECK(!Reservations::RequestDifference(shared, r).empty());
  r = shared;
  r.leaf_cell_types = {"GA"};
  CHECK(Reservations::RequestDifference(shared, r) == "leaf cell types [GA], reserved for [GA,GB]");

  Placement moved = x.placement;
  moved.pods[1].leaf_cell_indices[1] += 100;
  const std::string diff = Reservations::PlacementDifference(x.placement, moved);
  CHECK(diff.find("pod 1 on node") == 0);
  CHECK(diff.find("reserved on node") != std::string::npos);
  Placement chain = x.placement;
  chain.chain = "other";
  CHECK(Reservations::PlacementDifference(x.placement, chain).find("chain other") == 0);
  Placement fewer = x.placement;
  fewer.pods.pop_back();
  CHECK(Reservations::PlacementDifference(x.placement, fewer) == "1 pods, reserved 2");
  // Preassigned cell types are compared only when the Allocate lists them.
  Placement typed = x.placement;
  typed.pods[0].preassigned_cell_types = {"K80-NODE"};
  CHECK(Reservations::PlacementDifference(typed, x.placement).empty());
  Placement other_type = typed;
  other_type.pods[0].preassigned_cell_types = {"K80-SWITCH"};
  CHECK(Reservations::PlacementDifference(typed, other_type)
            .find("(other pod size or preassigned cell types)") != std::string::npos);
}

}  // namespace
}  // namespace hived
