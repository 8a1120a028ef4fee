// Property test of the buddy allocator against a naive reference model.
//
// The model knows only which cells the test holds (a set of used cells) and which nodes
// are bad. From that alone it recomputes, after every step and from scratch, the state
// every cell must be in: a used cell is used; a cell inside one is covered; a cell with a
// used descendant is split; any other cell is free if it is a top-level cell or its parent
// is split, else covered (fully merged buddies). From those states it derives the free
// lists' sizes, the obtainable and bad_free counters, and every cell's health, and
// compares them with the allocator, whose CheckInvariants must also pass after every step.
// Finally, releasing everything and healing every node must give back the initial state.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/buddy_planner.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/index_set.h"
#include "cellalloc/priority_usage.h"
#include "hived/cluster_spec.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

using testing::Cell;
using testing::Top;

const int kSteps = static_cast<int>(::hived::testing::PropertySteps(10000));

class Model {
 public:
  explicit Model(const CellForest& forest)
      : f_(forest),
        used_(static_cast<size_t>(forest.num_cells()), 0),
        node_bad_(static_cast<size_t>(forest.num_nodes()), 0) {
    // The topology, copied once into plain arrays (the model runs after every step).
    for (int32_t i = 0; i < forest.num_cells(); ++i) {
      const CellId id(static_cast<uint32_t>(i));
      parent_.push_back(
          forest.parent(id).IsNil() ? -1 : static_cast<int64_t>(forest.parent(id).value()));
      level_.push_back(forest.level(id));
      chain_.push_back(forest.chain(id).value());
      node_.push_back(forest.node(id).value());
    }
    Recompute();
  }

  void SetUsed(CellId c, bool used) { used_[c.value()] = used ? 1 : 0; }
  void SetNodeBad(NodeId n, bool bad) { node_bad_[n.value()] = bad ? 1 : 0; }
  bool node_bad(NodeId n) const { return node_bad_[n.value()] != 0; }

  // Recomputes every derived fact from the used set and the bad nodes.
  void Recompute() {
    const size_t n = used_.size();
    subtree_used_.assign(n, 0);
    inside_used_.assign(n, 0);
    bad_.assign(n, 0);
    state_.assign(n, BuddyState::kCovered);
    for (size_t c = n; c-- > 0;) {  // children have larger ids than parents
      if (used_[c] != 0) subtree_used_[c] = 1;
      if (level_[c] == 1 && node_bad_[node_[c]] != 0) bad_[c] = 1;
      const int64_t p = parent_[c];
      if (p >= 0) {
        subtree_used_[static_cast<size_t>(p)] |= subtree_used_[c];
        bad_[static_cast<size_t>(p)] |= bad_[c];
      }
    }
    for (size_t c = 0; c < n; ++c) {
      const int64_t p = parent_[c];
      const size_t pu = static_cast<size_t>(p);
      if (p >= 0 && (used_[pu] != 0 || inside_used_[pu] != 0)) inside_used_[c] = 1;
      if (used_[c] != 0) {
        state_[c] = BuddyState::kUsed;
      } else if (inside_used_[c] != 0) {
        state_[c] = BuddyState::kCovered;
      } else if (subtree_used_[c] != 0) {
        state_[c] = BuddyState::kSplit;
      } else if (p < 0 || state_[pu] == BuddyState::kSplit) {
        state_[c] = BuddyState::kFree;
      } else {
        state_[c] = BuddyState::kCovered;
      }
    }
  }

  BuddyState state(CellId c) const { return state_[c.value()]; }
  bool available(CellId c) const {
    return subtree_used_[c.value()] == 0 && inside_used_[c.value()] == 0;
  }
  bool bad(CellId c) const { return bad_[c.value()] != 0; }

  // The lowest level >= `level` of chain `ch` with a free cell; 0 when there is none.
  CellLevel LowestFreeLevel(ChainId ch, CellLevel level) const {
    CellLevel best = 0;
    for (size_t c = 0; c < state_.size(); ++c) {
      if (state_[c] != BuddyState::kFree || chain_[c] != ch.value() || level_[c] < level) {
        continue;
      }
      if (best == 0 || level_[c] < best) best = level_[c];
    }
    return best;
  }

