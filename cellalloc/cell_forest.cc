#include "cellalloc/cell_forest.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hierarchy/spec_analysis.h"
#include "hived/config.h"

namespace hived::cellalloc {
namespace {

constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();
constexpr int32_t kMaxTypes = std::numeric_limits<uint16_t>::max() - 1;

absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string TypePath(size_t i) { return absl::StrCat("physicalCluster.cellTypes[", i, "]"); }

// The build trusts a spec the hierarchy accepted (`ValidateClusterSpec`); a spec that breaks
// a rule anyway is a caller's bug, reported as kInternal naming the first problem found.
absl::Status NotValidated(std::string_view path, std::string_view message) {
  return absl::InternalError(absl::StrCat(
      "spec not validated (run ValidateClusterSpec first): ", ToAbsl(path), ": ", ToAbsl(message)));
}

// The part after the last '/' (the whole string when there is none).
std::string_view LastComponent(std::string_view address) {
  size_t slash = address.rfind('/');
  return slash == std::string_view::npos ? address : address.substr(slash + 1);
}

}  // namespace

// Builds a CellForest; the only code that writes a forest's private arrays.
class ForestBuilder {
 public:
  explicit ForestBuilder(const ClusterSpec& spec) : spec_(spec) {}

  absl::StatusOr<CellForest> Build() {
    if (absl::Status s = BuildTypes(); !s.ok()) return s;
    if (absl::Status s = BuildChains(); !s.ok()) return s;
    if (absl::Status s = BuildCells(); !s.ok()) return s;
    if (absl::Status s = AssignNodes(); !s.ok()) return s;
    if (absl::Status s = CheckDeviceIndices(); !s.ok()) return s;
    return std::move(f_);
  }

 private:
  // The types as the hierarchy derives them: defined types in config order get ids
  // 0..n-1; leaf types follow in order of mention.
  absl::Status BuildTypes() {
    std::vector<ConfigError> problems;
    const hierarchy::TypeTable table =
        hierarchy::AnalyzeCellTypes(spec_, &problems, /*max_levels=*/kMaxTypes);
    if (!problems.empty()) return NotValidated(problems[0].yaml_path, problems[0].message);
    const size_t n = table.types.size();
    if (n > static_cast<size_t>(kMaxTypes))
      return NotValidated("physicalCluster.cellTypes", "too many cell types");
    node_levels_.assign(n, 0);
    subtree_cells_.assign(n, 1);
    for (size_t t = 0; t < n; ++t) {
      const hierarchy::TypeInfo& type = table.types[t];
      if (!type.usable) return NotValidated(TypePath(t), "the cell type is not well defined");
      if (type.leaf_count > std::numeric_limits<int32_t>::max()) {
        return NotValidated(TypePath(t),
                            absl::StrCat("cell type '", type.name, "' has ", type.leaf_count,
                                         " leaves, more than 2^31-1"));
      }
      CellTypeInfo info;
      info.name = type.name;
      info.child =
          type.child < 0 ? CellTypeId::Nil() : CellTypeId(static_cast<uint32_t>(type.child));
      info.child_count = type.child_number;
      info.level = type.level;
      info.leaf_count = static_cast<int32_t>(type.leaf_count);
      info.is_node_level = type.is_node_level;
      info.above_node = type.child >= 0 && table.types[static_cast<size_t>(type.child)].has_node;
      info.leaf_type = table.types[static_cast<size_t>(type.leaf)].name;
      f_.type_by_name_.emplace(type.name, CellTypeId(static_cast<uint32_t>(t)));
      f_.types_.push_back(std::move(info));
      if (type.spec_index < 0) f_.leaf_types_.push_back(type.name);
      node_levels_[t] = type.node_levels;
      subtree_cells_[t] = std::min(CellForest::kMaxCells + 1, type.cell_count);
    }
    return absl::OkStatus();
  }

