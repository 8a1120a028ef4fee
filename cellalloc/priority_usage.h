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
// Invariants:
//  (1) For every cell, the sum of its counts equals the number of its used leaves.
//  (2) A cell's count at priority p equals the sum of its children's counts at p.
//  (3) priority(c) is the maximum priority used in c's subtree, kFreePriority when none.
#ifndef HIVED_CELLALLOC_PRIORITY_USAGE_H_
#define HIVED_CELLALLOC_PRIORITY_USAGE_H_

#include <cstddef>
#include <cstdint>
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
  Priority LeafPriority(CellId leaf) const;

  int32_t UsedAt(CellId c, Priority p) const;         // leaves used at exactly p
  int32_t UsedAbove(CellId c, Priority p) const;      // leaves used at priorities > p
  int32_t UsedAtOrAbove(CellId c, Priority p) const;  // leaves used at priorities >= p
  int32_t UsedTotal(CellId c) const;                  // leaves used at any priority
  // Leaves a request of priority p may take: free ones plus those used below p.
  int32_t FreeLeavesFor(CellId c, Priority p) const;
  // Highest priority used in c's subtree; kFreePriority when nothing is used.
  Priority MaxPriority(CellId c) const;
  int32_t leaf_count(CellId c) const;

  absl::Status CheckInvariants() const;

  // Bytes held (capacity), for the memory benchmark.
  size_t MemoryBytes() const;

 private:
  struct Entry {
    Priority priority;
    int32_t count;
  };
  // Per cell, (priority, count) with count > 0, sorted by priority, highest first.
  using Entries = absl::InlinedVector<Entry, 1>;

  void Add(CellId c, Priority p, int32_t delta);

  std::vector<CellId> parents_;
  std::vector<int32_t> leaf_counts_;
  std::vector<Entries> entries_;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_PRIORITY_USAGE_H_
