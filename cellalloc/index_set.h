// cellalloc/index_set.h: a set of small integers 0..n-1 kept as a bitset with summary
// levels (one bit per 64-bit word below): insert, erase and "smallest element >= i" cost
// O(log64 n). Used for free lists in config order and for ordered node sets.
//
// Example:
//   IndexSet set;
//   set.Resize(100);
//   set.Insert(42);
//   int32_t first = set.FindNext(0);  // 42
//
// Thread safety: not thread-safe; callers serialize.
//
// Invariants: a bit of a summary level is set iff its 64-bit word below is non-zero.
#ifndef HIVED_CELLALLOC_INDEX_SET_H_
#define HIVED_CELLALLOC_INDEX_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hived::cellalloc {

class IndexSet {
 public:
  void Resize(int32_t n);
  void Insert(int32_t i) { Mark(0, static_cast<std::size_t>(i)); }
  void Erase(int32_t i) { Unmark(0, static_cast<std::size_t>(i)); }
  // Inserts (erases) first .. first + count - 1, a word at a time.
  void InsertRange(int32_t first, int32_t count);
  void EraseRange(int32_t first, int32_t count);
  bool Contains(int32_t i) const {
    return (levels_[0][static_cast<std::size_t>(i) >> 6] >> (i & 63)) & 1u;
  }
  // The smallest element >= from, or -1.
  int32_t FindNext(int32_t from) const;
  int32_t size() const { return size_; }
  // Bytes held by the bit levels (capacity).
  size_t MemoryBytes() const;

 private:
  int64_t Find(std::size_t level, int64_t from) const;
  // Sets (clears) bit `idx` of `level` and the summary bits above that change.
  void Mark(std::size_t level, std::size_t idx);
  void Unmark(std::size_t level, std::size_t idx);
  int32_t size_ = 0;
  std::vector<std::vector<uint64_t>> levels_;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_INDEX_SET_H_
