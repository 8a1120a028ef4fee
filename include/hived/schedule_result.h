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
struct GroupMember {
  int32_t pod_number = 0;
  int32_t leaf_cell_number = 0;
};

// A request to place a whole group. Field meanings follow HiveD's pod scheduling spec.
struct GroupRequest {
  std::string name;              // unique among live groups
  std::string vc;                // the virtual cluster the group runs in
  Priority priority = 0;         // kOpportunisticPriority (-1) or 0..kMaxGuaranteedPriority
  std::string leaf_cell_type;    // empty: any leaf type the VC has
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

struct ScheduleResult {
  Outcome outcome = Outcome::kWaiting;
  Placement placement;               // kPlaced and kPreempting
  std::vector<std::string> victims;  // kPreempting: whole groups, sorted by name
  std::string reason;                // kWaiting and kInfeasible
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

}  // namespace hived

#endif  // HIVED_SCHEDULE_RESULT_H_
