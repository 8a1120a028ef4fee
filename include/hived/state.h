// hived/state.h: persisted scheduler state. A `GroupRecord` is everything needed to rebuild
// one running group after a restart (its request as asked, its placement, how it runs); a
// saved state (`Scheduler::SaveState`) is a header plus every running group's record. The
// JSON format, its version and compatibility rule are in docs/state-format.md.
//
// Example (a manager that persists per job, like HiveD's per-pod annotation):
//   absl::StatusOr<hived::GroupRecord> record = scheduler.GetGroupRecord("job-1");
//   std::string json = hived::GroupRecordToJson(*record);  // store it with the job
//   // ... after a restart ...
//   absl::StatusOr<hived::GroupRecord> back = hived::GroupRecordFromJson(json);
//   if (back.ok()) (void)restarted.AllocateRecord(*back);
//
// Invariants of a record read by `GroupRecordFromJson` (checked; errors name the JSON path):
//  (1) `request` passes the same checks as `Schedule` (name, priority range, members).
//  (2) every pod lists as many leaf cell indices as its `leaf_cell_number`, and as many
//      preassigned cell types when it lists any; `virtual_leaf_cells` is empty or has one
//      entry per leaf of the placement (pods in order).
//  (3) `state` is kAllocated or kOpportunistic (only running groups are persisted).
//  (4) `pods` is empty or lists distinct slots of the placement, ascending, with non-empty
//      names of at most `kMaxNameBytes`, each name once.
//
// Thread safety: plain values and pure functions.
#ifndef HIVED_STATE_H_
#define HIVED_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hived/export.h"
#include "hived/schedule_result.h"
#include "hived/status_view.h"

