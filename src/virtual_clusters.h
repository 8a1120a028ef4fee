// src/virtual_clusters.h: the virtual clusters: every VC's virtual cell tree (one arena,
// ids `VCellId`), the leaf usage by priority over it, the VCs' preassigned cells per chain
// and level with their unbound sets and free counters (the safety check's input), the
// doomed lists, and the binding between virtual and physical cells. This class is the only
// writer of all of them; `SchedulerImpl` and the placement policy read them const.
//
// What it owns:
//  - the arena `cells()` (`state::VCell`: tree links, binding, holder, view position, marks);
//  - `usage()`: leaves used per priority in every virtual cell (a `PriorityUsage`);
//  - per VC (`vcs()`, by name `FindVc`): per chain and level the preassigned cells in
//    config order (`ChainLevel::roots`), the positions of the unbound ones (`unbound`), their
//    number (`free`, HiveD's vcFreeCellNum), the doomed ones; the pinned cells; the VC's
//    views; and `all_free(chain)[level]`, the unbound preassigned cells of all VCs;
//  - `p_bound()`: per physical cell the virtual cell bound to it (`BoundTo`), or kNilId.
// What it writes elsewhere, as a consequence of binding: preassigned cells are taken from
// and given back to the `BuddyAllocator` (`AllocateCell` / `Release`); `Health` hears of
// bad cells bound and of chains to rebalance; a virtual view node's health flag in its
// view's `NodeIndex` follows its binding.
//
// Invariants (checked by CheckInvariants; tests/unit/scheduler/virtual_clusters_test.cc):
//  (1) Tree: a cell's children are `first_child .. first_child + num_children - 1`, each
//      with `parent` pointing back, `level` one lower and the same `root`, VC and chain.
//  (2) Binding is symmetric (src/scheduler_impl.h invariant 4): `cells()[v].bound == p` iff
//      `p_bound()[p] == v`; both have the same level and chain; a bound cell's parent is
//      bound, to the physical parent; `bound_children` counts the bound children.
//  (3) A bound preassigned cell holds its physical cell in the allocator (kUsed); a pinned
//      cell is always bound.
//  (4) Per VC, chain and level: `unbound` holds exactly the positions of the unbound
//      preassigned cells and `free` is their number; `all_free(ch)` is the sum over the VCs.
//  (5) Safety (src/scheduler_impl.h invariant 3): per chain and level, the allocator's obtainable
//      cells >= `all_free(ch)`; jointly, top-down, the free cells left after every VC takes
//      its unbound cells of a level can still be split into what the levels below need.
//  (6) Doomed: a doomed cell is a bound, bad-bound, non-pinned preassigned cell listed once
//      in its `ChainLevel::doomed`; `Health::doomed(ch)` counts the chain's doomed cells.
//  (7) A virtual view node is marked healthy in its view iff it is unbound or bound to a
//      healthy physical cell.
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SRC_VIRTUAL_CLUSTERS_H_
#define HIVED_SRC_VIRTUAL_CLUSTERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/index_set.h"
#include "cellalloc/priority_usage.h"
#include "hived/cluster_spec.h"
#include "hived/types.h"
#include "src/cluster_state.h"
#include "src/health.h"

namespace hived {

class VirtualClusters {
 public:
  using VCell = state::VCell;
  using View = state::View;

  // Per VC, chain and level: the VC's preassigned (non-pinned) cells.
  struct ChainLevel {
    std::vector<VCellId> roots;  // config order
    internal::IndexSet unbound;  // positions in `roots` of unbound cells
    int32_t free = 0;            // unbound preassigned cells (vcFreeCellNum)
    int32_t reserved = 0;        // all preassigned cells incl. pinned
    std::vector<VCellId> doomed;
  };

