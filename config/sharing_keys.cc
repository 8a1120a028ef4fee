// The semantic rules of the GPU-sharing keys (docs/gpu-sharing.md, "Config keys"), which
// HiveD's format does not have: `physicalCluster.leafCellTypes` names leaf cell types, once
// each; `cpuMilli` / `memoryMiB` sit on node-level cells only. Value ranges and mode names
// are checked while parsing (loader_schema.cc).
#include "config/sharing_keys.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hived::config_internal {
namespace {

struct Walk {
  const std::unordered_map<std::string, const CellTypeSpec*>& types;
  std::vector<ConfigError>* errors;

  void Cell(const PhysicalCellSpec& cell, const std::string& type, const std::string& path) {
    auto it = types.find(type);
    const bool node_level = it != types.end() && it->second->is_node_level;
    if (!node_level && (cell.cpu_milli != 0 || cell.memory_mib != 0)) {
      errors->push_back({"", 0, 0,
                         absl::StrCat(path, cell.cpu_milli != 0 ? ".cpuMilli" : ".memoryMiB"),
                         "CPU and host memory are declared on node-level cells only",
                         "move `cpuMilli` / `memoryMiB` to the cell with `isNodeLevel: true`"});
    }
    if (it == types.end()) return;  // a leaf, or an unknown type (reported elsewhere)
    for (size_t i = 0; i < cell.cell_children.size(); ++i) {
      Cell(cell.cell_children[i], it->second->child_cell_type,
           absl::StrCat(path, ".cellChildren[", i, "]"));
    }
  }
};

}  // namespace

void AppendSharingKeyErrors(const ClusterSpec& spec, std::vector<ConfigError>* errors) {
  std::unordered_map<std::string, const CellTypeSpec*> types;
  std::unordered_set<std::string> children;
  for (const CellTypeSpec& t : spec.cell_types) {
    types.emplace(t.name, &t);
    children.insert(t.child_cell_type);
  }
  std::unordered_set<std::string> seen;
  for (const LeafCellTypeSpec& leaf : spec.leaf_cell_types) {
    const std::string path = absl::StrCat("physicalCluster.leafCellTypes.", leaf.name);
    if (types.count(leaf.name) > 0 || children.count(leaf.name) == 0) {
      errors->push_back({"", 0, 0, path, absl::StrCat("`", leaf.name, "` is not a leaf cell type"),
                         "leafCellTypes names the device types: a `childCellType` that is not "
                         "itself a cell type"});
    } else if (!seen.insert(leaf.name).second) {
      errors->push_back({"", 0, 0, path, absl::StrCat("`", leaf.name, "` is listed twice"), ""});
    }
    if (leaf.gpu_memory_mib < 0) {
      errors->push_back({"", 0, 0, absl::StrCat(path, ".gpuMemoryMiB"), "must be positive", ""});
    }
  }
  Walk walk{types, errors};
  for (size_t i = 0; i < spec.physical_cells.size(); ++i) {
    const PhysicalCellSpec& cell = spec.physical_cells[i];
    walk.Cell(cell, cell.cell_type, absl::StrCat("physicalCluster.physicalCells[", i, "]"));
    if (cell.cpu_milli < 0 || cell.memory_mib < 0) {
      errors->push_back({"", 0, 0, absl::StrCat("physicalCluster.physicalCells[", i, "]"),
                         "CPU and host memory must be positive", ""});
    }
  }
}

}  // namespace hived::config_internal
