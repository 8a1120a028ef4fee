// sharing/sharing.h: GPU sharing on top of the whole-GPU scheduler (docs/gpu-sharing.md).
//
// A fractional group (hived/schedule_result.h: members with `gpu_milli` > 0) never touches
// cells directly. Its pods take shares of GPUs that are *open for sharing*; a GPU is opened
// by taking it as one leaf of a **holder**: an ordinary whole-GPU group named
// "hived-share/<n>" that this component schedules, allocates and releases through the
// whole-GPU core's own Schedule/Allocate/Release (it is a layer above the core, which it
// calls downward only: sharing/layered.h), so VC binding, the safety invariant, buddy
// allocation, preemption and recovery are the whole-GPU code, untouched. A holder has the
// VC and priority of the group that opened it; its leaves stay open until every share on
// all of them has left, then the holder is released.
//
// Which open GPU a pod's share goes to (Place):
//  - a guaranteed pod (priority p >= 0): GPUs of holders of its own VC at priority p, so
//    its shares sit inside the VC's own cells and preemption by priority stays exact;
//  - an opportunistic pod: GPUs of opportunistic holders of any VC, and — when the leaf
//    type's sharing mode is `protected` (TGS/AntMan style) — GPUs of guaranteed holders;
//  - among those with room (shares, GPU memory, the node's declared CPU and host memory):
//    when some node declares CPU or memory, the one where the stranded rule
//    (src/share_choice.h, sharing_choice.cc) grows the node's stranded milli least, ties to
//    the tightest; otherwise the one left with the least free milli (tightest fit, HiveD's
//    buddy rule applied to shares: keep the emptier GPUs whole); ties to the lowest leaf id.
// Pods that fit no open GPU take new leaves: one holder for all of them, scheduled in the
// caller's phase (a single new leaf first on the node the stranded rule prefers). Victims
// named by the scheduler that are holders are replaced by the groups with shares on the
// holder's GPUs (whole groups, sorted); a holder whose GPUs carry a reserved share is never
// a victim (the scheduler's decision waits, invariant 8).
// A guaranteed pod of a `protected` type that finds neither room nor a new leaf evicts the
// opportunistic shares on one of its own GPUs: those groups are its victims (Preempting
// phase), and the GPU is barred to new opportunistic shares until the group is reserved,
// allocated or cancelled.
//
// Reservations (scheduler.h rules 7-8, as for whole groups; sharing/sharing_reservations.cc):
// a Preempting-phase kPlaced result reserves the group (stage kReserved, GroupState
// kReserved): its shares on open GPUs are added to GpuShares at once (no other Schedule can
// take them; they keep their GPU's holder open) and its new leaves are its holder's,
// reserved by the scheduler (the holder is a kReserved core group; its GPUs open only at
// Allocate). The node CPU and memory of every
// pod are counted. A repeated Schedule returns the reservation (on a bad or non-suggested
// node: re-placed in kPreempting, kWaiting in kFiltering); `Allocate` accepts only the
// reserved request and placement, or the Filtering phase's last kPlaced decision with no
// state change since (`pending_`, stamped with the scheduler's epoch); `Unreserve` gives
// the shares back, unreserves the holder and releases holders left without shares.
// `Recover` places a placement from elsewhere strictly, reopening GPUs through the
// scheduler's `Recover` of new holders (one per chain), decided first over const state (each
// chain's leaves free, its preassigned type previewed) and then applied.
//
// Invariants (CheckInvariants, also cellalloc/gpu_shares.h's):
//  (1) every open GPU is a leaf of exactly one live holder, which the scheduler runs, and
//      every leaf of a running holder is open; a preempting group's holder preempts (or was
//      cancelled by an overlapping preemptor: then its next Schedule schedules it anew).
//  (2) per open GPU, the shares recorded for groups (and reservations) sum to the GPU's
//      milli and memory in GpuShares, and its sharers list has each such group once.
//  (3) a guaranteed group's shares are on GPUs of holders of its VC at its priority; an
//      opportunistic group's on opportunistic holders, or on guaranteed holders of a
//      `protected` leaf type.
//  (4) per node, the recorded CPU / host memory use is the sum over the fractional pods
//      and the host groups' pods on it, and at most the declared amount where declared.
//  (5) a running holder has at least one share on its GPUs.
//  (6) a GPU barred to guests is barred by a preempting guaranteed group that lists it.
//  (7) a reserved group's pods on open GPUs are counted in (2)-(4); its other pods are on
//      distinct leaves of its holder, which the scheduler holds reserved (kReserved: a
//      reservation is never cancelled by another group) and which are not open; a running group has
//      no holder and every pod on an open GPU, except the pods a Restore skipped (counted nowhere;
//      the report names them).
//  (8) a share reserved on an open GPU is never a victim: a whole-GPU decision that would
//      preempt its GPU's holder waits (kReservationOverlap), as for a reserved whole group.
//  (9) MIG (sharing/sharing_mig.cc, cellalloc/mig_layout.h's invariants too): per GPU of a MIG
//      type, the used instances are exactly the MIG pods counted on it (owner = the group,
//      the pod's profile; a pod's milli is its profile's), and a GPU with a used instance
//      holds no other share.
//
// Host groups (sharing/sharing_hosts.cc): a whole-GPU group whose pods ask node CPU or host
// memory, and a CPU-only group (members with leafCellNumber 0). A whole one is scheduled by
// the scheduler on nodes with room (its suggested nodes narrowed to them) and counted on its
// nodes from Allocate to Release; a CPU-only one never touches cells: its pods take a node
// each (src/share_choice.h chooses) and are counted from Allocate to Release.
//
// Thread safety: not thread-safe; the scheduler serialises.
#ifndef HIVED_SHARING_SHARING_H_
#define HIVED_SHARING_SHARING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/gpu_shares.h"
#include "cellalloc/mig_layout.h"
#include "hived/cluster_spec.h"
#include "hived/schedule_result.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "src/core_for_layer.h"
#include "src/node_room.h"
#include "src/share_choice.h"

