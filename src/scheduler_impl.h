// src/scheduler_impl.h: the state and algorithms behind `hived::Scheduler`.
//
// Rationale (see include/hived/scheduler.h "Placement rules" for the user-visible rules).
//
// Assumptions
//  - The physical topology (`CellForest`) is immutable; free lists and health live in the
//    `BuddyAllocator`; per-cell leaf usage by priority in two `PriorityUsage`s, one over the
//    physical cells and one over every VC's virtual cells (one arena, integer ids).
//  - A virtual cell is bound to a physical cell only while something inside it is used
//    (a group, a reservation), while it is pinned, or while it mirrors a bad physical cell
//    ("bad-bound"; doomed preassigned cells are bad-bound roots).
//
// State per physical leaf (`PhysicalCells`, src/physical_cells.h): the running group using
// it (`user`) and the reserved or preempting group reserving it (`reserver`): Free (neither),
// Used (user only), Reserving (both), Reserved (reserver only). Physical leaf priority = the
// reserver's priority if any, else the user's running priority. A virtual leaf is held by at most
// one group
// (`VCell::user`), the running guaranteed group or the preemptor that took it over.
//
// Algorithm of `Schedule` for a new group: src/decision.h (intra-VC placement, lazy
// preemption, binding, victims; `Decide` const, `Commit` applies a Decision in one step).
//
// Components (the table in docs/architecture.md): one source file each, and the ones with
// private state, own headers and invariants: PhysicalCells, VirtualClusters, GroupTable,
// Placer, Health, Reservations, NodeIndex; recovery.h (placements from elsewhere: functions
// over explicit inputs). Shared records: cluster_state.h, decision.h. GPU sharing is a layer
// above this core (sharing/layered.h), which this core does not know and cannot include.
//
// Invariants (CheckInvariants, scheduler_invariants.cc; each component checks its own too):
//  (1) A leaf cell is used by at most one group; a group holds exactly the leaves of its
//      placement (a reserved or preempting group reserves them, a running one uses them).
//  (2) Buddy: no two free buddies at the same level remain unmerged; free + split + used
//      cells account for every cell at every level (cellalloc/buddy_allocator.h).
//  (3) Safety: per chain and level, obtainable physical cells >= unbound virtual cells of
//      all VCs (virtual_clusters.h (5)).
//  (4) A bound virtual cell and its physical cell are bound to each other, same level, same
//      chain (virtual_clusters.h (2)).
//  (5) A guaranteed group of a VC never uses more cells at a level than the VC reserves.
//  (6) Only lower-priority or opportunistic groups are ever preempted; a victim is a whole
//      group.
//  (7) Releasing everything returns the allocator to its initial state.
//
// Thread safety: not thread-safe; callers serialize (the façade's reader/writer lock,
// src/scheduler.cc), except that the const methods may run concurrently with each other:
// the views, and `Filter`, which decides a whole-GPU Filtering request over const state with
// a per-call scratch taken from a pool (`filter_pool_`, lock-free) and stores its kPlaced decision
// in `Reservations`' separately synchronised slot. No const method writes anything else
// (`needs_pool_` is written only by the non-const Schedule path's ParseRequest).
#ifndef HIVED_SRC_SCHEDULER_IMPL_H_
#define HIVED_SRC_SCHEDULER_IMPL_H_

#include <cstdint>
#include <experimental/propagate_const>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/buddy_planner.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "hived/cluster_spec.h"
#include "hived/schedule_result.h"
#include "hived/scheduler.h"  // StateChanges, Pod, ReservationTime
#include "hived/state.h"
#include "hived/status_view.h"
#include "hived/types.h"
#include "src/change_log.h"
#include "src/cluster_state.h"
#include "src/decision.h"
#include "src/filter_scratch_pool.h"
#include "src/group_table.h"
#include "src/health.h"
#include "src/internal/strings.h"
#include "src/node_index.h"
#include "src/node_room.h"
#include "src/physical_cells.h"
#include "src/placer.h"
#include "src/reservations.h"
#include "src/virtual_clusters.h"