  // One chain per distinct top-level type, in order of first appearance.
  absl::Status BuildChains() {
    const std::vector<PhysicalCellSpec>& tops = spec_.physical_cells;
    if (tops.size() > static_cast<size_t>(CellForest::kMaxCells)) {
      return NotValidated("physicalCluster.physicalCells", "too many physical cells");
    }
    int64_t total = 0;
    for (size_t i = 0; i < tops.size(); ++i) {
      const std::string path = absl::StrCat("physicalCluster.physicalCells[", i, "]");
      const std::string& name = tops[i].cell_type;
      if (name.empty()) return NotValidated(path, "a top-level physical cell needs a cellType");
      auto it = f_.type_by_name_.find(name);
      if (it == f_.type_by_name_.end() || f_.types_[it->second.value()].child.IsNil()) {
        return NotValidated(path, absl::StrCat("physicalCells contains unknown cellType '", name,
                                               "' (not defined in physicalCluster.cellTypes)"));
      }
      const size_t t = it->second.value();
      if (node_levels_[t] == 0) {
        return NotValidated(path, absl::StrCat("top cell must be node-level or above: no type on "
                                               "the path from '",
                                               name, "' down to its leaves has isNodeLevel"));
      }
      if (node_levels_[t] > 1) {
        std::string nodes;
        for (size_t u = t; !f_.types_[u].child.IsNil(); u = f_.types_[u].child.value()) {
          if (f_.types_[u].is_node_level)
            absl::StrAppend(&nodes, nodes.empty() ? "" : ", ", f_.types_[u].name);
        }
        return NotValidated(path, absl::StrCat("cell type '", name, "' has ", node_levels_[t],
                                               " node-level types below it (", nodes,
                                               "); a chain needs exactly one"));
      }
      total += subtree_cells_[t];
      if (total > CellForest::kMaxCells) {
        return NotValidated(path, absl::StrCat("the physical cluster has more than ",
                                               CellForest::kMaxCells, " cells"));
      }
      auto [chain_it, inserted] =
          f_.chain_by_name_.emplace(name, ChainId(static_cast<uint32_t>(f_.chains_.size())));
      if (inserted) {
        ChainInfo chain;
        chain.name = name;
        chain.top_type = it->second;
        const CellTypeInfo& top = f_.types_[t];
        chain.top_level = top.level;
        chain.leaf_type = top.leaf_type;
        chain.types.assign(static_cast<size_t>(top.level) + 1, CellTypeId::Nil());
        chain.child_count.assign(static_cast<size_t>(top.level) + 1, 0);
        chain.cells_at_level.assign(static_cast<size_t>(top.level) + 1, 0);
        for (CellTypeId u = it->second; !u.IsNil(); u = f_.types_[u.value()].child) {
          const CellTypeInfo& info = f_.types_[u.value()];
          chain.types[static_cast<size_t>(info.level)] = u;
          chain.child_count[static_cast<size_t>(info.level)] = info.child_count;
          if (info.is_node_level) chain.node_level = info.level;
        }
        f_.chains_of_leaf_type_[chain.leaf_type].push_back(chain_it->second);
        f_.chains_.push_back(std::move(chain));
      }
      ChainInfo& chain = f_.chains_[chain_it->second.value()];
      chain.top_cells.push_back(CellId(static_cast<uint32_t>(i)));
      int64_t count = 1;
      for (CellLevel l = chain.top_level; l >= 1; --l) {
        chain.cells_at_level[static_cast<size_t>(l)] += static_cast<int32_t>(count);
        count *= chain.child_count[static_cast<size_t>(l)];
      }
    }
    total_cells_ = static_cast<size_t>(total);
    return absl::OkStatus();
  }

