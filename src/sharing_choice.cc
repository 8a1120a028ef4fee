// Sharing's fragmentation-aware choice (src/share_choice.h; docs/gpu-sharing.md, "The
// library's rule"): which open GPU a share takes, or which node a fresh leaf is opened on.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "src/scheduler_impl.h"
#include "src/sharing.h"

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
    used += static_cast<uint64_t>(core_->UsedLeaves(cell));
  }
  return used;
}

int32_t Sharing::LeafPos(CellId leaf) const {
  int32_t pos = 0;
  for (CellId cell : forest_.node_cells(forest_.node(leaf))) {
    const uint32_t first = forest_.first_leaf(cell).value();
    const uint32_t count = static_cast<uint32_t>(forest_.leaf_count(cell));
    if (leaf.value() >= first && leaf.value() < first + count) {
      return pos + static_cast<int32_t>(leaf.value() - first);
    }
    pos += static_cast<int32_t>(count);
  }
  return -1;
}

CellId Sharing::PlaceStranded(const GroupRequest& r, const Parsed& p, const PodAsk& a,
                              const Tentative& t) const {
  const ShareChoice::Shape shape{a.cpu, a.host_memory, a.milli, 1, TypeMask(p.types)};
  ShareChoice::ShapeCache* cache = choice_.CacheOf(shape);
  auto changes = [&](uint32_t n) -> const absl::InlinedVector<double, 9>& {
    return choice_.Changes(cache, shape, n, CoreUsed(n), [&] { return NodeStateOf(n); });
  };
  const double inf = std::numeric_limits<double>::infinity();
  CellId best;
  double best_change = inf;
  int32_t best_left = cellalloc::kGpuMilli + 1;
  for (const auto& [id, gpu] : shares_.open()) {
    const CellId leaf(id);
    if (mig_.Used(leaf) > 0) continue;  // a GPU with MIG instances takes no fractional share
    // Cheap tests first (the cached change is O(1)); lookups only for a better candidate.
    const int32_t left = cellalloc::kGpuMilli - gpu.used_milli - a.milli;
    if (left < 0) continue;
    const double change = changes(forest_.node(leaf).value())[static_cast<size_t>(LeafPos(leaf))];
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
    uint64_t leaves = 0;
    for (CellId cell : forest_.node_cells(NodeId(n))) {
      leaves += static_cast<uint64_t>(forest_.leaf_count(cell));
    }
    const uint64_t used = CoreUsed(n);
    if (used >= leaves || !core_->NodeHealthy(NodeId(n))) continue;
    const double change = changes(n).back();
    if (change < fresh) {
      fresh = change;
      fresh_node = n;
    }
  }
  if (fresh < inf) preferred_node_ = forest_.node_name(NodeId(fresh_node));
  return CellId();
}

}  // namespace hived
