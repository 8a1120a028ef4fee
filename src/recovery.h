// src/recovery.h: placements from elsewhere (a restart, a persisted record, another
// scheduler) and the virtual cells they get, for `Scheduler::Recover`, `AllocateRecord` and
// `Restore` (scheduler.h placement rule 8; docs/state-format.md). Two steps, each a function
// whose inputs are explicit (no scheduler state); `SchedulerImpl::AllocateFree`
// (allocate.cc) runs them and then holds the leaves.
//
// 1. `ResolvePlacement`, a function of the immutable cell forest: the placement's pods match
//    the request's members exactly (the same multiset of pod sizes), each pod lists
//    `leaf_cell_number` leaf indices and, when it lists preassigned cell types, one per leaf.
//    Each (node, index) is looked up in the placement's chain first, then in every chain in
//    config order. A leaf listed twice is an error. A node the cluster does not have, or an
//    index that node does not have:
//     - `MissingLeaves::kError` (strict: Recover, AllocateRecord): kInvalidArgument naming
//       the group, the pod and the node or index; the job is never silently shrunk.
//     - `MissingLeaves::kIgnore` (Restore with a changed config): the leaf is skipped and
//       named in `missing` ("node:index"); Restore reports the group as kept partially.
// 2. The binding, for a guaranteed group of an existing VC, in two steps so that a preview
//    and the real recovery run the same code: `DecideBinding`, a const function of
//    `VirtualClusters` and the allocator's availability and counters, returns the plan (the
//    virtual cells to bind, in order) or the reason the group cannot keep virtual cells;
//    `ApplyBinding` binds the plan (it cannot fail). The decision, per resolved leaf in order,
//    over the binding as the plan's earlier binds would leave it: the leaf's preassigned cell
//    type names the level of its preassigned cell; the physical cell at that level above the
//    leaf is either bound already to a cell of the group's VC (of the pinned cell the request
//    names, or of none when it names none), or it is free and the VC's first unbound
//    preassigned cell of that chain and level (the hinted one instead when it is such a
//    cell) is bound to it, if safety still holds (the allocator's obtainable cells per level
//    as the planned allocations would leave them, against the unbound preassigned cells);
//    then down to the leaf, each level's physical cell keeps its bound virtual cell (a child
//    of the one above) or gets an unbound child (the hinted one first, else the first in
//    order). The virtual leaf must be unheld. Otherwise the group cannot keep its virtual
//    cells and runs opportunistically: the reason is returned (no preassigned cell types,
//    opportunistic leaves, a type not in the chain, a cell bound to another VC or outside
//    the pinned cell, no unbound cell left, a cell not free, safety, a virtual leaf used).
//
// Invariants of a successful result (tests/unit/scheduler/recovery_test.cc):
//  (1) `leaves` and `types` have the same length, the placement's leaves in pod order,
//      each leaf once; every entry of `leaves` is a leaf cell (level 1).
//  (2) With kError, `missing` is empty and `leaves` has sum(leaf_cell_number) entries.
//  (3) `DecideBinding` accepted and `ApplyBinding` ran: `vleaves[i]` is a virtual leaf of the
//      request's VC bound to `leaves[i]` (so, the binding being symmetric, distinct leaves
//      get distinct virtual leaves), every cell on its path is bound, and the virtual
//      clusters' invariants hold.
//  (4) `DecideBinding` refused: the plan is empty, every `vleaves[i]` is kNilId, and nothing
//      changed (it is const).
//  (5) `ApplyBinding` of a plan decided over the current state binds exactly the plan: the
//      same cells `DecideBinding`'s overlay assumed, so its safety check holds after it.
// Neither step holds a virtual leaf (the caller sets the holders and priorities).
//
// Thread safety: not thread-safe (ApplyBinding changes `vclusters`); callers serialize.
#ifndef HIVED_SRC_RECOVERY_H_
#define HIVED_SRC_RECOVERY_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "hived/schedule_result.h"
#include "src/virtual_clusters.h"

namespace hived {

enum class MissingLeaves { kError, kIgnore };

struct ResolvedPlacement {
  std::vector<CellId> leaves;
  std::vector<const std::string*> types;  // per leaf: its preassigned cell type, or null
  std::vector<std::string> missing;       // kIgnore: "node:index" of skipped leaves
};

// Errors: kInvalidArgument naming the group and the pod (see above).
absl::Status ResolvePlacement(const cellalloc::CellForest& forest, const GroupRequest& request,
                              const Placement& placement, MissingLeaves missing,
                              ResolvedPlacement* out);

// What `DecideBinding` binds: a resolved placement of a guaranteed group of VC `vc`.
struct RecoveryRequest {
  VcId vc;                                     // an existing VC
  std::string_view pinned_cell_id;             // the request's pinned cell, empty when none
  absl::Span<const CellId> leaves;             // `ResolvedPlacement::leaves`
  absl::Span<const std::string* const> types;  // `ResolvedPlacement::types`, one per leaf
  // Per leaf, the virtual leaf to prefer (Restore: the recorded one), kNilId for none;
  // shorter than `leaves` (or empty) for no preference.
  absl::Span<const VCellId> hints;
};

// What `DecideBinding` decided: the virtual cells to bind, in order (a preassigned cell is
// taken from the allocator), and per leaf its virtual leaf.
struct BindingPlan {
  std::vector<std::pair<VCellId, CellId>> binds;
  std::vector<VCellId> vleaves;  // one per leaf of the request
};

// Decides the binding of virtual cells of `request.vc` to the leaves (see above); const.
// Returns "" with the plan, or the reason the group runs opportunistically with an empty
// plan and `vleaves` all kNilId (resized to the number of leaves).
// REQUIRES: `leaves` distinct leaf cells nobody holds; `types.size() == leaves.size()`.
std::string DecideBinding(const cellalloc::CellForest& forest,
                          const cellalloc::BuddyAllocator& buddy, const VirtualClusters& vclusters,
                          const RecoveryRequest& request, BindingPlan* plan);

// Binds `plan` (preassigned cells through `VirtualClusters::AllocatePreassigned`).
// REQUIRES: `plan` accepted by `DecideBinding` over the current state (HIVED_CHECKed cell by
// cell by `VirtualClusters`).
void ApplyBinding(const BindingPlan& plan, VirtualClusters* vclusters);

// True when binding preassigned cell `root` to physical cell `p` alone keeps the safety
// of `p`'s chain (invariant 5): `DecideBinding`'s check for one cell, over const state
// (Restore's saved bindings, src/persistence.cc).
// REQUIRES: `buddy.IsAvailable(p)`; `root` an unbound preassigned cell of `p`'s level.
bool SafeToBind(const cellalloc::CellForest& forest, const cellalloc::BuddyAllocator& buddy,
                const VirtualClusters& vclusters, VCellId root, CellId p);

// What `SchedulerImpl::Allocate` or `Recover` decided over const state before anything
// changes (src/allocate.cc); `SchedulerImpl::AllocateFree` applies it and cannot fail.
struct RecoveryDecision {
  ResolvedPlacement resolved;  // Recover: the leaves and their types
  BindingPlan binding;         // a guaranteed Recover: the virtual cells to bind
  std::string downgrade;       // why the group runs opportunistically; empty when it does not
  std::string notes;           // Restore: the leaves ignored
};

}  // namespace hived

#endif  // HIVED_SRC_RECOVERY_H_
