// Sharing's fragmentation-aware choice (src/share_choice.h; docs/gpu-sharing.md, "The
// library's rule"): which open GPU a share takes, or which node a fresh leaf is opened on.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sharing/sharing.h"
#include "src/internal/check.h"
#include "src/scheduler_impl.h"

namespace hived {

uint64_t Sharing::TypeMask(const std::vector<std::string>& types) const {
  if (types.empty()) return ~uint64_t{0};
  uint64_t mask = 0;
  const std::vector<std::string>& all = forest_.leaf_types();
  for (size_t i = 0; i < all.size() && i < 64; ++i) {
    if (std::find(types.begin(), types.end(), all[i]) != types.end()) mask |= uint64_t{1} << i;
  }
  return mask;
}

uint64_t Sharing::CoreUsed(uint32_t node) const {
  uint64_t used = 0;
  for (CellId cell : forest_.node_cells(NodeId(node))) {
    used += static_cast<uint64_t>(whole_.UsedLeaves(cell));
  }
  return used;
}

void Sharing::IndexLeaves() const {
  if (leaves_indexed_) return;  // built once: the forest never changes
  leaves_indexed_ = true;
  leaf_pos_.assign(static_cast<size_t>(forest_.num_cells()), -1);
  node_leaves_.assign(static_cast<size_t>(forest_.num_nodes()), 0);
  node_types_.assign(static_cast<size_t>(forest_.num_nodes()), 0);
  const std::vector<std::string>& types = forest_.leaf_types();
  for (uint32_t n = 0; n < static_cast<uint32_t>(forest_.num_nodes()); ++n) {
    int32_t pos = 0;
    for (CellId cell : forest_.node_cells(NodeId(n))) {
      const size_t t = static_cast<size_t>(
          std::find(types.begin(), types.end(), forest_.chain_info(forest_.chain(cell)).leaf_type) -
          types.begin());
      if (t < 64) node_types_[n] |= uint64_t{1} << t;
      const uint32_t first = forest_.first_leaf(cell).value();
      const uint32_t count = static_cast<uint32_t>(forest_.leaf_count(cell));
      for (uint32_t i = 0; i < count; ++i) leaf_pos_[first + i] = pos++;
    }
    node_leaves_[n] = static_cast<uint64_t>(pos);
  }
}

int32_t Sharing::LeafPos(CellId leaf) const {
  IndexLeaves();
  return leaf.value() < leaf_pos_.size() ? leaf_pos_[leaf.value()] : -1;
}

CellId Sharing::PlaceStranded(const GroupRequest& r, const Parsed& p, const PodAsk& a,
                              const Tentative& t, std::string* preferred) const {
  IndexLeaves();
  const ShareChoice::Shape shape{a.cpu, a.host_memory, a.milli, 1, TypeMask(p.types)};
  ShareChoice::ShapeCache* cache = choice_.CacheOf(shape);
  auto change_at = [&](uint32_t n, int32_t choice) {
    return choice_.ChangeAt(
        cache, shape, n, CoreUsed(n), [&] { return NodeStateOf(n); }, choice);
  };
  const double inf = std::numeric_limits<double>::infinity();
  CellId best;
  double best_change = inf;
  int32_t best_left = cellalloc::kGpuMilli + 1;
  for (const auto& [id, gpu] : shares_.open()) {  // leaf id order
    const CellId leaf(id);
    const int32_t used_milli = gpu.used_milli;
    if (mig_.Used(leaf) > 0) continue;  // a GPU with MIG instances takes no fractional share
    // Cheap tests first (the cached change is O(1)); lookups only for a better candidate.
    const int32_t left = cellalloc::kGpuMilli - used_milli - a.milli;
    if (left < 0) continue;
    const double change = change_at(forest_.node(leaf).value(), LeafPos(leaf));
    if (change > best_change || (change == best_change && left >= best_left)) continue;
    if (!TypeAllowed(p, leaf) || !Compatible(r, p.guaranteed, leaf) || !NodeRoom(leaf, a, t) ||
        !shares_.Fits(leaf, a.milli, a.memory)) {
      continue;
    }
    best = leaf;
    best_change = change;
    best_left = left;
  }
  if (!best.IsNil()) return best;  // open GPUs first: a fresh leaf only when none has room
  // A fresh leaf: the node where one strands least (the scheduler may still refuse it).
  double fresh = inf;
  uint32_t fresh_node = 0;
  for (uint32_t n = 0; n < static_cast<uint32_t>(forest_.num_nodes()); ++n) {
    const uint64_t used = CoreUsed(n);
    if (used >= node_leaves_[n] || !whole_.NodeHealthy(NodeId(n))) continue;
    const double change = change_at(n, ShareChoice::kAnyFreeLeaf);
    if (change < fresh) {
      fresh = change;
      fresh_node = n;
    }
  }
  if (fresh < inf && preferred != nullptr) *preferred = forest_.node_name(NodeId(fresh_node));
  return CellId();
}

}  // namespace hived
