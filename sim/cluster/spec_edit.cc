#include "sim/cluster/spec_edit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/cluster_info.h"
#include "hived/config.h"

namespace hived::sim {
namespace {

// The cell-type table of a spec: the types by name, path checks, and the leaves per cell of
// each type as the library derives them (`hived::DescribeCluster`).
class TypeTable {
 public:
  explicit TypeTable(const ClusterSpec& spec) {
    for (const CellTypeSpec& t : spec.cell_types) types_.emplace(t.name, &t);
    for (CellTypeDescription& t : DescribeCluster(spec).cell_types) {
      described_.emplace(t.name, std::move(t));
    }
  }
  bool IsLeaf(const std::string& type) const { return types_.count(type) == 0; }
  const CellTypeSpec* Find(const std::string& type) const {
    auto it = types_.find(type);
    return it == types_.end() ? nullptr : it->second;
  }
  // The library's description of `type`; nullptr for a name the spec does not know.
  const CellTypeDescription* Describe(const std::string& type) const {
    auto it = described_.find(type);
    return it == described_.end() ? nullptr : &it->second;
  }
  // Leaves under one cell of `type` (saturating at 2^60); 0 when the type is not well
  // defined (a cycle, an invalid spec); 1 for a name that is no type of the spec (a leaf).
  int64_t Leaves(const std::string& type) const {
    const CellTypeDescription* d = Describe(type);
    return d == nullptr ? 1 : d->leaf_cells;
  }
  // Splits a dotted path and checks each step is the previous type's child type.
  absl::StatusOr<std::vector<std::string>> Path(const std::string& path) const {
    std::vector<std::string> parts = absl::StrSplit(path, '.');
    for (size_t i = 1; i < parts.size(); ++i) {
      const CellTypeSpec* parent = Find(parts[i - 1]);
      if (parent == nullptr || parent->child_cell_type != parts[i]) {
        return absl::InvalidArgumentError(absl::StrCat("cell type path '", path, "': '", parts[i],
                                                       "' is not the child type of '", parts[i - 1],
                                                       "'"));
      }
    }
    return parts;
  }
  // The type whose child type is `type`, or "" for a top-level one (first in spec order).
  std::string ParentOf(const std::string& type) const {
    for (const auto& [name, t] : types_) {
      if (t->child_cell_type == type) return name;
    }
    return "";
  }