  // Compares the allocator with the model; returns the first difference, or "".
  // `check_available` also compares IsAvailable for every cell (O(cells x levels)).
  std::string Compare(const BuddyAllocator& alloc, bool check_available) const {
    struct Counts {
      int32_t free = 0, obtainable = 0, bad_free = 0;
    };
    std::vector<std::vector<Counts>> counts(static_cast<size_t>(f_.num_chains()));
    for (int32_t i = 0; i < f_.num_chains(); ++i) {
      counts[static_cast<size_t>(i)].resize(
          static_cast<size_t>(f_.chain_info(ChainId(static_cast<uint32_t>(i))).top_level) + 1);
    }
    for (size_t c = 0; c < state_.size(); ++c) {
      const CellId id(static_cast<uint32_t>(c));
      if (alloc.state(id) != state_[c]) {
        return absl::StrCat("cell ", c, " (", f_.address(id), ") has state ",
                            static_cast<int>(alloc.state(id)), ", model says ",
                            static_cast<int>(state_[c]));
      }
      if (alloc.IsHealthy(id) == bad(id)) {
        return absl::StrCat("cell ", c, " (", f_.address(id), ") health differs from model");
      }
      if (check_available && alloc.IsAvailable(id) != available(id)) {
        return absl::StrCat("cell ", c, " availability differs from model");
      }
      Counts& k = counts[chain_[c]][static_cast<size_t>(level_[c])];
      if (state_[c] == BuddyState::kFree) ++k.free;
      if (available(id)) {
        ++k.obtainable;
        if (bad(id)) ++k.bad_free;
      }
    }
    for (int32_t i = 0; i < f_.num_chains(); ++i) {
      const ChainId ch(static_cast<uint32_t>(i));
      for (CellLevel l = 1; l <= f_.chain_info(ch).top_level; ++l) {
        const Counts& k = counts[static_cast<size_t>(i)][static_cast<size_t>(l)];
        if (alloc.free_count(ch, l) != k.free || alloc.obtainable(ch, l) != k.obtainable ||
            alloc.bad_free(ch, l) != k.bad_free) {
          return absl::StrCat("chain ", i, " level ", l, ": free/obtainable/bad_free ",
                              alloc.free_count(ch, l), "/", alloc.obtainable(ch, l), "/",
                              alloc.bad_free(ch, l), ", model says ", k.free, "/", k.obtainable,
                              "/", k.bad_free);
        }
      }
    }
    return "";
  }

 private:
  const CellForest& f_;
  std::vector<int64_t> parent_;  // -1 for top-level cells
  std::vector<CellLevel> level_;
  std::vector<uint32_t> chain_;
  std::vector<uint32_t> node_;
  std::vector<uint8_t> used_;
  std::vector<uint8_t> node_bad_;
  std::vector<uint8_t> subtree_used_;
  std::vector<uint8_t> inside_used_;
  std::vector<uint8_t> bad_;
  std::vector<BuddyState> state_;
};

// HiveD's design.yaml, shrunk: CT1-NODE cells with explicit leaves (a whole node per top
// cell), the 3-DGX1-P100 rack with generated and scrambled nodes, and a nested chain whose
// node is shared with CT1.
ClusterSpec DesignLiteSpec() {
  ClusterSpec full = testing::DesignSpec();
  ClusterSpec spec;
  spec.cell_types = full.cell_types;
  spec.physical_cells = {full.physical_cells[0], full.physical_cells[2], full.physical_cells[3]};
  spec.cell_types.push_back({"CT1-PAIR", "CT1-NODE", 2, false});
  spec.physical_cells.push_back(Top("CT1-PAIR", "", {Cell("2.0.0.0"), Cell("2.0.0.1")}));
  return spec;
}

// Two chains over one leaf type: lone 4-GPU nodes and racks of 3 of them.
ClusterSpec SharedLeafSpec() {
  ClusterSpec spec;
  spec.cell_types = {
      {"G-PAIR", "G", 2, false}, {"G-NODE", "G-PAIR", 2, true}, {"G-RACK", "G-NODE", 3, false}};
  spec.physical_cells = {Top("G-NODE", "solo-0"),
                         Top("G-RACK", "", {Cell("r-0"), Cell("r-1"), Cell("r-2")}),
                         Top("G-NODE", "solo-1")};
  return spec;
}

