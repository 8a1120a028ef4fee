// src/health.h: the health bookkeeping of the scheduler: doomed cells per chain, the
// deferred work bad cells cause (chains whose doomed cells need rebalancing, newly bound
// cells whose bad children must be mirrored), and the search for a bad cell to doom.
//
// HiveD's rules (HiveD's doomed cells and bad-cell mirroring): a virtual cell bound to a
// cell with bad children binds free virtual children to them ("bad-cell mirroring"); when
// a VC's unbound preassigned cells cannot all be backed by healthy free cells, some are
// bound to bad free cells ("doomed"), and given back once healthy cells suffice again.
// `SchedulerImpl` performs the binding; this class owns what is pending and the counts.
//
// Invariants (tests/unit/scheduler/health_test.cc; SchedulerImpl::CheckInvariants):
//  (1) Each chain is listed at most once among the dirty chains.
//  (2) `doomed(ch)` is the number of doomed preassigned cells of chain `ch` (>= 0).
//  (3) Between calls (after `Settle`) nothing is pending: no dirty chain, no bound cell
//      awaiting mirroring.
//  (4) `FindBadFreeCell(ch, l)` is Nil or a bad cell of level l, available in the
//      allocator (free or under a free cell), reached through bad cells only.
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SRC_HEALTH_H_
#define HIVED_SRC_HEALTH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "src/group_table.h"

namespace hived {

class Health {
 public:
  Health() = default;
  // Reads `forest` and `buddy` (health, free lists, counters), which must outlive it.
  Health(const cellalloc::CellForest* forest, const cellalloc::BuddyAllocator* buddy);

  // Chains whose doomed cells need rebalancing (invariant 1).
  void MarkDirty(ChainId ch);
  bool HasDirty() const { return !dirty_.empty(); }
  // Hands the dirty chains to the caller (in marking order) and forgets them.
  std::vector<ChainId> TakeDirty();
  void DropDirty() { dirty_.clear(); }

  // A virtual cell just bound to a bad cell above node level: its bad children are to be
  // mirrored once the current operation's leaves are all bound.
  void NoteBadBound(VCellId v) { pending_bad_.push_back(v); }
  // The most recently noted cell, removed; false when none is pending.
  bool PopBadBound(VCellId* v) {
    if (pending_bad_.empty()) return false;
    *v = pending_bad_.back();
    pending_bad_.pop_back();
    return true;
  }

  void AddDoomed(ChainId ch) { ++doomed_[ch.value()]; }
  void RemoveDoomed(ChainId ch) { --doomed_[ch.value()]; }
  int32_t doomed(ChainId ch) const { return doomed_[ch.value()]; }
  // True when the chain has doomed cells or bad available cells (then changes to its
  // preassigned cells may require rebalancing).
  bool ChainHasBadOrDoomed(ChainId ch) const;
  // A bad available cell of level `l` to doom, searched from level l up through the
  // allocator's free lists in order (invariant 4); Nil when none.
  CellId FindBadFreeCell(ChainId ch, CellLevel l) const;

  // Invariants 1-3 (`doomed_per_chain`: the caller's count of doomed cells per chain).
  absl::Status CheckInvariants(const std::vector<int32_t>& doomed_per_chain) const;

 private:
  const cellalloc::CellForest* forest_ = nullptr;
  const cellalloc::BuddyAllocator* buddy_ = nullptr;
  std::vector<int32_t> doomed_;  // per chain
  std::vector<ChainId> dirty_;
  std::vector<VCellId> pending_bad_;
};

}  // namespace hived

#endif  // HIVED_SRC_HEALTH_H_
