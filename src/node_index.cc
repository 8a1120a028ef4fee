#include "src/node_index.h"

#include <algorithm>

namespace hived::internal {

void IndexSet::Resize(int32_t n) {
  size_ = n;
  levels_.clear();
  size_t words = (static_cast<size_t>(n) + 63) / 64;
  if (words == 0) words = 1;
  levels_.emplace_back(words, 0);
  while (words > 1) {
    words = (words + 63) / 64;
    levels_.emplace_back(words, 0);
  }
}

void IndexSet::Insert(int32_t i) {
  size_t idx = static_cast<size_t>(i);
  for (auto& level : levels_) {
    uint64_t& w = level[idx >> 6];
    bool was_empty = w == 0;
    w |= uint64_t{1} << (idx & 63);
    if (!was_empty) return;
    idx >>= 6;
  }
}

void IndexSet::Erase(int32_t i) {
  size_t idx = static_cast<size_t>(i);
  for (auto& level : levels_) {
    uint64_t& w = level[idx >> 6];
    w &= ~(uint64_t{1} << (idx & 63));
    if (w != 0) return;
    idx >>= 6;
  }
}

int64_t IndexSet::Find(size_t level, int64_t from) const {
  const std::vector<uint64_t>& words = levels_[level];
  size_t w = static_cast<size_t>(from) >> 6;
  if (w >= words.size()) return -1;
  uint64_t bits = words[w] & (~uint64_t{0} << (from & 63));
  if (bits != 0) return static_cast<int64_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
  if (level + 1 == levels_.size()) {
    for (size_t k = w + 1; k < words.size(); ++k) {
      if (words[k] != 0) {
        return static_cast<int64_t>(k * 64 + static_cast<size_t>(__builtin_ctzll(words[k])));
      }
    }
    return -1;
  }
  int64_t next_word = Find(level + 1, static_cast<int64_t>(w) + 1);
  if (next_word < 0) return -1;
  return next_word * 64 + __builtin_ctzll(words[static_cast<size_t>(next_word)]);
}

int32_t IndexSet::FindNext(int32_t from) const {
  if (from >= size_ || levels_.empty()) return -1;
  int64_t r = Find(0, from < 0 ? 0 : from);
  return r >= size_ ? -1 : static_cast<int32_t>(r);
}

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
