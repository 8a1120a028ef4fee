// The cell-type graph: which types are leaves, their levels, node levels and counts.
//
// Types are vertices and `childCellType` links are edges, parent -> child. Every defined type
// has exactly one child type (a functional graph), so the graph is a forest (an in-forest
// rooted at the leaf types) exactly when it has no cycle. Several parents may share a child
// type: HiveD's own design config puts `DGX2-V100-NODE` under both `2-DGX2-V100-NODE` and
// `3-DGX2-V100-NODE`, and the chains stay separate because a chain is a path down from its
// top type. One walk down from each type finds the cycles and resolves every other type
// after its child (leaves first), which is the order in which levels and counts are computed.
#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hierarchy/spec_analysis.h"

namespace hived::hierarchy {
namespace {

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

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  uint32_t lo = 0x80;  // the allowed range of the second byte (no overlongs, surrogates)
  uint32_t hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

bool ParseDeviceIndex(std::string_view text, int32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > std::numeric_limits<int32_t>::max()) return false;
  *out = static_cast<int32_t>(value);
  return true;
}

int64_t DefaultChildIndex(int64_t parent_index, bool parent_is_node_level, int32_t child_number,
                          int64_t k) {
  const int64_t base = parent_is_node_level ? 0 : parent_index;
  return SatAdd(SatMul(base, child_number), k);
}

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

TypeTable AnalyzeCellTypes(const ClusterSpec& spec, std::vector<ConfigError>* errors,
                           int32_t max_levels) {
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
    if (!IsValidUtf8(ct.name) || !IsValidUtf8(ct.child_cell_type)) {
      Report(errors, path, "the cell type's names are not valid UTF-8", "names must be UTF-8 text");
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

  // Cycles and a leaves-first order: walk down from each type until a type already seen.
  // Reaching a type on the current walk closes a cycle (the walk's part from that type).
  const size_t n = table.types.size();
  std::vector<int> cycle_of(n, -1);  // cycle number of the types on a cycle
  std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 on the current walk, 2 done
  std::vector<size_t> order;         // children before parents, cycles left out
  order.reserve(n);
  int cycles = 0;
  for (size_t start = 0; start < n; ++start) {
    std::vector<size_t> walk;
    size_t t = start;
    while (state[t] == 0) {
      state[t] = 1;
      walk.push_back(t);
      const int32_t child = table.types[t].child;
      if (child < 0) break;
      t = static_cast<size_t>(child);
    }
    if (state[t] == 1 && table.types[t].child >= 0) {  // `t` is on the walk: a cycle from it
      for (size_t k = static_cast<size_t>(std::find(walk.begin(), walk.end(), t) - walk.begin());
           k < walk.size(); ++k) {
        cycle_of[walk[k]] = cycles;
      }
      ++cycles;
    }
    for (size_t k = walk.size(); k-- > 0;) {
      state[walk[k]] = 2;
      if (cycle_of[walk[k]] < 0) order.push_back(walk[k]);
    }
  }
  std::vector<bool> cycle_reported(static_cast<size_t>(cycles), false);
  for (size_t t = 0; t < n; ++t) {
    const int c = cycle_of[t];
    if (c < 0 || cycle_reported[static_cast<size_t>(c)]) continue;
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

  // Levels and counts, leaves first.
  for (size_t t : order) {
    TypeInfo& info = table.types[t];
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
    if (child.level >= max_levels) {
      if (child.level == max_levels) {
        Report(errors, TypePath(info.name),
               absl::StrCat("cell type `", info.name, "` would be level ", child.level + 1,
                            "; at most ", max_levels, " levels are supported"));
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

}  // namespace hived::hierarchy