void RunRandomOperations(const ClusterSpec& spec, uint64_t seed) {
  absl::StatusOr<CellForest> built = CellForest::Build(spec);
  REQUIRE(built.ok());
  const CellForest& forest = *built;
  BuddyAllocator alloc(&forest);
  const BuddyAllocator initial(&forest);
  Model model(forest);
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int32_t lo, int32_t hi) {  // inclusive
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  };
  std::vector<CellId> held;
  int allocations = 0;
  for (int step = 0; step < kSteps; ++step) {
    const int32_t op = uniform(0, 99);
    std::string what;
    if (op < 35) {  // allocate at a random chain and level
      const ChainId ch(static_cast<uint32_t>(uniform(0, forest.num_chains() - 1)));
      const CellLevel level = uniform(1, forest.chain_info(ch).top_level);
      const CellLevel from = model.LowestFreeLevel(ch, level);
      const CellId first = from == 0 ? CellId::Nil() : alloc.FirstFree(ch, from);
      const CellId got = alloc.Allocate(ch, level);
      what = absl::StrCat("Allocate(chain ", ch.value(), ", level ", level, ")");
      if (from == 0) {
        if (!got.IsNil()) FAIL(what << " returned a cell, model says none is obtainable");
      } else {
        if (got.IsNil()) FAIL(what << " returned Nil, model has a free cell at level " << from);
        if (forest.chain(got) != ch || forest.level(got) != level || !model.available(got)) {
          FAIL(what << " returned an unavailable or wrong-level cell " << got.value());
        }
        // Split the lowest free level, first cell first, down its first children.
        CellId expect = first;
        while (forest.level(expect) > level) expect = forest.first_child(expect);
        if (got != expect) FAIL(what << " took " << got.value() << ", expected " << expect.value());
        model.SetUsed(got, true);
        held.push_back(got);
        ++allocations;
      }
    } else if (op < 55) {  // allocate a specific random cell
      const CellId cell(static_cast<uint32_t>(uniform(0, forest.num_cells() - 1)));
      const bool expect = model.available(cell);
      what = absl::StrCat("AllocateCell(", cell.value(), ")");
      if (alloc.AllocateCell(cell) != expect) FAIL(what << " disagrees with the model");
      if (expect) {
        model.SetUsed(cell, true);
        held.push_back(cell);
        ++allocations;
      }
    } else if (op < 90) {  // release a random held cell
      if (held.empty()) continue;
      const size_t i = static_cast<size_t>(uniform(0, static_cast<int32_t>(held.size()) - 1));
      const CellId cell = held[i];
      held[i] = held.back();
      held.pop_back();
      what = absl::StrCat("Release(", cell.value(), ")");
      alloc.Release(cell);
      model.SetUsed(cell, false);
    } else {  // flip a node's health
      const NodeId node(static_cast<uint32_t>(uniform(0, forest.num_nodes() - 1)));
      const bool bad = !model.node_bad(node);
      what = absl::StrCat("SetNodeHealthy(", node.value(), ", ", !bad, ")");
      const std::vector<CellId> changed = alloc.SetNodeHealthy(node, !bad);
      model.SetNodeBad(node, bad);
      if (changed.empty()) FAIL(what << " reported no changed cells");
    }
    model.Recompute();
    const absl::Status status = alloc.CheckInvariants();
    if (!status.ok()) FAIL("step " << step << " " << what << ": " << status.ToString());
    const std::string diff = model.Compare(alloc, /*check_available=*/step % 16 == 0);
    if (!diff.empty()) FAIL("step " << step << " " << what << ": " << diff);
  }
  CHECK(allocations > kSteps / 10);
  // Release everything and heal every node: the initial state comes back.
  for (CellId cell : held) alloc.Release(cell);
  for (int32_t n = 0; n < forest.num_nodes(); ++n) {
    alloc.SetNodeHealthy(NodeId(static_cast<uint32_t>(n)), true);
  }
  REQUIRE(alloc.CheckInvariants().ok());
  for (int32_t c = 0; c < forest.num_cells(); ++c) {
    const CellId id(static_cast<uint32_t>(c));
    if (alloc.state(id) != initial.state(id)) FAIL("cell " << c << " not back to its state");
  }
  for (int32_t i = 0; i < forest.num_chains(); ++i) {
    const ChainId ch(static_cast<uint32_t>(i));
    for (CellLevel l = 1; l <= forest.chain_info(ch).top_level; ++l) {
      CHECK(alloc.free_count(ch, l) == initial.free_count(ch, l));
      CHECK(alloc.obtainable(ch, l) == initial.obtainable(ch, l));
      CHECK(alloc.bad_free(ch, l) == 0);
      std::vector<CellId> now;
      std::vector<CellId> then;
      alloc.ForEachFree(ch, l, [&](CellId c) {
        now.push_back(c);
        return true;
      });
      initial.ForEachFree(ch, l, [&](CellId c) {
        then.push_back(c);
        return true;
      });
      std::sort(now.begin(), now.end());
      CHECK(now == then);
    }
  }
}

