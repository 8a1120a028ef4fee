// cellalloc/buddy_planner.h: plans buddy allocations for a tree of virtual cells without
// changing the allocator: which free physical cells to take, where to split, backtracking,
// and HiveD's safe relaxed split.
//
// The scheduler describes what it needs as *plan nodes*: cells of given levels, each with
// its child plan nodes (the parts of the virtual tree a placement uses). A node is placed
// either as a root (`PlaceRoot`: a free cell of its level, or one obtained by splitting a
// free higher cell) or under a physical cell the caller already holds (`PlaceUnder`: among
// that cell's children). A placed node's children are matched among its physical
// children, recursively, with backtracking. Nothing is written to the allocator: the plan
// lives on an overlay (cells *taken* by the plan, and the children of cells the plan splits
// virtually). The caller reads the chosen cells (`cell(node)`) and then calls `Abandon()`;
// it commits a plan by allocating the chosen root cells in the `BuddyAllocator`
// (`AllocateCell`), which performs exactly the splits the plan assumed.
//
// Rules (HiveD's buddy allocation, hived-reference.md §3.2; scheduler.h rule 6):
//  1. A root of level L takes a free cell of level L; when none is free the lowest level
//     above with a free cell is split, and its children are candidates at the level below
//     (after the free cells of that level), recursively.
//  2. Candidates are tried in the allocator's free-list order (config order) and must be
//     *usable*: not bound by the caller, not taken by this plan, healthy if inside one
//     node, and containing a suggested node when suggestions are given. At the target
//     level, usable cells without used leaves come first; the others follow, fewer used
//     leaves first (stable). Children are matched in the same order, with backtracking.
//  3. Safe relaxed split: when no free cell of level L is usable, a free higher cell is
//     split only if afterwards every VC's unbound cells stay obtainable, checked exactly
//     top-down over the chain's levels (HiveD checks per level, which can miss a joint
//     shortage). Only the split the chosen cell needs is kept.
//
// Invariants (checked in tests):
//  (1) Between plans the overlay is empty: no cell taken, no virtual split, no nodes.
//  (2) Every cell a plan chooses was usable when chosen, and no two plan nodes share a
//      cell; a node's cell has the node's level and is a child of its parent's cell.
//  (3) A root's cell is available in the allocator (free or covered by a free cell), so
//      `BuddyAllocator::AllocateCell` succeeds on it; committing the plan's roots keeps
//      every VC's unbound cells obtainable when the relaxed split was used.
//
// Example:
//   BuddyPlanner planner(&alloc, &usage);
//   planner.Begin(chain, context);
//   int32_t node = planner.AddNode(/*level=*/2);
//   if (planner.PlaceRoot(node)) CellId cell = planner.cell(node);
//   planner.Abandon();
//
// Thread safety: not thread-safe; callers serialize. The planner keeps pointers to the
// allocator and the usage, which must outlive it.
#ifndef HIVED_CELLALLOC_BUDDY_PLANNER_H_
#define HIVED_CELLALLOC_BUDDY_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "cellalloc/priority_usage.h"
#include "hived/types.h"

namespace hived::cellalloc {

// What the caller knows about the cells, for one plan. The pointers must stay valid (and
// their contents unchanged) until `Abandon`.
struct PlanContext {
  // Per physical cell: kNotBound unless the caller holds it (a bound virtual cell).
  const std::vector<uint32_t>* bound = nullptr;
  // Suggested nodes; null: every node is suggested. `cell_suggested` counts, per cell
  // above node level, the suggested nodes inside it.
  const std::vector<uint8_t>* node_suggested = nullptr;
  const std::vector<int32_t>* cell_suggested = nullptr;
  // Per level of the plan's chain: the VCs' unbound preassigned cells (for rule 3).
  const std::vector<int32_t>* vc_unbound = nullptr;
  static constexpr uint32_t kNotBound = 0xffffffffu;
};

class BuddyPlanner {
 public:
  BuddyPlanner(const BuddyAllocator* alloc, const PriorityUsage* usage);

