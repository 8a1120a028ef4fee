// Recovery (src/recovery.h): DecideBinding and ApplyBinding over the three-rack cluster. A
// recovered guaranteed group's leaves get virtual leaves of its VC's preassigned cells,
// preferring hinted ones (invariant 3); when they cannot, the reason comes back and nothing
// was bound (invariant 4); a strict resolve of a placement naming a missing node is an error
// before anything is bound.
#include <string>
#include <vector>

#include "cellalloc/cell_forest.h"
#include "src/recovery.h"
#include "src/virtual_clusters.h"
#include "support/catch.h"
#include "unit/scheduler/three_racks.h"

namespace hived {
namespace {

using testdata::Fixture;
using testdata::kNode;
using testdata::MakeFixture;

// The first `n` leaves of node `name`.
std::vector<CellId> Leaves(const Fixture& fx, const std::string& name, uint32_t n) {
  const CellId first = fx.forest.first_leaf(fx.forest.node_cells(fx.forest.FindNode(name))[0]);
  std::vector<CellId> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(CellId(first.value() + i));
  return out;
}

struct Binding {
  std::vector<VCellId> p_bound;
  int32_t alpha_nodes = 0;
  bool available_n0 = false;
};

Binding Snapshot(const Fixture& fx) {
  const CellId n0 = fx.forest.node_cells(fx.forest.FindNode("n0"))[0];
  return {fx.vc.p_bound(), fx.Free("alpha", kNode), fx.buddy.IsAvailable(n0)};
}

std::string Bind(Fixture* fx, const std::string& vc, const std::vector<CellId>& leaves,
                 const std::vector<std::string>& type_names, const std::vector<VCellId>& hints,
                 std::vector<VCellId>* vleaves) {
  std::vector<const std::string*> types;
  for (const std::string& t : type_names) types.push_back(&t);
  RecoveryRequest r;
  r.vc = fx->vc.FindVc(vc);
  r.leaves = leaves;
  r.types = types;
  r.hints = hints;
  BindingPlan plan;
  const std::string reason = DecideBinding(fx->forest, fx->buddy, fx->vc, r, &plan);
  if (reason.empty()) ApplyBinding(plan, &fx->vc);
  *vleaves = plan.vleaves;
  return reason;
}

TEST_CASE("Recovery: a recovered group's leaves are bound to its VC's preassigned cell",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  const std::vector<CellId> leaves = Leaves(fx, "n0", 2);
  const VCellId node = fx.Root("alpha", kNode);
  const VCellId last = fx.vc.cell(node).first_child + 1;  // the node's second G-2 cell
  const VCellId hinted = fx.vc.cell(last).first_child + 1;
  std::vector<VCellId> vleaves;
  REQUIRE(Bind(&fx, "alpha", leaves, {"G-NODE", "G-NODE"}, {hinted}, &vleaves).empty());
  REQUIRE(vleaves.size() == 2);
  CHECK(vleaves[0] == hinted);  // the recorded virtual leaf, when it is free
  for (size_t i = 0; i < 2; ++i) {
    const state::VCell& v = fx.vc.cell(vleaves[i]);
    CHECK(v.level == 1);
    CHECK(v.bound == leaves[i]);
    CHECK(fx.vc.BoundTo(leaves[i]) == vleaves[i]);
    CHECK(v.root == node);
    CHECK(fx.vc.vc(v.vc).name == "alpha");
    CHECK(v.user == kNilId);  // the caller holds the leaves
  }
  CHECK(vleaves[1] != vleaves[0]);
  CHECK(fx.Free("alpha", kNode) == 0);
  CHECK(fx.vc.CheckInvariants().ok());
}

TEST_CASE("Recovery: a hinted preassigned cell is preferred to the VC's first unbound one",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  // alpha has two G-2 cells; the hint names a leaf of the second.
  const VCellId second = fx.Root("alpha", testdata::kPair, 1);
  REQUIRE(second != fx.Root("alpha", testdata::kPair, 0));
  const VCellId hinted = fx.FirstVLeaf(second);
  std::vector<VCellId> vleaves;
  REQUIRE(Bind(&fx, "alpha", Leaves(fx, "n0", 1), {"G-2"}, {hinted}, &vleaves).empty());
  CHECK(vleaves == std::vector<VCellId>{hinted});
  CHECK(fx.vc.cell(hinted).root == second);
  SECTION("without the hint, the first unbound one") {
    std::vector<VCellId> others;
    REQUIRE(Bind(&fx, "alpha", Leaves(fx, "n1", 1), {"G-2"}, {}, &others).empty());
    CHECK(fx.vc.cell(others[0]).root == fx.Root("alpha", testdata::kPair, 0));
  }
  CHECK(fx.vc.CheckInvariants().ok());
}

TEST_CASE("Recovery: a group that cannot keep its virtual cells gets the reason, nothing bound",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  const Binding before = Snapshot(fx);
  std::vector<VCellId> vleaves;
  SECTION("no unbound preassigned cell of the level is left in the VC") {
    CHECK(Bind(&fx, "beta", Leaves(fx, "n0", 1), {"G-NODE"}, {}, &vleaves) ==
          "VC beta has no unbound G-NODE cell left in chain G-RACK");
  }
  SECTION(
      "a later leaf sits in another VC's pinned cell: nothing is bound for the earlier leaves") {
    std::vector<CellId> leaves = Leaves(fx, "n0", 2);
    leaves.push_back(Leaves(fx, "n2", 1)[0]);
    CHECK(Bind(&fx, "alpha", leaves, {"G-NODE", "G-NODE", "G-NODE"}, {}, &vleaves) ==
          "physical cell " + fx.forest.address(fx.forest.node_cells(fx.forest.FindNode("n2"))[0]) +
              " is bound to VC beta");
    CHECK(vleaves.size() == 3);
  }
  SECTION("a binding that leaves beta's rack unobtainable breaks safety: refused unbound") {
    // alpha's node on rack 0 and a pair on rack 2: no whole rack would be left for beta.
    const std::vector<CellId> leaves = {Leaves(fx, "n0", 1)[0], Leaves(fx, "n4", 1)[0]};
    const std::string reason = Bind(&fx, "alpha", leaves, {"G-NODE", "G-2"}, {}, &vleaves);
    CHECK(reason.rfind("binding ", 0) == 0);
    CHECK(reason.find(" to VC alpha would break the safety of chain G-RACK") != std::string::npos);
    CHECK(fx.vc.SafetyOk(fx.ch));
  }
  SECTION("the placement has no preassigned cell types") {
    const std::vector<CellId> leaves = Leaves(fx, "n0", 1);
    const std::vector<const std::string*> types = {nullptr};
    RecoveryRequest r;
    r.vc = fx.vc.FindVc("alpha");
    r.leaves = leaves;
    r.types = types;
    BindingPlan plan;
    CHECK(DecideBinding(fx.forest, fx.buddy, fx.vc, r, &plan) ==
          "the placement has no preassigned cell types");
    vleaves = plan.vleaves;
    CHECK(plan.binds.empty());
  }
  for (VCellId v : vleaves) CHECK(v == kNilId);
  const Binding after = Snapshot(fx);
  CHECK(after.p_bound == before.p_bound);
  CHECK(after.alpha_nodes == before.alpha_nodes);
  CHECK(after.available_n0 == before.available_n0);
  CHECK(fx.vc.CheckInvariants().ok());
}

TEST_CASE("Recovery: DecideBinding changes nothing and the plan it accepts applies safely",
          "[scheduler][unit]") {
  // Every pair of leaves (each node's first and third GPU, the pinned node aside) with every
  // pair of alpha's types: the decision is const (invariant 4) and, when it accepts, applying
  // it keeps safety and the invariants (5): the overlay's counters are the allocator's.
  std::vector<std::pair<std::string, uint32_t>> picks;
  for (const char* node : {"n0", "n1", "n3", "n4", "n5"}) {
    picks.emplace_back(node, 0);
    picks.emplace_back(node, 2);
  }
  const std::vector<std::string> types = {"G-NODE", "G-2"};
  int32_t accepted = 0, refused = 0;
  for (size_t a = 0; a < picks.size(); ++a) {
    for (size_t b = a + 1; b < picks.size(); ++b) {
      for (const std::string& ta : types) {
        for (const std::string& tb : types) {
          CAPTURE(picks[a].first, picks[a].second, picks[b].first, picks[b].second, ta, tb);
          Fixture fx = MakeFixture();
          const auto leaf = [&](const std::pair<std::string, uint32_t>& pick) {
            return Leaves(fx, pick.first, pick.second + 1).back();
          };
          const std::vector<CellId> leaves = {leaf(picks[a]), leaf(picks[b])};
          const std::vector<const std::string*> tp = {&ta, &tb};
          RecoveryRequest r;
          r.vc = fx.vc.FindVc("alpha");
          r.leaves = leaves;
          r.types = tp;
          const Binding before = Snapshot(fx);
          const uint64_t changes = fx.vc.binding_changes();
          BindingPlan plan;
          const std::string reason = DecideBinding(fx.forest, fx.buddy, fx.vc, r, &plan);
          CHECK(fx.vc.binding_changes() == changes);
          CHECK(Snapshot(fx).p_bound == before.p_bound);
          CHECK(Snapshot(fx).available_n0 == before.available_n0);
          if (!reason.empty()) {
            ++refused;
            CHECK(plan.binds.empty());
            continue;
          }
          ++accepted;
          ApplyBinding(plan, &fx.vc);
          CHECK(fx.vc.SafetyOk(fx.ch));
          for (size_t i = 0; i < leaves.size(); ++i) {
            CHECK(fx.vc.BoundTo(leaves[i]) == plan.vleaves[i]);
          }
          CHECK(fx.vc.CheckInvariants().ok());
        }
      }
    }
  }
  CHECK(accepted > 0);
  CHECK(refused > 0);
}

TEST_CASE("Recovery: the safety overlay counts the cells inside a planned preassigned cell",
          "[scheduler][unit]") {
  // a's group recovers a leaf on rack 1 (its G-RACK cell), then one on m1 (its G cell).
  // Rack 1 holds two of the three nodes still obtainable and m1 is the third: with both
  // taken b's node is left nothing. The rack keeps the rack level safe and the GPU the GPU
  // level: the refusal is seen only at the node level, below the rack, so the overlay must
  // subtract the nodes inside the planned rack (`d[l] -= inside` in src/recovery.cc).
  Fixture fx = MakeFixture(testdata::kTightNodesYaml);
  std::vector<VCellId> vleaves;
  REQUIRE(Bind(&fx, "b", Leaves(fx, "m0", 1), {"G"}, {}, &vleaves).empty());
  REQUIRE(fx.vc.CheckInvariants().ok());
  const std::vector<VCellId> before = fx.vc.p_bound();
  const CellId rack1_leaf = Leaves(fx, "m2", 1)[0];
  const CellId m1_leaf = Leaves(fx, "m1", 1)[0];
  CHECK(Bind(&fx, "a", {rack1_leaf, m1_leaf}, {"G-RACK", "G"}, {}, &vleaves) ==
        "binding " + fx.forest.address(m1_leaf) +
            " to VC a would break the safety of chain G-RACK");
  CHECK(vleaves == std::vector<VCellId>{kNilId, kNilId});
  CHECK(fx.vc.p_bound() == before);
  CHECK(fx.vc.SafetyOk(fx.ch));
  CHECK(fx.vc.CheckInvariants().ok());
  // The rack alone leaves m1 for b's node.
  REQUIRE(Bind(&fx, "a", {rack1_leaf}, {"G-RACK"}, {}, &vleaves).empty());
  CHECK(fx.vc.CheckInvariants().ok());
}

TEST_CASE("Recovery: a binding that leaves the levels above unable to back their cells is refused",
          "[scheduler][unit]") {
  // Regression: a's GPU on m1 alone keeps every level's obtainable cells >= its own unbound
  // cells (two nodes left for b's node, a rack for a's), but rack 1 must go to a's rack and
  // then b's node has no whole node left: invariant 5's joint half. The safety check was
  // per level only and accepted it.
  Fixture fx = MakeFixture(testdata::kTightNodesYaml);
  std::vector<VCellId> vleaves;
  REQUIRE(Bind(&fx, "b", Leaves(fx, "m0", 1), {"G"}, {}, &vleaves).empty());
  const std::vector<VCellId> before = fx.vc.p_bound();
  const CellId m1_leaf = Leaves(fx, "m1", 1)[0];
  CHECK(Bind(&fx, "a", {m1_leaf}, {"G"}, {}, &vleaves) ==
        "binding " + fx.forest.address(m1_leaf) +
            " to VC a would break the safety of chain G-RACK");
  CHECK(vleaves == std::vector<VCellId>{kNilId});
  CHECK(fx.vc.p_bound() == before);
  CHECK(fx.vc.CheckInvariants().ok());
  // The free GPU beside b's on m0 keeps both of them.
  REQUIRE(Bind(&fx, "a", {Leaves(fx, "m0", 2)[1]}, {"G"}, {}, &vleaves).empty());
  CHECK(fx.vc.SafetyOk(fx.ch));
  CHECK(fx.vc.CheckInvariants().ok());
}

TEST_CASE("Recovery: a strict resolve naming a missing node fails before anything is bound",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  GroupRequest request;
  request.name = "g";
  request.vc = "alpha";
  request.priority = 1;
  GroupMember m;
  m.pod_number = 1;
  m.leaf_cell_number = 1;
  request.members = {m};
  Placement placement;
  placement.chain = "G-RACK";
  PodPlacement pod;
  pod.node = "n9";
  pod.leaf_cell_number = 1;
  pod.leaf_cell_indices = {0};
  pod.preassigned_cell_types = {"G-NODE"};
  placement.pods = {pod};
  ResolvedPlacement resolved;
  const absl::Status s =
      ResolvePlacement(fx.forest, request, placement, MissingLeaves::kError, &resolved);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()) == "group g, pod 0: node n9 is not in the cluster");
  // Lenient (Restore): the leaf is skipped and named, and nothing is left to bind.
  REQUIRE(ResolvePlacement(fx.forest, request, placement, MissingLeaves::kIgnore, &resolved).ok());
  CHECK(resolved.leaves.empty());
  CHECK(resolved.missing == std::vector<std::string>{"n9:0"});
  std::vector<VCellId> vleaves;
  CHECK(Bind(&fx, "alpha", resolved.leaves, {}, {}, &vleaves).empty());
  CHECK(vleaves.empty());
  CHECK(fx.Free("alpha", kNode) == 1);
}

}  // namespace
}  // namespace hived
