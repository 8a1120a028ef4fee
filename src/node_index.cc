#include "src/node_index.h"

#include <algorithm>

namespace hived::internal {

void NodeIndex::Init(const std::vector<int32_t>& totals, bool two_keys) {
  totals_ = totals;
  two_keys_ = two_keys;
  size_t n = totals.size();
  key1_.assign(n, 0);
  key2_.assign(n, 0);
  healthy_.assign(n, 1);
  unhealthy_.clear();
  max_total_ = 0;
  uniform_ = true;
  for (int32_t t : totals) max_total_ = std::max(max_total_, t);
  for (int32_t t : totals) uniform_ = uniform_ && t == max_total_;
  int32_t slots = (max_total_ + 1) * (max_total_ + 1);
  sets_.assign(static_cast<size_t>(slots), IndexSet());
  counts_.assign(static_cast<size_t>(slots), 0);
  pos_of_slot_.assign(static_cast<size_t>(slots), -1);
  order_.clear();
  order_k1_.clear();
  order_k2_.clear();
  for (int32_t k1 = max_total_; k1 >= 0; --k1) {
    int32_t k2_max = two_keys ? max_total_ - k1 : 0;
    for (int32_t k2 = 0; k2 <= k2_max; ++k2) {
      int32_t slot = Slot(k1, k2);
      pos_of_slot_[static_cast<size_t>(slot)] = static_cast<int32_t>(order_.size());
      order_.push_back(slot);
      order_k1_.push_back(k1);
      order_k2_.push_back(k2);
      sets_[static_cast<size_t>(slot)].Resize(static_cast<int32_t>(n));
    }
  }
  for (size_t i = 0; i < n; ++i) Add(static_cast<int32_t>(i));
}

void NodeIndex::Add(int32_t node) {
  int32_t slot = Slot(key1_[static_cast<size_t>(node)], key2_[static_cast<size_t>(node)]);
  sets_[static_cast<size_t>(slot)].Insert(node);
  ++counts_[static_cast<size_t>(slot)];
}

void NodeIndex::Remove(int32_t node) {
  int32_t slot = Slot(key1_[static_cast<size_t>(node)], key2_[static_cast<size_t>(node)]);
  sets_[static_cast<size_t>(slot)].Erase(node);
  --counts_[static_cast<size_t>(slot)];
}

void NodeIndex::SetKeys(int32_t node, int32_t key1, int32_t key2) {
  size_t i = static_cast<size_t>(node);
  if (!two_keys_) key2 = 0;
  if (key1_[i] == key1 && key2_[i] == key2) return;
  if (healthy_[i]) Remove(node);
  key1_[i] = key1;
  key2_[i] = key2;
  if (healthy_[i]) Add(node);
}

void NodeIndex::SetHealthy(int32_t node, bool healthy) {
  size_t i = static_cast<size_t>(node);
  if ((healthy_[i] != 0) == healthy) return;
  healthy_[i] = healthy ? 1 : 0;
  if (healthy) {
    Add(node);
    unhealthy_.erase(std::find(unhealthy_.begin(), unhealthy_.end(), node));
  } else {
    Remove(node);
    unhealthy_.push_back(node);
  }
}

int32_t NodeIndex::BucketOf(int32_t node) const {
  return pos_of_slot_[static_cast<size_t>(
      Slot(key1_[static_cast<size_t>(node)], key2_[static_cast<size_t>(node)]))];
}

}  // namespace hived::internal
