// src/placer.h: the intra-VC placement policy: which nodes a group's pods go to and which
// leaves inside each node (include/hived/scheduler.h rules 3-5). The seam for
// other intra-VC policies: it reads the cluster state const (views, virtual
// cells, leaf usage) and writes only its own per-request scratch.
//
// Contract: per request, the caller marks the suggested nodes (`suggested().Mark`), runs
// `FindNodes` on a view and `ChooseLeaves` per pod in each chosen node, then `ClearTaken()`
// and `suggested().Clear()`; nothing it returns depends on hash-map order.
//  - `FindNodes`: the greedy node choice on the view's `NodeIndex` (pass 1: free leaves only;
//    pass 2: also leaves used below priority q), eligible nodes only (healthy, suggested).
//    With a `NodeRoom` (src/node_room.h), a node takes a pod only when its CPU and host
//    memory hold it with the request's earlier pods on that node; a virtual node not bound
//    yet is checked after the binding is planned (Decide). On failure: a located reason and
//    its code (kNonSuggestedNode, kBadNode, kInsufficientCapacity).
//  - `ChooseLeaves`: in the lowest cell of the node holding `need` usable leaves (ties: more
//    free leaves, then depth-first order), free leaves first, then preemptible ones.
//
// Invariants (tests/unit/scheduler/placer_test.cc; CheckInvariants between calls):
//  (1) Between requests the scratch is empty: no suggested node marked, no leaf taken.
//  (2) Within a request, no leaf is chosen twice and a chosen leaf is free or used below q.
//  (3) Deciding costs O(levels × fan-out) per pod plus the node index scan; no sorting
//      per request.
//
// Thread safety: not thread-safe; one request at a time.
#ifndef HIVED_SRC_PLACER_H_
#define HIVED_SRC_PLACER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "hived/schedule_result.h"
#include "hived/types.h"
#include "src/cluster_state.h"
#include "src/node_room.h"
#include "src/suggested_nodes.h"
#include "src/taken_leaves.h"

namespace hived {

class Placer {
 public:
  Placer() = default;
  // Reads `forest`, `vcells` and the two usages, which must outlive it (and not move).
  Placer(const cellalloc::CellForest* forest, const std::vector<state::VCell>* vcells,
         const cellalloc::PriorityUsage* pusage, const cellalloc::PriorityUsage* vusage);

  SuggestedNodes& suggested() { return suggested_; }
  const SuggestedNodes& suggested() const { return suggested_; }

  // Names for explanations (only called when a choice fails): a virtual cell's address
  // and the view's VC name (empty for physical views).
  struct Names {
    absl::FunctionRef<std::string(uint32_t)> vaddress;
    std::string_view vc;
  };
  // The greedy node choice: per pod (`needs` ascending) a view position in `pod_node`;
  // `room` (may be null: no constraint) is the nodes' CPU and host memory.
  bool FindNodes(const state::View& view, const std::vector<int32_t>& needs, Priority q, bool pass1,
                 std::vector<int32_t>* pod_node, std::string* reason, ReasonCode* code,
                 const Names& names, const NodeRoom* room = nullptr) const;
  // The physical node of the view's node at `pos`; nil for a virtual node not bound yet.
  NodeId PhysicalNode(const state::View& view, int32_t pos) const;
  // Whether the view's node at `pos` may be used (suggested, when suggestions are given).
  bool NodeEligible(const state::View& view, int32_t pos) const;
  // Leaves the node at `pos` offers priority `q` (pass 1: free ones only).
  int32_t NodeFree(const state::View& view, int32_t pos, Priority q, bool pass1) const;
  // Appends `need` leaves (cell ids; virtual when !kPhysical) inside `node_cell` to `out`.
  template <bool kPhysical>
  void ChooseLeaves(uint32_t node_cell, int32_t need, Priority q, std::vector<uint32_t>* out);
  // Forgets the leaves taken by the request's pods (call once its leaves are chosen).
  void ClearTaken() {
    ptaken_.Clear();
    vtaken_.Clear();
  }
  // Invariant 1; kInternal naming the scratch left over.
  absl::Status CheckInvariants() const;

 private:
  const cellalloc::PriorityUsage& Usage(const state::View& v) const {
    return v.physical ? *pusage_ : *vusage_;
  }

  const cellalloc::CellForest* forest_ = nullptr;
  const std::vector<state::VCell>* v_ = nullptr;
  const cellalloc::PriorityUsage* pusage_ = nullptr;
  const cellalloc::PriorityUsage* vusage_ = nullptr;
  SuggestedNodes suggested_;
  TakenLeaves ptaken_;  // leaves taken per physical cell
  TakenLeaves vtaken_;  // and per virtual cell
};

}  // namespace hived

#endif  // HIVED_SRC_PLACER_H_
