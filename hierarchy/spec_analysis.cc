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
#include "hived/config.h"

namespace hived::hierarchy {
namespace {

constexpr int32_t kMaxNesting = 64;  // `cellChildren` nesting, well above kMaxLevels

class Analyzer {
 public:
  Analyzer(const ClusterSpec& spec, std::vector<ConfigError>* errors)
      : spec_(spec), errors_(errors) {}

  Analysis Run();

 private:
  struct Chain {
    int32_t type = -1;
    int32_t top_cells = 0;
    std::unordered_map<std::string, int32_t> nodes;  // node name -> origin
  };
  // Device indices claimed on one node for one leaf type.
  struct DeviceRange {
    int64_t lo = 0;
    int64_t hi = 0;  // exclusive
    int32_t origin = 0;
  };
  struct DeviceKey {
    std::string node;
    int32_t leaf_type = -1;
    std::vector<DeviceRange> ranges;
  };
  struct Pinned {
    int32_t chain = -1;
    int32_t type = -1;
    std::string path;
    int32_t claimed_by = -1;  // VC index
    std::string claim_path;
  };
  struct Demand {  // one VC's cells at one chain level
    int32_t vc = -1;
    int32_t chain = -1;
    int32_t level = 0;
    int64_t count = 0;
    std::string path;
  };

  void Report(std::string path, std::string message, std::string hint = "") {
    if (errors_ == nullptr) return;
    ConfigError error;
    error.yaml_path = std::move(path);
    error.message = std::move(message);
    error.hint = std::move(hint);
    errors_->push_back(std::move(error));
  }

  int32_t AddOrigin(std::string path) {
    origins_.push_back(std::move(path));
    return static_cast<int32_t>(origins_.size() - 1);
  }

  void CheckTopLevelCells();
  void WalkCell(const PhysicalCellSpec& cell, int32_t type, const std::string& path, int32_t chain,
                int64_t default_index, const std::string* node, bool in_pinned, int32_t depth);
  void WalkGeneratedAboveNode(int32_t type, int64_t default_index, int32_t chain, int32_t origin);
  // Records a node of a chain; false (and reported) when the chain has it already.
  bool AddNode(int32_t chain, const std::string& name, const std::string& path, int32_t origin,
               bool generated);
  void AddDevices(const std::string& node, int32_t leaf_type, int64_t lo, int64_t hi,
                  int32_t origin);
  void CheckDevices();
  void CheckVirtualClusters();
  void ResolveVirtualCell(int32_t vc, const VirtualCellSpec& cell, const std::string& path);
  void ComputeCapacity();
  std::vector<std::string> ChainNames() const;
  // True when some physical cells were not checked (their errors are reported already).
  bool PhysicalCellsIncomplete() const {
    return spec_.physical_cells.empty() || skipped_top_cells_ > 0 || !generate_;
  }

