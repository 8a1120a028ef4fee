// PhysicalCells (src/physical_cells.h): building the per-cell arrays and the physical views,
// and the invariants.
#include "src/physical_cells.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"

namespace hived {

using cellalloc::CellForest;

void PhysicalCells::Build(const CellForest* forest) {
  forest_ = forest;
  const CellForest& f = *forest_;
  const size_t n = static_cast<size_t>(f.num_cells());
  {
    std::vector<CellId> parents(n);
    std::vector<int32_t> leaves(n);
    for (size_t i = 0; i < n; ++i) {
      parents[i] = f.parent(CellId(static_cast<uint32_t>(i)));
      leaves[i] = f.leaf_count(CellId(static_cast<uint32_t>(i)));
    }
    usage_ = cellalloc::PriorityUsage(std::move(parents), std::move(leaves));
  }
  user_.assign(n, kNilId);
  reserver_.assign(n, kNilId);
  node_cell_.assign(n, kNilId);
  view_pos_.assign(n, -1);
  // Node-level cell of every cell at or below node level.
  for (size_t i = 0; i < n; ++i) {
    CellId c(static_cast<uint32_t>(i));
    if (f.node(c).IsNil()) continue;
    CellId x = c;
    while (!f.is_node_level(x)) x = f.parent(x);
    node_cell_[i] = x.value();
  }
}

void PhysicalCells::AddViews(std::vector<View>* views) {
  const CellForest& f = *forest_;
  // Physical views, one per chain (view id == chain id).
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    View view;
    view.chain = ch;
    view.physical = true;
    std::vector<CellId> stack;
    const auto& tops = f.chain_info(ch).top_cells;
    for (auto it = tops.rbegin(); it != tops.rend(); ++it) stack.push_back(*it);
    while (!stack.empty()) {
      CellId x = stack.back();
      stack.pop_back();
      if (f.is_node_level(x)) {
        view_pos_[x.value()] = static_cast<int32_t>(view.nodes.size());
        view.nodes.push_back(x.value());
        continue;
      }
      for (int32_t k = f.num_children(x) - 1; k >= 0; --k) stack.push_back(f.child(x, k));
    }
    std::vector<int32_t> totals;
    for (uint32_t x : view.nodes) {
      totals.push_back(f.leaf_count(CellId(x)));
      view.total_leaves += totals.back();
    }
    view.index.Init(totals, /*two_keys=*/true);
    views->push_back(std::move(view));
  }
}

absl::Status PhysicalCells::CheckInvariants(const std::vector<View>& views) const {
  const CellForest& f = *forest_;
  auto fail = [](auto&&... parts) {
    return absl::InternalError(absl::StrCat("PhysicalCells ", parts...));
  };
  const size_t n = static_cast<size_t>(f.num_cells());
  // (1) Sizes; users and reservers at leaves only.
  if (user_.size() != n || reserver_.size() != n || node_cell_.size() != n ||
      view_pos_.size() != n) {
    return fail("(1) per-cell arrays are not one entry per cell");
  }
  for (size_t i = 0; i < n; ++i) {
    CellId c(static_cast<uint32_t>(i));
    if (f.level(c) != 1 && (user_[i] != kNilId || reserver_[i] != kNilId)) {
      return fail("(1) cell ", f.address(c), " is not a leaf but has a user or a reserver");
    }
    // (2) The node-level cell at or above.
    CellId want;  // nil
    if (!f.node(c).IsNil()) {
      want = c;
      while (!f.is_node_level(want)) want = f.parent(want);
    }
    if (node_cell_[i] != (want.IsNil() ? kNilId : want.value())) {
      return fail("(2) node-level cell of ", f.address(c), " is wrong");
    }
    // (4) Free iff neither user nor reserver.
    if (f.level(c) == 1) {
      const bool held = user_[i] != kNilId || reserver_[i] != kNilId;
      if (held != (usage_.LeafPriority(c) != kFreePriority)) {
        return fail("(4) leaf ", f.address(c), held ? " is held but free" : " is used by nobody");
      }
    }
  }
  // (3) Views' positions.
  if (views.size() < static_cast<size_t>(f.num_chains())) return fail("(3) missing views");
  std::vector<uint8_t> seen(n, 0);
  for (int32_t ch = 0; ch < f.num_chains(); ++ch) {
    const View& view = views[static_cast<size_t>(ch)];
    if (!view.physical || view.chain.value() != static_cast<uint32_t>(ch)) {
      return fail("(3) view ", ch, " is not chain ", ch, "'s physical view");
    }
    for (size_t k = 0; k < view.nodes.size(); ++k) {
      const uint32_t x = view.nodes[k];
      if (x >= n || !f.is_node_level(CellId(x)) ||
          f.chain(CellId(x)).value() != static_cast<uint32_t>(ch) || seen[x] != 0 ||
          view_pos_[x] != static_cast<int32_t>(k)) {
        return fail("(3) position ", k, " of chain ", ch, "'s view is wrong");
      }
      seen[x] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    CellId c(static_cast<uint32_t>(i));
    if (f.is_node_level(c) != (seen[i] != 0)) {
      return fail("(3) node-level cell ", f.address(c), " is not in its view once");
    }
    if (seen[i] == 0 && view_pos_[i] != -1) {
      return fail("(3) cell ", f.address(c), " has a view position but is not in a view");
    }
  }
  // (5) The usage.
  return usage_.CheckInvariants();
}

}  // namespace hived
