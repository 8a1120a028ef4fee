// cellalloc/cell_forest.h: the physical cell forest derived from a ClusterSpec.
//
// The forest is immutable topology: every physical cell of every chain, with its type,
// level, chain, parent, children, address, node and device index. Cells live in flat
// arrays indexed by `CellId` (dense 32-bit ids) in breadth-first order: top-level cells
// first (ids 0..T-1 in config order), then their children, and so on. Hence
//   - each cell's children have consecutive ids
//     (`first_child(c) .. first_child(c) + num_children(c) - 1`), in config order;
//   - a parent's id is smaller than its children's ids;
//   - the descendants of a cell at any one level have consecutive ids; in particular the
//     leaves of a cell are `first_leaf(c) .. first_leaf(c) + leaf_count(c) - 1`.
// Top-level cells of one chain appear in `chain_info(ch).top_cells` in config order.
//
// Derivation follows HiveD (hived-reference.md §1.2):
//  1. A type referenced as a child but not defined is a leaf type (level 1, one leaf);
//     level(T) = level(child) + 1; leaf_count(T) = leaf_count(child) * childCellNumber.
//  2. Missing children (`cellChildren` empty) are generated: `childCellNumber` of them.
//  3. Each cell has a *default index*: a top-level cell's is its position in
//     `physicalCells`; child k of cell p gets `base * childCellNumber(p) + k`, where base is
//     p's default index, or 0 when p is node-level (so leaves under a node default to
//     0..N-1 while cells above node get indices like 14, 15 for children of top cell #7).
//     The default index is positional: an explicit address never changes it.
//  4. A cell's own address component is its explicit `cellAddress` if given, else its
//     default index; its address is `<parent address>/<own>` (just `<own>` at top level).
//  5. A node-level cell's node name is the last `/`-component of its address; a node may
//     hold node-level cells of several chains (e.g. two device types), but at most one per
//     chain. A leaf's device index is the last component of its address, which must be a
//     non-negative integer (explicit values such as 8, 9 or scrambled orders are kept).
// Stricter than HiveD (these configs would misbehave there): a cell must list either no
// children or exactly `childCellNumber` of them. HiveD accepts fewer, silently giving the
// cell fewer leaves than its type says, which breaks every count that assumes a type's
// leaf count (VC capacity, safety, "a node has 8 GPUs"); no shipped HiveD config does it,
// so validation (`ValidateClusterSpec`) rejects it with a located error instead.
//
// Example:
//   absl::StatusOr<CellForest> forest = CellForest::Build(spec);
//   for (CellId top : forest->chain_info(ChainId(0)).top_cells) ...
//
// Thread safety: immutable after Build; safe to share between threads.
//
// Invariants (checked by CheckInvariants):
//  (1) parent(child) == c for every child of c; level(child) == level(c) - 1; a parent's
//      id is smaller than its children's.
//  (2) num_children(c) == the type's child count; leaves have level 1 and no children.
//  (3) leaf_count(c) == sum of the children's leaf counts (1 for a leaf), and the leaves
//      of c are the consecutive ids starting at first_leaf(c).
//  (4) Exactly one node-level cell on every root-to-leaf path; cells at or below it carry
//      its NodeId, cells above carry NodeId::Nil().
#ifndef HIVED_CELLALLOC_CELL_FOREST_H_
#define HIVED_CELLALLOC_CELL_FOREST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cellalloc/ids.h"
#include "hived/cluster_spec.h"
#include "hived/types.h"

