// cellalloc/priority_usage.h: per-cell counts of leaves used at each priority, propagated
// to every ancestor, so a node answers "free leaves for a request of priority p" in
// O(distinct priorities) without scanning its leaves.
//
// Used for physical cells (by `BuddyAllocator`'s users) and, with the same class, for the
// scheduler's virtual cells: it needs only a parent array and a leaf count per cell.
//
// Example:
//   PriorityUsage usage = PriorityUsage::ForForest(forest);  // or (parents, leaf_counts)
//   usage.SetLeafPriority(leaf, /*priority=*/5);          // leaf and ancestors count it
//   int32_t free = usage.FreeLeavesFor(node, /*priority=*/3);   // total - used at >= 3
//
// Thread safety: not thread-safe; callers serialize.
//
// Representation: per cell, the highest priority used and its count inline, the lower
// priorities (only while a cell sees several) in a side list; so the common update (a cell
// that sees one priority) touches 16 contiguous bytes and no list.
//
// Invariants:
//  (1) For every cell, the sum of its counts equals the number of its used leaves.
//  (2) A cell's count at priority p equals the sum of its children's counts at p; the
//      counts are positive and sorted by priority, highest inline, the rest below it.
//  (3) priority(c) is the maximum priority used in c's subtree, kFreePriority when none.
//  (4) UsedTotal(c), kept incrementally, equals the sum of c's counts.
//  (5) A cell holds a side list iff it uses more than one priority; unused lists are on
//      the free list, each list exactly once.
#ifndef HIVED_CELLALLOC_PRIORITY_USAGE_H_
#define HIVED_CELLALLOC_PRIORITY_USAGE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "cellalloc/ids.h"
#include "hived/types.h"

namespace hived::cellalloc {

class CellForest;

class PriorityUsage {
 public:
  PriorityUsage() = default;
  // `parents[c]` is the parent of cell c (Nil for a root); `leaf_counts[c]` its leaves.
  // Cells whose leaf count is 1 and that are never a parent are leaves.
  PriorityUsage(std::vector<CellId> parents, std::vector<int32_t> leaf_counts);
  // The same for every physical cell of `forest`.
  static PriorityUsage ForForest(const CellForest& forest);

  int32_t num_cells() const { return static_cast<int32_t>(parents_.size()); }

  // Sets the priority a leaf is used at; kFreePriority frees it. Updates every ancestor.
  // Cost O(levels x distinct priorities in the path). REQUIRES: `leaf` is a leaf.
  void SetLeafPriority(CellId leaf, Priority priority);
  Priority LeafPriority(CellId leaf) const { return MaxPriority(leaf); }

  // Leaves used at exactly p, at priorities > p, at priorities >= p. O(1) for a cell that
  // sees one priority, else O(distinct priorities).
  int32_t UsedAt(CellId c, Priority p) const { return UsedBetween(c, p, p); }
  int32_t UsedAbove(CellId c, Priority p) const {
    return p == kMaxPriority ? 0 : UsedBetween(c, p + 1, kMaxPriority);
  }
  int32_t UsedAtOrAbove(CellId c, Priority p) const { return UsedBetween(c, p, kMaxPriority); }
  int32_t UsedTotal(CellId c) const {  // leaves used at any priority, O(1)
    return cells_[c.value()].total;
  }
  // Leaves a request of priority p may take: free ones plus those used below p.
  int32_t FreeLeavesFor(CellId c, Priority p) const {
    return leaf_counts_[c.value()] - UsedAtOrAbove(c, p);
  }
  // Highest priority used in c's subtree; kFreePriority when nothing is used.
  Priority MaxPriority(CellId c) const {
    const CellUsage& u = cells_[c.value()];
    return u.top_count == 0 ? kFreePriority : u.top;
  }
  int32_t leaf_count(CellId c) const { return leaf_counts_[c.value()]; }

  absl::Status CheckInvariants() const;

  // Bytes held (capacity), for the memory benchmark.
  size_t MemoryBytes() const;

 private:
  struct Entry {
    Priority priority;
    int32_t count;
  };
  static constexpr uint32_t kNoRest = 0xffffffffu;
  // Per cell, 16 bytes: the highest priority used in its subtree with its count (inline:
  // most cells see one priority at a time) and, only while it sees several, the index of
  // a list of the lower ones in `rest_`.
  struct CellUsage {
    int32_t total = 0;      // leaves used at any priority (invariant 4)
    Priority top = 0;       // the highest priority used; meaningless while top_count == 0
    int32_t top_count = 0;  // leaves used at `top`; 0 iff nothing is used
    uint32_t rest = kNoRest;
  };
  using Entries = absl::InlinedVector<Entry, 4>;

  // One more (one fewer) leaf of the cell used at priority p: inline for the common cases
  // (an unused cell, or p its highest priority), `AddSlow` otherwise.
  void Increment(CellUsage& u, Priority p);
  void Decrement(CellUsage& u, Priority p);
  // Adds `delta` (+1 or -1) leaves at p to a cell's lists, in the cases the inline paths
  // leave: p is not the highest priority, or its count drops to 0 over a side list.
  void AddSlow(CellUsage& u, Priority p, int32_t delta);
  // Returns u's emptied side list to the free list.
  void ReleaseRest(CellUsage& u);
  // The cell's (priority, count) list, highest first.
  Entries ListOf(const CellUsage& u) const;
  static constexpr Priority kMaxPriority = std::numeric_limits<Priority>::max();
  // Leaves of c used at priorities lo..hi (inclusive); the side list only when c has one.
  int32_t UsedBetween(CellId c, Priority lo, Priority hi) const {
    const CellUsage& u = cells_[c.value()];
    if (u.rest == kNoRest) return u.top >= lo && u.top <= hi ? u.top_count : 0;
    return UsedBetweenSlow(u, lo, hi);
  }
  int32_t UsedBetweenSlow(const CellUsage& u, Priority lo, Priority hi) const;

  std::vector<CellId> parents_;
  std::vector<int32_t> leaf_counts_;
  std::vector<CellUsage> cells_;
  // Lower priorities of cells that see several, sorted highest first, counts > 0; a list
  // emptied goes to `free_rest_` and keeps its capacity, so steady state never allocates.
  std::vector<std::vector<Entry>> rest_;
  std::vector<uint32_t> free_rest_;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_PRIORITY_USAGE_H_
