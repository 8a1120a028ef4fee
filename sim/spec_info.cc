#include "sim/spec_info.h"

#include <algorithm>

#include "absl/strings/str_split.h"

namespace hived::sim {
namespace {

std::string LastComponent(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string FirstComponent(const std::string& path) {
  size_t dot = path.find('.');
  return dot == std::string::npos ? path : path.substr(0, dot);
}

void StripPins(PhysicalCellSpec* cell, const std::vector<std::string>& keep) {
  if (!cell->pinned_cell_id.empty() &&
      std::find(keep.begin(), keep.end(), cell->pinned_cell_id) == keep.end()) {
    cell->pinned_cell_id.clear();
  }
  for (PhysicalCellSpec& c : cell->cell_children) StripPins(&c, keep);
}

bool FindPinnedIn(const PhysicalCellSpec& cell, const std::string& type, const std::string& id,
                  const absl::flat_hash_map<std::string, const CellTypeSpec*>& types,
                  std::string* found) {
  if (cell.pinned_cell_id == id) {
    *found = type;
    return true;
  }
  auto it = types.find(type);
  if (it == types.end()) return false;
  for (const PhysicalCellSpec& c : cell.cell_children) {
    const std::string& child_type = c.cell_type.empty() ? it->second->child_cell_type : c.cell_type;
    if (FindPinnedIn(c, child_type, id, types, found)) return true;
  }
  return false;
}

}  // namespace

SpecInfo::SpecInfo(const ClusterSpec& spec) : spec_(spec) {
  for (const CellTypeSpec& t : spec_.cell_types) types_.emplace(t.name, &t);
  for (const PhysicalCellSpec& top : spec_.physical_cells) {
    total_gpus_ += LeafCount(top.cell_type);
    if (std::none_of(chains_.begin(), chains_.end(),
                     [&](const Chain& c) { return c.top_type == top.cell_type; })) {
      chains_.push_back({top.cell_type, LeafType(top.cell_type), NodeGpus(top.cell_type)});
    }
  }
  for (const VirtualClusterSpec& v : spec_.virtual_clusters) {
    Vc vc;
    vc.name = v.name;
    for (const VirtualCellSpec& c : v.virtual_cells) {
      vc.reserved += LeafCount(LastComponent(c.cell_type)) * c.cell_number;
      vc.virtual_gpus += LeafCount(LastComponent(c.cell_type)) * c.cell_number;
      vc.chains.push_back(FirstComponent(c.cell_type));
      vc.leaf_types.push_back(LeafType(LastComponent(c.cell_type)));
      vc.node_gpus.push_back(NodeGpus(vc.chains.back()));
    }
    for (const PinnedCellSpec& p : v.pinned_cells) {
      std::string type;
      int top = 0;
      if (!FindPinned(p.pinned_cell_id, &type, &top)) continue;
      vc.reserved += LeafCount(type);
      vc.chains.push_back(spec_.physical_cells[static_cast<size_t>(top)].cell_type);
      vc.leaf_types.push_back(LeafType(type));
      vc.node_gpus.push_back(NodeGpus(vc.chains.back()));
    }
    vc_index_.emplace(vc.name, static_cast<int32_t>(vcs_.size()));
    vcs_.push_back(std::move(vc));
  }
}

int64_t SpecInfo::LeafCount(const std::string& type) const {
  int64_t count = 1;
  std::string t = type;
  for (int depth = 0; depth < 64; ++depth) {
    auto it = types_.find(t);
    if (it == types_.end()) return count;
    count *= it->second->child_cell_number;
    t = it->second->child_cell_type;
  }
  return 0;  // a cycle: the config loader reports it
}

std::string SpecInfo::LeafType(const std::string& type) const {
  std::string t = type;
  for (int depth = 0; depth < 64; ++depth) {
    auto it = types_.find(t);
    if (it == types_.end()) return t;
    t = it->second->child_cell_type;
  }
  return t;
}

int32_t SpecInfo::NodeGpus(const std::string& chain) const {
  std::string t = chain;
  for (int depth = 0; depth < 64; ++depth) {
    auto it = types_.find(t);
    if (it == types_.end()) return 0;
    if (it->second->is_node_level) return static_cast<int32_t>(LeafCount(t));
    t = it->second->child_cell_type;
  }
  return 0;
}

int32_t SpecInfo::VcIndex(const std::string& name) const {
  auto it = vc_index_.find(name);
  return it == vc_index_.end() ? -1 : it->second;
}

int32_t SpecInfo::VcNodeGpus(int32_t vc, const std::string& leaf_type) const {
  const Vc& v = vcs_[static_cast<size_t>(vc)];
  for (size_t i = 0; i < v.chains.size(); ++i) {
    if (leaf_type.empty() || v.leaf_types[i] == leaf_type) return v.node_gpus[i];
  }
  return 0;
}

int32_t SpecInfo::MaxNodeGpus(const std::string& leaf_type) const {
  int32_t best = 0;
  for (const Chain& c : chains_) {
    if (!leaf_type.empty() && c.leaf_type != leaf_type) continue;
    best = std::max(best, c.node_gpus);
  }
  return best;
}

bool SpecInfo::FindPinned(const std::string& id, std::string* type, int* top) const {
  for (size_t i = 0; i < spec_.physical_cells.size(); ++i) {
    const PhysicalCellSpec& cell = spec_.physical_cells[i];
    if (FindPinnedIn(cell, cell.cell_type, id, types_, type)) {
      *top = static_cast<int>(i);
      return true;
    }
  }
  return false;
}

ClusterSpec SpecInfo::QuotaSpec() const {
  ClusterSpec out;
  out.cell_types = spec_.cell_types;
  out.physical_cells = spec_.physical_cells;
  for (PhysicalCellSpec& c : out.physical_cells) StripPins(&c, {});
  VirtualClusterSpec pool;
  pool.name = kPoolVc;
  for (const PhysicalCellSpec& c : out.physical_cells) {
    auto it = std::find_if(pool.virtual_cells.begin(), pool.virtual_cells.end(),
                           [&](const VirtualCellSpec& v) { return v.cell_type == c.cell_type; });
    if (it == pool.virtual_cells.end()) {
      pool.virtual_cells.push_back({c.cell_type, 1});
    } else {
      ++it->cell_number;
    }
  }
  out.virtual_clusters.push_back(std::move(pool));
  return out;
}

ClusterSpec SpecInfo::PrivateSpec(int32_t vc) const {
  const VirtualClusterSpec& v = spec_.virtual_clusters[static_cast<size_t>(vc)];
  ClusterSpec out;
  out.cell_types = spec_.cell_types;
  out.virtual_clusters.push_back(v);
  std::vector<std::string> keep;
  std::vector<bool> take(spec_.physical_cells.size(), false);
  for (const PinnedCellSpec& p : v.pinned_cells) {
    std::string type;
    int top = 0;
    keep.push_back(p.pinned_cell_id);
    if (FindPinned(p.pinned_cell_id, &type, &top)) take[static_cast<size_t>(top)] = true;
  }
  // Leaves the VC's virtual cells need per chain, and then whole top cells in config order.
  std::vector<std::pair<std::string, int64_t>> need;
  for (const VirtualCellSpec& c : v.virtual_cells) {
    const std::string chain = FirstComponent(c.cell_type);
    const int64_t leaves = LeafCount(LastComponent(c.cell_type)) * c.cell_number;
    auto it =
        std::find_if(need.begin(), need.end(), [&](const auto& n) { return n.first == chain; });
    if (it == need.end()) {
      need.emplace_back(chain, leaves);
    } else {
      it->second += leaves;
    }
  }
  for (auto& [chain, leaves] : need) {
    const int64_t per_top = std::max<int64_t>(1, LeafCount(chain));
    int64_t tops = (leaves + per_top - 1) / per_top;
    for (size_t i = 0; i < spec_.physical_cells.size() && tops > 0; ++i) {
      if (spec_.physical_cells[i].cell_type != chain || take[i]) continue;
      take[i] = true;
      --tops;
    }
  }
  for (size_t i = 0; i < spec_.physical_cells.size(); ++i) {
    if (!take[i]) continue;
    out.physical_cells.push_back(spec_.physical_cells[i]);
    StripPins(&out.physical_cells.back(), keep);
  }
  return out;
}

}  // namespace hived::sim