namespace hived::cellalloc {

struct CellTypeInfo {
  std::string name;
  CellTypeId child;  // Nil for a leaf type
  int32_t child_count = 0;
  CellLevel level = 1;
  int32_t leaf_count = 1;      // leaves in one cell of this type
  bool is_node_level = false;  // exactly one node
  bool above_node = false;     // spans several nodes (strictly above node level)
  std::string leaf_type;       // the leaf type at the bottom of this type's chain
};

struct ChainInfo {
  std::string name;  // the top-level cell type's name
  CellTypeId top_type;
  CellLevel top_level = 1;
  CellLevel node_level = 1;  // level of the node-level type in this chain
  std::string leaf_type;
  // types[l] is the type at level l (types[0] unused), for 1 <= l <= top_level.
  std::vector<CellTypeId> types;
  // child_count[l] is the fan-out of a level-l cell (0 at level 1).
  std::vector<int32_t> child_count;
  std::vector<CellId> top_cells;  // config order
  // cells_at_level[l] = number of physical cells at level l in this chain.
  std::vector<int32_t> cells_at_level;
};

class CellForest {
 public:
  // Largest forest Build accepts (a guard against specs that would exhaust memory).
  static constexpr int64_t kMaxCells = int64_t{1} << 26;

  // Derives the forest, with the type table, default addresses and device indices of the
  // hierarchy module (hierarchy/spec_analysis.h), the one place those rules live.
  // REQUIRES: `spec` passed `ValidateClusterSpec` (Scheduler::Create validates once, before
  // this). The build trusts it and keeps only defensive checks: a spec that breaks a rule
  // anyway (unknown, duplicate or cyclic types, wrong children, bad leaf addresses, duplicate
  // nodes, device indices or pinned ids, more than kMaxCells cells) gives kInternal naming
  // the spec path, e.g. "physicalCluster.physicalCells[2].cellChildren[0]"; never a crash.
  static absl::StatusOr<CellForest> Build(const ClusterSpec& spec);

  // Cells.
  int32_t num_cells() const { return static_cast<int32_t>(type_.size()); }
  CellLevel level(CellId c) const { return types_[type_[c.value()]].level; }
  ChainId chain(CellId c) const { return ChainId(chain_[c.value()]); }
  CellTypeId type(CellId c) const { return CellTypeId(type_[c.value()]); }
  CellId parent(CellId c) const { return CellId(parent_[c.value()]); }
  // Nil for a leaf.
  CellId first_child(CellId c) const { return CellId(first_child_[c.value()]); }
  int32_t num_children(CellId c) const { return types_[type_[c.value()]].child_count; }
  CellId child(CellId c, int32_t k) const {
    return CellId(first_child_[c.value()] + static_cast<uint32_t>(k));
  }
  int32_t leaf_count(CellId c) const { return types_[type_[c.value()]].leaf_count; }
  // The first of c's leaves (c itself for a leaf); its leaves have consecutive ids. O(levels).
  CellId first_leaf(CellId c) const;
  // The node this cell is on (cells at or below node level); Nil above node level.
  NodeId node(CellId c) const { return NodeId(node_[c.value()]); }
  bool is_node_level(CellId c) const { return types_[type_[c.value()]].is_node_level; }
  // Device index of a leaf; -1 for non-leaves.
  int32_t leaf_index(CellId c) const { return leaf_index_[c.value()]; }
  // HiveD's address, e.g. "3/1.0.0.0/1/1/3". Built on demand in O(levels) (addresses are
  // not stored per cell, to keep the forest small), hence returned by value.
  std::string address(CellId c) const;
  // This cell's own address component (explicit `cellAddress` or its default index).
  std::string own_address(CellId c) const;
  // The explicit `cellAddress` of `c`; nullptr when its component is the default index
  // (for callers that derive default indices themselves, walking down the forest).
  const std::string* explicit_address(CellId c) const {
    auto it = explicit_address_.find(c.value());
    return it == explicit_address_.end() ? nullptr : &it->second;
  }
  // Every explicit `cellAddress` and every `pinnedCellId`, by cell id (unordered).
  const absl::flat_hash_map<uint32_t, std::string>& explicit_addresses() const {
    return explicit_address_;
  }
  const absl::flat_hash_map<uint32_t, std::string>& pinned_ids() const { return pinned_id_; }
  // Empty when the cell is not pinned.
  const std::string& pinned_id(CellId c) const;
  // The top-level cell containing `c` (itself for a top-level cell). O(levels).
  CellId top_cell(CellId c) const;
  // The spec path of a cell, e.g. "physicalCluster.physicalCells[3].cellChildren[1]".
  std::string SpecPath(CellId c) const;

