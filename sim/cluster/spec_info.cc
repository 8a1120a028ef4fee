#include "sim/cluster/spec_info.h"

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

}  // namespace

SpecInfo::SpecInfo(const ClusterSpec& spec) : spec_(spec), description_(DescribeCluster(spec)) {
  for (size_t t = 0; t < description_.cell_types.size(); ++t) {
    types_.emplace(description_.cell_types[t].name, t);
  }
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

// Names not in the description are treated as leaf types (one leaf, their own leaf type);
// a type that is not well defined has no leaves. The rules are the library's
// (`hived::DescribeCluster`), not re-derived here.
const CellTypeDescription* SpecInfo::FindType(const std::string& type) const {
  auto it = types_.find(type);
  return it == types_.end() ? nullptr : &description_.cell_types[it->second];
}

int64_t SpecInfo::LeafCount(const std::string& type) const {
  const CellTypeDescription* t = FindType(type);
  return t == nullptr ? 1 : t->leaf_cells;
}

std::string SpecInfo::LeafType(const std::string& type) const {
  const CellTypeDescription* t = FindType(type);
  return t == nullptr || t->leaf_cell_type.empty() ? type : t->leaf_cell_type;
}

int32_t SpecInfo::NodeGpus(const std::string& chain) const {
  const CellTypeDescription* t = FindType(chain);
  return t == nullptr ? 0 : static_cast<int32_t>(t->node_leaf_cells);
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
  for (const PinnedCellDescription& pinned : description_.pinned_cells) {
    if (pinned.pinned_cell_id != id) continue;
    *type = pinned.cell_type;
    *top = pinned.top_cell;
    return true;
  }
  return false;
}

int64_t SpecInfo::PinnedGpus(const std::string& id) const {
  std::string type;
  int top = 0;
  return FindPinned(id, &type, &top) ? LeafCount(type) : 0;
}

int32_t SpecInfo::PinnedVc(const std::string& id) const {
  for (size_t v = 0; v < spec_.virtual_clusters.size(); ++v) {
    for (const PinnedCellSpec& p : spec_.virtual_clusters[v].pinned_cells) {
      if (p.pinned_cell_id == id) return static_cast<int32_t>(v);
    }
  }
  return -1;
}

std::vector<int64_t> SpecInfo::VcGuarantees(const std::vector<std::string>& named_pins) const {
  std::vector<int64_t> out;
  for (const Vc& v : vcs_) out.push_back(v.virtual_gpus);
  std::vector<std::string> pins = named_pins;
  std::sort(pins.begin(), pins.end());
  pins.erase(std::unique(pins.begin(), pins.end()), pins.end());
  for (const std::string& id : pins) {
    const int32_t v = PinnedVc(id);
    if (v >= 0) out[static_cast<size_t>(v)] += PinnedGpus(id);
  }
  return out;
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
