// cellalloc/buddy_allocator.h: HiveD's buddy cell allocator over a CellForest, with the
// incremental counters the scheduler needs (obtainable and bad free cells per chain and
// level) and node health.
//
// Every cell is in exactly one of four buddy states:
//   kFree    on its level's free list (a whole, unsplit, unallocated cell);
//   kSplit   some descendant is allocated; its children carry the state;
//   kUsed    allocated to a caller (the caller owns the whole cell and its subtree);
//   kCovered inside a free or used cell, and in no list.
// A cell is *available* when it is free or covered by a free ancestor: it can be obtained
// by splitting. Initially only the top-level cells are free.
//
// The buddy algorithm (HiveD, OSDI'20 §3.2), and why:
//  1. Allocate(chain, level): take the first cell of the level's free list. If the list is
//     empty, move up to the lowest level l > level whose list is not empty and split its
//     first cell: it leaves its list (kSplit) and its children are appended, in child
//     order, to the list below; repeat with the first child until a cell of `level` is
//     free. Splitting the *lowest* possible level keeps large cells whole for requests
//     that need them (least external fragmentation), which is what lets HiveD promise VCs
//     whole cells of every level.
//  2. AllocateCell(cell): the same, but the split path goes from the free ancestor of
//     `cell` down to `cell` (binding chooses among candidates: healthy, suggested, fewest
//     opportunistic users).
//  3. Release(cell): append it to its free list; while all of a cell's siblings are free,
//     take them off their list and append their parent instead (merge), recursively
//     upward. Merging eagerly restores the largest free cells, so the state after any
//     sequence of calls depends only on which cells are used (up to list order).
//  4. Free lists are intrusive doubly linked lists over per-cell links: insert and remove
//     are O(1); order is insertion order (deterministic: the same calls give the same
//     order). A per-cell count of free children makes "are all buddies free?" O(1).
//  5. Counters change by O(levels) per split, merge or allocation (the number of level-l
//     cells inside a cell is a per-chain constant), plus, only when the cell contains bad
//     nodes, O(bad cells inside it). Allocate and Release therefore cost
//     O(levels x fan-out), independent of the cluster's size.
//
// Counters, kept incrementally (never by scanning):
//   obtainable(ch, l): cells at level l that are available (free or covered by free);
//   bad_free(ch, l):   available cells at level l that are bad;
//   free_count(ch, l): length of the free list.
//
// Health: a leaf is bad when its node is bad; a cell is bad iff any descendant leaf is.
//
// Example:
//   BuddyAllocator alloc(&forest);
//   CellId gpu = alloc.Allocate(ChainId(0), /*level=*/1);   // splits down from the top
//   alloc.Release(gpu);                                      // merges back up
//
// Thread safety: not thread-safe; callers serialize. The allocator keeps a pointer to the
// forest: the forest must outlive it and must not move (keep it in a stable place, e.g. a
// std::unique_ptr or a member declared before the allocator and never reassigned).
//
// Invariants (CheckInvariants names the first one violated):
//  (1) Buddy: no split cell has all of its children free (they would have been merged),
//      and every split cell has a used descendant; a free cell's parent is split or absent.
//  (2) Conservation: at every chain and level, every cell is exactly one of free, split,
//      used or covered (inside a free or used ancestor); top-level cells are never covered
//      and a split cell's children are never covered.
//  (3) List/flag consistency: a cell is on a free list iff its state is kFree, on the list
//      of its own chain and level; list links are symmetric; free_count matches the list
//      length; each cell's free-children count matches its children.
//  (4) Counters: obtainable, bad_free equal their definitions recomputed from scratch.
//  (5) Health: a cell is bad iff one of its leaves is on a bad node; bad-node counts
//      match.
//  (6) Releasing every used cell restores the initial state: only top-level cells free
//      (the free lists hold the same cells; their order may differ).
#ifndef HIVED_CELLALLOC_BUDDY_ALLOCATOR_H_
#define HIVED_CELLALLOC_BUDDY_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "hived/types.h"

namespace hived::cellalloc {

enum class BuddyState : uint8_t { kCovered, kFree, kSplit, kUsed };

class BuddyAllocator {
 public:
  explicit BuddyAllocator(const CellForest* forest);

  // Allocates some cell of `level` in chain `ch` by buddy allocation and marks it used.
  // Returns Nil when no cell of that level is obtainable (or `ch`/`level` do not exist).
  CellId Allocate(ChainId ch, CellLevel level);

  // Allocates exactly `cell`, which must be available (free, or covered by a free
  // ancestor): splits the ancestors down to it. Returns false (and changes nothing) when
  // the cell is not available.
  bool AllocateCell(CellId cell);

  // Releases a used cell and merges buddies upward. REQUIRES: state(cell) == kUsed (a
  // call on any other cell changes nothing).
  void Release(CellId cell);

