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
//  4. The state-as-if: a plan may be made as if some used cells were released first
//     (`StateAsIf::free`) and some cells were not bound (`StateAsIf::unbound`), e.g. what a
//     guaranteed placement's lazy downgrades would give back. Rules 1-3 then read the free
//     lists the allocator would have after `Release` of those cells: each is free, and a
//     cell whose buddies are all free (really or as if) counts as its merged parent, at the
//     parent's place in the higher level's config order; the merged children are no
//     candidates. The caller states the matching unbound counts in `vc_unbound`. Nothing
//     is released: the state-as-if is part of the overlay.
//
// Invariants (checked in tests):
//  (1) Between plans the overlay is empty: no cell taken, no virtual split, no nodes, no
//      state-as-if (no cell flagged as free, merged or unbound).
//  (2) Every cell a plan chooses was usable when chosen, and no two plan nodes share a
//      cell; a node's cell has the node's level and is a child of its parent's cell.
//  (3) A root's cell is available in the state-as-if (free or covered by a free cell;
//      without one, in the allocator), so after releasing its `free` cells
//      `BuddyAllocator::AllocateCell` succeeds on it; committing the plan's roots keeps
//      every VC's unbound cells obtainable when the relaxed split was used.
//  (4) A plan made as if `free` were released and `unbound` unbound is exactly the
//      plan made after releasing them for real and clearing their `bound` entries (the
//      reference-model property test compares the two). Between plans the state-as-if is
//      empty; a plan without it pays one branch per bound candidate and per free-list walk.
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

// A state-as-if (rule 4): used cells to treat as released (with the merges that follow),
// and cells to treat as kNotBound. REQUIRES: every `free` cell is used in the allocator, no
// two overlap, and each is in `unbound` when it is bound.
struct StateAsIf {
  absl::Span<const CellId> free;
  absl::Span<const CellId> unbound;
};

// What the caller knows about the cells, for one plan. The pointers must stay valid (and
// their contents unchanged) until `Abandon`.
struct PlanContext {
  // Per physical cell: kNotBound unless the caller holds it (a bound virtual cell).
  const std::vector<uint32_t>* bound = nullptr;
  // Suggested nodes; null: every node is suggested. `cell_suggested` counts, per cell
  // above node level, the suggested nodes inside it.
  const std::vector<uint8_t>* node_suggested = nullptr;
  const std::vector<int32_t>* cell_suggested = nullptr;
  // Per level of the plan's chain: the VCs' unbound preassigned cells (for rule 3), in the
  // state-as-if when one is given.
  const std::vector<int32_t>* vc_unbound = nullptr;
  // The state-as-if (rule 4); null for a plan on the state as it is.
  const StateAsIf* as_if = nullptr;
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

  // Overlay flags of the state-as-if, per cell (`as_`).
  static constexpr uint8_t kAsUnbound = 1;  // bound, but not in the state-as-if
  static constexpr uint8_t kAsFree = 2;     // free in the state-as-if, not in the allocator
  static constexpr uint8_t kAsMerged = 4;   // free in the allocator, merged into its parent

  // Inline: the hottest test of planning (every candidate and child).
  bool Usable(CellId p) const {
    if ((*ctx_.bound)[p.value()] != PlanContext::kNotBound &&
        !(as_active_ && (as_[p.value()] & kAsUnbound) != 0)) {
      return false;
    }
    if (taken_[p.value()]) return false;
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
  // Builds the state-as-if from the context (rule 4); `MarkAs` flags a cell, `FreeAs`
  // releases one as if, merging buddies upward.
  void BeginAsIf();
  void MarkAs(CellId c, uint8_t flag);
  void FreeAs(CellId c);
  bool FreeInStateAsIf(CellId c) const;
  // Free-list candidates of level `l` on the overlay: relaxed-split cells, the free cells of
  // the state-as-if (the allocator's, merged with `as_free_list_`), then children of
  // virtually split cells; untaken ones only.
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
  // The state-as-if (rule 4): empty and inactive between plans and for plans without one.
  bool as_active_ = false;
  std::vector<uint8_t> as_;           // per cell: kAs* flags
  std::vector<uint32_t> as_touched_;  // cells with flags set during this plan
  std::vector<std::vector<CellId>>
      as_free_list_;  // per level: kAsFree cells of the chain, id order
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_BUDDY_PLANNER_H_
