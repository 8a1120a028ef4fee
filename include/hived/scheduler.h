// hived/scheduler.h: the HiveD scheduler façade.
//
// A `Scheduler` owns the physical cell forest, the virtual clusters and every live group.
// It places gangs inside their VC's reserved cells (guaranteed, priority 0..1000) or on any
// idle cell (opportunistic, priority -1), binds virtual cells to physical cells lazily by
// buddy allocation, preempts lower-priority work when asked, avoids bad nodes, and rebuilds
// its state from persisted placements after a restart. A kPlaced result reserves its cells
// until `Allocate` or `Unreserve` (placement rule 7).
//
// "Cannot place now" is a `ScheduleResult`, not an error. `absl::Status` errors mean misuse:
//   kInvalidArgument   a malformed request (priority out of range, empty gang, ...)
//   kNotFound          an unknown VC, group, node, leaf type or pinned cell
//   kAlreadyExists     a group name that is already live
//   kFailedPrecondition a call that does not fit the group's state
//
// Unknown names: a name the config defines (a VC, node, chain, leaf type, pinned cell)
// that the config does not have is a caller's mistake, kNotFound, in views (VirtualCluster)
// as in mutations (SetNodeHealthy). Groups come and go, so a view of a group that is not
// live is not an error: GetGroup returns its name with state kAbsent. Mutations of a group
// that is not live (Release, CancelPreemption) are kNotFound.
//
// Example (C++17; compiled by tests/api/header_example_test.cc):
//   auto spec = hived::LoadClusterSpecFile("cluster.yaml");
//   if (!spec.ok()) return spec.status();
//   auto scheduler = hived::Scheduler::Create(*spec);
//   if (!scheduler.ok()) return scheduler.status();
//   hived::GroupRequest req;
//   req.name = "g1";
//   req.vc = "VC1";
//   req.members = {{/*pod_number=*/1, /*leaf_cell_number=*/8}};
//   auto result = (*scheduler)->Schedule(req, hived::Phase::kPreempting);
//   if (!result.ok()) return result.status();
//   if (result->outcome == hived::Outcome::kPlaced) {
//     auto info = (*scheduler)->Allocate(req, result->placement);
//     if (!info.ok()) return info.status();
//     if (info->downgraded) std::cerr << "g1 runs opportunistically: " << info->reason;
//   }
//
// Thread safety: a Scheduler is safe to share between threads. An internal reader/writer
// lock makes every call atomic: the views (the const methods: GetGroup, Groups,
// PhysicalCluster, VirtualCluster, VcUsages, Capacity, Nodes, version, Changes,
// CheckInvariants) take it shared and run concurrently with each other; the mutations
// (Schedule in the Preempting phase, Allocate, Recover, Release, CancelPreemption,
// Unreserve, SetNodeHealthy) take it exclusively, so a view sees the state between two
// mutations, never half of one. A waiting mutation holds off new views, so status polls
// cannot starve scheduling. `spec()` takes it shared to read which spec is current.
// Filtering: `Schedule(request, kFiltering)` of a new whole-GPU group changes nothing and
// takes the lock shared, so filters run concurrently with each other and with views (each
// decides with scratch of its own). The Filtering requests that change nothing either but
// are decided on paths that write scratch state take it exclusively: fractional, MIG and
// host requests (GPU sharing, docs/gpu-sharing.md: its choice keeps a mutable cache), and
// a reserved or Preempting group's re-check. A Filtering kPlaced decision is stamped with
// the state it was made on and kept per thread: the `Allocate` right after it (of the same
// request and placement) runs it only if no mutation came in between and the thread made no
// later kPlaced Filtering decision (nor did another thread sharing its slot: 16 slots by
// thread number) (else kFailedPrecondition: Schedule again).
// A sequence of calls is not atomic: another thread may act between a thread's Schedule
// and its Allocate; a reservation (Preempting phase) keeps the cells for the group
// meanwhile, a Filtering result does not (its Allocate is then kFailedPrecondition).
// Results are copies the caller owns. Different schedulers share nothing.
//
// Placement rules (what `Schedule` decides; deterministic, ties by config order)
// ------------------------------------------------------------------------------
// "Config order" of cells is the depth-first order of `physicalCells` (children in list
// order). A VC's "VC order" is its `virtualCells` entries in order (each repeated
// `cellNumber` times), then its pinned cells, each cell's subtree depth-first.
//
// 1. Chains. A pinned request uses only its pinned cell. A request with `leaf_cell_type`
//    tries that type's chains in config order (a guaranteed request only the chains where
//    its VC has non-pinned cells); without a type, every leaf type in config order and its
//    chains in config order. The first chain that yields a placement wins. Otherwise the
//    result is kWaiting with every tried chain's reason joined by "; " (kInfeasible when
//    every tried chain is infeasible: a pod larger than any node the VC has there, or a
//    gang larger than the VC's leaves there).
// 2. Pods. Pods are ordered by `leaf_cell_number` ascending (stable); the placement lists
//    them in that order, and every pod sits on one node.
// 3. Nodes (guaranteed). The VC's virtual node-level cells of the chain (a preassigned cell
//    below node level, e.g. a socket, counts as one node), in VC order. Pass 1 counts only
//    free leaves; if it fails and the VC has leaves used below the request's priority,
//    pass 2 also counts those (they become victims). Nodes are visited in this order:
//    healthy first, then suggested, then most used leaves (any priority) first, then VC
//    order. An unbound virtual node counts as healthy and suggested; a bound one has its
//    physical node's health and suggestion.
//    Greedy: the current node takes the next pod if it still has enough usable leaves;
//    otherwise the cursor moves on to the next node in the order that has enough (it never
//    goes back). If the next node that would fit is bad or not suggested, the request waits
//    with "have to use at least one bad node <node>" / "... non-suggested node <node>";
//    if none fits, "insufficient capacity ..." naming the VC, chain and cell level.
// 4. Nodes (opportunistic, priority -1). The chain's physical nodes in config order,
//    visited healthy first, then suggested, then most opportunistic leaves first, then
//    fewest guaranteed leaves, then config order; only free leaves count; same greedy.
// 5. Leaves inside a node. For each pod: the lowest-level cell inside the node holding
//    enough usable leaves (not yet given to an earlier pod of the group); among cells of
//    that level, the one with the most free (unused) leaves, counted up to the pod's need,
//    then the first in depth-first order; inside it, free leaves depth-first, then (pass 2)
//    preemptible leaves depth-first. E.g. on an idle 8-GPU node with 2-GPU switches, four
//    1-GPU groups get devices 0, 1, 2, 3; a 2-GPU group next gets the switch {4, 5}.
// 6. Binding (guaranteed). Virtual cells are bound to physical cells only while used.
//    An unbound preassigned virtual cell of level L takes a free physical cell of level L;
//    when no cell of level L is free, the lowest level above with a free cell is split
//    (buddy allocation). Free cells are tried in config order; a candidate must be unbound,
//    healthy if it is within one node, and contain a suggested node; among usable
//    candidates those without opportunistic leaves come first (config order), then fewer
//    opportunistic leaves first; children are matched the same way with backtracking. An
//    unbound virtual cell under a bound parent takes one of the parent's physical children
//    (same preference). If no free cell of level L is usable (bad, non-suggested), a free
//    higher cell is split only when every VC's unbound cells stay obtainable ("safe
//    relaxed" split, checked exactly top-down). A request whose virtual placement cannot
//    be mapped waits ("mapping the virtual placement ... would need at least one bad ...
//    node"). Groups using the chosen physical leaves are the victims (whole groups):
//    opportunistic groups of any VC, or lower-priority groups of the same VC. Lazily
//    preemptible guaranteed victims on the chosen virtual leaves are first downgraded to
//    opportunistic on their cells (only in the Preempting phase; they stay victims only if
//    the new binding still lands on their cells). Pinned cells are bound at start, never
//    move, and lazy downgrades are not tried inside them.
// 7. Phases and reservations. In kPreempting a kPlaced result reserves its leaves for the
//    group (GroupState kReserved, cells kReserved) until `Allocate` or `Unreserve`: its
//    virtual cells are bound at once and its leaves held at its priority, and no other
//    group's `Schedule` gets them, not even a higher-priority preemptor's: a reservation is
//    never a victim nor cancelled by another group (a manager trusts its reservation until
//    it binds or unreserves; Kubernetes does not preempt assumed pods either). A result with
//    victims reserves the leaves (Reserving/Reserved, GroupState kPreempting), cancels preempting
//    groups whose reservation overlaps (listed in `ScheduleResult::cancelled`; each one's next
//    `Schedule` names the canceller in `cancelled_by`, its `Allocate` error too), and returns
//    kPreempting; after the victims are released, `Schedule` of the same group returns kPlaced
//    with the reserved placement, which in kPreempting reserves it as above (GroupState
//    kReserved: whatever path led to a kPlaced, it is then held). `Schedule` of a
//    reserved or Preempting group returns its reservation (re-checked: on a bad or non-suggested
//    node it is re-placed in kPreempting, kWaiting in kFiltering). A decision that lands on a
//    reserved group's leaves (pass 2 counts lower-priority reserved leaves like used ones) waits
//    (kReservationOverlap) instead of taking them. kFiltering
//    changes nothing: victims (including groups that would be lazily downgraded) are
//    reported with kPreempting, nothing is reserved; an overlap with a reservation is
//    kWaiting. Reservations are not persisted (`SaveState`), like Preempting groups.
//    A fractional group (GPU shares, docs/gpu-sharing.md) is reserved the same way: its
//    shares on open GPUs and its holder's new leaves; a share reserved on an open GPU does
//    not shield that GPU's holder from a whole-GPU preemptor (the reserved group is then
//    listed among the victims).
// 8. Allocate and recovery. `Allocate` runs what `Schedule` decided: a reserved group's
//    reservation, a Preempting group's after its victims are gone, or the Filtering
//    phase's kPlaced placement when nothing changed since (the two calls act as one reserve
//    and bind). Any other request or placement is kFailedPrecondition naming the
//    difference (a group without a reservation: Schedule it, or use `Recover`). The
//    scheduled virtual cells are used as decided. `Recover` runs a placement from elsewhere
//    (a restart, a record): strictly resolved, so an unknown node, a leaf index the node
//    does not have, a leaf listed twice or pods that do not match the members are
//    kInvalidArgument naming the group and pod, never a silently smaller job; leaves used or
//    reserved by another group are kFailedPrecondition. Each leaf's virtual cell is
//    re-derived from its `preassigned_cell_types`: an already bound physical cell maps to its
//    virtual cell; else the VC's first unbound preassigned cell of that type (VC order) is
//    bound to it, then the first unbound virtual child on the way down. If that fails (type
//    or VC gone, no cell left, another VC holds the cell, safety would break) the group
//    runs opportunistically and `AllocateInfo` says why; an unknown VC downgrades the
//    group. Only `Restore` (a changed config, reported per group) skips leaves the cluster
//    no longer has (RestoreOutcome kPartial). A fractional group's `Allocate` while it is
//    Preempting is kFailedPrecondition (Schedule it again: the re-check reserves it); its
//    `Recover` packs each pod's share on the pod's GPU, reopening it when not open, and a GPU
//    without room, opened by another VC or priority, or used by a whole group is
//    kFailedPrecondition naming the group and pod (never a downgrade of its shares).
//
// Pods (issue 29; HiveD's AddAllocatedPod / DeleteAllocatedPod, hived-reference §2.8-2.9)
// ------------------------------------------------------------------------------------
// A gang's pods can be allocated and released one at a time, as Kubernetes binds and
// deletes them. A pod is named (unique within its group; a uid is optional) and holds one
// slot: one pod of the group's placement (`Placement::pods`, its index there). The first
// `AllocatePod` of a group runs the whole gang exactly as `Allocate` would (the group is
// then running, every leaf held) and gives the pod its slot; a later pod takes the first
// free slot of its `leaf_cell_number` (HiveD's rule), or, when it names a node and first
// leaf (its bind info after a restart), the slot that starts there. `ReleasePod` frees the
// slot; the last allocated pod's release releases the gang (as `Release`). A gang allocated
// whole (`Allocate`, `Recover`, `AllocateRecord`, a record without pods) has every slot
// allocated, its pods named by their index ("0", "1", ...): `ReleasePod(group, "1")` works
// on it, and a pod released from it can be allocated again by name. `RecoverPod` rebuilds
// a gang from one pod's record (HiveD's recovery from the first pod's bind info) and
// attaches the later pods. Groups sharing GPUs (fractional, MIG, CPU-only) have no per-pod
// calls (kFailedPrecondition). A gang's pods cost nothing until a per-pod call touches it.
//
// Reservations with time
// ----------------------
// The library reads no clock: a timed `Schedule` is given the caller's `now` (any unit the
// caller keeps, e.g. milliseconds) and an optional deadline. A reservation (kReserved or
// kPreempting) records when it was made (its first timed Schedule) and its deadline;
// `ExpireReservations(now)` gives up every reservation whose deadline is at or before
// `now` (as `Unreserve`), in order of deadline then name, and reports them. Kubernetes'
// Permit with a timeout is the model. Views show the times (`GroupStatus::reserved_at`).
// Reservations are not persisted (`SaveState`), so neither are their times. A fractional or
// MIG group's reservation (docs/gpu-sharing.md) carries no time yet: it never expires.
//
// Live config change (issue 29 item 6)
// ------------------------------------
// `ApplyConfig(new_spec)` moves a running scheduler onto a changed cluster config (nodes
// added or removed, VCs added, removed or resized) and decides from then on exactly as a
// scheduler restarted onto the new config: it is `Restore(new_spec, SaveState())` (with
// kRestoreAnyway), built off to the side and checked, then swapped in under the exclusive
// lock; on any error the state is exactly as before. A change that would strand a running
// group (a leaf of it gone: kPartial or kDropped; its VC removed or shrunk below what it
// holds: kDowngraded) is refused by default, naming the groups and why; with
// `Stranded::kApply` it is applied and the report says what became of each. Reservations
// (kReserved, kPreempting groups, timed or not) are given up, as if they expired, and
// reported kDropped ("Schedule it again"); a Filtering decision not yet allocated is
// forgotten (its `Allocate` is kFailedPrecondition). The state version increases by one,
// and `Changes(since)` for any earlier version is kOutOfRange: re-read the full views.
#ifndef HIVED_SCHEDULER_H_
#define HIVED_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/export.h"
#include "hived/fast_path.h"
#include "hived/journal.h"
#include "hived/schedule_result.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "hived/types.h"