  // Breadth-first: ids are assigned level by level, so children are consecutive.
  absl::Status BuildCells() {
    const size_t total = total_cells_;
    f_.type_.resize(total);
    f_.chain_.resize(total);
    f_.parent_.resize(total);
    f_.first_child_.resize(total);
    f_.node_.assign(total, kNil);
    f_.leaf_index_.assign(total, -1);
    spec_of_.assign(total, nullptr);
    default_index_.assign(total, 0);

    const std::vector<PhysicalCellSpec>& tops = spec_.physical_cells;
    for (size_t i = 0; i < tops.size(); ++i) {
      f_.type_[i] = static_cast<uint16_t>(f_.type_by_name_.at(tops[i].cell_type).value());
      f_.chain_[i] = static_cast<uint16_t>(f_.chain_by_name_.at(tops[i].cell_type).value());
      f_.parent_[i] = kNil;
      spec_of_[i] = &tops[i];
      default_index_[i] = static_cast<int64_t>(i);
    }
    size_t next = tops.size();
    for (size_t c = 0; c < total; ++c) {
      const PhysicalCellSpec* s = spec_of_[c];
      const CellTypeInfo& info = f_.types_[f_.type_[c]];
      const CellId id(static_cast<uint32_t>(c));
      if (s != nullptr) {
        if (c >= tops.size() && !s->cell_type.empty() && s->cell_type != info.name) {
          return NotValidated(
              f_.SpecPath(id),
              absl::StrCat("cellType '", s->cell_type, "' does not match the type '", info.name,
                           "' its parent's childCellType implies"));
        }
        if (!s->cell_address.empty()) f_.explicit_address_.emplace(c, s->cell_address);
        if (!s->pinned_cell_id.empty()) {
          auto [it, inserted] = f_.pinned_by_id_.emplace(s->pinned_cell_id, id);
          if (!inserted) {
            return NotValidated(f_.SpecPath(id),
                                absl::StrCat("duplicate pinnedCellId '", s->pinned_cell_id,
                                             "' (first used at ", f_.SpecPath(it->second), ")"));
          }
          f_.pinned_id_.emplace(c, s->pinned_cell_id);
        }
      }
      if (info.child.IsNil()) {  // a leaf
        f_.first_child_[c] = kNil;
        if (s != nullptr && !s->cell_children.empty()) {
          return NotValidated(f_.SpecPath(id), absl::StrCat("cell of leaf type '", info.name,
                                                            "' cannot have cellChildren"));
        }
        const std::string own = OwnAddress(c);
        int32_t index = 0;
        if (!hierarchy::ParseDeviceIndex(LastComponent(own), &index)) {
          return NotValidated(f_.SpecPath(id),
                              absl::StrCat("leaf cell address '", own,
                                           "' is not a device index (a non-negative integer)"));
        }
        f_.leaf_index_[c] = index;
        continue;
      }
      const size_t n = static_cast<size_t>(info.child_count);
      const size_t given = s == nullptr ? 0 : s->cell_children.size();
      if (given != 0 && given != n) {
        return NotValidated(f_.SpecPath(id),
                            absl::StrCat("cell of type '", info.name, "' lists ", given,
                                         " cellChildren but childCellNumber is ", n, "; list all ",
                                         n, " children or omit cellChildren"));
      }
      f_.first_child_[c] = static_cast<uint32_t>(next);
      for (size_t k = 0; k < n; ++k) {
        const size_t child = next + k;
        f_.type_[child] = static_cast<uint16_t>(info.child.value());
        f_.chain_[child] = f_.chain_[c];
        f_.parent_[child] = static_cast<uint32_t>(c);
        spec_of_[child] = given == 0 ? nullptr : &s->cell_children[k];
        default_index_[child] = hierarchy::DefaultChildIndex(
            default_index_[c], info.is_node_level, info.child_count, static_cast<int64_t>(k));
      }
      next += n;
    }
    return absl::OkStatus();
  }

  std::string OwnAddress(size_t c) const {
    auto it = f_.explicit_address_.find(static_cast<uint32_t>(c));
    if (it != f_.explicit_address_.end()) return it->second;
    return std::to_string(default_index_[c]);
  }

