// hived/schedule_result.h: what a caller asks the scheduler (`GroupRequest`) and what it
// answers (`ScheduleResult`, `Placement`).
//
// A group is a gang: all its pods are placed together or none is. Members with the same
// `leaf_cell_number` are interchangeable pods.
//
// Example:
//   hived::GroupRequest req;
//   req.name = "job-42";
//   req.vc = "VC1";
//   req.priority = 0;
//   req.members = {{/*pod_number=*/2, /*leaf_cell_number=*/8}};
//   auto result = scheduler.Schedule(req, hived::Phase::kPreempting);
//
// Thread safety: plain values.
#ifndef HIVED_SCHEDULE_RESULT_H_
#define HIVED_SCHEDULE_RESULT_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hived/types.h"

namespace hived {

// `podNumber` pods that each need `leafCellNumber` leaf cells (devices) on one node.
//
// GPU sharing (docs/gpu-sharing.md): a member with `gpu_milli` > 0 is fractional: each pod
// asks for `gpu_milli` thousandths of ONE GPU (1..1000; `leaf_cell_number` must be 1) and
// optionally `gpu_memory_mib` of its memory. `cpu_milli` and `memory_mib` (per pod) are
// counted against the nodes' declared CPU and host memory (`cpuMilli`, `memoryMiB`) for
// every pod: fractional, whole-GPU, MIG and CPU-only. A **CPU-only** pod has
// `leaf_cell_number` 0 (and `gpu_milli` 0, no `mig_profile`): it takes no cell, only a node's
// CPU and memory; its PodPlacement names the node with no leaf cell indices.
//
// MIG (docs/gpu-sharing.md, "MIG"): a member with `mig_profile` (e.g. "1g.10gb") asks for one
// MIG instance of that profile per pod, on a GPU of an allowed type whose geometry has it
// (`gpu_milli` 0, `gpu_memory_mib` 0, `leaf_cell_number` 1). A group is all MIG, all
// fractional, all whole or all CPU-only.
struct GroupMember {
  int32_t pod_number = 0;
  int32_t leaf_cell_number = 0;  // 0: a CPU-only pod (no GPU)
  int32_t gpu_milli = 0;         // 0: whole leaf cells; 1..1000: a share of one GPU
  int64_t gpu_memory_mib = 0;    // fractional pods: GPU memory asked (0: none)
  int64_t cpu_milli = 0;         // CPU millicores on the node, per pod (0: none)
  int64_t memory_mib = 0;        // host memory MiB on the node, per pod (0: none)
  std::string mig_profile = {};  // MIG pods: the profile of each pod's instance (empty: none)
};

// The most pods one request may ask for, summed over its members. A larger request is
// kInvalidArgument, decided before anything is allocated per pod.
inline constexpr int32_t kMaxGroupPods = 1000000;

// A request to place a whole group. Field meanings follow HiveD's pod scheduling spec.
struct GroupRequest {
  std::string name;            // unique among live groups
  std::string vc;              // the virtual cluster the group runs in
  Priority priority = 0;       // kOpportunisticPriority (-1) or 0..kMaxGuaranteedPriority
  std::string leaf_cell_type;  // empty: any leaf type the VC has
  // Fractional groups: the allowed GPU models (leaf cell types, openb's gpu_spec), tried in
  // this order; empty: `leaf_cell_type` if set, else any. Whole groups: must be empty.
  std::vector<std::string> leaf_cell_types;
  std::string pinned_cell_id;    // empty: not pinned
  bool lazy_preemption = false;  // may be downgraded to opportunistic instead of preempted
  std::vector<GroupMember> members;
  // Nodes the placement may use (Kubernetes' suggestion). Absent: every node.
  std::optional<std::vector<std::string>> suggested_nodes;
};

// Where one pod runs: its node and the device indices of its leaf cells there.
struct PodPlacement {
  int32_t leaf_cell_number = 0;  // which member kind this pod is
  std::string node;
  std::vector<int32_t> leaf_cell_indices;
  // For every leaf: the cell type of the VC's preassigned cell it came from; empty for an
  // opportunistic leaf. Needed to rebuild the virtual binding after a restart.
  std::vector<std::string> preassigned_cell_types;
  // A MIG pod (docs/gpu-sharing.md, "MIG"): its instance on the GPU, the profile and the
  // first memory slice (`nvidia-smi mig -cgi <profile> ... ` at that placement start), so a
  // cluster manager can create it. Set in a running group's GroupStatus and GroupRecord
  // (Schedule's kPlaced placement names the GPU; the instance is chosen when the group
  // runs). Empty and -1 for any other pod.
  std::string mig_profile = {};
  int32_t mig_start = -1;
};

// A whole group's placement, pods ordered by `leaf_cell_number` ascending, then pod index.
// This is the record a cluster manager persists and hands back to `Allocate` on recovery.
struct Placement {
  std::string chain;  // the chain (top-level cell type) the group was placed in
  std::vector<PodPlacement> pods;
};

enum class Phase {
  kFiltering,   // decide only; never creates preemption state
  kPreempting,  // may start preempting victims (reserving their cells)
};

enum class Outcome {
  kPlaced,      // `placement` is ready; call `Allocate` to run the group
  kPreempting,  // `victims` must go first; the cells are reserved for this group
  kWaiting,     // cannot place now; `reason` says why and what is missing
  kInfeasible,  // can never be placed as asked (e.g. larger than the VC's cells); `reason`
};

// Why a group was not placed, as a code a program can branch on; `ScheduleResult::reason`
// carries the located message for people. When several chains were tried, the code is the
// first tried chain's (its message comes first in `reason`).
enum class ReasonCode {
  kNone,                  // kPlaced, or kPreempting in the Preempting phase
  kInsufficientCapacity,  // no node (virtual or physical) has enough usable leaf cells
  kBadNode,               // the next node that would fit is bad
  kNonSuggestedNode,      // the next node that would fit is not among the suggested nodes
  kBindingUnavailable,    // the VC's placement cannot be mapped to usable physical cells
  kPodTooLarge,           // kInfeasible: a pod needs more leaf cells than any node has
  kGroupTooLarge,         // kInfeasible: the group needs more leaf cells than the VC/chain
  kNoChain,               // no chain of the requested leaf cell type could be tried
  kReservationOverlap,    // Filtering: overlaps a Preempting group's reservation
  kReservationBlocked,    // a Preempting group's reservation is on a bad/non-suggested node
  kLazyDowngrade,         // Filtering, kPreempting: victims would be lazily downgraded
};

struct ScheduleResult {
  Outcome outcome = Outcome::kWaiting;
  Placement placement;               // kPlaced and kPreempting
  std::vector<std::string> victims;  // kPreempting: whole groups, sorted by name
  std::string reason;                // kWaiting and kInfeasible (and kLazyDowngrade)
  ReasonCode code = ReasonCode::kNone;
  // Preempting phase: the Preempting groups whose reservations this call cancelled because
  // the new decision overlaps them (a reserved group is never cancelled), sorted by name.
  // Each is told on its next `Schedule` (`cancelled_by`) and `Allocate` (the error).
  std::vector<std::string> cancelled;
  // The first `Schedule` of a group after another group's decision cancelled its
  // Preempting reservation: that group's name (the call then schedules it anew).
  std::string cancelled_by;
};

// Lower-case names, as in scenario files and reports: "placed", "preempting", "waiting",
// "infeasible". `absl::StrCat`/`absl::StrFormat("%v")` (Abseil 2023+) and `<<` use them.
constexpr const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPlaced:
      return "placed";
    case Outcome::kPreempting:
      return "preempting";
    case Outcome::kWaiting:
      return "waiting";
    case Outcome::kInfeasible:
      return "infeasible";
  }
  return "unknown";
}
template <typename Sink>
void AbslStringify(Sink& sink, Outcome outcome) {
  sink.Append(OutcomeName(outcome));
}
inline std::ostream& operator<<(std::ostream& os, Outcome outcome) {
  return os << OutcomeName(outcome);
}

