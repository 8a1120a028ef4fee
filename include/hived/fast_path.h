// hived/fast_path.h: the fast path for high-rate callers (issue 29 item 8): numeric group
// handles, placements as node and leaf ids, and one call that schedules and allocates into
// a result object the caller owns and reuses.
//
// The calls are members of `hived::Scheduler` (hived/scheduler.h, "The fast path"):
//   ScheduleAndAllocate(request, &result)  Schedule(request, kPreempting), then, when that is
//                                          kPlaced, Allocate(request, its placement): one call
//   Release(handle)                        Release(name) of the group the handle names
//   HandleOf(name)                         the handle of a running group (e.g. one a
//                                          Preempting start ran with `Allocate`)
//   GroupName(handle), NodeName(node), ChainName(chain)   names, only when asked
//
// Contract:
//  1. Same decisions. `ScheduleAndAllocate` changes the state exactly as
//     `Schedule(request, kPreempting)` followed (when kPlaced) by `Allocate(request,
//     result.placement)` would: the same cells in the same order, the same victims,
//     reservations, cancellations, views and `SaveState` text. `Release(handle)` is
//     `Release(name)`. Only `version()` differs: one fast call is one state version where
//     the two classic calls make two.
//  2. Same rules. The calls take the scheduler's exclusive lock and feed the change log
//     (`Changes`) as the classic calls do. While a journal is started they are refused
//     (kFailedPrecondition naming the call, nothing changed), like the per-pod calls:
//     journal the classic calls instead.
//  3. Whole-GPU requests only. A request GPU sharing handles (fractional, MIG, CPU-only)
//     is kFailedPrecondition, nothing changed: use Schedule and Allocate.
//  4. Handles. A handle names one group's life: it is issued when the group runs and goes
//     stale when the group ends (by any call); a slot is reused by later groups with a new
//     generation, so a stale handle never names another group. `Release` of a stale, nil or
//     forged handle is kNotFound, of a group that holds a reservation kFailedPrecondition;
//     the state exactly as before. `ApplyConfig` rebuilds the group table: every handle
//     issued before it is stale (its `config_epoch` is older); take new ones with
//     `HandleOf`.
//  5. Ids. `FastPod::node` is a node id in [0, NodeCount()), in config order (the order of
//     `Nodes()`); leaves are leaf indices within the node (`PodPlacement::leaf_cell_indices`);
//     `chain` is a chain id (config order of the top-level cell types). Ids change only with
//     `ApplyConfig` (the new config's order); names returned by `NodeName` and `ChainName`
//     stay valid until then.
//  6. No allocation in a steady state. A `FastResult` reused across calls keeps its
//     vectors' capacity; a kPlaced call and a `Release(handle)` allocate no memory once the
//     scheduler has seen groups of that shape (group names up to 15 bytes: longer ones are
//     copied to the heap by the name index, as in the classic calls).
//
// Example:
//   hived::FastResult r;  // reused
//   absl::Status s = scheduler->ScheduleAndAllocate(request, &r);
//   if (s.ok() && r.outcome == hived::Outcome::kPlaced) {
//     for (const hived::FastPod& pod : r.pods) use(pod.node, r.leaves[pod.leaf_begin]);
//     ... later: scheduler->Release(r.handle);
//   }
//
// Thread safety: as `Scheduler` (each call is atomic). A `FastResult` is the caller's.
#ifndef HIVED_FAST_PATH_H_
#define HIVED_FAST_PATH_H_

#include <cstdint>
#include <vector>

#include "hived/schedule_result.h"

namespace hived {

// A running group: a slot in the scheduler's group table, the generation of the group
// that holds it, and the scheduler's config epoch (how many `ApplyConfig`s it has seen when
// the handle was issued). Nil when `slot` is kNil.
struct GroupHandle {
  static constexpr uint32_t kNil = 0xffffffffu;
  uint32_t slot = kNil;
  uint32_t generation = 0;
  uint32_t config_epoch = 0;
  bool IsNil() const { return slot == kNil; }
  friend bool operator==(const GroupHandle& a, const GroupHandle& b) {
    return a.slot == b.slot && a.generation == b.generation && a.config_epoch == b.config_epoch;
  }
  friend bool operator!=(const GroupHandle& a, const GroupHandle& b) { return !(a == b); }
};

// One pod of a placement: its node and its leaves, `leaves[leaf_begin, leaf_begin +
// leaf_count)` of the result.
struct FastPod {
  int32_t node = -1;
  int32_t leaf_begin = 0;
  int32_t leaf_count = 0;
};

// What `Scheduler::ScheduleAndAllocate` returns; reuse one across calls.
struct FastResult {
  // kPlaced: the group runs (it was allocated). Otherwise what `Schedule(request,
  // kPreempting)` answered: kPreempting (the group holds a reservation and waits for its
  // victims: `Allocate(request, detail.placement)` once they are gone, then `HandleOf`),
  // kWaiting or kInfeasible.
  Outcome outcome = Outcome::kWaiting;
  // kPlaced: the running group's handle, chain id and pods (Placement::pods' order).
  GroupHandle handle;
  int32_t chain = -1;
  std::vector<FastPod> pods;
  std::vector<int32_t> leaves;
  // For any outcome but kPlaced: the full `ScheduleResult` Schedule returned (placement,
  // victims, reason, code, cancelled, cancelled_by). For kPlaced its `outcome` is kPlaced,
  // `cancelled` and `cancelled_by` are set as Schedule sets them, and its placement is
  // empty unless the decision cancelled reservations (then filled as Schedule fills it).
  ScheduleResult detail;
};

}  // namespace hived

#endif  // HIVED_FAST_PATH_H_