namespace hived {

namespace internal {
struct SavedMigLayout;  // src/persistence_json.h
struct SavedState;
}  // namespace internal

// Holder groups' names start with this; requests naming a group so are kInvalidArgument.
inline constexpr char kHolderPrefix[] = "hived-share/";
bool IsHolderName(std::string_view name);

// Whether a request asks for shares (any member with gpu_milli > 0 or a MIG profile).
bool IsFractional(const GroupRequest& request);
// Whether a request asks for MIG instances (any member with a mig_profile).
bool IsMig(const GroupRequest& request);
// Whether a request is a host group's (sharing/sharing_hosts.cc): no share (no gpu_milli, no
// MIG profile), and a member with leafCellNumber 0 (CPU-only) or with CPU or host memory.
bool IsHostRequest(const GroupRequest& request);

class Sharing {
 public:
  // `whole`: the core below (sharing/layered.h), which this component calls downward only,
  // through the narrow interface (src/core_for_layer.h).
  Sharing(WholeGpuCore whole, const ClusterSpec& spec, const cellalloc::CellForest& forest);

  // Whether this component answers the call (the layer's dispatch, sharing/layered.h).
  bool Handles(const GroupRequest& request) const;
  bool Handles(std::string_view group) const;

  absl::StatusOr<ScheduleResult> Schedule(const GroupRequest& request, Phase phase);
  absl::StatusOr<AllocateInfo> Allocate(const GroupRequest& request, const Placement& placement);
  absl::Status Release(std::string_view group);
  absl::Status CancelPreemption(std::string_view group);
  absl::Status Unreserve(std::string_view group);
  absl::StatusOr<AllocateInfo> Recover(const GroupRequest& request, const Placement& placement);