namespace hived {

class LayeredScheduler;
class SchedulerJournal;
class GroupsSnapshot;
struct GroupList;

// A pod of a gang, as `AllocatePod` and `RecoverPod` take it ("Pods" above).
struct Pod {
  std::string name;              // required, unique within its group, at most kMaxNameBytes
  std::string uid;               // optional, at most kMaxNameBytes
  int32_t leaf_cell_number = 0;  // its member kind: the slot takes a pod of this size
  // Optional: the slot that starts at this node and leaf index (a pod's own bind info,
  // after a restart); unset (empty, -1): the first free slot of its `leaf_cell_number`.
  std::string node;
  int32_t first_leaf_index = -1;
};

// What `AllocatePod` / `RecoverPod` did: the pod's slot, and whether this call started the
// gang (its first pod: `info` is then the gang's `Allocate` / `AllocateRecord` result).
struct PodAllocation {
  PodStatus pod;
  bool started_gang = false;
  AllocateInfo info;
};

// What `ReleasePod` released: the pod's slot only, or the whole gang (its last pod).
enum class PodRelease { kPodOnly, kGang };

// The time of a timed `Schedule` ("Reservations with time" above), in the caller's unit.
struct ReservationTime {
  int64_t now = 0;
  // The reservation's deadline; unset: none (a reservation made before keeps its own).
  std::optional<int64_t> deadline;
};

// A reservation `ExpireReservations` gave up.
struct ExpiredReservation {
  std::string group;
  GroupState state = GroupState::kReserved;  // kReserved or kPreempting when it expired
  int64_t reserved_at = 0;
  int64_t deadline = 0;
};

// What changed in a scheduler's state after a version (`Scheduler::Changes`): the groups
// whose `GroupStatus` and the nodes whose `NodeStatus` may differ (a superset: an item may
// be listed although its status came back to what it was). Re-reading each with
// `GetGroup` (state kAbsent: gone) and `GetNode` brings views taken at `since` to `version`.
struct StateChanges {
  uint64_t version = 0;             // the state version these changes lead to
  std::vector<std::string> groups;  // sorted, unique
  std::vector<std::string> nodes;   // sorted, unique
};

// How `ApplyConfig` treats running groups the new config strands ("Live config change").
struct ApplyConfigOptions {
  enum class Stranded {
    kRefuse,  // kFailedPrecondition, nothing changed (the default)
    kApply,   // applied; each such group reported partial, downgraded or dropped
  };
  Stranded stranded = Stranded::kRefuse;
};

// The most change-log entries a scheduler keeps (`SchedulerOptions::change_log_capacity`):
// 2^20, about 48 MB of ring plus the group names, 16 times the default.
inline constexpr int64_t kMaxChangeLogCapacity = int64_t{1} << 20;

// How `Scheduler::Create` (and `Restore`) builds a scheduler. `ApplyConfig` keeps them;
// `RecoverFromJournal` builds with the defaults.
struct SchedulerOptions {
  // The group and node entries kept for `Changes(since)` (a ring allocated at creation,
  // so a steady state allocates nothing: hived/fast_path.h, contract 6). About 48 bytes
  // each. 0 turns the change feed off: `version()` still counts the changes, and
  // `Changes(since)` is kOutOfRange for every `since` older than `version()` (re-read the
  // full views: what a manager does when it fell behind a kept ring), an empty change
  // list for `since == version()`. Must be in [0, kMaxChangeLogCapacity]
  // (kInvalidArgument otherwise). A program that never calls `Changes` passes 0.
  int64_t change_log_capacity = int64_t{1} << 16;
};

class HIVED_EXPORT Scheduler {
 public:
  // Validates `spec` (the same checks as `ValidateClusterSpec`) and builds the scheduler.
  // Every node starts healthy. Errors: kInvalidArgument naming the first problems, or
  // the option out of its bounds (SchedulerOptions).
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const ClusterSpec& spec);
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const ClusterSpec& spec,
                                                           const SchedulerOptions& options);

  // Persistence (docs/state-format.md). `SaveState` returns a versioned JSON document: every
  // running group's `GroupRecord` (request as asked, placement, how it runs, its virtual
  // leaf cells) sorted by name, the bad nodes, and the virtual bindings history decided
  // (pinned, bad and doomed cells); fractional groups and their holders with their shares
  // (docs/gpu-sharing.md). Reserved and Preempting groups are not persisted (as in
  // HiveD): after `Restore` the manager schedules them again (a reservation is lost with
  // the process; its bind had not happened); victims are saved as running.
  //
  // `Restore` builds a scheduler for `spec`, replays every record through `Recover`
  // (rule 8; the recorded virtual cells first), restores the saved bindings,
  // then marks the bad nodes. With the same spec (and no group Preempting at save time) the
  // restored scheduler decides every further call exactly as the saved one, and its
  // `SaveState` is byte-identical to `state`. With a changed spec the recovery rules apply
  // per group; `report` (optional) says per group whether it was kept, kept partially (leaf
  // cells the cluster no longer has), downgraded to opportunistic, or dropped, and why.
  //
  // Strict restore: the document's `config` is the fingerprint of the spec it was saved
  // with (`SpecFingerprint`). A state of another cluster is refused (kFailedPrecondition
  // naming both fingerprints) unless `options.spec_mismatch` is kRestoreAnyway; then the
  // report says kDifferent and the recovery rules apply. A document without one (old
  // versions) restores, reported kUnknown. In every mode a group keeps only leaves the
  // cluster has: one none of whose leaves is in the cluster is dropped (never a group on a
  // node or GPU that does not exist).
  //
  // Errors (kInvalidArgument, naming the JSON path or line and column): malformed JSON, a
  // document of another schema or version, a malformed record, a duplicate group; an
  // invalid spec or `scheduler_options` as for `Create`; kFailedPrecondition: another
  // cluster's state (above).
  absl::StatusOr<std::string> SaveState() const;
  static absl::StatusOr<std::unique_ptr<Scheduler>> Restore(
      const ClusterSpec& spec, std::string_view state, RestoreReport* report = nullptr,
      RestoreOptions options = {}, const SchedulerOptions& scheduler_options = {});
  // The spec fingerprint a saved state records (`config`, 16 hex digits): 64-bit FNV-1a
  // over every physical cell in config order (its cell type and address, which includes
  // the node names) and every VC in config order (its name, then each preassigned or pinned
  // cell's type and pinned id). Changes with the topology, node names, cell types or VC
  // reservations; not with comments, key order or anything outside the cell forest and the
  // VCs (e.g. MIG geometries). Deterministic: the same spec gives the same string on every
  // run and machine. Computed on each call (O(cells)).
  std::string SpecFingerprint() const;

  // Per-job persistence: the record of one running group (as in `SaveState`), and replaying
  // one record after a restart (`Allocate` preferring the recorded virtual cells, keeping a
  // recorded downgrade). A manager that persists per job saves `GetGroupRecord(name)` after
  // `Allocate` and calls `AllocateRecord` for each record when it restarts (bad nodes first
  // or last, as it knows them). Unlike `Restore`, bindings that history decided (pinned,
  // bad, doomed cells) are re-derived, as in HiveD's recovery.
  // Errors: GetGroupRecord: kNotFound for an unknown group, kFailedPrecondition for a
  // reserved or Preempting one, or a sharing holder; AllocateRecord: as `Recover` (strict: a leaf
  // the cluster no longer has is kInvalidArgument; only `Restore` skips such leaves, reporting
  // kPartial).
  absl::StatusOr<GroupRecord> GetGroupRecord(std::string_view group) const;
  absl::StatusOr<AllocateInfo> AllocateRecord(const GroupRecord& record);

  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Finds a placement for a new group (rule 7). In `Phase::kPreempting` a kPlaced result
  // reserves its cells (GroupState kReserved) until `Allocate` or `Unreserve`; a placement
  // that needs victims reserves its cells and the group becomes Preempting until `Allocate`
  // (after the victims are released), `CancelPreemption` or `Unreserve`. Scheduling a
  // reserved or Preempting group returns (re-checks) its reservation. `Phase::kFiltering`
  // never changes state.
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase);

  // Records that the group runs at the placement `Schedule` decided (rule 8): a reserved
  // group's, a Preempting group's once its victims are gone, or a Filtering kPlaced one
  // with no call in between. Errors: kFailedPrecondition for another request or placement
  // than reserved (naming the difference), for a group without a reservation, or victims
  // still running; kAlreadyExists for a running group.
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement);

  // Recovery (rule 8): records that a group runs at a placement from elsewhere (replaying
  // persisted placements after a restart, in any order). A recovered group that no longer
  // fits its VC keeps running, downgraded to opportunistic; the returned info says so.
  // Errors: kInvalidArgument for an invalid placement (unknown node, leaf index out of
  // range, a leaf listed twice, pods that do not match the members), naming the group and
  // the pod; kFailedPrecondition for leaves another group uses or reserves, or a group
  // that holds a reservation; kAlreadyExists for a running group.
  absl::StatusOr<AllocateInfo> Recover(const GroupRequest& request, const Placement& placement);

  // Ends a running (or being-preempted) group and frees its cells. A reserved or
  // Preempting group is kFailedPrecondition (use Unreserve).
  absl::Status Release(std::string_view group);

  // Gives up a Preempting group's reservation; victims not yet gone keep their cells.
  absl::Status CancelPreemption(std::string_view group);

  // Gives up a reservation: a reserved group's cells are free again; a Preempting group's
  // reservation is cancelled as by `CancelPreemption` (its victims not yet gone keep their
  // cells). For a failed bind, a job deleted before it ran, a preemption given up.
  // A fractional group's shares are given back and its holder unreserved (docs/gpu-sharing.md).
  // Errors: kNotFound for a group that is not known, kFailedPrecondition for a running one,
  // kInvalidArgument for a sharing holder ("hived-share/<n>").
  absl::Status Unreserve(std::string_view group);

  // Pods ("Pods" above). `AllocatePod`: the first pod of a group not running runs the gang
  // as `Allocate(request, placement)` does (same rules and errors); a later pod of a running
  // group takes a slot (`request.name` names the group; the rest of `request` and
  // `placement` are not read). Errors (each before any change): kInvalidArgument for an
  // empty or too long name or uid, a `leaf_cell_number` that is no member of the group, a
  // node and leaf no slot of that size starts at; kAlreadyExists for a pod of that name
  // already allocated in the group; kFailedPrecondition when every slot of that size is
  // taken ("more pods than the gang has"), or for a group sharing GPUs.
  absl::StatusOr<PodAllocation> AllocatePod(const GroupRequest& request, const Placement& placement,
                                            const Pod& pod);
  // Frees the pod's slot; releases the gang with its last allocated pod. Errors: kNotFound
  // for a group not running or a pod not allocated in it; kFailedPrecondition for a
  // reservation (Unreserve it) or a group sharing GPUs.
  absl::StatusOr<PodRelease> ReleasePod(std::string_view group, std::string_view pod);
  // The pod's group, slot and place. Errors: kNotFound as `ReleasePod`.
  absl::StatusOr<PodStatus> GetPod(std::string_view group, std::string_view pod) const;
  // Recovery of one pod from its record (the gang's record as its pod carries it: a
  // `GetGroupRecord`, or `ImportHivedBindInfo` of its bind info): the group's first pod
  // rebuilds the gang as `AllocateRecord(record)` (the record's `pods` are not read: this
  // pod is the only one allocated) and takes its slot; a later pod of the running group
  // attaches (its record's placement is not read), best with its node and first leaf.
  // Errors: as `AllocateRecord` and `AllocatePod`.
  absl::StatusOr<PodAllocation> RecoverPod(const GroupRecord& record, const Pod& pod);

  // Reservations with time ("Reservations with time" above). `Schedule` as above; a
  // reservation it makes or keeps records `time.now` when it had no time yet, and
  // `time.deadline` when given. `ExpireReservations` gives up (as `Unreserve`) each
  // reservation whose deadline is at or before `now`, deadline then name order; a
  // reservation without a deadline never expires. O(live groups).
  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase,
                                          const ReservationTime& time);
  std::vector<ExpiredReservation> ExpireReservations(int64_t now);

  // Marks a node bad or healthy. Bad nodes are avoided; a VC that cannot be backed by
  // healthy cells sees bad virtual cells.
  absl::Status SetNodeHealthy(std::string_view node, bool healthy);

  // Views, for status pages and metrics.
  GroupStatus GetGroup(std::string_view group) const;  // state kAbsent when unknown
  std::vector<GroupStatus> Groups() const;             // sorted by name
  // One page of `Groups()`: the first `limit` groups (by name) whose name is greater than
  // `after` ("" for the first page); the next page starts after the last name returned, and
  // a page shorter than `limit` is the last. `Groups()` and its pages are served from a
  // snapshot of the group list brought up to date from `Changes` (src/groups_snapshot.h):
  // the lock is held only to re-read the groups changed since the last call, never for the
  // whole list (bench/concurrency_bench.cc). Each page is consistent; pages taken across
  // mutations are not one snapshot (follow `version()` and `Changes`). `limit` <= 0 is
  // an empty page.
  std::vector<GroupStatus> Groups(std::string_view after, int32_t limit) const;
  std::vector<PhysicalCellStatus> PhysicalCluster() const;
  PhysicalClusterTable PhysicalClusterAsTable() const;  // the same, flat and ~10x cheaper
  absl::StatusOr<std::vector<VirtualCellStatus>> VirtualCluster(std::string_view vc) const;
  std::vector<VcUsage> VcUsages() const;             // in config order
  std::vector<ChainLevelCapacity> Capacity() const;  // per chain and level
  std::vector<NodeStatus> Nodes() const;             // in config order

  // Filtered views and summary counters, for status pages, metrics and node caches. They
  // cost what they return, not a copy of the cluster: microseconds at 100k GPUs
  // (bench/views_bench.cc); summaries scan the live groups once. Unknown names: kNotFound.
  // One NodeStatus / cell tree per chain the node is in (usually one).
  absl::StatusOr<std::vector<NodeStatus>> GetNode(std::string_view node) const;
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalNode(std::string_view node) const;
  // The chain's top-level cells (the whole-cluster view of one chain).
  absl::StatusOr<std::vector<PhysicalCellStatus>> PhysicalChain(std::string_view chain) const;
  std::vector<ChainSummary> ChainSummaries() const;  // per chain, config order
  absl::StatusOr<ChainSummary> GetChainSummary(std::string_view chain) const;
  // Per VC (config order) and chain (config order) where the VC has cells or runs groups.
  std::vector<VcSummary> VcSummaries() const;
  absl::StatusOr<std::vector<VcSummary>> GetVcSummary(std::string_view vc) const;
  // The current spec: the one created or restored with, or the last `ApplyConfig`'s. The
  // reference is valid until the next successful `ApplyConfig` or the scheduler's end.
  const ClusterSpec& spec() const;

  // Applies a changed cluster config ("Live config change" above). The report is
  // `Restore`'s: one entry per running group in the saved document's order (kKept unless
  // stranded), then one kDropped entry per reservation given up, by name; unknown bad nodes
  // (a bad node removed) and notes as `Restore` gives them. Takes the exclusive lock for
  // the whole change (a SaveState plus a Restore: O(state)).
  // Errors, the state exactly as before: kInvalidArgument for an invalid spec (as
  // `Create`); kFailedPrecondition for a change that strands running groups (naming them;
  // unless `options.stranded` is kApply) or while the journal is broken; kInvalidArgument
  // while a journal is started for a spec whose record would be over
  // `kMaxJournalRecordBytes` (16 MiB of YAML, far beyond a real cluster); kInternal for a
  // new state that breaks an invariant (a bug). A change that succeeds is journaled (its
  // record has the new spec; hived/journal.h), and recovery replays it.
  absl::StatusOr<RestoreReport> ApplyConfig(const ClusterSpec& new_spec,
                                            ApplyConfigOptions options = {});

  // The state version: 0 at `Create` and `Restore`, increased by every call that changes
  // what a view shows (a Filtering Schedule never does; a refused call never does).
  // `ApplyConfig` increases it by one and makes every earlier version kOutOfRange below.
  uint64_t version() const;
  // The groups and nodes changed after version `since` (StateChanges), at the current
  // version. Errors: kOutOfRange when `since` is older than the recent changes kept (a ring
  // of `SchedulerOptions::change_log_capacity` group and node entries, 65,536 by default;
  // with 0, every `since` before `version()`): re-read the full views then;
  // kInvalidArgument for a version the scheduler has not reached.
  absl::StatusOr<StateChanges> Changes(uint64_t since) const;

  // Checks the scheduler's invariants (sharing/layered.h, src/scheduler_impl.h) and every
  // component's; returns the first violation as kInternal.
  absl::Status CheckInvariants() const;

  // The journal (hived/journal.h). `StartJournal` returns a checkpoint (SaveState and the
  // current change sequence, atomically) and from then on appends one record to `sink` per
  // successful change (Schedule in the Preempting phase, Allocate, Recover, AllocateRecord,
  // Release, Unreserve, CancelPreemption, SetNodeHealthy, ApplyConfig). `sink` must outlive the
  // journal (StopJournal, another StartJournal or the scheduler's end). A sink error stops it: that
  // call's change took effect, and every later mutation is kFailedPrecondition (naming the
  // error) until StartJournal or StopJournal; `JournalStatus` says so. A second
  // StartJournal is a new checkpoint (the caller may drop the records before it).
  // Errors: kInvalidArgument for a null sink.
  absl::StatusOr<JournalCheckpoint> StartJournal(JournalSink* sink);
  void StopJournal();
  absl::Status JournalStatus() const;
  // The sequence number of the last change (0 after Create or Restore).
  uint64_t JournalSequence() const;
  // Replays one record (a follower, or recovery): kFailedPrecondition, the state exactly as
  // before, for a record of another cluster (fingerprint) or out of sequence (not the next
  // one). The replayed call's own error: with `call_error` null it is returned (the state
  // exactly as before, the sequence not advanced); otherwise it is stored there, the
  // sequence advances and the result is Ok; an ApplyConfig record's failure is always
  // returned (the records after it are for its spec). Replayed changes are not written to a
  // sink.
  absl::Status ApplyJournalRecord(const JournalRecord& record, std::string* call_error = nullptr);
  // Recovery: `Restore(spec, checkpoint.state, ..., options)` then every record of `journal`
  // after `checkpoint.sequence` (earlier ones skipped), in order, with `ApplyJournalRecord`
  // (calls that fail are reported in `report->failed`; a torn tail is ignored and counted).
  // With the same spec, and no reservation open at the checkpoint, the result decides every
  // further call exactly as the scheduler that wrote the journal. Errors: Restore's, and
  // ReadJournal's and ApplyJournalRecord's (the first bad or out-of-sequence record).
  static absl::StatusOr<std::unique_ptr<Scheduler>> RecoverFromJournal(
      const ClusterSpec& spec, const JournalCheckpoint& checkpoint, std::string_view journal,
      JournalRecoveryReport* report = nullptr, RestoreOptions options = {});

  // The fast path (hived/fast_path.h: contract, ids, handles). `ScheduleAndAllocate` is
  // `Schedule(request, kPreempting)` then, when kPlaced, `Allocate` of its placement, in one
  // call; errors as theirs, and kFailedPrecondition for a sharing request or while a journal
  // is started. `Release(handle)`: kNotFound for a nil, stale or forged handle, else as
  // `Release(name)`. `HandleOf`: the handle of a running whole-GPU group (kNotFound when no
  // such group runs: unknown, reserved, Preempting, or sharing GPUs). `GroupName`:
  // kNotFound for a handle that names no live group. Node and chain ids: `NodeName`
  // ("" out of range), `NodeCount`, `ChainName` ("" out of range).
  absl::Status ScheduleAndAllocate(const GroupRequest& request, FastResult* result);
  absl::Status Release(GroupHandle handle);
  absl::StatusOr<GroupHandle> HandleOf(std::string_view group) const;
  absl::StatusOr<std::string> GroupName(GroupHandle handle) const;
  int32_t NodeCount() const;
  std::string_view NodeName(int32_t node) const;
  std::string_view ChainName(int32_t chain) const;

 private:
  explicit Scheduler(std::unique_ptr<LayeredScheduler> impl);
  class Lock;  // the reader/writer lock of "Thread safety" (src/scheduler.cc)
  // `Changes(since)` with the lock held; the group list `Groups` serves (src/scheduler.cc).
  absl::StatusOr<StateChanges> ChangesLocked(uint64_t since) const;
  std::shared_ptr<const GroupList> CurrentGroups() const;
  // `ApplyConfig` with the lock held, not journaled; `ReplayConfig` replays an ApplyConfig
  // journal record with it (src/journal_scheduler.cc).
  absl::StatusOr<RestoreReport> SwapConfig(const ClusterSpec& new_spec, ApplyConfigOptions options);
  absl::Status ReplayConfig(const JournalRecord& record);
  std::unique_ptr<Lock> lock_;
  std::unique_ptr<LayeredScheduler> impl_;
  std::unique_ptr<SchedulerJournal> journal_;  // src/journal_hook.h
  std::unique_ptr<GroupsSnapshot> groups_;     // src/groups_snapshot.h
  // The version at which the last `ApplyConfig` swapped `impl_` in (0: none): `version()`
  // is `version_base_ + impl_->version()`, and changes before it cannot be told.
  uint64_t version_base_ = 0;
  // How many `ApplyConfig`s swapped `impl_` in: stamped on fast-path handles
  // (GroupHandle::config_epoch), so one issued before a swap is refused after it.
  uint32_t config_epoch_ = 0;
};

}  // namespace hived

#endif  // HIVED_SCHEDULER_H_
