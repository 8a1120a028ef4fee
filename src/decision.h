// src/decision.h: the algorithm of one `SchedulerImpl` decision and its records: the parsed
// request, the `Decision` a const `Decide` computes and `Commit`
// applies, the binding as planned lazy downgrades would leave it, the scratch a `Decide` may
// write, one chain's attempt, and `Filter`'s per-call scratch. Plain records: the scheduler's
// member functions fill and read them; nothing here changes cluster state.
//
// Algorithm of `Schedule` for a new group (per candidate chain, config order):
//  1. Intra-VC placement over the VC's virtual nodes of the chain (or the pinned cell's):
//     greedy node choice on a `NodeIndex` (pass 1: free leaves only; pass 2: also leaves
//     of lower priority), then per pod the lowest cell inside the node holding enough
//     usable leaves.
//  2. Lazy preemption: running lazily preemptible groups on the chosen virtual leaves are
//     the planned downgrades (`Decision::lazy`, found over const state); step 3 plans as
//     if they were applied (`PlanBinding`: the binding they would leave, a
//     `DowngradeOverlay`, read by `MapPlacement` and given to the planner as its
//     state-as-if; nothing is applied), and `Commit` applies them (Preempting phase).
//  3. Binding: unbound virtual cells on the leaves' paths are planned on physical cells by
//     `cellalloc::BuddyPlanner` (buddy allocation on an overlay of the allocator's free
//     lists, HiveD's candidate order, backtracking, the safe relaxed split); the plan is
//     committed when the group is allocated (`AllocateCell` of the planned roots).
//  4. Victims: groups using the chosen physical leaves; reserving groups overlapping them
//     are cancelled (Preempting phase).
// Opportunistic groups run step 1 on the chain's physical nodes and skip 2 and 3.
//
// `Decide` (steps 1-4) is a const member function: it reads the state and writes only the
// `DecideScratch` its caller grants (the Placer's marks and taken leaves, the planner's
// overlay, buffers; all empty between calls) and the `Decision` it returns. `Commit`
// applies a Decision in one step.
//
// Invariants (kept by SchedulerImpl, checked where the records are used):
//  (1) A DecideScratch and a DowngradeOverlay are empty (inactive, every entry zero) between
//      calls; a FilterScratch is given back to its pool empty.
//  (2) A found Decision's `pleaves` and `vleaves` have one entry per leaf of the request,
//      pods in order; `vleaves` are kNilId for an opportunistic group.
//
// Thread safety: plain data.
#ifndef HIVED_SRC_DECISION_H_
#define HIVED_SRC_DECISION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cellalloc/buddy_planner.h"
#include "hived/schedule_result.h"
#include "hived/scheduler.h"
#include "hived/types.h"
#include "src/group_table.h"
#include "src/node_room.h"
#include "src/placer.h"

namespace hived::decision {

// A parsed request.
struct Req {
  VcId vc;
  const GroupRequest* raw = nullptr;
  std::vector<int32_t> needs;  // per pod, ascending
  VCellId pinned_root = kNilId;
  bool guaranteed = true;
  bool has_suggested = false;
  const NodeRoom* room = nullptr;  // the nodes' CPU and host memory; null for no constraint
  bool only_placed = false;        // Apply::kOnlyPlaced
};

// What `Schedule` does with a new group: computed by `Decide`, a const member function
// (it changes no state; what it writes is the `DecideScratch` its caller grants), and
// applied by `Commit` in one step (nothing in the Filtering phase).
struct Decision {
  bool found = false;
  Outcome outcome = Outcome::kWaiting;  // when !found: kWaiting or kInfeasible
  ReasonCode code = ReasonCode::kNone;
  std::string reason;
  ChainId chain;
  std::vector<CellId> pleaves;       // the placement's leaves, pods in order
  std::vector<VCellId> vleaves;      // their virtual leaves; kNilId when opportunistic
  std::vector<GroupId> victims;      // groups using the leaves
  std::vector<GroupId> overlapping;  // preempting groups reserving some of the leaves
  std::vector<GroupId> lazy;         // groups to downgrade first, in order
};

// The virtual binding as a placement's planned lazy downgrades would leave it, computed
// over const state by `PlanDowngrades` (the same releases and unbinds `DowngradeGroup`
// makes): which virtual cells would be unbound, and for the planner's state-as-if the
// physical cells that would be unbound, the preassigned roots that would be released
// and the VCs' unbound cells of the chain afterwards. Inactive (and every per-vcell
// entry zero) outside `PlanBinding`; the per-vcell arrays are sized on first use.
struct DowngradeOverlay {
  bool active = false;
  std::vector<int32_t> released;  // per vcell: leaves released at or below it
  std::vector<int32_t> unbound_children;
  std::vector<uint8_t> unbound;       // per vcell: bound now, unbound after the downgrades
  std::vector<VCellId> touched;       // vcells with a non-zero entry
  std::vector<CellId> free_roots;     // the planner's StateAsIf::free
  std::vector<CellId> unbound_cells;  // and StateAsIf::unbound
  std::vector<int32_t> vc_unbound;    // per level: the chain's unbound preassigned cells
};

// What a const `Decide` may write, granted by `ScheduleNew`: per-call scratch, empty
// between calls (the Placer's marks and taken leaves, the planner's overlay, the
// buffers below).
struct DecideScratch {
  Placer* placer = nullptr;
  cellalloc::BuddyPlanner* planner = nullptr;
  std::vector<int32_t> pod_node;  // TryGuaranteed / TryOpportunistic
  std::vector<uint32_t> leaves;
  std::vector<int32_t> vslot;  // per vcell: its planner node during MapPlacement, else -1
  std::vector<VCellId> vslot_touched;
  DowngradeOverlay downgrades;
};

// One chain's attempt; a successful one fills the Decision's leaves.
struct Attempt {
  bool ok = false;
  bool infeasible = false;
  ReasonCode code = ReasonCode::kNone;
  std::string reason;
};

// `Filter`'s per-call scratch: a Placer and a planner of its own (the same const inputs as
// `placer_` and `planner_`), the DecideScratch pointing at them, a Decision and a needs
// buffer. Taken from `filter_pool_` for one call and given back empty (Placer and
// BuddyPlanner invariant 1), so the pool holds at most as many as filters ran at once.
struct FilterScratch {
  Placer placer;
  std::unique_ptr<cellalloc::BuddyPlanner> planner;
  DecideScratch scratch;
  Decision decision;
  std::vector<int32_t> needs;
};

}  // namespace hived::decision

#endif  // HIVED_SRC_DECISION_H_