  // Replaces holders among `victims` by the groups sharing their GPUs (sorted, unique).
  void TranslateVictims(std::vector<std::string>* victims) const;
  // Replaces preempting groups' holders among `cancelled` by those groups (sorted).
  void TranslateCancelled(std::vector<std::string>* cancelled) const;
  // Both, on a whole-GPU Schedule's result.
  void TranslateResult(ScheduleResult* result) const;
  // The change log (sharing/layered.cc, `EndChange`): a fractional or MIG group's status
  // follows its GPUs' holders (kBeingPreempted and the preemptor, when a holder is) and bars
  // (invariant 6), which change with no call naming the group. `f(name)` for each group with
  // a share on a GPU of a holder in `holders`, and for each sharer of a GPU whose bar changed
  // since the last call (the bars' list is emptied).
  template <typename F>
  void ForEachDependent(const std::vector<std::string>& holders, F f) {
    for (const std::string& h : holders) {
      auto it = holders_.find(h);
      if (it == holders_.end()) continue;
      for (CellId leaf : it->second.leaves) {
        auto use = leaf_use_.find(leaf.value());
        if (use == leaf_use_.end()) continue;
        for (const std::string& g : use->second.sharers) f(std::string_view(g));
      }
    }
    for (uint32_t leaf : bars_changed_) {
      auto it = leaf_use_.find(leaf);
      if (it == leaf_use_.end()) continue;
      for (const std::string& g : it->second.sharers) f(std::string_view(g));
    }
    bars_changed_.clear();
  }
  void ForgetDependents() { bars_changed_.clear(); }
  // Gives the core its shields (WholeGpuCore::SetShields) as this component's reserved
  // shares leave them: per holder, the reserved groups with shares on its GPUs (invariant 8).
  // Called before every core Schedule and after every mutation (sharing/layered.h (L1)).
  void SyncShields();
  std::map<std::string, std::vector<std::string>, std::less<>> ReservedShields() const;

  // Views: a fractional group's status; every fractional group's status appended; a
  // leaf's shares filled in (no-op when it is not open); whether `name` is a holder.
  GroupStatus Status(std::string_view group) const;
  void AppendStatuses(std::vector<GroupStatus>* out) const;
  void FillLeaf(CellId leaf, PhysicalCellStatus* s) const;
  bool IsHolder(std::string_view name) const { return holders_.count(std::string(name)) > 0; }
  bool HasGroup(std::string_view name) const {
    return groups_.find(name) != groups_.end() || CpuOnlyGroup(name) != nullptr;
  }
  // Persistence (sharing/sharing_state.cc, docs/state-format.md): running fractional groups'
  // records (as asked; allocated exactly when guaranteed); a record of `name` (kNotFound,
  // kFailedPrecondition when reserved or preempting).
  void AppendRecords(std::vector<GroupRecord>* out) const;
  absl::StatusOr<GroupRecord> GetRecord(std::string_view name) const;
  uint64_t next_holder() const { return next_holder_; }
  // The stranded rule's learnt shapes (share_choice.h), saved and restored with the state.
  ShareChoice::Learning LearnedShapes() const { return choice_.Learned(); }
  absl::Status LearnShapes(const ShareChoice::Learning& l) { return choice_.Learn(l); }
  // Restore, in three steps: every holder's record (its GPUs the cluster no longer has are
  // left out and named in `gone`; the others are opened), then every fractional group's
  // (strictly on the restored open GPUs: a pod that cannot be accounted there, its GPU gone
  // or not open, of another VC or priority, without room or node CPU / memory, is skipped
  // and named in `skipped`; the group is then partial), then FinishRestore: the next holder
  // number, and the holders left without a share released (their names returned).
  absl::StatusOr<AllocateInfo> RestoreHolder(const GroupRecord& rec,
                                             std::vector<std::string>* gone);
  absl::Status RestoreShared(const GroupRecord& rec, std::vector<std::string>* skipped);
  std::vector<std::string> FinishRestore(uint64_t next_holder);
  // Whether a fractional group holds a reservation; the reserved groups with shares on the
  // GPUs of holder `holder` appended to `out` (a reservation is never a victim).
  bool AnyReserved() const { return reserved_ > 0; }
  void AppendReservedOn(std::string_view holder, std::vector<std::string>* out) const;
  // Persistence of MIG and host groups (docs/state-format.md, version 3; sharing_state.cc,
  // sharing_mig.cc, the end of sharing_hosts.cc).
  // Every MIG GPU's layout, leaf id order (closed GPUs' too: the hardware keeps them).
  void AppendMigLayouts(std::vector<internal::SavedMigLayout>* out) const;
  // Restore's checks before any group is restored (kInvalidArgument naming the JSON path):
  // every saved layout fits its GPU's geometry; every MIG pod's profile is one of its GPU
  // type's, its start allowed, its instance the saved layout's (when saved) and overlapping
  // no other pod's; the host groups' pods fit every node's declared CPU and memory.
  absl::Status CheckSavedState(const internal::SavedState& state) const;
  // The saved layouts, every instance free (the MIG pods' records take theirs); a GPU the
  // cluster no longer has, or no longer of that MIG type, is skipped with a note.
  void RestoreMigLayouts(const internal::SavedState& state, std::vector<std::string>* notes);
  // A reserved or running group's placement with each MIG pod's instance (profile, start).
  void FillMigPlacement(std::string_view group, Placement* placement) const;
  // Host groups: the CPU-only groups' records appended; a whole host group's members (with
  // their CPU and memory, which the scheduler's own record lacks) set in `rec`.
  void AppendHostRecords(std::vector<GroupRecord>* out) const;
  // GetGroupRecord of a CPU-only group (it is not the scheduler's): false when `name` is none.
  bool CpuOnlyRecord(std::string_view name, GroupRecord* out) const;
  void CompleteHostRecord(GroupRecord* rec) const;
  // A chain's MIG counters (instances created, reconfigurations).
  void FillMigChain(ChainId chain, ChainSummary* s) const;

