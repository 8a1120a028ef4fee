// src/taken_leaves.h: the leaves a request's leaf choice has already taken, counted in
// every cell on their paths up to the node cell, so the choice of the next pod in the same
// node skips them (scheduler.h rule 5). One instance over physical cells, one over virtual.
//
// Contract: `Take` records a leaf and its ancestors up to the node cell; `Clear` forgets
// every count in O(cells touched). Between requests everything is zero.
//
// Invariants (checked by `IsClear` / tests/unit/scheduler/taken_leaves_test.cc):
//  (1) Between requests every count is zero and nothing is touched.
//  (2) For every cell, 0 <= free(c) <= total(c), and total(c) is the number of leaves taken
//      at or below c since the last `Clear` (free(c): of them, those that were free).
//  (3) Each touched cell is listed once, so clearing costs O(cells touched).
//
// Thread safety: not thread-safe; one request at a time.
#ifndef HIVED_SRC_TAKEN_LEAVES_H_
#define HIVED_SRC_TAKEN_LEAVES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hived {

class TakenLeaves {
 public:
  // All zero, over `num_cells` cell ids.
  void Reset(size_t num_cells) {
    total_.assign(num_cells, 0);
    free_.assign(num_cells, 0);
    touched_.clear();
  }
  int32_t total(uint32_t c) const { return total_[c]; }
  int32_t free(uint32_t c) const { return free_[c]; }
  // Takes `leaf` and counts it in every cell from it up to `top` (inclusive), following
  // `parent(cell)`. REQUIRES: `top` is `leaf` or an ancestor of it.
  template <typename ParentFn>
  void Take(uint32_t leaf, bool is_free, uint32_t top, ParentFn&& parent) {
    for (uint32_t x = leaf;; x = parent(x)) {
      if (total_[x]++ == 0 && free_[x] == 0) touched_.push_back(x);
      if (is_free) ++free_[x];
      if (x == top) break;
    }
  }
  void Clear() {
    for (uint32_t c : touched_) total_[c] = free_[c] = 0;
    touched_.clear();
  }
  // Invariant 1, for tests: O(cells).
  bool IsClear() const {
    if (!touched_.empty()) return false;
    for (size_t c = 0; c < total_.size(); ++c) {
      if (total_[c] != 0 || free_[c] != 0) return false;
    }
    return true;
  }

 private:
  std::vector<int32_t> total_;  // per cell id
  std::vector<int32_t> free_;
  std::vector<uint32_t> touched_;
};

}  // namespace hived

#endif  // HIVED_SRC_TAKEN_LEAVES_H_