  const ClusterSpec& spec_;
  std::vector<ConfigError>* errors_;
  TypeTable types_;
  std::vector<Chain> chains_;
  std::unordered_map<int32_t, int32_t> chain_of_type_;  // lookup only
  // Types of top-level cells rejected by an error already reported: references to them
  // (VC paths, pinned ids inside them) would only repeat that error.
  std::unordered_map<int32_t, bool> broken_top_types_;  // lookup only
  int32_t skipped_top_cells_ = 0;
  bool generate_ = true;  // false when the cluster is too large to enumerate
  std::vector<std::string> origins_;
  std::vector<DeviceKey> devices_;
  std::unordered_map<std::string, size_t> device_index_;  // node + '\n' + leaf -> devices_
  std::vector<std::string> pinned_order_;
  std::unordered_map<std::string, Pinned> pinned_;
  std::vector<Demand> demands_;
  CapacityReport capacity_;
};

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

void Analyzer::ResolveVirtualCell(int32_t vc, const VirtualCellSpec& cell,
                                  const std::string& path) {
  const std::string type_path = absl::StrCat(path, ".cellType");
  if (cell.cell_number <= 0) {
    Report(absl::StrCat(path, ".cellNumber"),
           absl::StrCat("`cellNumber` must be at least 1, got ", cell.cell_number));
  }
  if (cell.cell_type.empty()) {
    Report(type_path, "a virtual cell needs a `cellType`",
           "write the path from a chain down, e.g. `RACK.NODE`");
    return;
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = cell.cell_type.find('.', start);
    parts.push_back(
        cell.cell_type.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const std::string& part : parts) {
    if (part.empty()) {
      Report(type_path, absl::StrCat("`", cell.cell_type, "` has an empty component"),
             "write the path as `CHAIN.TYPE.TYPE`, without leading, trailing or double dots");
      return;
    }
  }
  const int32_t top = types_.Find(parts[0]);
  const auto chain_it = chain_of_type_.find(top);
  if (top >= 0 &&
      (!types_.types[static_cast<size_t>(top)].usable || broken_top_types_.count(top) > 0 ||
       (chain_it == chain_of_type_.end() && PhysicalCellsIncomplete()))) {
    return;  // the type's or the physical cells' own error explains this path
  }
  if (chain_it == chain_of_type_.end()) {
    std::vector<std::string> chain_names = ChainNames();
    std::string hint = DidYouMean(parts[0], chain_names);
    if (hint.empty() && !chain_names.empty()) {
      hint = absl::StrCat("chains are the types of top-level physical cells: ",
                          absl::StrJoin(chain_names, ", "));
    }
    Report(type_path,
           top < 0 ? absl::StrCat("unknown chain `", parts[0], "`: no such cell type")
                   : absl::StrCat("`", parts[0],
                                  "` is not a chain: no top-level physical cell has this type"),
           hint);
    return;
  }
  int32_t t = top;
  for (size_t i = 1; i < parts.size(); ++i) {
    const TypeInfo& parent = types_.types[static_cast<size_t>(t)];
    const int32_t next = types_.Find(parts[i]);
    if (parent.child < 0) {
      Report(type_path,
             absl::StrCat("`", parent.name, "` is a leaf cell type; `", parts[i],
                          "` cannot be below it"),
             absl::StrCat("end the path at `", parent.name, "`"));
      return;
    }
    if (next != parent.child) {
      const std::string& child_name = types_.types[static_cast<size_t>(parent.child)].name;
      std::string hint = DidYouMean(parts[i], {child_name});
      if (hint.empty())
        hint = absl::StrCat("the child type of `", parent.name, "` is `", child_name, "`");
      Report(type_path,
             absl::StrCat(next < 0 ? "unknown cell type `" : "`", parts[i],
                          next < 0 ? "` in the path" : "` is not the child type of `",
                          next < 0 ? "" : parent.name, next < 0 ? "" : "`"),
             hint);
      return;
    }
    t = next;
  }
  if (cell.cell_number <= 0) return;
  Demand demand;
  demand.vc = vc;
  demand.chain = chain_it->second;
  demand.level = types_.types[static_cast<size_t>(t)].level;
  demand.count = cell.cell_number;
  demand.path = absl::StrCat(path, ".cellNumber");
  demands_.push_back(std::move(demand));
}

void Analyzer::CheckVirtualClusters() {
  std::unordered_map<std::string, size_t> vc_seen;
  for (size_t v = 0; v < spec_.virtual_clusters.size(); ++v) {
    const VirtualClusterSpec& vc = spec_.virtual_clusters[v];
    capacity_.vc_names.push_back(vc.name);
    const std::string path = absl::StrCat("virtualClusters.", vc.name);
    if (vc.name.empty()) {
      Report("virtualClusters", "a virtual cluster has an empty name");
    } else if (!vc_seen.emplace(vc.name, v).second) {
      Report(path, absl::StrCat("virtual cluster `", vc.name, "` is defined twice"),
             "give each virtual cluster one entry");
    }
    for (size_t j = 0; j < vc.virtual_cells.size(); ++j) {
      ResolveVirtualCell(static_cast<int32_t>(v), vc.virtual_cells[j],
                         absl::StrCat(path, ".virtualCells[", j, "]"));
    }
    for (size_t j = 0; j < vc.pinned_cells.size(); ++j) {
      const std::string& id = vc.pinned_cells[j].pinned_cell_id;
      const std::string pin_path = absl::StrCat(path, ".pinnedCells[", j, "].pinnedCellId");
      if (id.empty()) {
        Report(pin_path, "a pinned cell needs a `pinnedCellId`");
        continue;
      }
      auto it = pinned_.find(id);
      if (it == pinned_.end() && PhysicalCellsIncomplete()) continue;
      if (it == pinned_.end()) {
        Report(pin_path, absl::StrCat("unknown `pinnedCellId: ", id, "`"),
               DidYouMean(id, pinned_order_).empty()
                   ? "pin a cell in `physicalCells` with this `pinnedCellId`"
                   : DidYouMean(id, pinned_order_));
        continue;
      }
      Pinned& pinned = it->second;
      if (pinned.claimed_by >= 0) {
        Report(pin_path,
               absl::StrCat("pinned cell `", id, "` is already claimed by VC `",
                            spec_.virtual_clusters[static_cast<size_t>(pinned.claimed_by)].name,
                            "` (at ", pinned.claim_path, ")"),
               "a pinned cell belongs to one VC, once");
        continue;
      }
      pinned.claimed_by = static_cast<int32_t>(v);
      pinned.claim_path = pin_path;
      Demand demand;
      demand.vc = static_cast<int32_t>(v);
      demand.chain = pinned.chain;
      demand.level = types_.types[static_cast<size_t>(pinned.type)].level;
      demand.count = 1;
      demand.path = pin_path;
      demands_.push_back(std::move(demand));
    }
  }
}

void Analyzer::ComputeCapacity() {
  const size_t vcs = spec_.virtual_clusters.size();
  for (size_t c = 0; c < chains_.size(); ++c) {
    const Chain& chain = chains_[c];
    const std::vector<int32_t> path = types_.PathDown(chain.type);
    ChainCapacity report;
    report.chain = types_.types[static_cast<size_t>(chain.type)].name;
    report.leaf_cell_type = types_.types[static_cast<size_t>(path.back())].name;
    report.top_cells = chain.top_cells;
    int64_t physical = chain.top_cells;
    int64_t available = chain.top_cells;
    bool failed = false;
    for (size_t i = 0; i < path.size(); ++i) {
      const TypeInfo& info = types_.types[static_cast<size_t>(path[i])];
      CapacityLevel level;
      level.level = info.level;
      level.cell_type = info.name;
      level.is_node_level = info.is_node_level;
      level.physical_cells = physical;
      level.available_cells = available;
      level.reserved.assign(vcs, 0);
      const Demand* last = nullptr;
      for (const Demand& d : demands_) {
        if (d.chain != static_cast<int32_t>(c) || d.level != info.level) continue;
        level.reserved[static_cast<size_t>(d.vc)] =
            SatAdd(level.reserved[static_cast<size_t>(d.vc)], d.count);
        level.total_reserved = SatAdd(level.total_reserved, d.count);
        last = &d;
      }
      level.slack = available - level.total_reserved;
      if (level.slack < 0 && !failed) {
        failed = true;  // like HiveD, one error per chain: lower levels follow from it
        std::vector<std::string> askers;
        for (size_t v = 0; v < vcs; ++v) {
          if (level.reserved[v] > 0) {
            askers.push_back(
                absl::StrCat("`", spec_.virtual_clusters[v].name, "` asks ", level.reserved[v]));
          }
        }
        Report(last->path,
               absl::StrCat("insufficient physical cells in chain `", report.chain, "` at level ",
                            info.level, " (`", info.name, "`): ", level.total_reserved, " needed, ",
                            available, " available (", absl::StrJoin(askers, ", "), ")"),
               "lower these VCs' `cellNumber`s or add physical cells; cells reserved at "
               "higher levels of the chain are not available here");
      }
      report.levels.push_back(std::move(level));
      const int64_t left = std::max<int64_t>(0, available - report.levels.back().total_reserved);
      available = SatMul(left, info.child_number);
      physical = SatMul(physical, info.child_number);
    }
    capacity_.chains.push_back(std::move(report));
  }
}

}  // namespace

Analysis AnalyzeClusterSpec(const ClusterSpec& spec, std::vector<ConfigError>* errors) {
  return Analyzer(spec, errors).Run();
}

}  // namespace hived::hierarchy