  // Node ids in config (depth-first) order; then every cell at or below node level gets
  // its node.
  absl::Status AssignNodes() {
    std::vector<uint32_t> stack;
    for (size_t i = spec_.physical_cells.size(); i-- > 0;) {
      stack.push_back(static_cast<uint32_t>(i));
    }
    while (!stack.empty()) {
      const uint32_t c = stack.back();
      stack.pop_back();
      const CellTypeInfo& info = f_.types_[f_.type_[c]];
      if (!info.is_node_level) {
        const uint32_t first = f_.first_child_[c];
        for (uint32_t k = static_cast<uint32_t>(info.child_count); k-- > 0;) {
          stack.push_back(first + k);
        }
        continue;
      }
      const CellId id(c);
      const std::string own = OwnAddress(c);
      const std::string name(LastComponent(own));
      if (name.empty()) {
        return NotValidated(f_.SpecPath(id), absl::StrCat("node-level cell address '", own,
                                                          "' gives an empty node name"));
      }
      auto [it, inserted] =
          f_.node_by_name_.emplace(name, NodeId(static_cast<uint32_t>(f_.node_names_.size())));
      if (inserted) {
        f_.node_names_.push_back(name);
        f_.node_cells_.emplace_back();
      }
      std::vector<CellId>& cells = f_.node_cells_[it->second.value()];
      for (CellId other : cells) {
        if (f_.chain_[other.value()] == f_.chain_[c]) {
          return NotValidated(
              f_.SpecPath(id),
              absl::StrCat("duplicate node name '", name, "' in chain '",
                           f_.chains_[f_.chain_[c]].name, "' (first at ", f_.SpecPath(other), ")"));
        }
      }
      cells.push_back(id);
      f_.node_[c] = it->second.value();
    }
    for (size_t c = 0; c < f_.type_.size(); ++c) {
      if (f_.types_[f_.type_[c]].is_node_level) continue;
      const uint32_t p = f_.parent_[c];
      f_.node_[c] = p == kNil ? kNil : f_.node_[p];
    }
    return absl::OkStatus();
  }

  // No two leaves of one leaf type on one node share a device index.
  absl::Status CheckDeviceIndices() {
    std::vector<std::tuple<uint16_t, int32_t, uint32_t>> leaves;
    for (size_t n = 0; n < f_.node_cells_.size(); ++n) {
      leaves.clear();
      for (CellId cell : f_.node_cells_[n]) {
        const uint32_t first = f_.first_leaf(cell).value();
        const uint32_t count = static_cast<uint32_t>(f_.leaf_count(cell));
        for (uint32_t leaf = first; leaf < first + count; ++leaf) {
          leaves.emplace_back(f_.type_[leaf], f_.leaf_index_[leaf], leaf);
        }
      }
      std::sort(leaves.begin(), leaves.end());
      for (size_t i = 1; i < leaves.size(); ++i) {
        if (std::get<0>(leaves[i]) == std::get<0>(leaves[i - 1]) &&
            std::get<1>(leaves[i]) == std::get<1>(leaves[i - 1])) {
          const CellId a(std::get<2>(leaves[i - 1]));
          const CellId b(std::get<2>(leaves[i]));
          return NotValidated(
              f_.SpecPath(b),
              absl::StrCat("duplicate device index ", std::get<1>(leaves[i]), " for leaf type '",
                           f_.types_[std::get<0>(leaves[i])].name, "' on node '", f_.node_names_[n],
                           "' (also at ", f_.SpecPath(a), ")"));
        }
      }
    }
    spec_of_.clear();
    spec_of_.shrink_to_fit();
    default_index_.clear();
    default_index_.shrink_to_fit();
    return absl::OkStatus();
  }