  absl::Status CheckInvariants() const;

 private:
  struct PodShare {
    CellId leaf;
    int32_t milli = 0;
    int64_t memory = 0;
    int64_t cpu = 0;
    int64_t host_memory = 0;
    bool open = true;        // counted on an open GPU (false: a reserved new leaf of its holder)
    std::string mig = {};    // a MIG pod's profile (empty: a fractional share)
    int32_t mig_start = -1;  // Restore, Recover: the instance named by the placement (-1: Choose)
  };
  enum class Stage { kPreempting, kReserved, kRunning };
  struct Group {
    GroupRequest request;
    bool guaranteed = false;
    Stage stage = Stage::kPreempting;
    std::string holder;             // preempting / reserved: its holder (may be empty)
    std::vector<PodShare> pods;     // reserved, running: every pod
    std::vector<CellId> barred;     // preempting: GPUs barred to guests for it
    GroupRequest holder_request;    // with a holder: the holder's request
    Placement holder_placement;     // reserved with a holder: the holder's reserved placement
    Placement placement;            // reserved, running
    int32_t unaccounted = 0;        // running after Restore: placement pods skipped (partial)
    uint64_t types = ~uint64_t{0};  // reserved: its allowed leaf types as a TypeMask (the tally)
  };
  // A kPlaced decision: what Reserve records (or the Filtering phase keeps for Allocate).
  struct Decision {
    std::vector<PodShare> pods;  // per pod; open false: on a new leaf of the holder
    std::string holder;          // empty: no new leaf
    GroupRequest holder_request;
    Placement holder_placement;
    Placement placement;  // the fractional group's
  };
  struct Holder {
    std::string vc;
    Priority priority = 0;  // the priority it runs at (-1: opportunistic)
    std::vector<CellId> leaves;
  };
  // Per open GPU: its holder and who has shares (or reservations) on it.
  struct LeafUse {
    std::string holder;
    std::vector<std::string> sharers;  // group names, ascending, each once
    std::string barred_by;             // a preempting guaranteed group evicting this GPU's guests
  };
  // One pod's wish, parsed from the request.
  struct PodAsk {
    int32_t milli = 0;
    int64_t memory = 0;
    int64_t cpu = 0;
    int64_t host_memory = 0;
    std::string mig = {};  // a MIG pod's profile; `milli` is then the profile's compute
  };
  // A request parsed: pods, allowed leaf types, and the holder request new leaves take.
  struct Parsed {
    std::vector<PodAsk> pods;
    std::vector<std::string> types;  // allowed leaf types; empty: any
    bool guaranteed = false;
  };
  // Tentative use during one decision (a gang's pods must not overfill a GPU or a node).
  struct Tentative {
    std::map<uint32_t, std::pair<int32_t, int64_t>> gpu;   // leaf -> (milli, memory)
    std::map<uint32_t, std::pair<int64_t, int64_t>> node;  // node -> (cpu, host memory)
    std::vector<uint32_t> excluded;                        // leaves of holders being preempted
    std::map<uint32_t, cellalloc::MigLayout> mig;  // MIG layouts as the gang's pods leave them
  };
  // The Filtering phase's last kPlaced decision, for the Allocate right after it (valid
  // while the scheduler's epoch is unchanged and no sharing mutation ran).
  struct Pending {
    std::string group;
    GroupRequest request;
    Decision decision;
    uint64_t epoch = 0;
  };

