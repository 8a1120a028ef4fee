#include "sim/engine/cluster_backend.h"

namespace hived::sim {

NodeUsage::NodeUsage(std::vector<int32_t> capacity)
    : capacity_(std::move(capacity)), used_(capacity_.size(), 0) {
  for (int32_t c : capacity_) capacity_total_ += c;
}

int64_t NodeUsage::FragmentOf(size_t node) const {
  const int32_t used = used_[node];
  return used > 0 && used < capacity_[node] ? capacity_[node] - used : 0;
}

void NodeUsage::Add(int32_t node, int32_t gpus) {
  const size_t n = static_cast<size_t>(node);
  fragmented_free_ -= FragmentOf(n);
  used_[n] += gpus;
  used_total_ += gpus;
  fragmented_free_ += FragmentOf(n);
}

void NodeUsage::Remove(int32_t node, int32_t gpus) {
  const size_t n = static_cast<size_t>(node);
  fragmented_free_ -= FragmentOf(n);
  used_[n] -= gpus;
  used_total_ -= gpus;
  fragmented_free_ += FragmentOf(n);
}

}  // namespace hived::sim