 private:
  std::map<std::string, const CellTypeSpec*> types_;
  std::map<std::string, CellTypeDescription> described_;
};

std::string ChainOf(const std::string& path) { return path.substr(0, path.find('.')); }
size_t Depth(const std::string& path) {
  return static_cast<size_t>(std::count(path.begin(), path.end(), '.'));
}

VirtualClusterSpec* FindVc(ClusterSpec* spec, const std::string& name) {
  for (VirtualClusterSpec& v : spec->virtual_clusters) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

absl::Status UnknownVc(const ClusterSpec& spec, const std::string& vc) {
  std::vector<std::string> names;
  for (const VirtualClusterSpec& v : spec.virtual_clusters) names.push_back(v.name);
  return absl::NotFoundError(absl::StrCat(
      "VC '", vc, "' is not in the config (its VCs: ", absl::StrJoin(names, ", "), ")"));
}

// Units of `unit_path` in one cell of `path`; error when not whole.
absl::StatusOr<int64_t> UnitsPerCell(const TypeTable& types, const std::string& path,
                                     const std::string& unit_path) {
  const std::vector<std::string> p = absl::StrSplit(path, '.');
  const std::vector<std::string> u = absl::StrSplit(unit_path, '.');
  const int64_t leaves = types.Leaves(p.back());
  const int64_t unit_leaves = types.Leaves(u.back());
  if (unit_leaves <= 0 || leaves % unit_leaves != 0 || leaves < unit_leaves) {
    return absl::InvalidArgumentError(
        absl::StrCat("a '", path, "' cell is not a whole number of '", unit_path, "' cells"));
  }
  return leaves / unit_leaves;
}

// Collects the addresses at node level and above (node and rack names) of a cell subtree.
void NamedAddresses(const TypeTable& types, const PhysicalCellSpec& cell, const std::string& type,
                    std::set<std::string>* out) {
  if (!cell.cell_address.empty()) out->insert(cell.cell_address);
  const CellTypeSpec* t = types.Find(type);
  if (t == nullptr || t->is_node_level) return;
  for (const PhysicalCellSpec& c : cell.cell_children) {
    NamedAddresses(types, c, t->child_cell_type, out);
  }
}

bool HasPinned(const PhysicalCellSpec& cell) {
  if (!cell.pinned_cell_id.empty()) return true;
  return std::any_of(cell.cell_children.begin(), cell.cell_children.end(), HasPinned);
}

// A copy of `cell` (of type `type`) with addresses at node level and above prefixed, and
// no pinned ids.
PhysicalCellSpec CopyCell(const TypeTable& types, const PhysicalCellSpec& cell,
                          const std::string& type, const std::string& prefix, bool below_node) {
  PhysicalCellSpec out;
  out.cell_type = cell.cell_type;
  out.cell_address = cell.cell_address;
  if (!below_node && !out.cell_address.empty()) out.cell_address = prefix + out.cell_address;
  const CellTypeSpec* t = types.Find(type);
  const bool child_below_node = below_node || t == nullptr || t->is_node_level;
  for (const PhysicalCellSpec& c : cell.cell_children) {
    out.cell_children.push_back(
        CopyCell(types, c, t ? t->child_cell_type : "", prefix, child_below_node));
  }
  return out;
}

std::vector<size_t> TopCellsOf(const ClusterSpec& spec, const std::string& chain) {
  std::vector<size_t> out;
  for (size_t i = 0; i < spec.physical_cells.size(); ++i) {
    if (spec.physical_cells[i].cell_type == chain) out.push_back(i);
  }
  return out;
}

// The deficit of each chain: top-level cells to add so every level fits (0 when it fits).
std::map<std::string, int64_t> Deficits(const ClusterSpec& spec) {
  std::map<std::string, int64_t> out;
  const CapacityReport report = ComputeCapacityReport(spec);
  for (const ChainCapacity& c : report.chains) {
    int64_t need = 0;
    for (const CapacityLevel& l : c.levels) {
      if (l.slack >= 0 || c.top_cells <= 0) continue;
      const int64_t per_top = std::max<int64_t>(1, l.physical_cells / c.top_cells);
      need = std::max(need, (-l.slack + per_top - 1) / per_top);
    }
    if (need > 0) out[c.chain] = need;
  }
  return out;
}

}  // namespace

absl::Status CheckSpec(const ClusterSpec& spec) {
  const std::vector<ConfigError> errors = ValidateClusterSpec(spec);
  if (errors.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const ConfigError& e : errors) lines.push_back(e.ToString());
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

absl::StatusOr<VcUnits> GetVcUnits(const ClusterSpec& spec, const std::string& vc,
                                   const std::string& unit_type) {
  const VirtualClusterSpec* v = FindVc(const_cast<ClusterSpec*>(&spec), vc);
  if (v == nullptr) return UnknownVc(spec, vc);
  const TypeTable types(spec);
  VcUnits out;
  out.unit_type = unit_type;
  if (out.unit_type.empty()) {
    if (v->virtual_cells.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("VC '", vc, "' has no virtual cells; name a cell type to size it"));
    }
    const std::string chain = ChainOf(v->virtual_cells.front().cell_type);
    for (const VirtualCellSpec& c : v->virtual_cells) {
      if (ChainOf(c.cell_type) == chain && Depth(c.cell_type) >= Depth(out.unit_type)) {
        if (out.unit_type.empty() || Depth(c.cell_type) > Depth(out.unit_type)) {
          out.unit_type = c.cell_type;
        }
      }
    }
  }
  if (absl::StatusOr<std::vector<std::string>> p = types.Path(out.unit_type); !p.ok()) {
    return p.status();
  }
  const std::string chain = ChainOf(out.unit_type);
  if (std::string parent = types.ParentOf(chain); !parent.empty()) {
    // A VC's cell type is a path from a chain (a top-level type): `P100-NODE` alone names no
    // chain; suggest the full path (bounded: a cyclic type table stops at its size).
    std::string path = out.unit_type;
    for (size_t i = 0; !parent.empty() && i < spec.cell_types.size(); ++i) {
      path = absl::StrCat(parent, ".", path);
      parent = types.ParentOf(parent);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cell type '", out.unit_type, "' does not start at a chain: name its path, '", path, "'"));
  }
  if (TopCellsOf(spec, chain).empty() && types.Find(chain) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cell type '", out.unit_type, "' is not in the config"));
  }
  for (const VirtualCellSpec& c : v->virtual_cells) {
    if (ChainOf(c.cell_type) != chain) continue;
    absl::StatusOr<int64_t> per = UnitsPerCell(types, c.cell_type, out.unit_type);
    if (!per.ok()) return per.status();
    out.units += *per * c.cell_number;
  }
  return out;
}

absl::Status SetVcUnits(ClusterSpec* spec, const std::string& vc, const std::string& unit_type,
                        int64_t units) {
  if (units < 0) return absl::InvalidArgumentError(absl::StrCat("VC size ", units, " < 0"));
  if (FindVc(spec, vc) == nullptr) {
    if (unit_type.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("VC '", vc, "' is not in the config; name its cell type to add it"));
    }
    if (units == 0) return absl::InvalidArgumentError("a new VC needs at least one cell");
    if (absl::StatusOr<std::vector<std::string>> p = TypeTable(*spec).Path(unit_type); !p.ok()) {
      return p.status();
    }
    VirtualClusterSpec added;
    added.name = vc;
    added.virtual_cells.push_back({unit_type, static_cast<int32_t>(units)});
    spec->virtual_clusters.push_back(std::move(added));
    return absl::OkStatus();
  }
  absl::StatusOr<VcUnits> current = GetVcUnits(*spec, vc, unit_type);
  if (!current.ok()) return current.status();
  const TypeTable types(*spec);
  VirtualClusterSpec* v = FindVc(spec, vc);
  const std::string chain = ChainOf(current->unit_type);
  // The shape: the chain's reserved types and the unit type, largest first.
  std::vector<std::string> shape{current->unit_type};
  size_t first = v->virtual_cells.size();
  for (size_t i = 0; i < v->virtual_cells.size(); ++i) {
    const std::string& t = v->virtual_cells[i].cell_type;
    if (ChainOf(t) != chain) continue;
    first = std::min(first, i);
    if (std::find(shape.begin(), shape.end(), t) == shape.end()) shape.push_back(t);
  }
  std::stable_sort(shape.begin(), shape.end(),
                   [](const std::string& a, const std::string& b) { return Depth(a) < Depth(b); });
  std::vector<VirtualCellSpec> cells;
  int64_t left = units;
  for (const std::string& t : shape) {
    absl::StatusOr<int64_t> per = UnitsPerCell(types, t, current->unit_type);
    if (!per.ok()) return per.status();
    const int64_t n = left / *per;
    left -= n * *per;
    if (n > int64_t{1} << 30) return absl::InvalidArgumentError("VC size too large");
    if (n > 0) cells.push_back({t, static_cast<int32_t>(n)});
  }
  std::vector<VirtualCellSpec> rebuilt;
  for (size_t i = 0; i < v->virtual_cells.size(); ++i) {
    if (i == first) rebuilt.insert(rebuilt.end(), cells.begin(), cells.end());
    if (ChainOf(v->virtual_cells[i].cell_type) != chain) rebuilt.push_back(v->virtual_cells[i]);
  }
  if (first == v->virtual_cells.size()) rebuilt.insert(rebuilt.end(), cells.begin(), cells.end());
  if (rebuilt.empty() && v->pinned_cells.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("VC '", vc, "' would have no cells left"));
  }
  v->virtual_cells = std::move(rebuilt);
  return absl::OkStatus();
}

absl::Status ScaleVcs(ClusterSpec* spec, const std::string& vc, double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) {
    return absl::InvalidArgumentError(absl::StrCat("scale factor ", factor, " must be > 0"));
  }
  if (!vc.empty() && FindVc(spec, vc) == nullptr) return UnknownVc(*spec, vc);
  std::vector<std::string> names;
  for (const VirtualClusterSpec& v : spec->virtual_clusters) {
    if ((vc.empty() || v.name == vc) && !v.virtual_cells.empty()) names.push_back(v.name);
  }
  for (const std::string& name : names) {
    absl::StatusOr<VcUnits> u = GetVcUnits(*spec, name, "");
    if (!u.ok()) return u.status();
    const double scaled = std::round(static_cast<double>(u->units) * factor);
    const int64_t units = std::max<int64_t>(1, static_cast<int64_t>(std::min(scaled, 1e12)));
    if (absl::Status s = SetVcUnits(spec, name, u->unit_type, units); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MoveVc(ClusterSpec* spec, const std::string& vc,
                                   const std::string& target) {
  VirtualClusterSpec* v = FindVc(spec, vc);
  if (v == nullptr) return UnknownVc(*spec, vc);
  const TypeTable types(*spec);
  // The unit path: as given, or the node-level path of the first chain of that leaf type.
  std::string unit = target;
  std::vector<std::string> leaf_types;
  for (const auto& [chain, count] : TopCellsPerChain(*spec)) {
    std::string path = chain;
    std::string t = chain;
    std::string node_path;
    for (int depth = 0; depth < 64 && types.Find(t) != nullptr; ++depth) {
      if (types.Find(t)->is_node_level && node_path.empty()) node_path = path;
      t = types.Find(t)->child_cell_type;
      if (types.Find(t) != nullptr) path += "." + t;
    }
    if (std::find(leaf_types.begin(), leaf_types.end(), t) == leaf_types.end()) {
      leaf_types.push_back(t);
    }
    if (t == target && unit == target) unit = node_path.empty() ? path : node_path;
  }
  absl::StatusOr<std::vector<std::string>> parts = types.Path(unit);
  if (!parts.ok()) return parts.status();
  if (TopCellsOf(*spec, parts->front()).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", target,
        "' is neither a leaf type nor a cell type path of the physical cluster (leaf types: ",
        absl::StrJoin(leaf_types, ", "), ")"));
  }
  std::string leaf = parts->back();
  for (const CellTypeSpec* t = types.Find(leaf); t != nullptr; t = types.Find(leaf)) {
    leaf = t->child_cell_type;
  }
  if (std::all_of(v->virtual_cells.begin(), v->virtual_cells.end(), [&](const VirtualCellSpec& c) {
        return ChainOf(c.cell_type) == parts->front();
      })) {
    return leaf;
  }
  auto leaves_of = [&](const std::string& path) {
    return types.Leaves(path.substr(path.rfind('.') + 1));  // npos + 1 == 0: the whole name
  };
  int64_t gpus = 0;
  for (const VirtualCellSpec& c : v->virtual_cells) gpus += leaves_of(c.cell_type) * c.cell_number;
  const int64_t unit_gpus = std::max<int64_t>(1, leaves_of(unit));
  int64_t left = (gpus + unit_gpus - 1) / unit_gpus;  // whole cells, rounded up
  // Greedy from the chain's top type down to the unit: "R", "R.N", ...
  std::vector<VirtualCellSpec> cells;
  std::string path;
  for (const std::string& part : *parts) {
    path += path.empty() ? part : "." + part;
    const int64_t per = std::max<int64_t>(1, leaves_of(path) / unit_gpus);
    const int64_t n = left / per;
    left -= n * per;
    if (n > int64_t{1} << 30) return absl::InvalidArgumentError("VC size too large");
    if (n > 0) cells.push_back({path, static_cast<int32_t>(n)});
  }
  v->virtual_cells = std::move(cells);
  if (absl::Status s = FitPhysicalCluster(spec); !s.ok()) return s;
  return leaf;
}

absl::Status AddTopCells(ClusterSpec* spec, const std::string& chain_name, int64_t count) {
  if (spec->physical_cells.empty()) return absl::NotFoundError("the config has no physical cells");
  const std::string chain =
      chain_name.empty() ? spec->physical_cells.front().cell_type : chain_name;
  std::vector<size_t> tops = TopCellsOf(*spec, chain);
  if (tops.empty()) {
    std::vector<std::string> chains;
    for (const auto& [c, n] : TopCellsPerChain(*spec)) chains.push_back(c);
    return absl::NotFoundError(absl::StrCat("no top-level cells of type '", chain,
                                            "' (chains: ", absl::StrJoin(chains, ", "), ")"));
  }
  if (count < 0) {
    std::vector<size_t> removable;
    for (auto it = tops.rbegin();
         it != tops.rend() && static_cast<int64_t>(removable.size()) < -count; ++it) {
      if (!HasPinned(spec->physical_cells[*it])) removable.push_back(*it);
    }
    if (static_cast<int64_t>(removable.size()) < -count || removable.size() >= tops.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot remove ", -count, " top-level cells of '", chain, "': it has ",
                       tops.size(), ", pinned cells stay and one cell must stay"));
    }
    std::sort(removable.rbegin(), removable.rend());
    for (size_t i : removable) {
      spec->physical_cells.erase(spec->physical_cells.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return absl::OkStatus();
  }
  if (count > (int64_t{1} << 20)) return absl::InvalidArgumentError("too many cells to add");
  const TypeTable types(*spec);
  std::set<std::string> used;
  for (const PhysicalCellSpec& c : spec->physical_cells) {
    NamedAddresses(types, c, c.cell_type, &used);
  }
  const PhysicalCellSpec model = spec->physical_cells[tops.back()];
  int64_t serial = 0;
  for (int64_t added = 0; added < count; ++added) {
    PhysicalCellSpec copy;
    std::set<std::string> names;
    do {  // the first prefix "add<serial>-" that clashes with no existing name
      copy = CopyCell(types, model, chain, absl::StrCat("add", ++serial, "-"), false);
      names.clear();
      NamedAddresses(types, copy, chain, &names);
    } while (std::any_of(names.begin(), names.end(),
                         [&](const std::string& a) { return used.count(a) > 0; }));
    used.insert(names.begin(), names.end());
    spec->physical_cells.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

absl::Status FitPhysicalCluster(ClusterSpec* spec) {
  for (int round = 0; round < 64; ++round) {
    const std::map<std::string, int64_t> deficits = Deficits(*spec);
    if (deficits.empty()) return CheckSpec(*spec);
    for (const auto& [chain, need] : deficits) {
      if (absl::Status s = AddTopCells(spec, chain, need); !s.ok()) return s;
    }
  }
  return CheckSpec(*spec);
}

void TrimPhysicalCluster(ClusterSpec* spec) {
  for (const auto& [chain, count] : TopCellsPerChain(*spec)) {
    // The largest k such that removing k cells keeps every level fitting (monotone in k).
    int64_t lo = 0, hi = count - 1;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      ClusterSpec trial = *spec;
      if (AddTopCells(&trial, chain, -mid).ok() && Deficits(trial).count(chain) == 0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (lo > 0) (void)AddTopCells(spec, chain, -lo).ok();
  }
}

std::vector<std::pair<std::string, int64_t>> TopCellsPerChain(const ClusterSpec& spec) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const PhysicalCellSpec& c : spec.physical_cells) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == c.cell_type; });
    if (it == out.end()) {
      out.emplace_back(c.cell_type, 1);
    } else {
      ++it->second;
    }
  }
  return out;
}

int64_t NodesPerTopCell(const ClusterSpec& spec, const std::string& chain) {
  const TypeTable types(spec);
  const CellTypeDescription* d = types.Describe(chain);
  if (d == nullptr || types.Find(chain) == nullptr || d->node_leaf_cells <= 0) return 0;
  return d->leaf_cells / d->node_leaf_cells;
}

}  // namespace hived::sim