TEST_CASE("BuddyAllocator property: deep binary racks match the reference model",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(1), ::hived::testing::PropertySeedEnd(1, 20)));
  CAPTURE(seed);
  RunRandomOperations(testing::RackSpec(2, 2), seed);
}

TEST_CASE("BuddyAllocator property: fan-outs of 3 and 6 match the reference model",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(101), ::hived::testing::PropertySeedEnd(101, 20)));
  CAPTURE(seed);
  RunRandomOperations(testing::FlatSpec(2, 3, 6), seed);
}

TEST_CASE("BuddyAllocator property: design.yaml's chains match the reference model",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(201), ::hived::testing::PropertySeedEnd(201, 20)));
  CAPTURE(seed);
  RunRandomOperations(DesignLiteSpec(), seed);
}

TEST_CASE("BuddyAllocator property: chains sharing a leaf type match the reference model",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(301), ::hived::testing::PropertySeedEnd(301, 20)));
  CAPTURE(seed);
  RunRandomOperations(SharedLeafSpec(), seed);
}

// ---- BuddyPlanner against a reference written from buddy_planner.h's rules --------------
//
// Random allocator states (cells held by the test, some of them "bound" by a caller, bad
// nodes, random used leaves); then a plan for one root cell of a random level. The reference:
//  - the lowest level L >= target with a free cell is split (rule 1): the first usable free
//    cell of L in config order whose subtree yields a target cell, depth-first through
//    usable children; at the target level, usable cells without used leaves first, then
//    fewer used leaves (stable);
//  - when that yields nothing, the planner may use the safe relaxed split (rule 3); its
//    choice is then checked by its promise: after committing it, the chain's free cells
//    still back every VC's unbound cells (the joint top-down count).
// Invariants checked on every plan: the chosen cell has the target level and is usable,
// `AllocateCell` accepts it (on a copy of the allocator), and the planner is idle after
// `Abandon`.
class PlannerReference {
 public:
  PlannerReference(const CellForest& f, const BuddyAllocator& a, const PriorityUsage& u,
                   const std::vector<uint32_t>& bound)
      : f_(f), a_(a), u_(u), bound_(bound) {}

  bool Usable(CellId c) const {
    if (bound_[c.value()] != PlanContext::kNotBound) return false;
    return f_.node(c).IsNil() || a_.IsHealthy(c);
  }

  // The rule-1 choice, or Nil.
  CellId Choose(ChainId ch, CellLevel target) const {
    CellLevel l = target;
    const CellLevel top = f_.chain_info(ch).top_level;
    while (l <= top && a_.FirstFree(ch, l).IsNil()) ++l;
    if (l > top) return CellId::Nil();
    std::vector<CellId> cands;
    a_.ForEachFree(ch, l, [&](CellId c) {
      cands.push_back(c);
      return true;
    });
    return Descend(cands, target);
  }

 private:
  CellId Descend(const std::vector<CellId>& cands, CellLevel target) const {
    if (cands.empty()) return CellId::Nil();
    if (f_.level(cands.front()) == target) {
      std::vector<CellId> usable;
      for (CellId c : cands) {
        if (Usable(c)) usable.push_back(c);
      }
      std::stable_sort(usable.begin(), usable.end(),
                       [&](CellId x, CellId y) { return u_.UsedTotal(x) < u_.UsedTotal(y); });
      return usable.empty() ? CellId::Nil() : usable.front();
    }
    for (CellId c : cands) {
      if (!Usable(c)) continue;
      std::vector<CellId> kids;
      for (int32_t k = 0; k < f_.num_children(c); ++k) kids.push_back(f_.child(c, k));
      const CellId got = Descend(kids, target);
      if (!got.IsNil()) return got;
    }
    return CellId::Nil();
  }

