// src/node_index.h: ordered sets of scheduling "nodes" for the greedy node choice.
//
// `NodeIndex` keeps the nodes of one cluster view (a VC's virtual nodes in one chain, a
// pinned cell's nodes, or a chain's physical nodes) ordered the way HiveD's topology-aware
// scheduler sorts them, without sorting per request:
//   key1 descending, then key2 ascending, then node index (config order) ascending.
// For a VC view key1 = leaves used at any priority and key2 = 0 (cross-priority packing);
// for a physical view key1 = opportunistic leaves and key2 = guaranteed leaves.
// Unhealthy nodes are kept out of the buckets (they sort after every healthy node; the
// scheduler looks at them only to explain a failure).
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SRC_NODE_INDEX_H_
#define HIVED_SRC_NODE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cellalloc/index_set.h"

namespace hived::internal {

using IndexSet = cellalloc::IndexSet;

class NodeIndex {
 public:
  // `totals[i]` is node i's leaf count. `two_keys` false means key2 is always 0.
  void Init(const std::vector<int32_t>& totals, bool two_keys);

  int32_t num_nodes() const { return static_cast<int32_t>(totals_.size()); }
  int32_t total(int32_t node) const { return totals_[static_cast<std::size_t>(node)]; }
  int32_t key1(int32_t node) const { return key1_[static_cast<std::size_t>(node)]; }
  int32_t key2(int32_t node) const { return key2_[static_cast<std::size_t>(node)]; }
  bool healthy(int32_t node) const { return healthy_[static_cast<std::size_t>(node)] != 0; }
  bool uniform() const { return uniform_; }
  int32_t max_total() const { return max_total_; }

  void SetKeys(int32_t node, int32_t key1, int32_t key2);
  void SetHealthy(int32_t node, bool healthy);
  const std::vector<int32_t>& unhealthy_nodes() const { return unhealthy_; }

  // Buckets in sort order: b = 0 .. num_buckets()-1. Bucket (k1, k2) holds healthy nodes
  // with those keys.
  int32_t num_buckets() const { return static_cast<int32_t>(order_.size()); }
  int32_t bucket_key1(int32_t b) const { return order_k1_[static_cast<std::size_t>(b)]; }
  int32_t bucket_key2(int32_t b) const { return order_k2_[static_cast<std::size_t>(b)]; }
  int32_t bucket_count(int32_t b) const {
    return counts_[static_cast<std::size_t>(order_[static_cast<std::size_t>(b)])];
  }
  // First healthy node >= from in bucket b (in sort order), or -1.
  int32_t NextInBucket(int32_t b, int32_t from) const {
    return sets_[static_cast<std::size_t>(order_[static_cast<std::size_t>(b)])].FindNext(from);
  }
  // The sort position of a healthy node's bucket.
  int32_t BucketOf(int32_t node) const;

 private:
  int32_t Slot(int32_t k1, int32_t k2) const { return k1 * (max_total_ + 1) + k2; }
  void Add(int32_t node);
  void Remove(int32_t node);

  std::vector<int32_t> totals_, key1_, key2_;
  std::vector<uint8_t> healthy_;
  std::vector<int32_t> unhealthy_;  // unordered
  int32_t max_total_ = 0;
  bool uniform_ = true;
  bool two_keys_ = false;
  std::vector<IndexSet> sets_;   // by slot
  std::vector<int32_t> counts_;  // by slot
  std::vector<int32_t> order_;   // sort position -> slot
  std::vector<int32_t> order_k1_, order_k2_;
  std::vector<int32_t> pos_of_slot_;  // slot -> sort position
};

}  // namespace hived::internal

#endif  // HIVED_SRC_NODE_INDEX_H_
