// VirtualClusters (src/virtual_clusters.h): the virtual cell tree, binding, preassigned
// cells in the allocator and the safety counters, on a small three-rack cluster; its
// invariants checked after random operations against a reference model.
#include "src/virtual_clusters.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "src/health.h"
#include "support/catch.h"
#include "unit/scheduler/three_racks.h"

namespace hived {
namespace {

using testdata::Fixture;
using testdata::kLeaf;
using testdata::kNode;
using testdata::kPair;
using testdata::kRack;
using testdata::MakeFixture;

bool Contains(const absl::Status& s, const std::string& what) {
  return std::string(s.message()).find(what) != std::string::npos;
}

TEST_CASE(
    "VirtualClusters: builds every VC's cells unbound but the pinned ones, counted per "
    "chain and level",
    "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  const VirtualClusters& vc = fx.vc;
  REQUIRE(vc.CheckInvariants().ok());
  REQUIRE(vc.vcs().size() == 2);
  CHECK(vc.vcs()[0].name == "alpha");
  CHECK(vc.vcs()[0].roots.size() == 3);
  CHECK(vc.vcs()[1].roots.size() == 2);  // the rack, then the pinned node
  CHECK(fx.AllFree(kNode) == 1);
  CHECK(fx.AllFree(kPair) == 2);
  CHECK(fx.AllFree(kRack) == 1);
  CHECK(fx.Free("beta", kNode) == 0);  // the pinned node is not a preassigned cell
  CHECK(vc.SafetyOk(fx.ch));
  // Sizes: alpha 7 + 3 + 3 cells, beta 15 + 7.
  CHECK(vc.cells().size() == 35);
  const VCellId pinned = vc.vcs()[1].pinned.at("P1");
  const CellId n2 = vc.cells()[pinned].bound;
  REQUIRE_FALSE(n2.IsNil());
  CHECK(fx.forest.pinned_id(n2) == "P1");
  CHECK(vc.p_bound()[n2.value()] == pinned);
  CHECK(vc.Address(vc.cells()[pinned].first_child + 1) == "beta/1/1");
  // One view per VC and chain, one per pinned cell.
  CHECK(fx.views.size() == 3);
}

TEST_CASE("VirtualClusters: binding a leaf path takes the preassigned cell, unbinding returns it",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  VirtualClusters& vc = fx.vc;
  const VCellId node = fx.Root("alpha", kNode);
  const CellId pnode = fx.Available(kNode);
  REQUIRE_FALSE(pnode.IsNil());
  const int32_t obtainable = fx.buddy.obtainable(fx.ch, kNode);
  const uint64_t changes = vc.binding_changes();

  const VCellId leaf = fx.FirstVLeaf(node);
  const CellId pleaf = fx.FirstPLeaf(pnode);
  vc.BindLeafPath(leaf, pleaf);
  REQUIRE(vc.CheckInvariants().ok());
  CHECK(vc.cells()[node].bound == pnode);
  CHECK(vc.p_bound()[pnode.value()] == node);
  CHECK(vc.cells()[leaf].bound == pleaf);
  CHECK(vc.cells()[node].bound_children == 1);
  CHECK(fx.buddy.state(pnode) == cellalloc::BuddyState::kUsed);
  CHECK(fx.buddy.obtainable(fx.ch, kNode) == obtainable - 1);
  CHECK(fx.Free("alpha", kNode) == 0);
  CHECK(fx.AllFree(kNode) == 0);
  CHECK(vc.binding_changes() == changes + 3);  // leaf, pair, node

  // A used leaf keeps its path bound.
  CHECK(vc.SetLeaf(leaf, 5, GroupId(0)) == kFreePriority);
  CHECK(vc.usage().UsedTotal(CellId(node)) == 1);
  CHECK_FALSE(vc.CanUnbind(leaf));
  vc.UnbindUp(leaf);
  CHECK(vc.cells()[leaf].bound == pleaf);
  CHECK(vc.SetLeaf(leaf, kFreePriority, kNilId) == 5);
  CHECK(vc.CanUnbind(leaf));
  CHECK_FALSE(vc.CanUnbind(node));  // a bound child
  vc.UnbindUp(leaf);
  REQUIRE(vc.CheckInvariants().ok());
  CHECK(vc.cells()[node].bound.IsNil());
  CHECK(vc.p_bound()[pnode.value()] == kNilId);
  CHECK(fx.buddy.obtainable(fx.ch, kNode) == obtainable);
  CHECK(fx.Free("alpha", kNode) == 1);
  CHECK(fx.AllFree(kNode) == 1);

  // Pinned cells never unbind.
  const VCellId pinned = vc.vcs()[1].pinned.at("P1");
  CHECK_FALSE(vc.CanUnbind(pinned));
}

TEST_CASE("VirtualClusters: safety fails when the allocator cannot back the unbound cells",
          "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  REQUIRE(fx.vc.SafetyOk(fx.ch));
  // Someone else takes both free racks: beta's unbound rack has no physical cell left.
  REQUIRE_FALSE(fx.buddy.Allocate(fx.ch, kRack).IsNil());
  REQUIRE_FALSE(fx.buddy.Allocate(fx.ch, kRack).IsNil());
  CHECK_FALSE(fx.vc.SafetyOk(fx.ch));
  const absl::Status st = fx.vc.CheckInvariants();
  CHECK(st.code() == absl::StatusCode::kInternal);
  CHECK(Contains(st, "(5)"));
}

TEST_CASE("VirtualClusters: CheckInvariants catches a corrupted state", "[scheduler][unit]") {
  Fixture fx = MakeFixture();
  VirtualClusters& vc = fx.vc;
  const VCellId node = fx.Root("alpha", kNode);
  vc.AllocatePreassigned(node, fx.Available(kNode));
  REQUIRE(vc.CheckInvariants().ok());
  std::vector<state::VCell>& cells = *vc.MutableCellsForTesting();

  SECTION("a child that does not point back (1)") {
    cells[cells[node].first_child].parent = kNilId;
    CHECK(Contains(vc.CheckInvariants(), "(1)"));
  }
  SECTION("a one-sided binding (2)") {
    cells[node].bound = CellId::Nil();
    CHECK(Contains(vc.CheckInvariants(), "(2)"));
  }
  SECTION("a wrong bound-children count (2)") {
    ++cells[node].bound_children;
    CHECK(Contains(vc.CheckInvariants(), "(2)"));
  }
  SECTION("a bound child under an unbound parent (2)") {
    const VCellId pair = fx.Root("alpha", kPair);
    const VCellId child = cells[pair].first_child;
    const CellId pleaf = fx.Available(kLeaf, 4);  // a leaf no virtual cell holds
    vc.BindCell(child, pleaf);
    CHECK(Contains(vc.CheckInvariants(), "(2)"));
  }
  SECTION("a preassigned cell the allocator does not hold (3)") {
    fx.buddy.Release(cells[node].bound);
    CHECK(Contains(vc.CheckInvariants(), "(3)"));
  }
  SECTION("a stale unbound set (4)") {
    const VCellId pair = fx.Root("alpha", kPair, 1);
    cells[pair].slot_pos = 0;  // binding it erases the other pair's position
    vc.AllocatePreassigned(pair, fx.Available(kPair));
    CHECK(Contains(vc.CheckInvariants(), "(4)"));
  }
  SECTION("a doomed mark on a healthy unlisted cell (6)") {
    cells[node].doomed = true;
    CHECK(Contains(vc.CheckInvariants(), "(6)"));
  }
  SECTION("a stale view node health flag (7)") {
    fx.views[static_cast<size_t>(cells[node].view)].index.SetHealthy(cells[node].view_pos, false);
    CHECK(Contains(vc.CheckInvariants(), "(7)"));
  }
}

// The reference model: per preassigned cell, whether it is bound and how many used leaves
// it holds; the free counters are the unbound cells per VC and level.
TEST_CASE(
    "VirtualClusters: random binding and unbinding keep the invariants and the counters "
    "of a reference model",
    "[scheduler][property]") {
  const uint32_t seed = GENERATE(take(10, random(1u, 1000000u)));
  CAPTURE(seed);
  std::mt19937 rng(seed);
  Fixture fx = MakeFixture();
  VirtualClusters& vc = fx.vc;
  const std::vector<state::VCell>& cells = vc.cells();
  std::vector<VCellId> roots;  // preassigned, not pinned
  for (const VirtualClusters::Vc& v : vc.vcs()) {
    for (VCellId r : v.roots) {
      if (!cells[r].pinned) roots.push_back(r);
    }
  }
  std::vector<char> bound(cells.size(), 0);  // per root: bound in the model
  std::vector<int32_t> used(cells.size(), 0);
  std::vector<VCellId> used_leaves;
  const int32_t initial_obtainable = fx.buddy.obtainable(fx.ch, kLeaf);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto available = [&](CellLevel level) {
    std::vector<CellId> out;
    for (size_t k = 0;; ++k) {
      CellId c = fx.Available(level, k);
      if (c.IsNil()) return out;
      out.push_back(c);
    }
  };
  // A physical leaf below `p` whose path from `p` down is unbound; Nil when none.
  auto free_pleaf_below = [&](CellId p) {
    while (fx.forest.level(p) > 1) {
      CellId next = CellId::Nil();
      const int32_t n = fx.forest.num_children(p);
      const int32_t start = static_cast<int32_t>(rng() % static_cast<uint32_t>(n));
      for (int32_t k = 0; k < n && next.IsNil(); ++k) {
        CellId c = fx.forest.child(p, (start + k) % n);
        if (vc.p_bound()[c.value()] == kNilId) next = c;
      }
      if (next.IsNil()) return CellId::Nil();
      p = next;
    }
    return p;
  };

  for (int step = 0; step < 400; ++step) {
    CAPTURE(step);
    const VCellId r = roots[pick(roots.size())];
    const int op = static_cast<int>(rng() % 4);
    if (op == 0 && !bound[r]) {  // bind a preassigned cell
      std::vector<CellId> cands = available(cells[r].level);
      if (cands.empty()) continue;
      vc.AllocatePreassigned(r, cands[pick(cands.size())]);
      if (vc.SafetyOk(fx.ch)) {
        bound[r] = 1;
      } else {
        vc.ReleasePreassigned(r);
      }
    } else if (op == 1 && bound[r] && used[r] == 0) {  // give an idle one back
      vc.UnbindSubtree(r);
      vc.ReleasePreassigned(r);
      bound[r] = 0;
    } else if (op == 2) {  // bind and use a free leaf of `r`, binding `r` if needed
      std::vector<VCellId> leaves;
      for (VCellId x = r; x < cells.size() && cells[x].root == r; ++x) {
        if (cells[x].level == kLeaf && cells[x].user == kNilId) leaves.push_back(x);
      }
      if (leaves.empty()) continue;
      const VCellId leaf = leaves[pick(leaves.size())];
      VCellId top = leaf;  // the lowest bound ancestor, or the root
      while (cells[top].bound.IsNil() && !cells[top].is_root) top = cells[top].parent;
      CellId ptop = cells[top].bound;
      if (ptop.IsNil()) {
        std::vector<CellId> cands = available(cells[r].level);
        if (cands.empty()) continue;
        ptop = cands[pick(cands.size())];
      }
      CellId pleaf = free_pleaf_below(ptop);
      if (pleaf.IsNil()) continue;
      if (cells[leaf].bound.IsNil()) vc.BindLeafPath(leaf, pleaf);
      if (!vc.SafetyOk(fx.ch)) {
        vc.UnbindUp(leaf);
        REQUIRE(cells[r].bound.IsNil() == !bound[r]);
        continue;
      }
      vc.SetLeaf(leaf, static_cast<Priority>(rng() % 10), GroupId(0));
      ++used[r];
      bound[r] = 1;
      used_leaves.push_back(leaf);
    } else if (op == 3 && !used_leaves.empty()) {  // release a used leaf
      const size_t i = pick(used_leaves.size());
      const VCellId leaf = used_leaves[i];
      used_leaves.erase(used_leaves.begin() + static_cast<std::ptrdiff_t>(i));
      vc.SetLeaf(leaf, kFreePriority, kNilId);
      vc.UnbindUp(leaf);
      if (--used[cells[leaf].root] == 0) bound[cells[leaf].root] = 0;
    }
    REQUIRE(vc.CheckInvariants().ok());
    for (CellLevel l = kLeaf; l <= kRack; ++l) {
      int32_t all = 0;
      for (const char* name : {"alpha", "beta"}) {
        const VcId v = vc.FindVc(name);
        const auto& slot = vc.vcs()[v.value()].cl[fx.ch.value()][static_cast<size_t>(l)];
        int32_t model_free = 0;
        for (VCellId x : slot.roots) {
          REQUIRE(cells[x].bound.IsNil() == !bound[x]);
          model_free += bound[x] ? 0 : 1;
        }
        REQUIRE(slot.free == model_free);
        all += model_free;
      }
      REQUIRE(fx.AllFree(l) == all);
    }
  }
  // Releasing everything restores the initial state.
  for (VCellId leaf : used_leaves) {
    vc.SetLeaf(leaf, kFreePriority, kNilId);
    vc.UnbindUp(leaf);
  }
  for (VCellId r : roots) {
    if (!cells[r].bound.IsNil()) {
      vc.UnbindSubtree(r);
      vc.ReleasePreassigned(r);
    }
  }
  REQUIRE(vc.CheckInvariants().ok());
  CHECK(fx.buddy.obtainable(fx.ch, kLeaf) == initial_obtainable);
  CHECK(fx.AllFree(kNode) == 1);
  CHECK(fx.AllFree(kPair) == 2);
  CHECK(fx.AllFree(kRack) == 1);
}

}  // namespace
}  // namespace hived
