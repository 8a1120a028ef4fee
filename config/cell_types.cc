// The cell-type graph: which types are leaves, their levels, node levels and counts.
//
// Types are vertices and `childCellType` links are edges, parent -> child. Every defined type
// has exactly one child type, so the graph is a forest (an in-forest rooted at the leaf
// types) exactly when it has no cycle. Several parents may share a child type: HiveD's own
// design config puts `DGX2-V100-NODE` under both `2-DGX2-V100-NODE` and `3-DGX2-V100-NODE`,
// and the chains stay separate because a chain is a path down from its top type. Boost.Graph
// finds the cycles (strong components) and orders the other types leaves-first (topological
// sort), which is the order in which levels and counts are computed.
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <cctype>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/spec_analysis.h"

namespace hived::config_internal {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

std::string TypePath(const std::string& name) {
  return absl::StrCat("physicalCluster.cellTypes.", name);
}

void Report(std::vector<ConfigError>* errors, std::string path, std::string message,
            std::string hint = "") {
  if (errors == nullptr) return;
  ConfigError error;
  error.yaml_path = std::move(path);
  error.message = std::move(message);
  error.hint = std::move(hint);
  errors->push_back(std::move(error));
}

}  // namespace

int64_t SatMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a >= kSaturated / b) return kSaturated;
  return a * b;
}

int64_t SatAdd(int64_t a, int64_t b) { return std::min(kSaturated, a + b); }

int32_t TypeTable::Find(const std::string& name) const {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}

std::vector<int32_t> TypeTable::PathDown(int32_t t) const {
  std::vector<int32_t> path;
  while (t >= 0 && path.size() <= static_cast<size_t>(kMaxLevels)) {
    path.push_back(t);
    t = types[static_cast<size_t>(t)].child;
  }
  return path;
}

