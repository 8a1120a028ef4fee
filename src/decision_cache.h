// src/decision_cache.h: the last placement `Schedule` returned as kPlaced, kept so that the
// `Allocate` that follows binds the decided virtual cells directly, without resolving names.
//
// Contract: `Store` takes a decision (its leaf buffers are swapped in, keeping both sides'
// capacity) stamped with the scheduler's epoch; any state change bumps the epoch, which
// makes the entry stale. `Matches` says whether an Allocate is exactly the stored decision
// (same members, pods, chain, nodes and devices) at the same epoch. `Invalidate` drops it.
//
// Invariants (checked by `CheckInvariants`, tests/unit/scheduler/decision_cache_test.cc):
//  (1) `needs` is ascending and `pleaves`, `vleaves` both have sum(needs) entries, pods in
//      the order of `needs`.
//  (2) After `Invalidate` no epoch matches (the stamp is the all-ones value, never reached).
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SRC_DECISION_CACHE_H_
#define HIVED_SRC_DECISION_CACHE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "hived/schedule_result.h"
#include "hived/types.h"
#include "src/group_table.h"

namespace hived {

class DecisionCache {
 public:
  // Stores a kPlaced decision of group `name` at `epoch`; swaps the leaf buffers with
  // `pleaves` and `vleaves` (the caller gets the old buffers back to reuse).
  void Store(std::string_view name, uint64_t epoch, ChainId chain,
             const std::vector<int32_t>& needs, std::vector<CellId>* pleaves,
             std::vector<VCellId>* vleaves);
  void Invalidate() { epoch_ = kNever; }

  // True when `placement` for `request` is exactly the stored decision and nothing changed
  // since (`epoch` is the scheduler's current epoch). O(pods + members²).
  bool Matches(const GroupRequest& request, const Placement& placement,
               const cellalloc::CellForest& forest, uint64_t epoch) const;
  // True when the entry is group `name`'s decision stored just before one state change
  // (the group's own creation) and its leaves are `pleaves`.
  bool StoredBefore(std::string_view name, uint64_t epoch,
                    const std::vector<CellId>& pleaves) const {
    return name_ == name && epoch_ + 1 == epoch && (&pleaves == &pleaves_ || pleaves_ == pleaves);
  }

  ChainId chain() const { return chain_; }
  const std::vector<CellId>& pleaves() const { return pleaves_; }
  const std::vector<VCellId>& vleaves() const { return vleaves_; }

  absl::Status CheckInvariants() const;

 private:
  static constexpr uint64_t kNever = ~uint64_t{0};
  std::string name_;
  uint64_t epoch_ = kNever;
  ChainId chain_;
  std::vector<int32_t> needs_;  // per pod, ascending
  std::vector<CellId> pleaves_;
  std::vector<VCellId> vleaves_;
};

}  // namespace hived

#endif  // HIVED_SRC_DECISION_CACHE_H_
