// SuggestedNodes: marks and counts for one request's suggested nodes.
#include "src/suggested_nodes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "src/internal/check.h"

namespace hived {

SuggestedNodes::SuggestedNodes(const cellalloc::CellForest* forest)
    : forest_(forest),
      node_marked_(static_cast<size_t>(forest->num_nodes()), 0),
      cell_count_(static_cast<size_t>(forest->num_cells()), 0) {}

void SuggestedNodes::Mark(const std::vector<std::string>& names) {
  HIVED_CHECK(!active_) << "suggested nodes marked twice";
  active_ = true;
  const cellalloc::CellForest& f = *forest_;
  for (const std::string& name : names) {
    const NodeId n = f.FindNode(name);
    if (n.IsNil() || node_marked_[n.value()] != 0) continue;
    node_marked_[n.value()] = 1;
    marked_.push_back(n);
    for (CellId c : f.node_cells(n)) {
      for (CellId x = c; !x.IsNil(); x = f.parent(x)) {
        if (cell_count_[x.value()]++ == 0) touched_.push_back(x.value());
      }
    }
  }
}

void SuggestedNodes::Clear() {
  for (NodeId n : marked_) node_marked_[n.value()] = 0;
  for (uint32_t c : touched_) cell_count_[c] = 0;
  marked_.clear();
  touched_.clear();
  active_ = false;
}

absl::Status SuggestedNodes::CheckInvariants() const {
  if (forest_ == nullptr) return absl::OkStatus();
  const cellalloc::CellForest& f = *forest_;
  std::vector<int32_t> expect(cell_count_.size(), 0);
  for (int32_t i = 0; i < f.num_nodes(); ++i) {
    const NodeId n(static_cast<uint32_t>(i));
    if (node_marked_[n.value()] == 0) continue;
    if (!active_)
      return absl::InternalError(
          absl::StrCat("(1) node ", f.node_name(n), " is marked while the filter is off"));
    for (CellId c : f.node_cells(n)) {
      for (CellId x = c; !x.IsNil(); x = f.parent(x)) ++expect[x.value()];
    }
  }
  for (size_t c = 0; c < expect.size(); ++c) {
    if (expect[c] != cell_count_[c]) {
      return absl::InternalError(
          absl::StrCat("(", active_ ? 2 : 1, ") cell ", f.address(CellId(static_cast<uint32_t>(c))),
                       " counts ", cell_count_[c], " suggested nodes, not ", expect[c]));
    }
  }
  return absl::OkStatus();
}

}  // namespace hived