  // Schedule of a fractional or MIG group (Schedule adds the cancellation notes).
  absl::StatusOr<ScheduleResult> ScheduleShares(const GroupRequest& r, Phase phase);
  absl::StatusOr<Parsed> Parse(const GroupRequest& r) const;
  // The core's Schedule of a whole group (a holder, a host group): the shields synced first,
  // the result's holders translated (`only_placed`: WholeGpuCore::Apply::kOnlyPlaced).
  absl::StatusOr<ScheduleResult> ScheduleWhole(const GroupRequest& request, Phase phase,
                                               const hived::NodeRoom* room,
                                               bool only_placed = false);
  // Schedule's and Allocate's first step: kAlreadyExists for a running fractional group or
  // any whole group of that name, then Parse.
  absl::StatusOr<Parsed> ParseFor(const GroupRequest& r) const;
  bool TypeAllowed(const Parsed& p, CellId leaf) const;
  bool NodeRoom(CellId leaf, const PodAsk& a, const Tentative& t) const;
  // Whether `leaf` (open) may take a share of `r`'s group, by holder and sharing mode.
  bool Compatible(const GroupRequest& r, bool guaranteed, CellId leaf) const;
  // The best open GPU for one pod, Nil when none; `evict`: count opportunistic guests'
  // shares as free (a protected guaranteed pod's eviction). `preferred` (may be null):
  // set by the stranded rule to the node where a fresh leaf strands least when it chooses
  // no open GPU (PlaceStranded).
  CellId Place(const GroupRequest& r, const Parsed& p, const PodAsk& a, const Tentative& t,
               bool evict, std::string* preferred) const;
  void Take(CellId leaf, const PodAsk& a, Tentative* t) const;
  GroupRequest HolderRequest(const GroupRequest& r, const Parsed& p, const std::string& name,
                             const std::string& type, int32_t pods) const;
  std::optional<std::vector<std::string>> RoomyNodes(const Parsed& p,
                                                     const std::string& type) const;
  // Evictions: the running opportunistic guests on `leaf` (sorted; reserved ones stay).
  std::vector<std::string> Guests(CellId leaf) const;
  CellId FindLeaf(const PodPlacement& pod, const Parsed& p) const;
  // The node room (src/node_room.h) for a holder of the pods with Nil `leaves`, in order,
  // counting what `t` holds (the request's pods on open GPUs); `t` must outlive it.
  hived::NodeRoom FreshRoom(const Parsed& p, const std::vector<CellId>& leaves,
                            const Tentative& t) const;
  // Place with holders being preempted skipped (their GPUs take no new share).
  CellId PlaceLive(const GroupRequest& r, const Parsed& p, const PodAsk& a, Tentative* t,
                   bool evict, std::string* preferred) const;
  void Bar(const std::string& group, bool on);
  // Cancels a preempting group's holder if the scheduler still has it preempting (an
  // overlapping preemptor may have cancelled it); the group then has no holder.
  absl::Status CancelHolder(Group* g);
  // Schedules one holder for `pods` new leaves over the allowed types; `name` is the
  // holder's name (a preempting group's own, or a new one); `preferred`: the stranded
  // rule's node for a single new leaf, tried first (empty: none); `room`: the nodes' CPU and
  // host memory for the new pods (null when no node declares any).
  absl::StatusOr<ScheduleResult> ScheduleHolder(const GroupRequest& r, const Parsed& p,
                                                int32_t pods, Phase phase,
                                                const std::string& preferred,
                                                const hived::NodeRoom* room, std::string* name,
                                                GroupRequest* holder_request);
  // A pod's share on its open GPU (GpuShares and the sharers list), and its node's CPU and
  // host memory.
  void AddShare(const std::string& group, const PodShare& s);
  void RemoveShare(const std::string& group, const PodShare& s);
  void AddNodeUse(const PodShare& s, int64_t sign);
  // Reservations (sharing_reservations.cc). Records `d` as group `r`'s reservation.
  void Reserve(const GroupRequest& r, const Parsed& p, Decision d);
  // Runs a reserved group: allocates its holder (unless `holder_allocated`), opens its
  // GPUs and adds the shares of its new leaves.
  absl::StatusOr<AllocateInfo> CommitReserved(const std::string& group, bool holder_allocated);
  // Decides the scheduler's Allocate of a holder before anything changes (its const
  // preview, the decision Allocate itself runs): its error, or kFailedPrecondition when a
  // guaranteed group's holder would run downgraded (its shares would leave the VC's cells).
  absl::Status CheckHolder(const std::string& group, bool guaranteed, const GroupRequest& h,
                           const Placement& hp) const;
  // The Allocate `CheckHolder` accepted over the current state; it cannot fail (HIVED_CHECK).
  void AllocateHolder(bool guaranteed, const GroupRequest& h, const Placement& hp);
  // Gives a reserved group's shares back, unreserves its holder, erases it.
  absl::Status DropReservation(const std::string& group);
  // A repeated Schedule of a reserved group; nullopt when it was dropped to be re-placed.
  absl::StatusOr<std::optional<ScheduleResult>> RecheckReserved(const GroupRequest& r, Phase phase);
  // The Allocate of the Filtering decision (pending_) or kFailedPrecondition.
  absl::StatusOr<AllocateInfo> AllocateDecided(const GroupRequest& r, const Parsed& p,
                                               const Placement& placement);
  // Recover: each pod's open GPU or new leaf, and a MIG pod's instance (the placement's
  // `mig_start` when it names one, else the rule's), checked strictly (kInvalidArgument /
  // kFailedPrecondition naming the group and pod); `fresh` gets the distinct new leaves.
  absl::Status ResolveRecovered(const GroupRequest& r, const Parsed& p, const Placement& placement,
                                std::vector<PodShare>* pods, std::vector<CellId>* fresh) const;
  void OpenHolder(const std::string& name, const GroupRequest& holder_request);
  void ReleaseHolderIfEmpty(const std::string& name);
  GroupStatus CoreStatus(const std::string& group) const;
  GroupState CoreState(const std::string& group) const;  // CoreStatus(group).state, cheaply
  // Invariant (7) for a reserved or running group.
  absl::Status CheckReservation(const std::string& name, const Group& g) const;
  void FillPlacementPod(CellId leaf, PodPlacement* pod) const;

