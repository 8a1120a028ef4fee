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
// 2. `RecoverBinding`, for a guaranteed group of an existing VC, over `VirtualClusters`
//    (the only state it changes) and the allocator's availability (read): per resolved leaf
//    in order, the leaf's preassigned cell type names the level of its preassigned cell;
//    the physical cell at that level above the leaf is either bound already to a cell of
//    the group's VC (of the pinned cell the request names, or of none when it names none),
//    or it is free and the VC's first unbound preassigned cell of that chain and level
//    (the hinted one instead when it is such a cell) is bound to it, if safety still holds;
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
//  (3) `RecoverBinding` succeeded: `vleaves[i]` is a virtual leaf of the request's VC bound
//      to `leaves[i]` (so, the binding being symmetric, distinct leaves get distinct virtual
//      leaves), every cell on its path is bound, and the virtual clusters' invariants hold.
//  (4) `RecoverBinding` failed: the binding is as before the call (what it bound is unbound
//      again, preassigned cells given back) and every `vleaves[i]` is kNilId.
// `RecoverBinding` holds no virtual leaf (the caller sets the holders and priorities).
//
// Thread safety: not thread-safe (RecoverBinding changes `vclusters`); callers serialize.
#ifndef HIVED_SRC_RECOVERY_H_
#define HIVED_SRC_RECOVERY_H_

#include <string>
#include <string_view>
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

// What `RecoverBinding` binds: a resolved placement of a guaranteed group of VC `vc`.
struct RecoveryRequest {
  VcId vc;                                     // an existing VC
  std::string_view pinned_cell_id;             // the request's pinned cell, empty when none
  absl::Span<const CellId> leaves;             // `ResolvedPlacement::leaves`
  absl::Span<const std::string* const> types;  // `ResolvedPlacement::types`, one per leaf
  // Per leaf, the virtual leaf to prefer (Restore: the recorded one), kNilId for none;
  // shorter than `leaves` (or empty) for no preference.
  absl::Span<const VCellId> hints;
};

// Binds virtual cells of `request.vc` to the leaves (see above). Returns "" with
// `vleaves[i]` bound to `leaves[i]`, or the reason the group runs opportunistically, with the
// binding restored and `vleaves` all kNilId. `vleaves` is resized to the number of leaves.
// REQUIRES: `leaves` distinct leaf cells nobody holds; `types.size() == leaves.size()`.
std::string RecoverBinding(const cellalloc::CellForest& forest,
                           const cellalloc::BuddyAllocator& buddy, const RecoveryRequest& request,
                           VirtualClusters* vclusters, std::vector<VCellId>* vleaves);

// A const preview of `RecoverBinding` for leaves that all have the preassigned cell type
// `type`, over the same inputs (nothing changes): "" when, leaf by leaf, the type is in the
// leaf's chain and the physical cell at its level above the leaf is bound to a cell of VC `vc`
// outside any pinned cell, or is free in `buddy` and the VC has an unbound preassigned cell of
// that chain and level left (counting the cells the preview binds for earlier leaves); else
// RecoverBinding's reason for the first leaf that fails. It does not check the chain's safety
// nor the descent to the virtual leaf, so `RecoverBinding` may still refuse a previewed type
// (the group then runs opportunistically, as it would have).
// REQUIRES: `vc` an existing VC; `leaves` distinct leaf cells.
std::string PreviewBinding(const cellalloc::CellForest& forest,
                           const cellalloc::BuddyAllocator& buddy, const VirtualClusters& vclusters,
                           VcId vc, absl::Span<const CellId> leaves, const std::string& type);

}  // namespace hived

#endif  // HIVED_SRC_RECOVERY_H_