  // Starts a plan in chain `ch`. REQUIRES: no plan is open (invariant 1).
  void Begin(ChainId ch, const PlanContext& context);
  // Adds a plan node of `level`; returns its id (0, 1, ... in call order).
  int32_t AddNode(CellLevel level);
  // Makes `child` a child of `parent` (children are matched in the order added).
  void AddChild(int32_t parent, int32_t child);
  // Places a root node and its subtree (rules 1-3). False: no usable cell; the plan is
  // unchanged then.
  bool PlaceRoot(int32_t node);
  // Places `nodes` (and their subtrees) on distinct usable children of `parent`.
  bool PlaceUnder(CellId parent, absl::Span<const int32_t> nodes);
  // The cell chosen for a placed node; Nil otherwise.
  CellId cell(int32_t node) const { return nodes_[static_cast<size_t>(node)].cell; }
  // Ends the plan and clears the overlay (invariant 1).
  void Abandon();
  // True when no plan is open and the overlay is empty (invariant 1), for tests.
  bool IsIdle() const;

 private:
  // Trivially destructible (children as a sibling list), so adding nodes and clearing
  // them between plans costs no per-node construction or destruction.
  struct Node {
    CellLevel level = 0;
    CellId cell;
    int32_t num_children = 0;
    int32_t first_child = -1;
    int32_t last_child = -1;
    int32_t next_sibling = -1;
  };
  using CandList = absl::InlinedVector<CellId, 16>;

  // Inline: the hottest test of planning (every candidate and child).
  bool Usable(CellId p) const {
    if ((*ctx_.bound)[p.value()] != PlanContext::kNotBound || taken_[p.value()]) return false;
    const NodeId n = forest_->node(p);
    if (n.IsNil()) return ctx_.node_suggested == nullptr || (*ctx_.cell_suggested)[p.value()] > 0;
    if (!alloc_->IsNodeHealthy(n)) return false;
    return ctx_.node_suggested == nullptr || (*ctx_.node_suggested)[n.value()] != 0;
  }
  void Take(CellId p);
  void Untake(CellId p) { taken_[p.value()] = 0; }
  // Usable children of `p`, fewest used leaves first, stable, into `*out`.
  void SortedChildren(CellId p, CandList* out) const;
  bool Match(int32_t node, CellId p);
  // Places one node on a child of `parent`: the same choice as MatchAll over
  // SortedChildren(parent), without building the order unless the first choice fails.
  bool MatchOne(int32_t node, CellId parent);
  void Unmatch(int32_t node);
  bool MatchAll(absl::Span<const int32_t> nodes, absl::Span<const CellId> candidates, size_t i);
  // Free-list candidates of level `l` on the overlay: relaxed-split cells, the allocator's
  // free cells, then children of virtually split cells; untaken ones only.
  template <typename Fn>
  bool AnyCandidate(CellLevel l, Fn&& fn) const;
  std::vector<CellId> Candidates(CellLevel l) const;
  bool BuddyAlloc(int32_t node);
  bool AllocAtLevel(CellLevel l, int32_t node);
  bool SafeRelaxedAlloc(int32_t node);

  const BuddyAllocator* alloc_;
  const CellForest* forest_;
  const PriorityUsage* usage_;
  ChainId chain_;
  PlanContext ctx_;
  bool open_ = false;
  std::vector<Node> nodes_;
  std::vector<uint8_t> taken_;  // per cell
  std::vector<uint32_t> taken_touched_;
  std::vector<std::vector<CellId>> extra_;    // per level: children of virtual splits
  std::vector<std::vector<CellId>> prepend_;  // per level: relaxed-split candidates
  std::vector<int32_t> unbound_delta_;        // per level: roots placed by this plan
  bool levels_dirty_ = false;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_BUDDY_PLANNER_H_