  // MIG (sharing/sharing_mig.cc; docs/gpu-sharing.md, "MIG"). The geometries of the spec.
  void InitMig(const ClusterSpec& spec);
  // A MIG request's members checked (kInvalidArgument naming the group and pod), its
  // allowed types narrowed to MIG types with every profile, the pods' profile and milli set.
  absl::Status ParseMig(const GroupRequest& r, Parsed* p) const;
  // Place for a MIG pod: the open GPU whose layout gives the best choice (mig_layout.h),
  // ties to the GPU with more compute in use, then the lowest leaf id.
  CellId PlaceMig(const GroupRequest& r, const Parsed& p, const PodAsk& a, const Tentative& t,
                  bool evict) const;
  // `leaf`'s layout as `t` leaves it (a copy).
  cellalloc::MigLayout MigLayoutOf(CellId leaf, const Tentative& t) const;
  void TakeMig(CellId leaf, const PodAsk& a, Tentative* t) const;
  // Recover: why pod `a` cannot be on `leaf` as far as MIG goes; empty when it can.
  std::string MigRecoverProblem(CellId leaf, const PodAsk& a, const Tentative& t) const;
  // The one accounting of a recorded pod (Recover's and Restore's), its GPU room and node
  // CPU and memory checked by the caller: pod `a` of `group` counted in `t` on `leaf`, a MIG
  // pod at the instance `start` a placement or record names (-1: the rule's, as at
  // Allocate); why it cannot be (no pod is counted then), empty when counted.
  std::string TakeRecorded(const std::string& group, CellId leaf, const PodAsk& a, int32_t start,
                           Tentative* t) const;
  void AddMig(const std::string& group, const PodShare& s);
  void RemoveMig(const std::string& group, const PodShare& s);
  absl::Status CheckMig() const;
  void FillMigLeaf(CellId leaf, PhysicalCellStatus* s) const;
  // Host groups (sharing_hosts.cc). A running one: per pod its node and amounts.
  struct HostPod {
    uint32_t node = 0;
    int64_t cpu = 0;
    int64_t host_memory = 0;
  };
  struct HostGroup {
    GroupRequest request;
    bool cpu_only = false;
    std::vector<HostPod> pods;
    Placement placement;
  };
  absl::StatusOr<ScheduleResult> ScheduleHost(const GroupRequest& r, Phase phase);
  absl::StatusOr<AllocateInfo> AllocateHost(const GroupRequest& r, const Placement& placement,
                                            bool recover);
  absl::Status ReleaseHost(std::string_view group);
  // CancelPreemption (`cancel`) or Unreserve of a running host group: the scheduler's answer
  // for a running group (kFailedPrecondition for a CPU-only one).
  absl::Status HostNotPending(std::string_view group, bool cancel);
  const HostGroup* CpuOnlyGroup(std::string_view name) const;
  // The stranded rule (share_choice.h): bits of the forest's leaf types; the scheduler's
  // used leaves on a node; a leaf's position among its node's leaves.
  uint64_t TypeMask(const std::vector<std::string>& types) const;
  // Counts a group that starts to run in the stranded rule's tally (its pods' shapes).
  void NoteAdmitted(const GroupRequest& r, uint64_t types);
  uint64_t CoreUsed(uint32_t node) const;
  int32_t LeafPos(CellId leaf) const;
  void IndexLeaves() const;  // builds leaf_pos_ and node_leaves_ once
  // Place by the stranded rule (no tentative use, no eviction): the open GPU, or Nil with
  // `*preferred` (unless null) set when a fresh leaf on that node strands less.
  CellId PlaceStranded(const GroupRequest& r, const Parsed& p, const PodAsk& a, const Tentative& t,
                       std::string* preferred) const;
  // The node state share_choice scores: per leaf its free milli, CPU and memory left.
  ShareChoice::NodeState NodeStateOf(uint32_t node) const;
  // Invariant (4)'s sums: the host groups' pods added per node.
  void AddHostUse(std::vector<int64_t>* cpu, std::vector<int64_t>* memory) const;

