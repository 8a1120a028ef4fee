// The semantic rules on a plain `ClusterSpec`, derived the way the cell forest derives cells
// (HiveD's `inferPhysicalCellSpec`): a top-level cell's default address is its index in
// `physicalCells`; a child's default index is `parent_index * childCellNumber + k`, with the
// parent index reset to 0 at a node-level cell; a node's name is its own address (explicit or
// default); a leaf's device index is its own address parsed as an integer. Generated subtrees
// are not materialised: below node level their device indices form a contiguous range.
#include "hierarchy/spec_analysis.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hierarchy/analyzer.h"
#include "hived/config.h"

namespace hived::hierarchy {
namespace {

constexpr int32_t kMaxNesting = 64;  // `cellChildren` nesting, well above kMaxLevels

}  // namespace

Analysis Analyzer::Run() {
  types_ = AnalyzeCellTypes(spec_, errors_);
  if (spec_.cell_types.empty()) {
    Report("physicalCluster.cellTypes", "no cell types are defined",
           "define the hierarchy, e.g. a node type with `childCellType: <GPU model>`");
  }
  if (spec_.physical_cells.empty()) {
    Report("physicalCluster.physicalCells", "no physical cells are listed",
           "list the top-level cells (racks or nodes) of the cluster");
  }
  CheckTopLevelCells();
  CheckDevices();
  CheckVirtualClusters();
  ComputeCapacity();
  Analysis analysis;
  analysis.types = std::move(types_);
  analysis.capacity = std::move(capacity_);
  return analysis;
}

std::vector<std::string> Analyzer::ChainNames() const {
  std::vector<std::string> names;
  for (const Chain& chain : chains_) {
    names.push_back(types_.types[static_cast<size_t>(chain.type)].name);
  }
  return names;
}

void Analyzer::CheckTopLevelCells() {
  std::vector<std::string> defined_names;
  for (const CellTypeSpec& ct : spec_.cell_types) defined_names.push_back(ct.name);
  // Size first: generated cells are enumerated only when the whole cluster is small enough.
  int64_t total_cells = 0;
  for (const PhysicalCellSpec& cell : spec_.physical_cells) {
    const int32_t t = types_.Find(cell.cell_type);
    if (t >= 0 && types_.types[static_cast<size_t>(t)].usable) {
      total_cells = SatAdd(total_cells, types_.types[static_cast<size_t>(t)].cell_count);
    }
  }
  if (total_cells > kMaxPhysicalCells) {
    generate_ = false;
    Report("physicalCluster.physicalCells",
           absl::StrCat("the cluster has ", total_cells == kSaturated ? "more than 2^60" : "",
                        total_cells == kSaturated ? "" : absl::StrCat(total_cells),
                        " cells; at most ", kMaxPhysicalCells, " are supported"),
           "check the `childCellNumber`s");
  }
  std::vector<bool> chain_reported;
  for (size_t i = 0; i < spec_.physical_cells.size(); ++i) {
    const PhysicalCellSpec& cell = spec_.physical_cells[i];
    const std::string path = absl::StrCat("physicalCluster.physicalCells[", i, "]");
    ++skipped_top_cells_;  // until the walk below starts
    if (cell.cell_type.empty()) {
      Report(absl::StrCat(path, ".cellType"), "a top-level cell needs a `cellType`",
             "name one of the types in `physicalCluster.cellTypes`");
      continue;
    }
    const int32_t t = types_.Find(cell.cell_type);
    if (t >= 0) broken_top_types_[t] = true;  // cleared when the cell is walked
    if (t < 0) {
      Report(absl::StrCat(path, ".cellType"),
             absl::StrCat("unknown cell type `", cell.cell_type, "`"),
             DidYouMean(cell.cell_type, defined_names));
      continue;
    }
    const TypeInfo& info = types_.types[static_cast<size_t>(t)];
    if (info.spec_index < 0) {
      Report(absl::StrCat(path, ".cellType"),
             absl::StrCat("`", cell.cell_type,
                          "` is a leaf cell type (one device); a top-level cell must be at or "
                          "above node level"),
             "use a node-level type or a type above it");
      continue;
    }
    if (!info.usable) continue;  // the type's own error says why
    if (!info.has_node) {
      Report(absl::StrCat(path, ".cellType"),
             absl::StrCat("top-level cell type `", cell.cell_type,
                          "` is below node level; a top-level cell must be at or above node "
                          "level"),
             "mark the node type `isNodeLevel: true` or use a type above it");
      continue;
    }
    auto [it, inserted] = chain_of_type_.emplace(t, static_cast<int32_t>(chains_.size()));
    if (inserted) {
      Chain chain;
      chain.type = t;
      chains_.push_back(std::move(chain));
      chain_reported.push_back(false);
    }
    const int32_t chain = it->second;
    chains_[static_cast<size_t>(chain)].top_cells++;
    if (info.node_levels != 1) {
      if (!chain_reported[static_cast<size_t>(chain)]) {
        chain_reported[static_cast<size_t>(chain)] = true;
        std::vector<std::string> node_types;
        for (int32_t u : types_.PathDown(t)) {
          if (types_.types[static_cast<size_t>(u)].is_node_level) {
            node_types.push_back(absl::StrCat("`", types_.types[static_cast<size_t>(u)].name, "`"));
          }
        }
        Report(absl::StrCat(path, ".cellType"),
               absl::StrCat("cell type `", cell.cell_type, "` has ", info.node_levels,
                            " node levels (", absl::StrJoin(node_types, ", "),
                            "); a physical cell must contain exactly one node level"),
               "set `isNodeLevel: true` on exactly one type of the chain");
      }
      continue;
    }
    broken_top_types_.erase(t);
    --skipped_top_cells_;
    WalkCell(cell, t, path, chain, static_cast<int64_t>(i), nullptr, false, 0);
  }
}

bool Analyzer::AddNode(int32_t chain, const std::string& name, const std::string& path,
                       int32_t origin, bool generated) {
  Chain& c = chains_[static_cast<size_t>(chain)];
  auto [it, inserted] = c.nodes.emplace(name, origin);
  if (inserted) return true;
  Report(path,
         absl::StrCat("node `", name, "` appears twice in chain `",
                      types_.types[static_cast<size_t>(c.type)].name, "` (",
                      generated ? "a generated node here, " : "", "first at ",
                      origins_[static_cast<size_t>(it->second)], ")"),
         "a node may appear once per chain; give each node-level cell its own `cellAddress`");
  return false;
}

void Analyzer::AddDevices(const std::string& node, int32_t leaf_type, int64_t lo, int64_t hi,
                          int32_t origin) {
  std::string key = absl::StrCat(node, "\n", leaf_type);
  auto [it, inserted] = device_index_.emplace(std::move(key), devices_.size());
  if (inserted) {
    DeviceKey entry;
    entry.node = node;
    entry.leaf_type = leaf_type;
    devices_.push_back(std::move(entry));
  }
  devices_[it->second].ranges.push_back({lo, hi, origin});
}

void Analyzer::WalkGeneratedAboveNode(int32_t type, int64_t default_index, int32_t chain,
                                      int32_t origin) {
  const TypeInfo& info = types_.types[static_cast<size_t>(type)];
  if (info.is_node_level) {
    const std::string name = absl::StrCat(default_index);
    // A repeated node's devices would only repeat the error.
    if (AddNode(chain, name, origins_[static_cast<size_t>(origin)], origin, true)) {
      AddDevices(name, info.leaf, 0, info.leaf_count, origin);
    }
    return;
  }
  for (int32_t k = 0; k < info.child_number; ++k) {
    WalkGeneratedAboveNode(info.child, default_index * info.child_number + k, chain, origin);
  }
}

void Analyzer::WalkCell(const PhysicalCellSpec& cell, int32_t type, const std::string& path,
                        int32_t chain, int64_t default_index, const std::string* node,
                        bool in_pinned, int32_t depth) {
  const TypeInfo& info = types_.types[static_cast<size_t>(type)];
  if (depth > 0 && !cell.cell_type.empty() && cell.cell_type != info.name) {
    Report(absl::StrCat(path, ".cellType"),
           absl::StrCat("`cellType: ", cell.cell_type, "` does not match the derived type `",
                        info.name, "`"),
           "a child's type is its parent's `childCellType`; omit `cellType` below the top");
  }
  const bool explicit_address = !cell.cell_address.empty();
  if (!IsValidUtf8(cell.cell_address) || !IsValidUtf8(cell.pinned_cell_id)) {
    Report(path, "the cell's `cellAddress` or `pinnedCellId` is not valid UTF-8",
           "names must be UTF-8 text");
  }
  if (explicit_address && cell.cell_address.find('/') != std::string::npos) {
    Report(absl::StrCat(path, ".cellAddress"),
           absl::StrCat("`cellAddress: ", cell.cell_address, "` contains `/`"),
           "`/` separates the levels of a derived address; give only this level's part");
  }
  const std::string own_address =
      explicit_address ? cell.cell_address : absl::StrCat(default_index);
  const std::string address_path = explicit_address ? absl::StrCat(path, ".cellAddress") : path;

  if (!cell.pinned_cell_id.empty()) {
    const std::string pin_path = absl::StrCat(path, ".pinnedCellId");
    auto it = pinned_.find(cell.pinned_cell_id);
    if (it != pinned_.end()) {
      Report(pin_path,
             absl::StrCat("`pinnedCellId: ", cell.pinned_cell_id, "` is used twice (first at ",
                          it->second.path, ")"),
             "pinned cell ids must be unique");
    } else {
      if (in_pinned) {
        Report(
            pin_path,
            absl::StrCat("pinned cell `", cell.pinned_cell_id, "` is inside another pinned cell"),
            "pin either the outer cell or the inner one");
      }
      Pinned pinned;
      pinned.chain = chain;
      pinned.type = type;
      pinned.path = pin_path;
      pinned_.emplace(cell.pinned_cell_id, std::move(pinned));
      pinned_order_.push_back(cell.pinned_cell_id);
    }
  }
  const bool pinned_here = in_pinned || !cell.pinned_cell_id.empty();

  if (info.spec_index < 0) {  // a leaf
    if (!cell.cell_children.empty()) {
      Report(absl::StrCat(path, ".cellChildren"),
             absl::StrCat("leaf cell type `", info.name, "` cannot have `cellChildren`"),
             "a leaf cell is one device");
    }
    int64_t index = default_index;
    if (explicit_address) {
      int32_t parsed = 0;
      if (!ParseDeviceIndex(cell.cell_address, &parsed)) {
        Report(absl::StrCat(path, ".cellAddress"),
               absl::StrCat("leaf `cellAddress: ", cell.cell_address, "` is not a device index"),
               "a leaf's address is its device index, an integer from 0 to 2147483647");
        return;
      }
      index = parsed;
    }
    if (node != nullptr) AddDevices(*node, type, index, index + 1, AddOrigin(address_path));
    return;
  }

  const std::string* node_here = node;
  if (info.is_node_level) {
    const bool first = AddNode(chain, own_address, address_path, AddOrigin(address_path), false);
    node_here = first ? &own_address : nullptr;  // a repeated node's devices are not checked
  }
  const auto listed = static_cast<int64_t>(cell.cell_children.size());
  if (listed > info.child_number) {
    Report(absl::StrCat(path, ".cellChildren"),
           absl::StrCat(listed, " children listed but `", info.name,
                        "` has `childCellNumber: ", info.child_number, "`"),
           "remove the extra children or raise `childCellNumber`");
  } else if (listed > 0 && listed < info.child_number) {
    Report(absl::StrCat(path, ".cellChildren"),
           absl::StrCat("only ", listed, " of ", info.child_number, " children of `", info.name,
                        "` are listed"),
           "list every child, or none to have them generated");
  }
  const int64_t base = info.is_node_level ? 0 : default_index;
  if (listed == 0) {
    if (!generate_) return;
    if (info.is_node_level || !info.has_node) {
      // At or below node level: the generated leaves are a contiguous range of indices.
      const int64_t lo = SatMul(base, info.leaf_count);
      if (node_here != nullptr) {
        AddDevices(*node_here, info.leaf, lo, SatAdd(lo, info.leaf_count), AddOrigin(path));
      }
    } else {
      const int32_t origin = AddOrigin(absl::StrCat(path, " (generated children)"));
      for (int32_t k = 0; k < info.child_number; ++k) {
        WalkGeneratedAboveNode(info.child, DefaultChildIndex(base, false, info.child_number, k),
                               chain, origin);
      }
    }
    return;
  }
  if (depth >= kMaxNesting) {
    Report(absl::StrCat(path, ".cellChildren"), "`cellChildren` are nested too deeply");
    return;
  }
  for (size_t k = 0; k < cell.cell_children.size(); ++k) {
    WalkCell(cell.cell_children[k], info.child, absl::StrCat(path, ".cellChildren[", k, "]"), chain,
             DefaultChildIndex(default_index, info.is_node_level, info.child_number,
                               static_cast<int64_t>(k)),
             node_here, pinned_here, depth + 1);
  }
}

void Analyzer::CheckDevices() {
  for (DeviceKey& key : devices_) {
    if (key.ranges.size() < 2) continue;
    // Sort by start (ties: config order); any start below the furthest end so far overlaps.
    std::stable_sort(key.ranges.begin(), key.ranges.end(),
                     [](const DeviceRange& a, const DeviceRange& b) { return a.lo < b.lo; });
    int64_t furthest = key.ranges[0].hi;
    int32_t furthest_origin = key.ranges[0].origin;
    for (size_t i = 1; i < key.ranges.size(); ++i) {
      const DeviceRange& r = key.ranges[i];
      if (r.lo < furthest) {
        // Report at whichever of the two comes later in the config.
        const int32_t later = std::max(r.origin, furthest_origin);
        const int32_t earlier = std::min(r.origin, furthest_origin);
        Report(origins_[static_cast<size_t>(later)],
               absl::StrCat("device index ", r.lo, " of leaf type `",
                            types_.types[static_cast<size_t>(key.leaf_type)].name,
                            "` appears twice on node `", key.node, "` (also at ",
                            origins_[static_cast<size_t>(earlier)], ")"),
               "each device of a node belongs to one leaf cell; fix the leaf `cellAddress`es");
      }
      if (r.hi > furthest) {
        furthest = r.hi;
        furthest_origin = r.origin;
      }
    }
  }
}

Analysis AnalyzeClusterSpec(const ClusterSpec& spec, std::vector<ConfigError>* errors) {
  return Analyzer(spec, errors).Run();
}

}  // namespace hived::hierarchy
