// src/recovery.h: placements from elsewhere (a restart, a persisted record, another
// scheduler), resolved to leaf cells before `Scheduler::Recover`, `AllocateRecord` and
// `Restore` run them (scheduler.h placement rule 8; docs/state-format.md).
//
// Contract of `ResolvePlacement` (a function of the immutable cell forest; no scheduler
// state): the placement's pods match the request's members exactly (the same multiset of
// pod sizes), each pod lists `leaf_cell_number` leaf indices and, when it lists preassigned
// cell types, one per leaf. Each (node, index) is looked up in the placement's chain first,
// then in every chain in config order. A leaf listed twice is an error. A node the cluster
// does not have, or an index that node does not have:
//  - `MissingLeaves::kError` (Recover, AllocateRecord): kInvalidArgument naming the group,
//    the pod and the node or index; the job is never silently shrunk.
//  - `MissingLeaves::kIgnore` (Restore with a changed config): the leaf is skipped and
//    named in `missing` ("node:index"); Restore reports the group as kept partially.
// The rest of recovery (which virtual cells the resolved leaves get, or a downgrade to
// opportunistic) needs the scheduler's state: `SchedulerImpl::RecoverVirtual` in
// recovery.cc.
//
// Invariants of a successful result (tests/unit/scheduler/recovery_test.cc):
//  (1) `leaves` and `types` have the same length, the placement's leaves in pod order,
//      each leaf once; every entry of `leaves` is a leaf cell (level 1).
//  (2) With kError, `missing` is empty and `leaves` has sum(leaf_cell_number) entries.
//
// Thread safety: a pure function of its arguments.
#ifndef HIVED_SRC_RECOVERY_H_
#define HIVED_SRC_RECOVERY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/ids.h"
#include "hived/schedule_result.h"

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

}  // namespace hived

#endif  // HIVED_SRC_RECOVERY_H_