// Phase: "filtering", "preempting" (as in scenario files).
constexpr const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kFiltering:
      return "filtering";
    case Phase::kPreempting:
      return "preempting";
  }
  return "unknown";
}
template <typename Sink>
void AbslStringify(Sink& sink, Phase phase) {
  sink.Append(PhaseName(phase));
}
inline std::ostream& operator<<(std::ostream& os, Phase phase) { return os << PhaseName(phase); }

// ReasonCode: the enumerator's name in lower case with '-' between words, without the 'k':
// "none", "insufficient-capacity", "bad-node", ..., "lazy-downgrade". Stable: fit for
// metrics labels and logs.
constexpr const char* ReasonCodeName(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNone:
      return "none";
    case ReasonCode::kInsufficientCapacity:
      return "insufficient-capacity";
    case ReasonCode::kBadNode:
      return "bad-node";
    case ReasonCode::kNonSuggestedNode:
      return "non-suggested-node";
    case ReasonCode::kBindingUnavailable:
      return "binding-unavailable";
    case ReasonCode::kPodTooLarge:
      return "pod-too-large";
    case ReasonCode::kGroupTooLarge:
      return "group-too-large";
    case ReasonCode::kNoChain:
      return "no-chain";
    case ReasonCode::kReservationOverlap:
      return "reservation-overlap";
    case ReasonCode::kReservationBlocked:
      return "reservation-blocked";
    case ReasonCode::kLazyDowngrade:
      return "lazy-downgrade";
  }
  return "unknown";
}
template <typename Sink>
void AbslStringify(Sink& sink, ReasonCode code) {
  sink.Append(ReasonCodeName(code));
}
inline std::ostream& operator<<(std::ostream& os, ReasonCode code) {
  return os << ReasonCodeName(code);
}

}  // namespace hived

#endif  // HIVED_SCHEDULE_RESULT_H_