  const CellForest& f_;
  const BuddyAllocator& a_;
  const PriorityUsage& u_;
  const std::vector<uint32_t>& bound_;
};

// The chain's free cells back `unbound` (per level) jointly, counted top-down.
bool JointlySafe(const CellForest& f, const BuddyAllocator& a, ChainId ch,
                 const std::vector<int32_t>& unbound) {
  const ChainInfo& info = f.chain_info(ch);
  int64_t left = 0;
  for (CellLevel j = info.top_level; j >= 1; --j) {
    const size_t jj = static_cast<size_t>(j);
    if (j < info.top_level) left *= info.child_count[jj + 1];
    left += a.free_count(ch, j) - unbound[jj];
    if (left < 0) return false;
  }
  return true;
}

// A random state for planning over one spec: cells the test holds (some marked bound by
// the caller and, with `bind_children`, some of their children too), bad nodes, used leaves.
class PlanWorld {
 public:
  PlanWorld(const ClusterSpec& spec, uint64_t seed)
      : f(Build(spec)),
        alloc(&f),
        usage(PriorityUsage::ForForest(f)),
        bound(static_cast<size_t>(f.num_cells()), PlanContext::kNotBound),
        rng_(seed) {}
  PlanWorld(const PlanWorld&) = delete;  // `alloc` points at `f`
  PlanWorld& operator=(const PlanWorld&) = delete;

  int32_t Uniform(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng_);
  }
  // One random operation: op < `hold_ops` of 10 holds a random available cell; then one
  // releases a held cell, one flips a node's health, one flips a leaf's (opportunistic) use.
  void Step(int32_t hold_ops, bool bind_children) {
    const int32_t op = Uniform(0, 9);
    if (op < hold_ops) {
      const CellId c(static_cast<uint32_t>(Uniform(0, f.num_cells() - 1)));
      if (alloc.AllocateCell(c)) {
        held.push_back(c);
        if (Uniform(0, 1) == 0) bound[c.value()] = 1;
        if (bind_children && f.num_children(c) > 0 && Uniform(0, 1) == 0) {
          bound[f.child(c, Uniform(0, f.num_children(c) - 1)).value()] = 1;
        }
      }
    } else if (op < hold_ops + 2 && !held.empty()) {
      const size_t i = static_cast<size_t>(Uniform(0, static_cast<int32_t>(held.size()) - 1));
      std::vector<CellId> b;
      BoundIn(held[i], &b);
      for (CellId x : b) bound[x.value()] = PlanContext::kNotBound;
      alloc.Release(held[i]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op < hold_ops + 3) {
      const NodeId n(static_cast<uint32_t>(Uniform(0, f.num_nodes() - 1)));
      alloc.SetNodeHealthy(n, !alloc.IsNodeHealthy(n));
    } else if (op < hold_ops + 4) {  // opportunistic use of a random leaf (any state)
      const CellId leaf =
          f.first_leaf(CellId(static_cast<uint32_t>(Uniform(0, f.num_cells() - 1))));
      usage.SetLeafPriority(
          leaf, usage.LeafPriority(leaf) == kFreePriority ? kOpportunisticPriority : kFreePriority);
    }
  }
  // `c` and its children, those marked bound, into `out`.
  void BoundIn(CellId c, std::vector<CellId>* out) const {
    if (bound[c.value()] != PlanContext::kNotBound) out->push_back(c);
    for (int32_t k = 0; k < f.num_children(c); ++k) {
      if (bound[f.child(c, k).value()] != PlanContext::kNotBound) out->push_back(f.child(c, k));
    }
  }

  const CellForest f;
  BuddyAllocator alloc;
  PriorityUsage usage;
  std::vector<uint32_t> bound;
  std::vector<CellId> held;

 private:
  static CellForest Build(const ClusterSpec& spec) {
    absl::StatusOr<CellForest> built = CellForest::Build(spec);
    REQUIRE(built.ok());
    return *std::move(built);
  }
  std::mt19937_64 rng_;
};

