// `CellForest::CheckInvariants` (the numbered invariants of cell_forest.h, recomputed from
// the flat arrays in O(cells)) and `MemoryBytes`.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cellalloc/cell_forest.h"

namespace hived::cellalloc {
namespace {

constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();

absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

template <typename T>
size_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

size_t StringBytes(const std::string& s) {
  // Heap storage only beyond the small-string buffer.
  return s.capacity() > 15 ? s.capacity() + 1 : 0;
}

template <typename Map>
size_t MapBytes(const Map& m) {
  return m.bucket_count() * (sizeof(typename Map::value_type) + 1);
}

}  // namespace

absl::Status CellForest::CheckInvariants() const {
  const uint32_t n = static_cast<uint32_t>(num_cells());
  auto fail = [&](uint32_t c, int invariant, std::string_view what) {
    return absl::InternalError(absl::StrCat("cell forest invariant (", invariant,
                                            ") violated at cell ", c, " (", SpecPath(CellId(c)),
                                            "): ", ToAbsl(what)));
  };
  std::vector<int64_t> leaves(n, 0);
  std::vector<uint32_t> first_leaf_of(n, 0);  // recomputed bottom-up, O(cells)
  for (uint32_t c = n; c-- > 0;) {
    const CellTypeInfo& info = types_[type_[c]];
    if (info.child.IsNil()) {
      if (info.level != 1 || first_child_[c] != kNil) return fail(c, 2, "leaf with children");
      if (leaf_index_[c] < 0) return fail(c, 2, "leaf without a device index");
      leaves[c] = 1;
      first_leaf_of[c] = c;
    } else {
      const uint32_t first = first_child_[c];
      if (first == kNil || first <= c || first + static_cast<uint32_t>(info.child_count) > n) {
        return fail(c, 1, "children out of range");
      }
      for (uint32_t k = 0; k < static_cast<uint32_t>(info.child_count); ++k) {
        const uint32_t child = first + k;
        if (parent_[child] != c) return fail(child, 1, "parent link does not match");
        if (types_[type_[child]].level != info.level - 1) return fail(child, 1, "bad level");
        if (type_[child] != info.child.value()) return fail(child, 2, "bad child type");
        if (chain_[child] != chain_[c]) return fail(child, 1, "chain differs from parent's");
        // The children's leaf ranges follow each other without a gap.
        if (k > 0 && first_leaf_of[child] !=
                         first_leaf_of[child - 1] + static_cast<uint32_t>(leaves[child - 1])) {
          return fail(c, 3, "leaves are not consecutive");
        }
        leaves[c] += leaves[child];
      }
      first_leaf_of[c] = first_leaf_of[first];
    }
    if (leaves[c] != info.leaf_count) return fail(c, 3, "leaf count mismatch");
    if (first_leaf_of[c] + static_cast<uint32_t>(info.leaf_count) > n) {
      return fail(c, 3, "leaf range out of bounds");
    }
    // (4): node ids along the path.
    const uint32_t p = parent_[c];
    const bool parent_at_or_below_node = p != kNil && node_[p] != kNil;
    if (info.is_node_level) {
      if (parent_at_or_below_node) return fail(c, 4, "two node levels on one path");
      if (node_[c] == kNil || node_[c] >= node_names_.size()) return fail(c, 4, "no node id");
    } else if (parent_at_or_below_node) {
      if (node_[c] != node_[p]) return fail(c, 4, "node differs from parent's");
    } else if (node_[c] != kNil) {
      return fail(c, 4, "a cell above node level has a node");
    }
    if (info.child.IsNil() && node_[c] == kNil) return fail(c, 4, "no node level above leaf");
  }
  return absl::OkStatus();
}

size_t CellForest::MemoryBytes() const {
  size_t bytes = sizeof(*this);
  bytes += VectorBytes(type_) + VectorBytes(chain_) + VectorBytes(parent_) +
           VectorBytes(first_child_) + VectorBytes(node_) + VectorBytes(leaf_index_);
  bytes += MapBytes(explicit_address_) + MapBytes(pinned_id_);
  for (const auto& [cell, s] : explicit_address_) bytes += StringBytes(s);
  for (const auto& [cell, s] : pinned_id_) bytes += StringBytes(s);
  bytes += VectorBytes(types_) + MapBytes(type_by_name_);
  bytes += VectorBytes(chains_) + MapBytes(chain_by_name_);
  for (const ChainInfo& ch : chains_) {
    bytes += VectorBytes(ch.types) + VectorBytes(ch.child_count) + VectorBytes(ch.top_cells) +
             VectorBytes(ch.cells_at_level);
  }
  bytes += VectorBytes(node_names_) + MapBytes(node_by_name_) + VectorBytes(node_cells_);
  for (const std::string& s : node_names_) bytes += 2 * StringBytes(s);  // vector + map key
  for (const std::vector<CellId>& v : node_cells_) bytes += VectorBytes(v);
  bytes += MapBytes(pinned_by_id_) + MapBytes(chains_of_leaf_type_) + VectorBytes(leaf_types_);
  return bytes;
}

}  // namespace hived::cellalloc