  struct Vc {
    std::string name;
    // [chain][level]
    std::vector<std::vector<ChainLevel>> cl;
    std::vector<int32_t> chain_view;  // per chain: view id or -1
    std::vector<VCellId> roots;       // every preassigned cell, non-pinned first, config order
    absl::flat_hash_map<std::string, VCellId> pinned;  // pinned id -> root
    absl::flat_hash_map<std::string, int32_t> pinned_view;
  };

  VirtualClusters() = default;
  VirtualClusters(const VirtualClusters&) = delete;
  VirtualClusters& operator=(const VirtualClusters&) = delete;

  // Construction, in three steps (virtual_clusters_build.cc).
  // Builds every VC's cells from `spec` (VCs in config order; per VC its preassigned cells
  // then its pinned cells, each a subtree of consecutive ids) and the usage over them;
  // binds nothing. `forest`, `buddy` and `health` must outlive this object.
  // Errors: kInvalidArgument naming the spec path (duplicate VC, unknown chain or type,
  // negative cellNumber, unknown or repeated pinned cell).
  absl::Status Build(const ClusterSpec& spec, const cellalloc::CellForest* forest,
                     cellalloc::BuddyAllocator* buddy, Health* health);
  // Appends the virtual views to `views` (per VC: one per chain holding preassigned cells,
  // then one per pinned cell in config order) and keeps `views` for invariant 7.
  void AddViews(const ClusterSpec& spec, std::vector<View>* views);
  // Binds the pinned cells for good, then checks safety (invariant 5) of the result.
  // Errors: kInvalidArgument (overlapping pinned cells, too few physical cells for a level).
  absl::Status BindPinned();

  // Const queries; ids must be valid (`FindVc` returns Nil for an unknown name).
  const std::vector<VCell>& cells() const { return cells_; }
  const VCell& cell(VCellId v) const { return cells_[v]; }
  const std::vector<Vc>& vcs() const { return vcs_; }
  const Vc& vc(VcId id) const { return vcs_[id.value()]; }
  VcId FindVc(absl::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? VcId::Nil() : it->second;
  }
  const std::vector<VCellId>& p_bound() const { return p_bound_; }
  VCellId BoundTo(CellId p) const { return p_bound_[p.value()]; }
  // Per level of chain `ch`: the unbound preassigned cells of all VCs.
  const std::vector<int32_t>& all_free(ChainId ch) const { return all_free_[ch.value()]; }
  const cellalloc::PriorityUsage& usage() const { return usage_; }
  // Counts BindCell and UnbindCell calls (a change invalidates cached decisions).
  uint64_t binding_changes() const { return binding_changes_; }
  // "VC1/0/3": the VC's name, then the index of each cell from the root down.
  std::string Address(VCellId v) const;

  // Invariant 5 (both halves) for chain `ch`.
  bool SafetyOk(ChainId ch) const;
  // Invariant 5 for a chain of fan-outs `info.child_count` whose allocator would have
  // `obtainable[l]` cells and whose VCs `unbound[l]` unbound preassigned cells at level `l`
  // (index 0 unused): top-down, the obtainable cells of each level cover its unbound cells
  // and those the unbound cells above split into. (A free cell holds the same number of
  // level-l cells wherever it sits, so this is the joint check of CheckInvariants.) For a
  // binding planned but not applied (src/recovery.cc).
  static bool SafetyOk(const cellalloc::ChainInfo& info, const std::vector<int32_t>& obtainable,
                       const std::vector<int32_t>& unbound);
  // True when `v` is bound and nothing keeps it bound (not pinned, not doomed, no bound
  // child, no usage, not mirroring a cell that is still bad).
  bool CanUnbind(VCellId v) const;

  // Sets virtual leaf `v`'s holder and priority in the usage; returns the old priority.
  Priority SetLeaf(VCellId v, Priority p, GroupId user) {
    const Priority old = usage_.LeafPriority(CellId(v));
    cells_[v].user = user;
    if (old != p) usage_.SetLeafPriority(CellId(v), p);
    return old;
  }