  // Types: the defined types in config order, then the leaf types.
  int32_t num_types() const { return static_cast<int32_t>(types_.size()); }
  const CellTypeInfo& type_info(CellTypeId t) const { return types_[t.value()]; }
  CellTypeId FindType(std::string_view name) const;  // Nil when unknown

  // Chains, in the order their first top-level cell appears in the config.
  int32_t num_chains() const { return static_cast<int32_t>(chains_.size()); }
  const ChainInfo& chain_info(ChainId ch) const { return chains_[ch.value()]; }
  ChainId FindChain(std::string_view name) const;  // Nil when unknown
  // Leaf types in config order (of first mention in `cellTypes`), and the chains of each
  // (config order). Unknown leaf types have no chains.
  const std::vector<std::string>& leaf_types() const { return leaf_types_; }
  const std::vector<ChainId>& ChainsOfLeafType(std::string_view leaf_type) const;

  // Nodes, in the order they first appear in the config. A node may hold cells of several
  // chains (e.g. two device types); `node_cells` lists its node-level cells (config order).
  int32_t num_nodes() const { return static_cast<int32_t>(node_names_.size()); }
  const std::string& node_name(NodeId n) const { return node_names_[n.value()]; }
  NodeId FindNode(std::string_view name) const;  // Nil when unknown
  const std::vector<CellId>& node_cells(NodeId n) const { return node_cells_[n.value()]; }

  // The leaf with device index `index` on `node` in chain `ch`; Nil when there is none.
  // O(node cells + leaves per node).
  CellId FindLeaf(ChainId ch, NodeId node, int32_t index) const;
  // The pinned cell with this id; Nil when unknown.
  CellId FindPinned(std::string_view pinned_id) const;

  absl::Status CheckInvariants() const;

  // Bytes held by the forest's arrays and maps (capacity, not size), for the memory
  // benchmark.
  size_t MemoryBytes() const;

 private:
  friend class ForestBuilder;
  friend class BuddyAllocator;  // CheckInvariants reads the per-cell arrays directly
  CellForest() = default;

  // The default index of rule 3, recomputed in O(levels) (64-bit: above node level it
  // grows with the product of fan-outs).
  int64_t DefaultIndex(CellId c) const;

  // Per cell (struct of arrays, indexed by CellId::value()): 20 bytes a cell.
  std::vector<uint16_t> type_;
  std::vector<uint16_t> chain_;
  std::vector<uint32_t> parent_;       // Nil for top-level cells
  std::vector<uint32_t> first_child_;  // Nil for leaves
  std::vector<uint32_t> node_;         // Nil above node level
  std::vector<int32_t> leaf_index_;    // -1 for non-leaves
  // Explicit `cellAddress` values (as written), only for cells that have one.
  absl::flat_hash_map<uint32_t, std::string> explicit_address_;
  absl::flat_hash_map<uint32_t, std::string> pinned_id_;  // cell -> id, few entries

  std::vector<CellTypeInfo> types_;
  absl::flat_hash_map<std::string, CellTypeId> type_by_name_;
  std::vector<ChainInfo> chains_;
  absl::flat_hash_map<std::string, ChainId> chain_by_name_;
  std::vector<std::string> leaf_types_;
  absl::flat_hash_map<std::string, std::vector<ChainId>> chains_of_leaf_type_;
  std::vector<std::string> node_names_;
  absl::flat_hash_map<std::string, NodeId> node_by_name_;
  std::vector<std::vector<CellId>> node_cells_;
  absl::flat_hash_map<std::string, CellId> pinned_by_id_;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_CELL_FOREST_H_
