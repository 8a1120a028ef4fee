// The virtual-cluster rules of `AnalyzeClusterSpec`: each VC cell path resolved level by level
// down its chain, pinned cells claimed once, and the capacity table (HiveD's `initCellNums`:
// per chain and level, top-down, cells reserved higher up are not available lower down).
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hierarchy/analyzer.h"

namespace hived::hierarchy {

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
    } else if (!IsValidUtf8(vc.name)) {
      Report("virtualClusters", "a virtual cluster's name is not valid UTF-8",
             "names must be UTF-8 text");
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

}  // namespace hived::hierarchy
