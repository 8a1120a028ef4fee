// src/cluster_state.h: the plain records the scheduler's components share: a virtual cell
// and a view (the nodes one placement looks at). `VirtualClusters` (virtual_clusters.h)
// owns the virtual cells and is their only writer; `SchedulerImpl` owns the views (their
// usage keys and histograms; `VirtualClusters` adds the virtual views and keeps their
// nodes' health flags). The placement policy (`Placer`, src/placer.h) reads both const.
//
// Invariants (checked by CheckInvariants of VirtualClusters and SchedulerImpl):
//  (1) A virtual cell's children are `first_child .. first_child + num_children - 1`, all
//      with `parent` pointing back and `level` one lower (VirtualClusters 1).
//  (2) `bound` is Nil or a physical cell of the same chain and level, bound back to it
//      (VirtualClusters 2).
//  (3) A view's `index` has one position per entry of `nodes`, and `histogram` holds the
//      leaves used per priority (ascending, no zero entries) for virtual views.
#ifndef HIVED_SRC_CLUSTER_STATE_H_
#define HIVED_SRC_CLUSTER_STATE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "cellalloc/ids.h"
#include "hived/types.h"
#include "src/group_table.h"
#include "src/node_index.h"

namespace hived::state {

// A virtual cell; every VC's cells live in one arena, ids are `VCellId`.
struct VCell {
  VcId vc;
  ChainId chain;
  CellLevel level = 0;
  VCellId parent = kNilId;
  VCellId first_child = kNilId;
  int32_t num_children = 0;
  VCellId root = kNilId;  // the preassigned (or pinned) cell containing it
  int32_t index = 0;      // address component
  CellId bound;           // physical cell, Nil when unbound
  GroupId user = kNilId;  // leaves: the group holding it
  int32_t view = -1;      // view nodes: the view and position
  int32_t view_pos = -1;
  VCellId view_node = kNilId;  // leaves: the view node containing it
  int32_t bound_children = 0;
  CellTypeId type;
  bool pinned = false;     // inside a pinned cell
  bool bad_bound = false;  // bound because its physical cell is bad
  bool doomed = false;     // a root bound to a bad cell for the doomed-cell rule
  bool is_root = false;
  int32_t slot_pos = -1;  // roots: position in VcChainLevel::roots
};

// The nodes a placement chooses among: one VC's virtual nodes of a chain (or of a pinned
// cell), or a chain's physical nodes; `index` orders them (HiveD's node order).
struct View {
  VcId vc;  // Nil for a physical view
  ChainId chain;
  bool physical = false;
  std::vector<uint32_t> nodes;  // vcell ids or physical cell ids
  internal::NodeIndex index;
  int32_t total_leaves = 0;
  // Leaves used per priority (virtual views), sorted by priority.
  std::vector<std::pair<Priority, int32_t>> histogram;
  bool HasUsageBelow(Priority p) const { return !histogram.empty() && histogram.front().first < p; }
};

}  // namespace hived::state

#endif  // HIVED_SRC_CLUSTER_STATE_H_