  // Binding (virtual_clusters.cc). REQUIRES (HIVED_CHECK): `v` and `p` unbound.
  void BindCell(VCellId v, CellId p);
  void UnbindCell(VCellId v);
  // Unbinds `v` and its ancestors while `CanUnbind`; a preassigned cell goes back to the
  // allocator. Marks the chain dirty when the path holds a doomed cell.
  void UnbindUp(VCellId v);
  // Binds leaf `v` to `p` and their unbound ancestors pairwise, up to a bound cell (which
  // must be bound to the matching physical ancestor) or a preassigned cell, taken from the
  // allocator (`AllocatePreassigned`).
  void BindLeafPath(VCellId v, CellId p);
  // REQUIRES (HIVED_CHECK): the allocator can allocate `p`.
  void AllocatePreassigned(VCellId root, CellId p);
  void ReleasePreassigned(VCellId root);
  // Unbinds every bound cell below `v`, and `v` itself unless it is preassigned.
  void UnbindSubtree(VCellId v);
  // Marks a bound cell as mirroring a bad cell (or not); restoring saved bindings.
  void SetBadBound(VCellId v, bool bad) { cells_[v].bad_bound = bad; }
  // Makes bound preassigned cell `root` doomed (restoring saved doomed marks).
  void MarkDoomed(VCellId root);
  // After the allocator changed the health of `changed` (lowest level first, as
  // `BuddyAllocator::SetNodeHealthy` returns them): invariant 7 for the cells bound to
  // them; newly bad cells under a bound parent are noted for mirroring; healed cells
  // bound only as mirrors (not doomed, nothing else keeps them) are unbound, up the path.
  void HealthChanged(const std::vector<CellId>& changed, bool healthy);

  // The binding side of health (virtual_clusters_health.cc): the work `Health` holds.
  // Binds bad children of cells bound since the last call (free virtual children mirror
  // them); runs once every leaf of an operation is bound, so it never takes a virtual
  // cell a placement needs.
  void FlushBadChildren();
  // Rebalances doomed cells of the dirty chains: per level and VC, healed unused doomed
  // cells go back; unbound cells that healthy cells cannot back are bound to bad free
  // cells; doomed cells go back while healthy cells suffice again.
  void FlushDoomed();

  // Invariants 1-7 (and the usage's own).
  absl::Status CheckInvariants() const;

  // For tests: the arena, writable, to corrupt a state.
  std::vector<VCell>* MutableCellsForTesting() { return &cells_; }

 private:
  ChainLevel& SlotOf(VCellId root) {
    const VCell& r = cells_[root];
    return vcs_[r.vc.value()].cl[r.chain.value()][static_cast<size_t>(r.level)];
  }
  // A preassigned or pinned cell of `level` and its subtree; `level_counters` hands out
  // the address indices per level.
  VCellId NewVirtualSubtree(VcId vc, ChainId ch, CellLevel level,
                            std::vector<int32_t>* level_counters);
  void UpdateNodeHealth(VCellId v);  // invariant 7 for `v`
  void BindBadChildren(VCellId v, CellId p);
  void RebalanceDoomed(ChainId ch);
  absl::Status CheckBinding() const;
  absl::Status CheckCounters() const;

  const cellalloc::CellForest* forest_ = nullptr;
  cellalloc::BuddyAllocator* buddy_ = nullptr;
  Health* health_ = nullptr;
  std::vector<View>* views_ = nullptr;

  std::vector<VCell> cells_;
  cellalloc::PriorityUsage usage_;
  std::vector<Vc> vcs_;
  absl::flat_hash_map<std::string, VcId> by_name_;
  std::vector<std::vector<int32_t>> all_free_;  // [chain][level]
  std::vector<VCellId> p_bound_;
  std::vector<std::pair<VCellId, CellId>> pinned_;  // Build -> BindPinned: roots, cells
  uint64_t binding_changes_ = 0;
};

}  // namespace hived

#endif  // HIVED_SRC_VIRTUAL_CLUSTERS_H_
