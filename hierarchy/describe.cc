// `hived::DescribeCluster` (hived/cluster_info.h), from the type table of cell_types.cc.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hierarchy/spec_analysis.h"
#include "hived/cluster_info.h"

namespace hived {
namespace {

void FindPinned(const hierarchy::TypeTable& types, const PhysicalCellSpec& cell, int32_t type,
                int32_t top, const std::string& chain, int32_t depth,
                std::vector<PinnedCellDescription>* out) {
  const hierarchy::TypeInfo& info = types.types[static_cast<size_t>(type)];
  if (!cell.pinned_cell_id.empty()) {
    out->push_back({cell.pinned_cell_id, info.name, chain, top, info.usable ? info.leaf_count : 0});
  }
  if (info.child < 0 || depth >= hierarchy::kMaxLevels) return;
  for (const PhysicalCellSpec& child : cell.cell_children) {
    FindPinned(types, child, info.child, top, chain, depth + 1, out);
  }
}

}  // namespace

ClusterDescription DescribeCluster(const ClusterSpec& spec) {
  const hierarchy::TypeTable types = hierarchy::AnalyzeCellTypes(spec, nullptr);
  ClusterDescription d;
  std::vector<int64_t> node_leaves(types.types.size(), 0);
  for (size_t t = 0; t < types.types.size(); ++t) {
    const hierarchy::TypeInfo& info = types.types[t];
    CellTypeDescription type;
    type.name = info.name;
    type.is_leaf_type = info.spec_index < 0;
    type.is_node_level = info.is_node_level;
    if (info.usable) {
      type.level = info.level;
      type.leaf_cell_type = types.types[static_cast<size_t>(info.leaf)].name;
      type.leaf_cells = info.leaf_count;
      for (int32_t u : types.PathDown(static_cast<int32_t>(t))) {
        if (types.types[static_cast<size_t>(u)].is_node_level) {
          type.node_leaf_cells = types.types[static_cast<size_t>(u)].leaf_count;
          break;
        }
      }
    }
    d.cell_types.push_back(std::move(type));
  }
  std::unordered_map<int32_t, size_t> chain_of_type;  // lookup only
  for (size_t i = 0; i < spec.physical_cells.size(); ++i) {
    const PhysicalCellSpec& top = spec.physical_cells[i];
    const int32_t t = types.Find(top.cell_type);
    if (t < 0 || !types.types[static_cast<size_t>(t)].usable) continue;
    const hierarchy::TypeInfo& info = types.types[static_cast<size_t>(t)];
    auto [it, inserted] = chain_of_type.emplace(t, d.chains.size());
    if (inserted) {
      ChainDescription chain;
      chain.name = info.name;
      chain.leaf_cell_type = types.types[static_cast<size_t>(info.leaf)].name;
      for (int32_t u : types.PathDown(t)) {
        chain.cell_types.push_back(types.types[static_cast<size_t>(u)].name);
      }
      d.chains.push_back(std::move(chain));
    }
    ChainDescription& chain = d.chains[it->second];
    chain.top_cells++;
    chain.leaf_cells = hierarchy::SatAdd(chain.leaf_cells, info.leaf_count);
    d.total_leaf_cells = hierarchy::SatAdd(d.total_leaf_cells, info.leaf_count);
    FindPinned(types, top, t, static_cast<int32_t>(i), chain.name, 0, &d.pinned_cells);
  }
  return d;
}

}  // namespace hived
