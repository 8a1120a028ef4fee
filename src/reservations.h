// src/reservations.h: what a kPlaced result holds until `Allocate` or `Unreserve`, and how
// an `Allocate` is matched against it (scheduler.h placement rules 7 and 8).
//
// A reservation is a live group in state `GState::kReserved` (group_table.h): its record is
// the decision (leaves, virtual leaves, chain, placement, request). Reserving commits the
// planned binding at once (the virtual leaf paths are bound, as for a Preempting group): a
// binding only planned would be taken by the next group's plan. Physical and virtual
// leaves are held at the group's priority, as a Preempting group's are (so `Allocate`
// changes no leaf priority: the Schedule+Allocate of a group costs what it did before
// reservations). A reservation is never a victim and never cancelled by another group:
// a manager trusts it until it binds or unreserves, as Kubernetes' assumed pods are not
// preempted before bind. A decision of another group that lands on a reserved leaf (a
// higher-priority pass 2 counts it as preemptible, the buddy planner may bind a cell
// holding an opportunistic reservation) waits with kReservationOverlap instead.
//
// This component owns the rules that compare an `Allocate` with what `Schedule` decided:
//  - `RequestDifference` / `PlacementDifference`: the first difference between a reserved
//    group and an Allocate's request and placement, empty when they are the same.
//  - The Filtering decisions: `Schedule` in the Filtering phase reserves nothing, but each
//    filtering thread's last kPlaced decision is kept (`StoreFiltered`, one slot per thread
//    number modulo `kFilteredSlots`), so that an `Allocate` of exactly that placement with no
//    state change in between runs it directly (as a reserve and bind in one step, resolving
//    no names); any state change bumps the scheduler's epoch and makes every slot stale. A
//    slot per thread, each on its own cache line under its own mutex, because one slot under
//    one mutex serialised concurrent filters (two threads ran slower than one:
//    bench/concurrency_bench.cc, BM_FilterThreads).
//
// Invariants (this component: `CheckInvariants`, tests/unit/scheduler/reservations_test.cc):
//  (1) Each stored Filtering decision's `needs` is ascending and `pleaves`, `vleaves` both
//      have sum(needs) entries, pods in the order of `needs`.
//  (2) After `Invalidate` no epoch matches (every slot's stamp is the all-ones value, never
//      reached).
// Rules the scheduler keeps for every kReserved group g (SchedulerImpl::CheckInvariants):
//  (R1) every leaf of g has reserver g and no user; g has no victims (reserved_by_others 0).
//  (R2) g's physical leaves, and its virtual leaves (guaranteed groups: each held by g and
//       bound to g's physical leaf), are at g's priority.
//  (R3) no other group uses or reserves g's leaves (each leaf has one reserver).
//
// Thread safety: not thread-safe; callers serialize, except for the Filtering decisions:
// `StoreFiltered` (const) may run from several threads at once and concurrently with
// `CheckInvariants` (filters and views under the scheduler's shared lock); it takes its
// thread's slot's mutex (uncontended unless more than `kFilteredSlots` threads filter).
// Everything else, `MatchesFiltered` and the decision's accessors included, runs under the
// scheduler's exclusive lock, which orders it after every `StoreFiltered`.
#ifndef HIVED_SRC_RESERVATIONS_H_
#define HIVED_SRC_RESERVATIONS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
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

class Reservations {
 public:
  // The first difference between reserved group `g` and `request` (VC, priority, members,
  // pinned cell, leaf type, lazy flag), e.g. "priority 3, reserved at 5"; empty if none.
  static std::string RequestDifference(const Group& g, const GroupRequest& request);
  // The same for a reservation kept as its request (Sharing's fractional and MIG groups).
  static std::string RequestDifference(const GroupRequest& reserved, const GroupRequest& request);
  // The first difference between the reserved `placement` and `given` (chain, pods, nodes,
  // leaf indices; preassigned cell types only when `given` lists them); empty if none.
  static std::string PlacementDifference(const Placement& reserved, const Placement& given);