  const ClusterSpec& spec_;
  CellForest f_;
  std::vector<int> node_levels_;        // per type: node-level types on its path
  std::vector<int64_t> subtree_cells_;  // per type: cells in one cell's subtree (capped)
  size_t total_cells_ = 0;
  std::vector<const PhysicalCellSpec*> spec_of_;  // per cell; null when generated
  std::vector<int64_t> default_index_;            // per cell, during the build
};

absl::StatusOr<CellForest> CellForest::Build(const ClusterSpec& spec) {
  return ForestBuilder(spec).Build();
}

CellId CellForest::first_leaf(CellId c) const {
  uint32_t x = c.value();
  while (first_child_[x] != kNil) x = first_child_[x];
  return CellId(x);
}

int64_t CellForest::DefaultIndex(CellId c) const {
  // Iterative (a spec may be deep): collect the path up to the top or to a node-level
  // ancestor (where the index resets to 0), then fold it back down.
  std::vector<uint32_t> path;
  uint32_t x = c.value();
  int64_t index = 0;
  while (true) {
    const uint32_t p = parent_[x];
    if (p == kNil) {
      index = static_cast<int64_t>(x);  // top cells: position in physicalCells
      break;
    }
    path.push_back(x);
    if (types_[type_[p]].is_node_level) break;  // index 0 at the node
    x = p;
  }
  for (size_t i = path.size(); i-- > 0;) {
    const uint32_t cell = path[i];
    const uint32_t p = parent_[cell];
    index = hierarchy::DefaultChildIndex(index, types_[type_[p]].is_node_level,
                                         types_[type_[p]].child_count,
                                         static_cast<int64_t>(cell - first_child_[p]));
  }
  return index;
}

std::string CellForest::own_address(CellId c) const {
  auto it = explicit_address_.find(c.value());
  if (it != explicit_address_.end()) return it->second;
  return std::to_string(DefaultIndex(c));
}

std::string CellForest::address(CellId c) const {
  std::vector<uint32_t> path;
  for (uint32_t x = c.value(); x != kNil; x = parent_[x]) path.push_back(x);
  std::string out;
  for (size_t i = path.size(); i-- > 0;) {
    absl::StrAppend(&out, i + 1 == path.size() ? "" : "/", own_address(CellId(path[i])));
  }
  return out;
}

const std::string& CellForest::pinned_id(CellId c) const {
  static const std::string* const kEmpty = new std::string();
  auto it = pinned_id_.find(c.value());
  return it == pinned_id_.end() ? *kEmpty : it->second;
}

CellId CellForest::top_cell(CellId c) const {
  uint32_t x = c.value();
  while (parent_[x] != kNil) x = parent_[x];
  return CellId(x);
}

std::string CellForest::SpecPath(CellId c) const {
  std::vector<uint32_t> path;
  for (uint32_t x = c.value(); x != kNil; x = parent_[x]) path.push_back(x);
  std::string out = absl::StrCat("physicalCluster.physicalCells[", path.back(), "]");
  for (size_t i = path.size() - 1; i-- > 0;) {
    absl::StrAppend(&out, ".cellChildren[", path[i] - first_child_[parent_[path[i]]], "]");
  }
  return out;
}

CellTypeId CellForest::FindType(std::string_view name) const {
  auto it = type_by_name_.find(ToAbsl(name));
  return it == type_by_name_.end() ? CellTypeId::Nil() : it->second;
}

ChainId CellForest::FindChain(std::string_view name) const {
  auto it = chain_by_name_.find(ToAbsl(name));
  return it == chain_by_name_.end() ? ChainId::Nil() : it->second;
}

const std::vector<ChainId>& CellForest::ChainsOfLeafType(std::string_view leaf_type) const {
  static const std::vector<ChainId>* const kNone = new std::vector<ChainId>();
  auto it = chains_of_leaf_type_.find(ToAbsl(leaf_type));
  return it == chains_of_leaf_type_.end() ? *kNone : it->second;
}

NodeId CellForest::FindNode(std::string_view name) const {
  auto it = node_by_name_.find(ToAbsl(name));
  return it == node_by_name_.end() ? NodeId::Nil() : it->second;
}

CellId CellForest::FindLeaf(ChainId ch, NodeId node, int32_t index) const {
  if (node.IsNil() || node.value() >= node_cells_.size()) return CellId::Nil();
  for (CellId cell : node_cells_[node.value()]) {
    if (chain_[cell.value()] != ch.value()) continue;
    const uint32_t first = first_leaf(cell).value();
    const uint32_t count = static_cast<uint32_t>(leaf_count(cell));
    for (uint32_t leaf = first; leaf < first + count; ++leaf) {
      if (leaf_index_[leaf] == index) return CellId(leaf);
    }
  }
  return CellId::Nil();
}

CellId CellForest::FindPinned(std::string_view pinned_id) const {
  auto it = pinned_by_id_.find(ToAbsl(pinned_id));
  return it == pinned_by_id_.end() ? CellId::Nil() : it->second;
}

}  // namespace hived::cellalloc