namespace hived {

namespace internal {
struct SavedState;  // persistence_json.h
}  // namespace internal
struct RecoveryDecision;  // recovery.h

// The checks every request passes before `Schedule` or `Allocate` looks at it (the same
// for both): a name, a priority in range, members with positive counts and at most
// `kMaxGroupPods` pods in all. Decided in O(members), before anything is allocated per pod.
// Errors: kInvalidArgument naming the group and the problem.
absl::Status ValidateRequest(const GroupRequest& request);

class SchedulerImpl {
 public:
  static absl::StatusOr<std::unique_ptr<SchedulerImpl>> Create(const ClusterSpec& spec);

  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase);
  // What a Preempting-phase decision may apply: anything, or only a kPlaced one (any other
  // outcome is answered as the Filtering phase answers it, nothing changed).
  enum class Apply { kAnyOutcome, kOnlyPlaced };
  // For the layer above (sharing/layered.h): `room` (src/node_room.h; null: none) constrains
  // a new decision's node choice and blocks a preempting group's kept placement that no
  // longer fits; `apply` kOnlyPlaced: one decision that reserves only when it places.
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase,
                                          const NodeRoom* room, Apply apply = Apply::kAnyOutcome);
  // The Filtering phase of `Schedule` for a new whole-GPU group, over const state, safe to
  // run concurrently with other const calls (filter.cc): the same answer `Schedule(request,
  // kFiltering)` gives, and the same stored kPlaced decision for the next `Allocate`.
  // nullopt when the request takes the exclusive path instead: `Sharing` handles it
  // (fractional, MIG, host, a holder or a fractional group's name), or the group is
  // reserved or Preempting (its re-check, `RecheckPreempting`, is not const).
  std::optional<absl::StatusOr<ScheduleResult>> Filter(const GroupRequest& request) const;
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement);
  absl::Status Release(std::string_view group);
  absl::Status CancelPreemption(std::string_view group);
  absl::Status Unreserve(std::string_view group);
  // Recovery (allocate.cc, src/recovery.h): a placement from elsewhere, resolved strictly
  // (every leaf must exist) unless `ignored_leaves` is given (Restore: leaves the cluster
  // no longer has are counted there and noted in the info; a group none of whose leaves
  // is in the cluster is refused, before anything changes).
  absl::StatusOr<AllocateInfo> Recover(const GroupRequest& request, const Placement& placement,
                                       int32_t* ignored_leaves = nullptr);
  // For the layer above: what `Allocate` or a strict `Recover` would return (its error, or
  // a downgrade and why), by the const decision the call itself runs first.
  absl::StatusOr<AllocateInfo> PreviewAllocate(const GroupRequest& request,
                                               const Placement& placement) const;
  absl::StatusOr<AllocateInfo> PreviewRecover(const GroupRequest& request,
                                              const Placement& placement) const;
  // The error `Recover` or `Allocate` of group `group` gives when one of `leaves` is used or
  // reserved (naming the leaf and the group holding it), else OK.
  absl::Status CheckLeavesFree(std::string_view group, const std::vector<CellId>& leaves) const;
  absl::Status SetNodeHealthy(std::string_view node, bool healthy);
  // Pods (src/pods.cc; scheduler.h "Pods").
  absl::StatusOr<PodAllocation> AllocatePod(const GroupRequest& request, const Placement& placement,
                                            const Pod& pod);
  absl::StatusOr<PodRelease> ReleasePod(std::string_view group, std::string_view pod);
  absl::StatusOr<PodStatus> GetPod(std::string_view group, std::string_view pod) const;
  absl::StatusOr<PodAllocation> RecoverPod(const GroupRecord& record, const Pod& pod);
  // Reservations with time (src/reservation_clock.cc; scheduler.h).
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase,
                                          const ReservationTime& time);
  std::vector<ExpiredReservation> ExpireReservations(int64_t now);

  GroupStatus GetGroup(std::string_view group) const;
  GroupState GetGroupState(std::string_view group) const;  // GetGroup(group).state, cheaply
  std::vector<GroupStatus> Groups() const;
  std::vector<PhysicalCellStatus> PhysicalCluster() const;
  absl::StatusOr<std::vector<VirtualCellStatus>> VirtualCluster(std::string_view vc) const;
  std::vector<VcUsage> VcUsages() const;
  std::vector<ChainLevelCapacity> Capacity() const;
  std::vector<NodeStatus> Nodes() const;
  PhysicalClusterTable PhysicalClusterAsTable() const;
  absl::StatusOr<std::vector<NodeStatus>> GetNode(std::string_view node) const;
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalNode(std::string_view node) const;
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalChain(std::string_view chain) const;
  std::vector<ChainSummary> ChainSummaries() const;
  absl::StatusOr<ChainSummary> GetChainSummary(std::string_view chain) const;
  std::vector<VcSummary> VcSummaries() const;
  absl::StatusOr<std::vector<VcSummary>> GetVcSummary(std::string_view vc) const;
  const ClusterSpec& spec() const { return spec_; }
  absl::Status CheckInvariants() const;

  // The state version and the change log (scheduler_changes.cc, src/change_log.h).
  uint64_t version() const { return changes_.version(); }
  // kOutOfRange for a version older than the log keeps, kInvalidArgument for one ahead.
  absl::StatusOr<StateChanges> Changes(uint64_t since) const;
  // One page of `Groups()`: the first `limit` groups named after `after`.
  std::vector<GroupStatus> Groups(std::string_view after, int32_t limit) const;
  // Ends a mutation for the change log (the façade calls it after each one, under the
  // exclusive lock): a new version when anything changed: the epoch moved, a leaf's usage
  // or a group's existence changed (noted as it happened), or `changed` (the call's success
  // implies a change); `group` and `result`'s victims and cancelled groups are noted then.
  void EndChange(uint64_t epoch_before, bool changed, std::string_view group,
                 const ScheduleResult* result = nullptr);
  // The layer above's notes (sharing/layered.cc, `EndChange`): `f(name)` for each group
  // noted in the mutation under way; group `name` noted as changed.
  template <typename F>
  void ForEachPendingGroup(F f) const {
    changes_.ForEachPendingGroup(f);
  }
  void NoteGroupChanged(std::string_view name) { changes_.NoteGroup(name); }
  // Notes node `node` as changed (its health), for the next `EndChange`.
  void NoteNodeChanged(std::string_view node);
  // Drops what building or restoring noted (version 0 is the state `Create`/`Restore` made)
  // and sizes the change log: a new ring of `capacity` entries (SchedulerOptions; allocated
  // now, once).
  void ResetChangeLog(size_t capacity);
  size_t change_log_capacity() const { return changes_.capacity(); }

  // For the layer above (sharing/layered.h): the state epoch (bumped by every change), node
  // health, the cancellation notes (Reservations::NoteCancelled), the leaves of a cell used
  // (at any priority), the topology.
  uint64_t epoch() const { return epoch_; }
  bool NodeHealthy(NodeId node) const { return buddy_->IsNodeHealthy(node); }
  Reservations& cancellations() { return reservations_; }
  int32_t UsedLeaves(CellId cell) const { return physical_.usage().UsedTotal(cell); }
  const cellalloc::CellForest& forest() const { return *forest_; }
  // Shields: per running group, the reservations made above the core that shield it (a
  // decision on its leaves waits, kReservationOverlap naming them, as on a kReserved group's).
  using Shields = std::map<std::string, std::vector<std::string>, std::less<>>;
  void SetShields(Shields shields) { shields_ = std::move(shields); }
  const Shields& shields() const { return shields_; }

  // Persistence (persistence.cc, docs/state-format.md; the layer above composes them):
  // every running group's record, the bad nodes and the bindings in `state`.
  void SaveStateTo(internal::SavedState* state) const;
  absl::StatusOr<GroupRecord> GetGroupRecord(std::string_view group) const;
  // `Recover` of a record (or `recover`, given by the layer above, with the record's virtual
  // cells as hints); `ignored_leaves`: its leaves the cluster no longer has (Restore); null:
  // strict, as `Recover` (AllocateRecord).
  using RecoverFn =
      std::function<absl::StatusOr<AllocateInfo>(const GroupRequest&, const Placement&)>;
  absl::StatusOr<AllocateInfo> RestoreGroup(const GroupRecord& rec, int32_t* ignored_leaves,
                                            const RecoverFn& recover = nullptr);
  // Restore's last steps, after the groups: the bindings history, the bad nodes, the doomed
  // marks (kNotFound nodes are named in `report`).
  absl::Status RestoreCells(const internal::SavedState& state, RestoreReport* report);
  // A fingerprint of the physical cells and the VCs' cells (`Scheduler::SpecFingerprint`):
  // saved bindings apply only to the same structure; Restore is strict about it.
  std::string ConfigFingerprint() const;

  // The fast path (src/fast_path.cc, hived/fast_path.h): `Schedule(request, kPreempting)`
  // and, when kPlaced, `Allocate` of its placement, in one call (`out` reused; a plain
  // placement builds no strings). Handles name live groups by slot and generation:
  // `FindHandle` is kNilId for a nil, stale or forged one. `ReleaseGroup`: `Release` of `g`.
  absl::Status ScheduleAndAllocate(const GroupRequest& request, FastResult* out);
  GroupId FindHandle(GroupHandle handle) const;
  GroupHandle HandleOf(GroupId g) const;
  const Group& group(GroupId g) const { return groups_[g]; }
  GroupId FindGroup(std::string_view name) const { return groups_.Find(name); }
  absl::Status ReleaseGroup(GroupId g);
  // `out`'s handle, chain and pods for running group `g` placed at `placement` (its node
  // names resolved to ids), or at its decision's leaves in pod order `needs`.
  void FillFast(GroupId g, const Placement& placement, FastResult* out) const;
  void FillFast(GroupId g, const std::vector<int32_t>& needs, FastResult* out) const;

  // For tests (no suggested nodes): a view's node choice (`vc` empty: the chain's physical
  // view) as view positions per pod, empty when none; and per view position its health,
  // sort keys and usable leaves for priority `q` (for a reference implementation).
  std::vector<int32_t> FindNodesForTesting(std::string_view vc, std::string_view chain,
                                           const std::vector<int32_t>& needs, Priority q) const;
  struct NodeForTesting {
    bool healthy = true;
    int32_t key1 = 0;
    int32_t key2 = 0;
    int32_t usable = 0;
  };
  std::vector<NodeForTesting> ViewNodesForTesting(std::string_view vc, std::string_view chain,
                                                  Priority q) const;

 private:
  using VCell = state::VCell;

  // The virtual clusters' records (virtual_clusters.h).
  using VcChainLevel = VirtualClusters::ChainLevel;
  using Vc = VirtualClusters::Vc;

  using View = state::View;

  // The decision's records (src/decision.h).
  using Req = decision::Req;
  using Decision = decision::Decision;
  using DowngradeOverlay = decision::DowngradeOverlay;
  using DecideScratch = decision::DecideScratch;
  using Attempt = decision::Attempt;
  using FilterScratch = decision::FilterScratch;

  SchedulerImpl() = default;
  absl::Status Build(const ClusterSpec& spec);
  void BuildViews();

  // Requests.
  absl::StatusOr<Req> ParseRequest(const GroupRequest& request) const;  // into `needs_pool_`
  // The same, taking `needs_buffer`'s storage for `Req::needs`.
  absl::StatusOr<Req> ParseRequest(const GroupRequest& request,
                                   std::vector<int32_t>* needs_buffer) const;
  absl::StatusOr<ScheduleResult> ScheduleNew(const Req& req, Phase phase);
  absl::StatusOr<ScheduleResult> RecheckPreempting(GroupId g, const GroupRequest& request,
                                                   Phase phase, const NodeRoom* room);
  void Decide(const Req& req, DecideScratch* s, Decision* d) const;
  absl::StatusOr<ScheduleResult> Commit(const Req& req, Phase phase, Decision* d);
  // The Filtering phase's answer to found decision `d` (nothing applied), after the placement
  // is filled in `result`: kPlaced, kPreempting (victims, lazy downgrades among them) or
  // kWaiting (an overlapping reservation). True when it is a kPlaced decision an `Allocate`
  // may run (no lazy downgrades): the caller stores it (`Reservations::StoreFiltered`).
  bool ReportOnly(Decision* d, ScheduleResult* result) const;
  Attempt TryGuaranteed(const Req& req, int32_t view_id, DecideScratch* s, Decision* d) const;
  Attempt TryOpportunistic(const Req& req, ChainId ch, DecideScratch* s, Decision* d) const;
  // Empty when the view can hold the request; else why not (kPodTooLarge, kGroupTooLarge).
  std::string Infeasibility(const Req& req, const View& view, ReasonCode* code) const;

  // Placement inside a view: `placer_` decides; this supplies the names its reasons use.
  // The greedy node choice (scheduler.h rules 3, 4); on failure the reason and its code
  // (kNonSuggestedNode, kBadNode, kInsufficientCapacity).
  bool FindNodes(const Placer& placer, const View& view, const std::vector<int32_t>& needs,
                 Priority q, bool pass1, std::vector<int32_t>* pod_node, std::string* reason,
                 ReasonCode* code, const NodeRoom* room = nullptr) const;
  // The first node of `pleaves` (pods `needs` in order) that cannot hold the request's pods
  // placed on it (src/node_room.h), nil when all can.
  NodeId NodeShort(const std::vector<int32_t>& needs, const std::vector<CellId>& pleaves,
                   const NodeRoom& room) const;
  const View* ViewForTesting(std::string_view vc, std::string_view chain) const;

  // The lazily preemptible running groups using `vleaves`' bound physical leaves, in leaf
  // order, each once, appended to `lazy` (the downgrades a guaranteed placement implies).
  void LazyDowngrades(const std::vector<VCellId>& vleaves, std::vector<GroupId>* lazy) const;
  // `MapPlacement` as if `downgrades` were applied first: over the `DowngradeOverlay` they
  // imply (`PlanDowngrades`), nothing applied; the overlay is inactive again on return.
  bool PlanBinding(ChainId ch, const std::vector<VCellId>& vleaves,
                   const std::vector<GroupId>& downgrades, DecideScratch* s,
                   std::vector<CellId>* pleaves) const;
  void PlanDowngrades(ChainId ch, const std::vector<GroupId>& downgrades,
                      DowngradeOverlay* o) const;
  // Binding: plans the unbound virtual cells on `vleaves`' paths on physical cells with the
  // cellalloc planner (nothing changes), reading the binding through `s->downgrades` when
  // kAsIf; the leaves' physical cells in `pleaves`.
  template <bool kAsIf>  // kAsIf: through the active `s->downgrades`
  bool MapPlacement(ChainId ch, const std::vector<VCellId>& vleaves, DecideScratch* s,
                    std::vector<CellId>* pleaves) const;

  // State changes.
  GroupId NewGroup(const GroupRequest& request, VcId vc);
  void DeleteGroup(GroupId g);
  void SetVLeaf(VCellId v, Priority p, GroupId user);
  void SetPLeaf(CellId p, Priority prio);
  void ReleaseVLeaf(VCellId v);  // frees the virtual leaf and unbinds what it can
  // Batched node keys: a group's leaves come in runs on one node (a pod), so the loops
  // that set many leaves (HoldLeaves, AllocateFree, ReleaseInternal) update the usage of
  // each leaf (`Set*LeafUsage`: usage and histogram, true when the priority changed) and
  // the node's index key once per run (`NodeKeys`), not once per leaf. Nothing reads the
  // node index in between; `Flush` (or the destructor) makes the keys current.
  bool SetVLeafUsage(VCellId v, Priority p, GroupId user);
  bool SetPLeafUsage(CellId p, Priority prio);
  // The change log's note of a physical leaf whose priority went from `old` to `now`: its
  // node when it went free or used, its user and reserver (scheduler_changes.cc).
  void NoteLeafChanged(CellId p, Priority old, Priority now);
  class NodeKeys {
   public:
    explicit NodeKeys(SchedulerImpl* s) : s_(s) {}
    ~NodeKeys() { Flush(); }
    NodeKeys(const NodeKeys&) = delete;
    NodeKeys& operator=(const NodeKeys&) = delete;
    // The node of a physical (virtual) leaf whose usage changed needs its key updated.
    void TouchP(CellId leaf);
    void TouchV(VCellId leaf);
    void Flush();

   private:
    SchedulerImpl* s_;
    uint32_t pnode_ = kNilId;  // the pending physical node-level cell
    VCellId vnode_ = kNilId;   // the pending virtual node
  };
  void SetPLeaf(CellId p, Priority prio, NodeKeys* keys) {
    if (SetPLeafUsage(p, prio)) keys->TouchP(p);
  }
  void SetVLeaf(VCellId v, Priority p, GroupId user, NodeKeys* keys) {
    if (SetVLeafUsage(v, p, user)) keys->TouchV(v);
  }
  void ReleaseVLeaf(VCellId v, NodeKeys* keys);
  void DowngradeGroup(GroupId g, const std::string& preemptor, const std::string& reason);
  void CancelInternal(GroupId g);
  void ReleaseInternal(GroupId g);
  void UpdateVNodeKey(VCellId node);
  void UpdatePNodeKey(CellId node_cell);
  // Runs the deferred binding work (bad children of cells bound during the operation,
  // once every leaf of it is bound; doomed rebalancing); a change invalidates the
  // Schedule cache.
  void Settle() {
    uint64_t before = vclusters_.binding_changes();
    vclusters_.FlushBadChildren();
    vclusters_.FlushDoomed();
    vclusters_.FlushBadChildren();
    if (vclusters_.binding_changes() != before) ++epoch_;
  }
  // Allocate's and Recover's const decisions (allocate.cc): the error, else what is applied
  // (`existing`: a Reserved or Preempting group, `AllocatePreempting`; else `d`).
  absl::Status DecideAllocate(const GroupRequest& request, const Placement& placement,
                              GroupId* existing, RecoveryDecision* d) const;
  absl::Status DecideRecover(const GroupRequest& request, const Placement& placement,
                             bool ignore_missing, RecoveryDecision* d) const;
  absl::Status CheckPreempting(const Group& grp, const GroupRequest& request,
                               const Placement& placement) const;
  // The applying steps, which cannot fail. `AllocateFree`: at leaves nobody holds, binding
  // the Filtering decision's virtual leaves (`filtered`) or `d.binding` (recovery.h rule 2).
  absl::StatusOr<AllocateInfo> AllocatePreempting(GroupId g);
  absl::StatusOr<AllocateInfo> AllocateFree(const GroupRequest& request, const Placement& placement,
                                            const std::vector<CellId>& pleaves, bool filtered,
                                            const RecoveryDecision& d);
  // Persistence: a running group's record; the virtual cell at an address ("VC1/0/3"),
  // kNilId if none.
  GroupRecord Record(const Group& g) const;
  VCellId FindVirtualCell(std::string_view address) const;
  // The bindings history decided (not implied by the groups), and restoring them (invalid
  // entries are skipped and noted in `report`).
  void SaveBindings(internal::SavedState* state) const;
  // RestoreBindings: false when the cluster structure changed (nothing restored).
  // RestoreDoomed, after the bad nodes are marked: undoes mirror bindings of bad cells that
  // marking made beyond the saved ones, then sets the doomed marks in the saved order.
  bool RestoreBindings(const internal::SavedState& state, RestoreReport* report);
  void RestoreDoomed(const internal::SavedState& state, RestoreReport* report);

  // Names.
  std::string NodeOfV(VCellId v) const;
  void FillPlacement(ChainId ch, const std::vector<int32_t>& needs,
                     const std::vector<CellId>& pleaves, const std::vector<VCellId>& vleaves,
                     Placement* out) const;
  // A group's placement: `given_placement`, else what FillPlacement made of its decision.
  Placement PlacementOf(const Group& g) const;
  // PlacementDifference(PlacementOf(g), given).empty() (a pod's empty preassigned types
  // match any), without building PlacementOf(g) when g has no given placement; with
  // `exact`, whether `given` is PlacementOf(g) field for field (what a view would show).
  bool PlacementMatches(const Group& g, const Placement& given, bool exact = false) const;
  CellState PState(CellId c) const;
  CellState VState(VCellId v) const;
  PhysicalCellStatus PStatus(CellId c) const;
  VirtualCellStatus VStatus(VCellId v) const;
  // Fill `s` for a cell at `address`; the parent's bound cell and its address let the
  // bound cell's address be extended instead of rebuilt (Nil / "" when none).
  void FillPStatus(CellId c, std::string address, VCellId parent_v, const std::string& parent_vaddr,
                   PhysicalCellStatus* s) const;
  void FillVStatus(VCellId v, std::string address, CellId parent_p, const std::string& parent_paddr,
                   VirtualCellStatus* s) const;
  NodeStatus NStatus(NodeId n, CellId node_cell) const;
  // Appends cell `c` and its subtree to `t`; `default_index` is c's default address index.
  void AppendPRows(CellId c, int32_t parent_row, int64_t default_index,
                   const std::vector<uint8_t>& explicit_levels, PhysicalClusterTable* t) const;
  absl::StatusOr<NodeId> FindNodeOrError(std::string_view node) const;
  absl::StatusOr<ChainId> FindChainOrError(std::string_view chain) const;
  // Summaries (scheduler_summaries.cc): counts from the groups, [chain] and [vc * chains + chain].
  struct GroupTally {
    std::vector<int32_t> reserved_free;
    std::vector<int32_t> vc_reserved;
    std::vector<int32_t> vc_opportunistic;
  };
  GroupTally TallyGroups() const;
  ChainSummary ChainSummaryOf(ChainId ch, const GroupTally& tally) const;
  std::vector<int32_t> VcBadLeaves() const;  // [vc * chains + chain]
  void AppendVcSummaries(size_t vc, const GroupTally& tally, const std::vector<int32_t>& bad,
                         std::vector<VcSummary>* out) const;
  GroupStatus GStatus(const Group& g) const;
  // Pods (src/pods.cc): a running group's allocated pods (every pod named by its index when
  // untracked), empty for a reservation; for records, only tracked pods (empty: all, by
  // index). `CheckPodRecords` validates a record's pods against its placement (before
  // anything changes); `SetPodRecords` applies them to the group it restored.
  std::vector<PodIdentity> PodsOf(const Group& g) const;
  std::vector<PodIdentity> PodRecordsOf(const Group& g) const;
  static absl::Status CheckPodRecords(const GroupRecord& rec);
  void SetPodRecords(const GroupRecord& rec);
  // The reservation times of `g` into a view (src/reservation_clock.cc).
  static void FillReservationTimes(const Group& g, GroupStatus* s);
  const cellalloc::PriorityUsage& Usage(const View& v) const {
    return v.physical ? physical_.usage() : vclusters_.usage();
  }

  ClusterSpec spec_;
  std::unique_ptr<cellalloc::CellForest> forest_;
  // Const-propagating: a const member function (`Decide`) sees the allocator and the
  // planner const, so the compiler checks that deciding changes neither.
  std::experimental::propagate_const<std::unique_ptr<cellalloc::BuddyAllocator>> buddy_;
  std::experimental::propagate_const<std::unique_ptr<cellalloc::BuddyPlanner>> planner_;
  // The physical side (src/physical_cells.h): per leaf its user and reserver, the physical
  // leaf usage, node-level cells and view positions; the only writer of them.
  PhysicalCells physical_;

  Health health_;  // doomed counts and deferred health work
  // The virtual cells, their usage, the VCs' preassigned cells and counters, the binding
  // (virtual_clusters.h): the only writer of them; read through its const queries.
  VirtualClusters vclusters_;

  std::vector<VCellId> recover_hints_;  // RestoreGroup -> DecideBinding: leaves to prefer
  // Every view: the physical ones first (PhysicalCells::AddViews, id == chain), then the
  // VCs' (VirtualClusters::AddViews); a shared record (src/cluster_state.h).
  std::vector<View> views_;

  GroupTable groups_;
  uint64_t epoch_ = 0;

  // The state version and recent changes (src/change_log.h); the last user and reserver
  // noted by `NoteLeafChanged` in this mutation (a group's leaves come in runs).
  // Kept empty (capacity 0) until the owner sizes it with ResetChangeLog: building and
  // restoring note changes nobody reads, and a ring allocated here would be replaced at once.
  ChangeLog changes_{0};
  GroupId noted_user_ = kNilId;
  GroupId noted_reserver_ = kNilId;

  // The Filtering phase's last kPlaced decision, and the rules matching an Allocate
  // against a reservation (src/reservations.h).
  Reservations reservations_;
  // Stores a Filtering kPlaced decision (`decision_`'s leaves) in `reservations_`.
  void CacheDecision(const Req& req, ChainId chain);
  // Holds `d`'s leaves at the group's priority for a new group in state `state` (kReserved:
  // no victims; kPreempting: its victims marked).
  GroupId HoldLeaves(const Req& req, GState state, const Decision& d);
  // kWaiting (kReservationOverlap) naming the `overlapping` reservations.
  absl::StatusOr<ScheduleResult> OverlapWait(const std::vector<GroupId>& overlapping,
                                             ScheduleResult* result) const;
  // True, with `result` kWaiting (kReservationOverlap), when taking `pleaves` would preempt
  // a shielded group (SetShields).
  bool ShieldedWait(const std::vector<CellId>& pleaves, ScheduleResult* result) const;
  Shields shields_;

  // Every chain, leaf types in config order, each type's chains in config order.
  std::vector<ChainId> chains_by_leaf_type_;

  // Scratch, reset after each decision.
  mutable std::vector<int32_t> needs_pool_;  // Req::needs' buffer between requests
  Decision decision_;             // the last decision (its buffers are reused by every Schedule)
  Placer placer_;                 // node and leaf choice; its scratch is empty between calls
  DecideScratch decide_scratch_;  // what Decide writes (placer_'s and planner_'s scratch too)

  std::unique_ptr<FilterScratch> TakeFilterScratch() const;
  void GiveFilterScratch(std::unique_ptr<FilterScratch> s) const;
  mutable FilterScratchPool filter_pool_;  // src/filter_scratch_pool.h
};

}  // namespace hived

#endif  // HIVED_SRC_SCHEDULER_IMPL_H_