void RunRandomPlans(const ClusterSpec& spec, uint64_t seed, int* relaxed_plans) {
  PlanWorld w(spec, seed);
  const CellForest& f = w.f;
  BuddyAllocator& alloc = w.alloc;
  PriorityUsage& usage = w.usage;
  std::vector<uint32_t>& bound = w.bound;
  BuddyPlanner planner(&alloc, &usage);
  auto uniform = [&w](int32_t lo, int32_t hi) { return w.Uniform(lo, hi); };
  for (int step = 0; step < 400; ++step) {
    CAPTURE(step);
    w.Step(/*hold_ops=*/3, /*bind_children=*/false);
    // Plan one root of a random level.
    const ChainId ch(static_cast<uint32_t>(uniform(0, f.num_chains() - 1)));
    const CellLevel target = uniform(1, f.chain_info(ch).top_level);
    std::vector<int32_t> unbound(static_cast<size_t>(f.chain_info(ch).top_level) + 2, 0);
    for (CellLevel l = 1; l <= f.chain_info(ch).top_level; ++l) {
      unbound[static_cast<size_t>(l)] = uniform(0, 1);
    }
    PlanContext context;
    context.bound = &bound;
    context.vc_unbound = &unbound;
    planner.Begin(ch, context);
    const int32_t node = planner.AddNode(target);
    const bool placed = planner.PlaceRoot(node);
    const CellId got = planner.cell(node);
    const CellId expect = PlannerReference(f, alloc, usage, bound).Choose(ch, target);
    planner.Abandon();
    REQUIRE(planner.IsIdle());
    if (!expect.IsNil()) {
      REQUIRE(placed);
      CHECK(got == expect);
    }
    if (!placed) continue;
    REQUIRE(f.level(got) == target);
    REQUIRE(PlannerReference(f, alloc, usage, bound).Usable(got));
    BuddyAllocator copy = alloc;
    REQUIRE(copy.AllocateCell(got));
    if (expect.IsNil()) {  // the safe relaxed split: its promise
      ++*relaxed_plans;
      std::vector<int32_t> after = unbound;
      --after[static_cast<size_t>(target)];
      CHECK(JointlySafe(f, copy, ch, after));
    }
  }
}

TEST_CASE("BuddyPlanner property: plans match the buddy rules and the relaxed split stays safe",
          "[cellalloc][property]") {
  int relaxed = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    RunRandomPlans(testing::RackSpec(2, 2), seed, &relaxed);
    RunRandomPlans(DesignLiteSpec(), seed + 1000, &relaxed);
  }
  CHECK(relaxed > 0);  // the random states reach the relaxed split
}