  BuddyState state(CellId c) const;
  // Free, or covered by a free ancestor. O(levels).
  bool IsAvailable(CellId c) const;

  // The free list of (ch, level), first to last. Calls `fn(CellId)` for each; stops early
  // when `fn` returns false. Safe only while the list is not modified.
  template <typename Fn>
  void ForEachFree(ChainId ch, CellLevel level, Fn&& fn) const;
  CellId FirstFree(ChainId ch, CellLevel level) const;  // Nil when the list is empty
  CellId NextFree(CellId c) const;                      // Nil at the end

  int32_t free_count(ChainId ch, CellLevel level) const;
  int32_t obtainable(ChainId ch, CellLevel level) const;
  int32_t bad_free(ChainId ch, CellLevel level) const;

  // Health. Nodes start healthy. Returns the cells whose health changed, lowest level first
  // (so callers can mirror bad cells into virtual clusters).
  std::vector<CellId> SetNodeHealthy(NodeId node, bool healthy);
  bool IsHealthy(CellId c) const;
  bool IsNodeHealthy(NodeId n) const;

  const CellForest& forest() const { return *forest_; }

  absl::Status CheckInvariants() const;

  // Overwrites one cell's state and nothing else, breaking the invariants on purpose so
  // tests can show CheckInvariants notices. Never call it outside tests.
  void SetStateForTesting(CellId c, BuddyState state) { state_[c.value()] = state; }

  // Bytes held by the allocator's arrays (not the forest's), for the memory benchmark.
  size_t MemoryBytes() const;

 private:
  static constexpr uint32_t kNil = 0xFFFFFFFFu;

  // The (chain, level) slot of per-level arrays. Slots of one chain are consecutive by
  // level, so a cell's children live at its slot - 1 and its parent at its slot + 1.
  size_t Slot(ChainId ch, CellLevel level) const {
    return level_base_[ch.value()] + static_cast<size_t>(level);
  }
  size_t SlotOf(uint32_t c) const {
    const CellId id(c);
    return Slot(forest_->chain(id), forest_->level(id));
  }
  // List operations on the free list of `slot`; `parent` is the cell's parent (or kNil),
  // whose free-children count they maintain.
  void PushFree(uint32_t c, size_t slot, uint32_t parent);
  void RemoveFree(uint32_t c, size_t slot, uint32_t parent);
  // Splits free cell c (at `slot`): it becomes kSplit, its children free at slot - 1.
  void Split(uint32_t c, size_t slot);
  // c (at `slot`) and its subtree become available (sign +1) or unavailable (-1).
  void AddSubtree(uint32_t c, size_t slot, int32_t sign);
  // Adds sign x (cells of each level inside one cell of `slot`) to `counter`'s slots.
  void AddSubtreeCounts(std::vector<int32_t>& counter, size_t slot, int32_t sign);
  // c alone becomes available or unavailable (its descendants are accounted elsewhere).
  void AddSingle(uint32_t c, size_t slot, int32_t sign) {
    obtainable_[slot] += sign;
    if (bad_node_count_ > 0 && Bad(c)) bad_free_[slot] += sign;
  }
  void AddBadSubtree(uint32_t c, size_t slot, int32_t sign);
  bool Bad(uint32_t c) const {
    const uint32_t n = forest_->node(CellId(c)).value();
    return n != kNil ? node_bad_[n] != 0 : bad_nodes_[c] != 0;
  }

  const CellForest* forest_;
  // Per cell (struct of arrays): 17 bytes a cell.
  std::vector<BuddyState> state_;
  std::vector<uint32_t> prev_;  // free-list links; kNil at the ends
  std::vector<uint32_t> next_;
  std::vector<uint32_t> free_children_;  // children in state kFree
  std::vector<int32_t> bad_nodes_;       // above node level: bad node-level descendants
  std::vector<uint8_t> node_bad_;        // per node
  int32_t bad_node_count_ = 0;
  // Per chain.
  std::vector<size_t> level_base_;  // slot of (ch, 0)
  std::vector<CellLevel> top_level_;
  // Per (chain, level) slot.
  std::vector<CellLevel> slot_level_;
  std::vector<uint32_t> fanout_;
  std::vector<uint32_t> head_;
  std::vector<uint32_t> tail_;
  std::vector<int32_t> free_count_;
  std::vector<int32_t> obtainable_;
  std::vector<int32_t> bad_free_;
};

template <typename Fn>
void BuddyAllocator::ForEachFree(ChainId ch, CellLevel level, Fn&& fn) const {
  for (CellId c = FirstFree(ch, level); !c.IsNil(); c = NextFree(c)) {
    if (!fn(c)) return;
  }
}

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_BUDDY_ALLOCATOR_H_
