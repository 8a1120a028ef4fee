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
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "hived/schedule_result.h"
#include "hived/types.h"

namespace hived {

enum class CellState { kFree, kUsed, kReserving, kReserved };
enum class CellHealth { kHealthy, kBad };

enum class GroupState {
  kAbsent,          // never placed, released or cancelled
  kAllocated,       // running at its guaranteed priority
  kOpportunistic,   // running at priority -1 (asked for, or downgraded)
  kPreempting,      // waiting for its victims; holds a reservation
  kBeingPreempted,  // chosen as a victim; still running until released
  kReserved         // a kPlaced result held until Allocate or Unreserve (no victims)
};

// One allocated pod of a running group (issue 29; scheduler.h "Pods"): its name (unique
// within its group), its uid when it was given one, its slot (`index`, its pod in the
// group's placement) and where it runs.
struct PodStatus {
  std::string group;
  std::string name;
  std::string uid;
  int32_t index = 0;
  PodPlacement placement;  // node, leaf cell indices, preassigned cell types
};

// A pod's identity in its group (scheduler.h "Pods"): its slot (`index`: its pod in the
// group's `Placement::pods`, where it runs), its name (unique within the group) and its uid
// (optional). In views (`GroupStatus::pods`) and records (`GroupRecord::pods`).
struct PodIdentity {
  int32_t index = 0;
  std::string name;
  std::string uid;
  bool operator==(const PodIdentity& o) const {
    return index == o.index && name == o.name && uid == o.uid;
  }
};

struct GroupStatus {
  std::string name;
  std::string vc;
  GroupState state = GroupState::kAbsent;
  Priority priority = 0;  // the priority it runs at now (-1 once downgraded)
  // The request as asked (`request.priority` is the original priority, also after a
  // downgrade; `suggested_nodes` is not kept). For kAbsent only `request.name` is set.
  GroupRequest request;
  // A MIG pod names its instance in `mig_profile` / `mig_start` (once it holds one).
  Placement placement;
  std::string preemptor;         // for kBeingPreempted, or a lazily downgraded group
  std::string downgrade_reason;  // why a guaranteed group runs opportunistically
  // A running group's allocated pods, in slot order (scheduler.h "Pods"; each runs at
  // `placement.pods[index]`); empty for a reservation. A gang allocated whole (`Allocate`)
  // lists every pod, named by its index ("0", "1", ...).
  std::vector<PodIdentity> pods;
  // A reservation (kReserved, kPreempting) made by a timed `Schedule`: when it was made and
  // its deadline (`ExpireReservations`), in the caller's time unit; unset otherwise.
  std::optional<int64_t> reserved_at;
  std::optional<int64_t> reservation_deadline;
};

// What `Allocate` did.
struct AllocateInfo {
  bool downgraded = false;  // runs opportunistic although it asked for a guaranteed priority
  std::string reason;       // why, when downgraded
};

// One configured MIG instance of a GPU.
struct MigInstanceStatus {
  std::string profile;  // e.g. "3g.40gb"
  int32_t start = 0;    // its first memory slice
  std::string group;    // the group whose pod uses it (reserved included); empty: free
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
  // A leaf open for sharing (docs/gpu-sharing.md): its shares in thousandths, their GPU
  // memory, the holder group that took it ("hived-share/<n>") and the groups with shares
  // on it (ascending). Zero / empty for a leaf not open for sharing.
  int32_t shared_milli = 0;
  int64_t shared_gpu_memory_mib = 0;
  std::string sharing_holder;
  std::vector<std::string> sharers;
  // A GPU of a MIG type (docs/gpu-sharing.md, "MIG"): its configured instances by start
  // (open for sharing or not: a closed GPU keeps its layout, every instance free), and how
  // often its layout was created into and reconfigured (destroyed while idle).
  std::vector<MigInstanceStatus> mig_instances;
  int64_t mig_instances_created = 0;
  int64_t mig_reconfigurations = 0;
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

// A part of `PhysicalClusterTable::text`.
struct TextSpan {
  uint32_t offset = 0;
  uint32_t size = 0;
};

// One physical cell of a `PhysicalClusterTable`: the fields of `PhysicalCellStatus`, with
// names as indices into the table's lists and strings as spans of its text.
struct PhysicalCellRow {
  int32_t parent = -1;  // row of the parent cell; -1 for a top-level cell
  int32_t num_children = 0;
  CellLevel level = 0;
  bool is_node_level = false;
  CellState state = CellState::kFree;
  CellHealth health = CellHealth::kHealthy;
  Priority priority = kFreePriority;
  int32_t cell_type = 0;  // index into `cell_types`
  int32_t vc = -1;        // index into `vcs`; -1 when no VC's cell is bound here
  // This cell's address component: its explicit `cellAddress` ("node-7"), else the decimal
  // `default_index` (and `own_address` is empty).
  TextSpan own_address;
  int64_t default_index = 0;
  TextSpan virtual_cell;    // the bound virtual cell's address; empty when unbound
  TextSpan pinned_cell_id;  // empty when not pinned
};

// The whole physical cluster as one flat table: the same cells, states and names as
// `Scheduler::PhysicalCluster()`, in the same order (depth first: a cell, then its
// children's subtrees), but built in one pass without a tree of strings, about 10x cheaper
// at 100k GPUs (bench/views_bench.cc). A cell's full address is its ancestors' components
// joined by '/': `Address(row)`. Plain data: copies are independent of the scheduler.
struct PhysicalClusterTable {
  std::vector<std::string> cell_types;
  std::vector<std::string> vcs;
  std::vector<PhysicalCellRow> rows;
  std::string text;