// ---- BuddyPlanner's state-as-if against releasing for real ------------------------------
//
// Random states as above, where the test holds cells and marks some of them and some of
// their children bound. Then a random "as if freed" set of held cells (and "as if
// unbound" cells: the bound ones among them and their children, plus random other bound
// cells), and a plan of one root with up to two children. The reference: release the set
// for real on a copy of the allocator, clear the bound entries, and plan there without a
// state-as-if (buddy_planner.h invariant 4). The two plans must be the same, cell for
// cell; the root must be allocatable after the release; the planner idle afterwards.
void RunAsIfPlans(const ClusterSpec& spec, uint64_t seed, int* as_if_plans) {
  PlanWorld w(spec, seed);
  const CellForest& f = w.f;
  BuddyPlanner planner(&w.alloc, &w.usage);
  auto uniform = [&w](int32_t lo, int32_t hi) { return w.Uniform(lo, hi); };
  for (int step = 0; step < 300; ++step) {
    CAPTURE(step);
    w.Step(/*hold_ops=*/4, /*bind_children=*/true);
    // The state-as-if.
    std::vector<CellId> as_free;
    std::vector<CellId> as_unbound;
    for (CellId c : w.held) {
      if (uniform(0, 2) == 0) {
        as_free.push_back(c);
        w.BoundIn(c, &as_unbound);
      } else if (uniform(0, 4) == 0) {
        w.BoundIn(c, &as_unbound);
      }
    }
    // A plan: a root of a random level with up to two children one level down.
    const ChainId ch(static_cast<uint32_t>(uniform(0, f.num_chains() - 1)));
    const CellLevel top = f.chain_info(ch).top_level;
    const CellLevel target = uniform(1, top);
    const int32_t kids = target > 1 ? uniform(0, 2) : 0;
    std::vector<int32_t> unbound(static_cast<size_t>(top) + 2, 0);
    for (CellLevel l = 1; l <= top; ++l) unbound[static_cast<size_t>(l)] = uniform(0, 1);
    auto plan = [&](BuddyPlanner* p, const PlanContext& context, std::vector<CellId>* cells) {
      p->Begin(ch, context);
      const int32_t root = p->AddNode(target);
      for (int32_t k = 0; k < kids; ++k) p->AddChild(root, p->AddNode(target - 1));
      const bool placed = p->PlaceRoot(root);
      for (int32_t k = 0; k <= kids; ++k) cells->push_back(p->cell(k));
      p->Abandon();
      REQUIRE(p->IsIdle());
      return placed;
    };
    PlanContext context;
    context.bound = &w.bound;
    context.vc_unbound = &unbound;
    const StateAsIf as_if{as_free, as_unbound};
    context.as_if = &as_if;
    std::vector<CellId> got;
    const bool placed = plan(&planner, context, &got);
    // The reference: the same plan after releasing for real.
    BuddyAllocator released = w.alloc;
    for (CellId c : as_free) released.Release(c);
    REQUIRE(released.CheckInvariants().ok());
    std::vector<uint32_t> bound_after = w.bound;
    for (CellId c : as_unbound) bound_after[c.value()] = PlanContext::kNotBound;
    BuddyPlanner reference(&released, &w.usage);
    PlanContext after;
    after.bound = &bound_after;
    after.vc_unbound = &unbound;
    std::vector<CellId> expect;
    const bool expect_placed = plan(&reference, after, &expect);
    REQUIRE(placed == expect_placed);
    CHECK(got == expect);
    if (!placed) continue;
    if (!as_free.empty()) ++*as_if_plans;
    REQUIRE(released.AllocateCell(got[0]));  // invariant 3 in the state-as-if
  }
}

TEST_CASE("BuddyPlanner property: a plan as if cells were freed equals freeing them for real",
          "[cellalloc][property]") {
  int as_if = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    RunAsIfPlans(testing::RackSpec(2, 2), seed, &as_if);
    RunAsIfPlans(DesignLiteSpec(), seed + 2000, &as_if);
  }
  CHECK(as_if > 0);
}

// ---- IndexSet against std::set ---------------------------------------------------------

TEST_CASE("IndexSet property: single and range updates and FindNext match std::set",
          "[cellalloc][property]") {
  for (int32_t n : {1, 63, 64, 65, 4097, 300000}) {
    CAPTURE(n);
    IndexSet set;
    set.Resize(n);
    std::set<int32_t> model;
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    auto uniform = [&rng](int32_t lo, int32_t hi) {
      return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
    };
    for (int step = 0; step < 3000; ++step) {
      const int32_t first = uniform(0, n - 1);
      const int32_t count = uniform(1, std::min(n - first, 200));
      switch (uniform(0, 3)) {
        case 0:
          set.Insert(first);
          model.insert(first);
          break;
        case 1:
          set.Erase(first);
          model.erase(first);
          break;
        case 2:
          set.InsertRange(first, count);
          for (int32_t k = first; k < first + count; ++k) model.insert(k);
          break;
        default:
          set.EraseRange(first, count);
          for (int32_t k = first; k < first + count; ++k) model.erase(k);
          break;
      }
      const int32_t from = uniform(0, n);
      auto it = model.lower_bound(from);
      REQUIRE(set.FindNext(from) == (it == model.end() ? -1 : *it));
      REQUIRE(set.Contains(first) == (model.count(first) == 1));
      if (step % 100 == 0 || n < 100) REQUIRE(set.CheckInvariants().ok());
    }
    REQUIRE(set.CheckInvariants().ok());
    // Walking the whole set visits exactly the model's elements.
    std::vector<int32_t> walked;
    for (int32_t i = set.FindNext(0); i >= 0; i = set.FindNext(i + 1)) walked.push_back(i);
    REQUIRE(walked == std::vector<int32_t>(model.begin(), model.end()));
  }
}

}  // namespace
}  // namespace hived::cellalloc