namespace hived {

// The saved state's schema name, the newest version this library writes (a document that
// needs nothing of version 3 is written as version 2), and the oldest it reads
// (docs/state-format.md, Compatibility: 1 whole GPUs only; 2 adds GPU sharing; 3 adds MIG
// groups and layouts and CPU-only pods).
inline constexpr const char* kStateSchema = "hived.scheduler-state";
inline constexpr int32_t kStateVersion = 3;
inline constexpr int32_t kOldestStateVersion = 1;

// Limits of the persisted-state readers (`Scheduler::Restore`, `GroupRecordFromJson`,
// `ImportHivedBindInfo`), each checked before the work it bounds, so that any input ends
// quickly, in bounded memory, with kInvalidArgument; error messages quote at most
// `kMaxQuotedInputBytes` of any input value.
//  - a saved state or group record document: `kMaxStateBytes` (a saved state is 15.5 MiB at
//    100k GPUs and 50k groups), at most `kMaxStateJsonValues` JSON values, each JSON string
//    (key or value) at most `kMaxStateStringBytes`;
//  - names (group, VC, node, cell type, chain, pinned cell, MIG profile, preemptor) at most
//    `kMaxNameBytes`, as in Kubernetes; addresses and reasons at most `kMaxStateStringBytes`;
//  - one HiveD annotation at most `kMaxAnnotationBytes` (what Kubernetes allows for all of a
//    pod's annotations together).
inline constexpr int64_t kMaxStateBytes = int64_t{256} << 20;
inline constexpr int64_t kMaxStateJsonValues = int64_t{32} << 20;
inline constexpr int64_t kMaxStateStringBytes = int64_t{64} << 10;
inline constexpr int64_t kMaxNameBytes = 253;
inline constexpr int64_t kMaxAnnotationBytes = int64_t{256} << 10;
inline constexpr int64_t kMaxQuotedInputBytes = 100;

// One running group, as persisted. `request.suggested_nodes` is never persisted (it belongs
// to one scheduling call).
struct GroupRecord {
  GroupRequest request;  // as asked: the original priority, even when downgraded
  Placement placement;
  // kAllocated: runs at `request.priority`; kOpportunistic: runs at priority -1 (asked for,
  // or downgraded: then `downgrade_reason` says why).
  GroupState state = GroupState::kAllocated;
  std::string downgrade_reason;
  std::string preemptor;  // the group whose lazy preemption downgraded it, if any
  // Per leaf of the placement (pods in order, then leaves): the VC's virtual leaf cell it
  // runs on ("VC1/0/1/3"), empty for an opportunistic leaf. Optional (HiveD's record has
  // none): when present, `Scheduler::Restore` and `AllocateRecord` bind these virtual cells
  // when they are still free; otherwise recovery re-derives them (HiveD's rule).
  std::vector<std::string> virtual_leaf_cells;
  // The allocated pods in slot order, when the group was allocated pod by pod
  // (`Scheduler::AllocatePod`); empty: every pod of the placement runs, named by its index
  // ("0", "1", ...), as for a gang allocated whole (and every record older than pods).
  std::vector<PodIdentity> pods;
};

// One JSON object (compact, keys in a fixed order), e.g. {"name":"job-1",...}.
HIVED_EXPORT std::string GroupRecordToJson(const GroupRecord& record);
// Errors: kInvalidArgument naming the JSON path ("$.placement.pods[0].physicalNode: ...")
// or, for malformed JSON, the line and column.
HIVED_EXPORT absl::StatusOr<GroupRecord> GroupRecordFromJson(std::string_view json);

// What `Scheduler::Restore` did with one persisted group.
enum class RestoreOutcome {
  kKept,        // runs as it did
  kPartial,     // runs, but leaf cells the cluster no longer has are not accounted
  kDowngraded,  // runs opportunistically although it ran guaranteed before
  kDropped,     // not restored (an invalid or conflicting record); the manager must act
};
constexpr const char* RestoreOutcomeName(RestoreOutcome outcome) {
  switch (outcome) {
    case RestoreOutcome::kKept:
      return "kept";
    case RestoreOutcome::kPartial:
      return "partial";
    case RestoreOutcome::kDowngraded:
      return "downgraded";
    case RestoreOutcome::kDropped:
      return "dropped";
  }
  return "unknown";
}

// Whether a saved state names the cluster it is restored into (`config`, the spec
// fingerprint: `Scheduler::SpecFingerprint`).
enum class SpecMatch {
  kSame,       // saved on a cluster with this spec's fingerprint
  kDifferent,  // saved on another cluster (restored only with `kRestoreAnyway`)
  kUnknown,    // an old document without a fingerprint: restored, nothing known
};
constexpr const char* SpecMatchName(SpecMatch match) {
  switch (match) {
    case SpecMatch::kSame:
      return "same";
    case SpecMatch::kDifferent:
      return "different";
    case SpecMatch::kUnknown:
      return "unknown";
  }
  return "unknown";
}

// What `Scheduler::Restore` does with a state saved on another cluster (another spec
// fingerprint): refuse it (kFailedPrecondition, the default), or restore it under the
// recovery rules (each group kept, partial, downgraded or dropped, reported).
enum class SpecMismatch { kRefuse, kRestoreAnyway };
struct RestoreOptions {
  SpecMismatch spec_mismatch = SpecMismatch::kRefuse;
};

struct RestoreReport {
  // The saved state's fingerprint ("" for an old document), the restoring spec's, and how
  // they compare. With kDifferent, `notes` also says so.
  SpecMatch spec_match = SpecMatch::kSame;
  std::string saved_fingerprint;
  std::string cluster_fingerprint;
  struct Group {
    std::string name;
    std::string path;  // the record's JSON path, "$.groups[3]"
    RestoreOutcome outcome = RestoreOutcome::kKept;
    std::string reason;  // empty for kKept
  };
  std::vector<Group> groups;               // in the document's order
  std::vector<std::string> unknown_nodes;  // bad nodes the cluster no longer has
  // Saved virtual bindings not restored, and why ("$.bindings[2]: ..."; a changed cluster
  // structure skips them all: recovery then re-derives the virtual cells).
  std::vector<std::string> notes;
};

// HiveD's persisted record of a running pod, the annotations
// `hivedscheduler.microsoft.com/pod-bind-info` (`bind_info_yaml`: node, leafCellIsolation,
// cellChain, affinityGroupBindInfo: the whole gang's placement) and
// `hivedscheduler.microsoft.com/pod-scheduling-spec` (`scheduling_spec_yaml`: virtualCluster,
// priority, leafCellType, pinnedCellId, lazyPreemptionEnable, affinityGroup; legacy gpu*
// keys accepted). Returns the group's record: its members and placement from the bind info
// (one member per `affinityGroupBindInfo` entry), its request from the spec. With an empty
// spec only the placement and members are filled (name, VC empty; priority 0).
// `virtual_leaf_cells` is empty: recovery re-derives the virtual cells (HiveD's rule).
// Errors: kInvalidArgument with the annotation, line and YAML path
// ("pod-bind-info:4: affinityGroupBindInfo[0].podPlacements[1].physicalNode: ...").
HIVED_EXPORT absl::StatusOr<GroupRecord> ImportHivedBindInfo(
    std::string_view bind_info_yaml, std::string_view scheduling_spec_yaml = {});

// The inverse: HiveD's two annotations for pod `pod_index` (placement order) of a running
// whole-GPU group (`node` and `leafCellIsolation` are that pod's; `affinityGroupBindInfo`
// has one entry per member, its pods those of the member's size in placement order), so a
// manager can write them on its pods (recovery from pods, or rolling back to HiveD).
// `ImportHivedBindInfo` of the result gives back the record's request (suggested nodes
// aside) and placement; not its downgrade nor its virtual leaf cells (HiveD's record has
// none). Every string is a YAML double-quoted scalar.
// Errors: kInvalidArgument for a pod index out of range, a fractional, MIG or CPU-only
// group, or a placement whose pods do not match the members.
struct HivedAnnotations {
  std::string bind_info_yaml;        // hivedscheduler.microsoft.com/pod-bind-info
  std::string scheduling_spec_yaml;  // hivedscheduler.microsoft.com/pod-scheduling-spec
};
HIVED_EXPORT absl::StatusOr<HivedAnnotations> ExportHivedBindInfo(const GroupRecord& record,
                                                                  int32_t pod_index);

}  // namespace hived

#endif  // HIVED_STATE_H_
