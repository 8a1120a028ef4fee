// src/physical_cells.h: the physical side of the cluster state (issue 27 item 4): per
// physical leaf the running group using it and the group reserving it, the physical leaf
// usage by priority, and per cell its node-level cell and (node-level cells) its position in
// its chain's physical view. This class is the only writer of all of them; `SchedulerImpl`,
// the Placer and the planner read them const.
//
// What it owns:
//  - `user(leaf)` / `reserver(leaf)`: the running group using a leaf and the reserved or
//    preempting group reserving it (`SetUser`, `SetReserver`). A leaf is Free (neither),
//    Used (user only), Reserving (both) or Reserved (reserver only);
//  - `usage()`: leaves used per priority in every physical cell (a `PriorityUsage`), written
//    per leaf by `SetLeafPriority`;
//  - `node_cell(c)`: the node-level cell at or above `c` (nil above node level), fixed at
//    `Build`;
//  - `view_pos(c)`: a node-level cell's position in its chain's physical view, fixed by
//    `AddViews`, which builds the physical views (one per chain, view id == chain id: the
//    node-level cells in topology order).
// The views themselves (`state::View`, src/cluster_state.h) are a shared record: the
// scheduler holds every view, physical ones first, then the VCs' (VirtualClusters::AddViews),
// and updates a view's histogram and node keys when a leaf's priority changes.
//
// Invariants (checked by CheckInvariants; tests/unit/scheduler/physical_cells_test.cc):
//  (1) Every per-cell array has one entry per physical cell; only leaf cells have a user or
//      a reserver.
//  (2) `node_cell(c)` is the node-level cell at or above `c` for every cell below or at node
//      level, nil for the cells above.
//  (3) Views: physical view `ch` lists the node-level cells of chain `ch`, each once, and
//      `view_pos(c)` is the position of node-level cell `c` in it; every other cell has -1.
//  (4) A leaf with neither user nor reserver is free in `usage()` (kFreePriority); a leaf
//      with either is used at some priority (which one is the scheduler's invariant: the
//      reserver's priority, else the user's running priority).
//  (5) `usage()` keeps its own invariants (cellalloc/priority_usage.h).
//
// Example:
//   PhysicalCells p;
//   p.Build(&forest);
//   p.AddViews(&views);
//   p.SetUser(leaf, group);
//   Priority old = p.SetLeafPriority(leaf, 5);
//
// Thread safety: not thread-safe; callers serialize (const reads may run concurrently).
#ifndef HIVED_SRC_PHYSICAL_CELLS_H_
#define HIVED_SRC_PHYSICAL_CELLS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "hived/types.h"
#include "src/cluster_state.h"
#include "src/group_table.h"  // GroupId, kNilId

namespace hived {

class PhysicalCells {
 public:
  using View = state::View;

  PhysicalCells() = default;
  PhysicalCells(const PhysicalCells&) = delete;
  PhysicalCells& operator=(const PhysicalCells&) = delete;

  // Every leaf free, nobody using or reserving anything; the node-level cells of `forest`
  // (which must outlive this object).
  void Build(const cellalloc::CellForest* forest);
  // Appends the physical views, one per chain in chain order (so view id == chain id), to
  // `views` (empty), and records each node-level cell's position.
  void AddViews(std::vector<View>* views);

  GroupId user(CellId leaf) const { return user_[leaf.value()]; }
  GroupId reserver(CellId leaf) const { return reserver_[leaf.value()]; }
  void SetUser(CellId leaf, GroupId g) { user_[leaf.value()] = g; }
  void SetReserver(CellId leaf, GroupId g) { reserver_[leaf.value()] = g; }

  // The node-level cell at or above `c`; nil above node level.
  CellId node_cell(CellId c) const { return CellId(node_cell_[c.value()]); }
  // A node-level cell's position in its chain's physical view; -1 for other cells.
  int32_t view_pos(CellId node_cell) const { return view_pos_[node_cell.value()]; }

  const cellalloc::PriorityUsage& usage() const { return usage_; }
  // Sets the priority leaf `leaf` is used at (kFreePriority: free); returns the old one.
  Priority SetLeafPriority(CellId leaf, Priority priority) {
    const Priority old = usage_.LeafPriority(leaf);
    if (old != priority) usage_.SetLeafPriority(leaf, priority);
    return old;
  }

  // Invariants 1-5; `views`: every view, the physical ones first (AddViews).
  absl::Status CheckInvariants(const std::vector<View>& views) const;

 private:
  const cellalloc::CellForest* forest_ = nullptr;
  cellalloc::PriorityUsage usage_;
  std::vector<GroupId> user_;        // per cell; leaves only
  std::vector<GroupId> reserver_;    // per cell; leaves only
  std::vector<uint32_t> node_cell_;  // the node-level cell at or above; kNilId above node
  std::vector<int32_t> view_pos_;    // node-level cells: position in the chain's view
};

}  // namespace hived

#endif  // HIVED_SRC_PHYSICAL_CELLS_H_