TypeTable AnalyzeCellTypes(const ClusterSpec& spec, std::vector<ConfigError>* errors) {
  TypeTable table;
  // Defined types first, in config order; a second definition of a name is an error.
  for (size_t i = 0; i < spec.cell_types.size(); ++i) {
    const CellTypeSpec& ct = spec.cell_types[i];
    const std::string path = TypePath(ct.name);
    if (ct.name.empty()) {
      Report(errors, "physicalCluster.cellTypes", "a cell type has an empty name");
      continue;
    }
    if (table.Find(ct.name) >= 0) {
      Report(errors, path, absl::StrCat("cell type `", ct.name, "` is defined twice"),
             "give each cell type one definition");
      continue;
    }
    if (ct.name.find('.') != std::string::npos) {
      Report(errors, path, absl::StrCat("cell type name `", ct.name, "` contains `.`"),
             "`.` separates the levels of a virtual cell path; rename the type");
    }
    TypeInfo info;
    info.name = ct.name;
    info.spec_index = static_cast<int32_t>(i);
    info.child_number = ct.child_cell_number;
    info.is_node_level = ct.is_node_level;
    table.index.emplace(ct.name, static_cast<int32_t>(table.types.size()));
    table.types.push_back(std::move(info));
  }
  const size_t defined = table.types.size();
  // Leaf types: referenced as a child type but not defined, in first-reference order.
  for (size_t t = 0; t < defined; ++t) {
    const CellTypeSpec& ct = spec.cell_types[static_cast<size_t>(table.types[t].spec_index)];
    const std::string path = TypePath(ct.name);
    if (ct.child_cell_type.empty()) {
      Report(errors, absl::StrCat(path, ".childCellType"),
             absl::StrCat("cell type `", ct.name, "` has no `childCellType`"),
             "name the type of its children; a type nobody defines is a leaf (device) type");
      continue;
    }
    if (ct.child_cell_number <= 0) {
      Report(errors, absl::StrCat(path, ".childCellNumber"),
             absl::StrCat("`childCellNumber` of `", ct.name, "` must be at least 1, got ",
                          ct.child_cell_number));
    }
    int32_t child = table.Find(ct.child_cell_type);
    if (child < 0) {
      if (ct.child_cell_type.find('.') != std::string::npos) {
        Report(errors, absl::StrCat(path, ".childCellType"),
               absl::StrCat("leaf cell type name `", ct.child_cell_type, "` contains `.`"),
               "`.` separates the levels of a virtual cell path; rename the type");
      }
      child = static_cast<int32_t>(table.types.size());
      TypeInfo leaf;
      leaf.name = ct.child_cell_type;
      table.index.emplace(leaf.name, child);
      table.types.push_back(std::move(leaf));
    }
    table.types[t].child = child;
  }

  // Cycles: a strong component with more than one type, or a type that is its own child.
  const size_t n = table.types.size();
  Graph graph(n);
  for (size_t t = 0; t < n; ++t) {
    if (table.types[t].child >= 0) {
      boost::add_edge(t, static_cast<size_t>(table.types[t].child), graph);
    }
  }
  std::vector<int> component(n);
  const int components = boost::strong_components(
      graph,
      boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, graph)));
  std::vector<int> component_size(static_cast<size_t>(components), 0);
  for (size_t t = 0; t < n; ++t) ++component_size[static_cast<size_t>(component[t])];
  std::vector<bool> cyclic(n, false);
  std::vector<bool> cycle_reported(static_cast<size_t>(components), false);
  for (size_t t = 0; t < n; ++t) {
    const int c = component[t];
    const bool self_loop = table.types[t].child == static_cast<int32_t>(t);
    if (component_size[static_cast<size_t>(c)] < 2 && !self_loop) continue;
    cyclic[t] = true;
    if (cycle_reported[static_cast<size_t>(c)]) continue;
    cycle_reported[static_cast<size_t>(c)] = true;
    // `t` is the cycle's first type in config order: name the loop from there.
    std::vector<std::string> names = {table.types[t].name};
    for (int32_t u = table.types[t].child; u != static_cast<int32_t>(t) && u >= 0;
         u = table.types[static_cast<size_t>(u)].child) {
      names.push_back(table.types[static_cast<size_t>(u)].name);
    }
    names.push_back(table.types[t].name);
    Report(errors, absl::StrCat(TypePath(table.types[t].name), ".childCellType"),
           absl::StrCat("cell types form a cycle: ", absl::StrJoin(names, " -> ")),
           "cell types must form a forest: follow `childCellType` down to a leaf type");
  }

  // Levels and counts, leaves first: a topological order of the graph without the cycles.
  Graph acyclic(n);
  for (size_t t = 0; t < n; ++t) {
    const int32_t c = table.types[t].child;
    if (c >= 0 && !cyclic[t] && !cyclic[static_cast<size_t>(c)]) {
      boost::add_edge(t, static_cast<size_t>(c), acyclic);
    }
  }
  std::vector<size_t> order;
  order.reserve(n);
  boost::topological_sort(acyclic, std::back_inserter(order));  // children before parents
  for (size_t t : order) {
    TypeInfo& info = table.types[t];
    if (cyclic[t]) continue;
    if (info.spec_index < 0) {  // a leaf type
      info.usable = true;
      info.level = 1;
      info.leaf = static_cast<int32_t>(t);
      info.leaf_count = 1;
      info.cell_count = 1;
      continue;
    }
    if (info.child < 0 || info.child_number <= 0) continue;
    const TypeInfo& child = table.types[static_cast<size_t>(info.child)];
    if (!child.usable) continue;
    if (child.level >= kMaxLevels) {
      if (child.level == kMaxLevels) {
        Report(errors, TypePath(info.name),
               absl::StrCat("cell type `", info.name, "` would be level ", child.level + 1,
                            "; at most ", kMaxLevels, " levels are supported"));
      }
      continue;
    }
    info.usable = true;
    info.level = child.level + 1;
    info.has_node = child.has_node || info.is_node_level;
    info.node_levels = child.node_levels + (info.is_node_level ? 1 : 0);
    info.leaf = child.leaf;
    info.leaf_count = SatMul(child.leaf_count, info.child_number);
    info.cell_count = SatAdd(1, SatMul(child.cell_count, info.child_number));
  }
  return table;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const char x = static_cast<char>(std::tolower(static_cast<unsigned char>(a[i - 1])));
      const char y = static_cast<char>(std::tolower(static_cast<unsigned char>(b[j - 1])));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x == y ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  // Close enough: at most a third of the longer name differs (and at least one edit).
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    if (candidate.empty() || candidate == name || name.size() > 200) continue;
    const size_t longer = std::max(name.size(), candidate.size());
    const size_t shorter = std::min(name.size(), candidate.size());
    if (longer - shorter > std::max<size_t>(1, longer / 3)) continue;
    const size_t distance = EditDistance(name, candidate);
    const size_t limit = std::max<size_t>(1, std::max(name.size(), candidate.size()) / 3);
    if (distance > limit) continue;
    if (best == nullptr || distance < best_distance) {
      best = &candidate;
      best_distance = distance;
    }
  }
  if (best == nullptr) return "";
  return absl::StrCat("did you mean `", *best, "`?");
}

}  // namespace hived::config_internal
