// hived/status_view.h: read-only views of a scheduler's state, for status pages, metrics
// and tests. Plain values, copied out of the scheduler.
//
// Example:
//   for (const hived::NodeStatus& n : scheduler.Nodes())
//     std::cout << n.name << " " << n.free_leaf_cells << "/" << n.total_leaf_cells << "\n";
//
// Thread safety: plain values.
#ifndef HIVED_STATUS_VIEW_H_
#define HIVED_STATUS_VIEW_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "hived/schedule_result.h"
#include "hived/types.h"

namespace hived {

enum class CellState { kFree, kUsed, kReserving, kReserved };
enum class CellHealth { kHealthy, kBad };

enum class GroupState {
  kAbsent,         // never placed, released or cancelled
  kAllocated,      // running at its guaranteed priority
  kOpportunistic,  // running at priority -1 (asked for, or downgraded)
  kPreempting,     // waiting for its victims; holds a reservation
  kBeingPreempted  // chosen as a victim; still running until released
};

struct GroupStatus {
  std::string name;
  std::string vc;
  GroupState state = GroupState::kAbsent;
  Priority priority = 0;  // the priority it runs at now (-1 once downgraded)
  // The request as asked (`request.priority` is the original priority, also after a
  // downgrade; `suggested_nodes` is not kept). For kAbsent only `request.name` is set.
  GroupRequest request;
  Placement placement;
  std::string preemptor;         // for kBeingPreempted, or a lazily downgraded group
  std::string downgrade_reason;  // why a guaranteed group runs opportunistically
};

// What `Allocate` did.
struct AllocateInfo {
  bool downgraded = false;  // runs opportunistic although it asked for a guaranteed priority
  std::string reason;       // why, when downgraded
};

struct PhysicalCellStatus {
  std::string cell_type;
  std::string address;
  CellLevel level = 0;
  bool is_node_level = false;
  CellState state = CellState::kFree;
  CellHealth health = CellHealth::kHealthy;
  Priority priority = kFreePriority;
  std::string vc;            // the VC whose virtual cell is bound here, if any
  std::string virtual_cell;  // that virtual cell's address
  std::string pinned_cell_id;
  std::vector<PhysicalCellStatus> children;
};

struct VirtualCellStatus {
  std::string cell_type;
  std::string address;  // "<vc>/<n>/<i>..."
  CellLevel level = 0;
  CellState state = CellState::kFree;
  CellHealth health = CellHealth::kHealthy;
  Priority priority = kFreePriority;
  std::string physical_cell;  // bound physical cell's address; empty when unbound
  std::string pinned_cell_id;
  std::vector<VirtualCellStatus> children;
};

// Per VC and leaf type: reserved leaves and what its groups use now.
struct VcUsage {
  std::string vc;
  std::string leaf_cell_type;
  int32_t reserved_leaf_cells = 0;
  int32_t guaranteed_used_leaf_cells = 0;
  int32_t opportunistic_used_leaf_cells = 0;
};

// Per chain and level: physical cells, free, still obtainable (free or by splitting), bad
// free cells, and the VCs' reserved and unbound cells (the safety invariant compares these).
struct ChainLevelCapacity {
  std::string chain;
  CellLevel level = 0;
  std::string cell_type;
  int32_t total = 0;
  int32_t free = 0;
  int32_t obtainable = 0;
  int32_t bad_free = 0;
  int32_t vc_reserved = 0;
  int32_t vc_unbound = 0;
};

struct NodeStatus {
  std::string name;
  std::string leaf_cell_type;
  int32_t total_leaf_cells = 0;
  int32_t free_leaf_cells = 0;  // unused by any group (opportunistic included)
  bool healthy = true;
};

// Lower-case names, as in scenario files and reports. `absl::StrCat`/`absl::StrFormat("%v")`
// (Abseil 2023+) and `<<` use them.
// GroupState: "absent", "allocated", "opportunistic", "preempting", "being-preempted".
constexpr const char* GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kAbsent:
      return "absent";
    case GroupState::kAllocated:
      return "allocated";
    case GroupState::kOpportunistic:
      return "opportunistic";
    case GroupState::kPreempting:
      return "preempting";
    case GroupState::kBeingPreempted:
      return "being-preempted";
  }
  return "unknown";
}
// CellState: "free", "used", "reserving", "reserved".
constexpr const char* CellStateName(CellState state) {
  switch (state) {
    case CellState::kFree:
      return "free";
    case CellState::kUsed:
      return "used";
    case CellState::kReserving:
      return "reserving";
    case CellState::kReserved:
      return "reserved";
  }
  return "unknown";
}
template <typename Sink>
void AbslStringify(Sink& sink, GroupState state) {
  sink.Append(GroupStateName(state));
}
template <typename Sink>
void AbslStringify(Sink& sink, CellState state) {
  sink.Append(CellStateName(state));
}
inline std::ostream& operator<<(std::ostream& os, GroupState state) {
  return os << GroupStateName(state);
}
inline std::ostream& operator<<(std::ostream& os, CellState state) {
  return os << CellStateName(state);
}

}  // namespace hived

#endif  // HIVED_STATUS_VIEW_H_