  std::string_view Text(TextSpan s) const {
    return std::string_view(text).substr(s.offset, s.size);
  }
  // The cell's own address component.
  std::string OwnAddress(size_t row) const {
    const PhysicalCellRow& r = rows[row];
    return r.own_address.size > 0 ? std::string(Text(r.own_address))
                                  : std::to_string(r.default_index);
  }
  // The cell's full address, as in PhysicalCellStatus::address. O(levels).
  std::string Address(size_t row) const {
    std::string out = OwnAddress(row);
    for (int32_t p = rows[row].parent; p >= 0; p = rows[static_cast<size_t>(p)].parent) {
      out.insert(0, "/").insert(0, OwnAddress(static_cast<size_t>(p)));
    }
    return out;
  }
};

// Leaf cells (devices) by what holds them: free + used + reserved == total. `opportunistic`
// and `bad` count within those.
struct LeafCounts {
  int32_t total = 0;
  int32_t free = 0;           // no group uses or reserves it (CellState kFree)
  int32_t used = 0;           // a running group uses it (kUsed, or kReserving: also reserved)
  int32_t reserved = 0;       // reserved (a reserved or preempting group) and not used (kReserved)
  int32_t opportunistic = 0;  // of `used`: by opportunistic groups, not reserved (chains only)
  int32_t bad = 0;            // on bad nodes, whatever their state
};

// One chain's physical cells.
struct ChainSummary {
  std::string chain;
  std::string leaf_cell_type;
  int32_t nodes = 0;
  int32_t bad_nodes = 0;
  LeafCounts leaves;
  // MIG (docs/gpu-sharing.md): instances created on the chain's GPUs and reconfigurations
  // (a GPU's idle layout destroyed for a profile it had no room for; a drain on real GPUs).
  int64_t mig_instances_created = 0;
  int64_t mig_reconfigurations = 0;
};

// One VC's cells in one chain. `leaves` counts its virtual leaves (its guarantee, pinned
// cells included): `used` by its running guaranteed groups, `reserved` held by its
// reserved and preempting groups (whether or not a victim still runs there); `bad` counts the
// leaves of bad nodes inside the physical cells bound to it. Its opportunistic groups run outside
// its guarantee: `opportunistic_used_leaf_cells` physical leaves of the chain.
struct VcSummary {
  std::string vc;
  std::string chain;
  std::string leaf_cell_type;
  LeafCounts leaves;
  int32_t opportunistic_used_leaf_cells = 0;
};

// Lower-case names, as in scenario files and reports. `absl::StrCat`/`absl::StrFormat("%v")`
// (Abseil 2023+) and `<<` use them.
// GroupState: "absent", "allocated", "opportunistic", "preempting", "being-preempted",
// "reserved".
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
    case GroupState::kReserved:
      return "reserved";
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
// CellHealth: "healthy", "bad".
constexpr const char* CellHealthName(CellHealth health) {
  switch (health) {
    case CellHealth::kHealthy:
      return "healthy";
    case CellHealth::kBad:
      return "bad";
  }
  return "unknown";
}
template <typename Sink>
void AbslStringify(Sink& sink, CellHealth health) {
  sink.Append(CellHealthName(health));
}
inline std::ostream& operator<<(std::ostream& os, CellHealth health) {
  return os << CellHealthName(health);
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
