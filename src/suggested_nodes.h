// src/suggested_nodes.h: a request's suggested nodes as per-node marks and per-cell counts,
// the filter the node choice (`NodeEligible`) and the binding planner (`PlanContext`) read.
//
// Contract: `Mark(names)` turns the filter on for one request; `Clear()` turns it off again
// in O(cells marked). Between requests the filter is off and every mark is zero, so a
// request without suggestions pays nothing. Unknown names are ignored (a suggestion names
// nodes the scheduler may not know); a name given twice counts once.
//
// Invariants (checked by `CheckInvariants`, tests/unit/scheduler/suggested_nodes_test.cc):
//  (1) Off: no node is marked and every cell count is zero.
//  (2) On: `cell_count(c)` is the number of distinct marked nodes owning a node-level cell
//      at or below `c`; cells of other chains count only their own chain's node cells.
//  (3) Marking costs O(names × (cells per node) × levels); clearing O(cells touched).
//
// Thread safety: not thread-safe; one request at a time.
#ifndef HIVED_SRC_SUGGESTED_NODES_H_
#define HIVED_SRC_SUGGESTED_NODES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/buddy_planner.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"

namespace hived {

class SuggestedNodes {
 public:
  // Off, sized for `forest`, which must outlive the filter.
  explicit SuggestedNodes(const cellalloc::CellForest* forest);
  SuggestedNodes() = default;

  // Turns the filter on with `names`. REQUIRES: off.
  void Mark(const std::vector<std::string>& names);
  // Turns the filter off (invariant 1).
  void Clear();

  bool active() const { return active_; }
  // True when the filter is off or `n` is marked.
  bool Allows(NodeId n) const { return !active_ || node_marked_[n.value()] != 0; }
  // Marked nodes at or below `c` (invariant 2); 0 when off.
  int32_t cell_count(CellId c) const { return cell_count_[c.value()]; }
  // Points the planner at the marks when on; leaves `context` unfiltered when off.
  void FillPlanContext(cellalloc::PlanContext* context) const {
    if (!active_) return;
    context->node_suggested = &node_marked_;
    context->cell_suggested = &cell_count_;
  }

  // Recomputes invariants 1-2 from the forest; kInternal naming the first broken one.
  absl::Status CheckInvariants() const;

 private:
  const cellalloc::CellForest* forest_ = nullptr;
  bool active_ = false;
  std::vector<uint8_t> node_marked_;  // per NodeId
  std::vector<int32_t> cell_count_;   // per physical cell
  std::vector<NodeId> marked_;        // the marked nodes, in order of mention
  std::vector<uint32_t> touched_;     // cells with a non-zero count
};

}  // namespace hived

#endif  // HIVED_SRC_SUGGESTED_NODES_H_