  WholeGpuCore whole_;  // the core below (src/core_for_layer.h): called downward only
  // The shields last given to the core (SyncShields): per holder, its reserved sharers.
  std::map<std::string, std::vector<std::string>, std::less<>> shields_;
  const cellalloc::CellForest& forest_;
  std::vector<int64_t> node_cpu_;     // per node: declared CPU (0: none)
  std::vector<int64_t> node_memory_;  // per node: declared host memory (0: none)
  std::vector<int64_t> node_cpu_used_;
  std::vector<int64_t> node_memory_used_;
  int64_t max_node_cpu_ = 0;     // the largest of node_cpu_ (a pod asking more fits nowhere)
  int64_t max_node_memory_ = 0;  // the largest of node_memory_
  bool nodes_declare_ = false;   // some node declares CPU or memory
  std::map<std::string, LeafCellTypeSpec> leaf_types_;  // declared sharing keys per type
  // Per VC: its preassigned cell types (the last part of each `cellType`), in VC order, once
  // each: what Recover's holders name as their leaves' preassigned cell types.
  std::map<std::string, std::vector<std::string>> vc_types_;
  cellalloc::GpuShares shares_;
  cellalloc::MigLayouts mig_;
  std::map<uint32_t, LeafUse> leaf_use_;
  std::vector<uint32_t> bars_changed_;  // leaves whose `barred_by` changed (ForEachDependent)
  std::map<std::string, Group, std::less<>> groups_;  // std::less<>: found by string_view
  std::map<std::string, Holder> holders_;
  uint64_t next_holder_ = 0;
  int64_t reserved_ = 0;  // groups in Stage::kReserved (AnyReserved in O(1))
  Pending pending_;
  std::map<std::string, HostGroup, std::less<>> host_groups_;  // running host groups
  mutable ShareChoice choice_;  // the fragmentation-aware choice (its cache is mutable)
  // Built together by IndexLeaves (the forest never changes): per cell id the LeafPos of a
  // leaf (-1: not a leaf); per node its leaf count and its leaf types (TypeMask bits).
  mutable std::vector<int32_t> leaf_pos_;
  mutable std::vector<uint64_t> node_leaves_;
  mutable std::vector<uint64_t> node_types_;
  mutable bool leaves_indexed_ = false;
};

}  // namespace hived

#endif  // HIVED_SHARING_SHARING_H_