  // Stores the Filtering phase's kPlaced decision for `request` at `epoch` in this thread's
  // slot; swaps the leaf buffers with `pleaves` and `vleaves` (the caller gets the old
  // buffers back to reuse). Const and separately synchronised: filters run under the
  // scheduler's shared lock, so several may store at once, each in its own slot (threads
  // sharing a slot: the later one is kept).
  void StoreFiltered(const GroupRequest& request, uint64_t epoch, ChainId chain,
                     const std::vector<int32_t>& needs, std::vector<CellId>* pleaves,
                     std::vector<VCellId>* vleaves) const;
  // Every slot stale (`Allocate` ran a decision, which changes the state anyway).
  void Invalidate();

  // True when `placement` for `request` is exactly a stored Filtering decision (same group,
  // VC, priority, pinned cell and leaf type; pods, chain and leaves) and nothing changed
  // since (`epoch` is the scheduler's current epoch); the accessors below then give that
  // decision (the lowest slot's, when several threads stored one that matches: each was
  // decided on this state for this request). O(slots + pods + members²).
  bool MatchesFiltered(const GroupRequest& request, const Placement& placement,
                       const cellalloc::CellForest& forest, uint64_t epoch) const;

  // The decision `MatchesFiltered` last matched.
  ChainId chain() const { return matched_->chain; }
  const std::vector<CellId>& pleaves() const { return matched_->pleaves; }
  const std::vector<VCellId>& vleaves() const { return matched_->vleaves; }

  absl::Status CheckInvariants() const;

  // Cancellations the library made (scheduler.h rule 8): a Preempting group's reservation
  // cancelled by another group's decision that overlaps it. The note names the canceller
  // until the cancelled group's next `Schedule` takes it (`TakeCancelled`); `Allocate`
  // only reads it (`CancelledBy`, nullptr when none). A later note replaces an earlier one.
  void NoteCancelled(std::string_view group, std::string_view by);
  std::string TakeCancelled(std::string_view group);
  const std::string* CancelledBy(std::string_view group) const;
  // "group G was cancelled by B: ..." (Allocate's kFailedPrecondition message).
  static std::string CancelledMessage(std::string_view group, std::string_view by);

 private:
  // What an Allocate must repeat of the reserved request, viewed where it is kept (no copy).
  struct Reserved {
    std::string_view vc;
    Priority priority;
    const std::vector<GroupMember>& members;
    std::string_view pinned_cell_id;
    std::string_view leaf_cell_type;
    const std::vector<std::string>& leaf_cell_types;
    bool lazy_preemption;
  };
  // The one comparison behind both RequestDifference overloads.
  static std::string Difference(const Reserved& reserved, const GroupRequest& given);

  static constexpr uint64_t kNever = ~uint64_t{0};
  // A filtering thread's last kPlaced decision, stamped with the request it answers.
  struct alignas(64) Filtered {
    std::mutex mu;  // StoreFiltered and CheckInvariants
    uint64_t epoch = kNever;
    std::string name;
    std::string vc;
    Priority priority = 0;
    std::string pinned_cell_id;
    std::string leaf_cell_type;
    ChainId chain;
    std::vector<int32_t> needs;  // per pod, ascending
    std::vector<CellId> pleaves;
    std::vector<VCellId> vleaves;
  };
  static constexpr uint32_t kFilteredSlots = 16;
  // Does `s` (not stale at `epoch`) hold exactly this request's decision and placement?
  static bool Matches(const Filtered& s, const GroupRequest& request, const Placement& placement,
                      const cellalloc::CellForest& f);

  std::map<std::string, std::string, std::less<>> cancelled_;  // group -> canceller
  // Written by the const `StoreFiltered`, each slot under its own mutex.
  mutable std::array<Filtered, kFilteredSlots> filtered_;
  mutable const Filtered* matched_ = &filtered_[0];  // set by MatchesFiltered (exclusive lock)
};

}  // namespace hived

#endif  // HIVED_SRC_RESERVATIONS_H_
