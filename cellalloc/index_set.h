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
// Layout: every level's words in one array, the bottom level (the elements) first, then
// each summary level. Insert and Erase touch one bottom word inline and go up only when
// that word turns empty or non-empty; FindNext answers from the bottom word when it can.
//
// Thread safety: not thread-safe; callers serialize.
//
// Invariants (CheckInvariants):
//  (1) A bit of a summary level is set iff its 64-bit word below is non-zero.
//  (2) No bit at or above `size()` is set.
#ifndef HIVED_CELLALLOC_INDEX_SET_H_
#define HIVED_CELLALLOC_INDEX_SET_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace hived::cellalloc {

class IndexSet {
 public:
  void Resize(int32_t n);
  void Insert(int32_t i) {
    const size_t idx = static_cast<size_t>(i);
    uint64_t& w = words_[idx >> 6];
    const bool was_empty = w == 0;
    w |= Bit(idx);
    if (was_empty) MarkAbove(idx >> 6);
  }
  void Erase(int32_t i) {
    const size_t idx = static_cast<size_t>(i);
    uint64_t& w = words_[idx >> 6];
    if (w == 0) return;
    w &= ~Bit(idx);
    if (w == 0) UnmarkAbove(idx >> 6);
  }
  // Inserts (erases) first .. first + count - 1, a word at a time; inline when the range
  // lies in one word (a split's or merge's children, the common case).
  void InsertRange(int32_t first, int32_t count) {
    const size_t i = static_cast<size_t>(first);
    const size_t n = static_cast<size_t>(count);
    if ((i & 63) + n > 64) return InsertRangeSlow(i, i + n);
    uint64_t& w = words_[i >> 6];
    const bool was_empty = w == 0;
    w |= WordMask(i, n);
    if (was_empty && n > 0) MarkAbove(i >> 6);
  }
  void EraseRange(int32_t first, int32_t count) {
    const size_t i = static_cast<size_t>(first);
    const size_t n = static_cast<size_t>(count);
    if ((i & 63) + n > 64) return EraseRangeSlow(i, i + n);
    uint64_t& w = words_[i >> 6];
    if (w == 0) return;
    w &= ~WordMask(i, n);
    if (w == 0) UnmarkAbove(i >> 6);
  }
  bool Contains(int32_t i) const { return (words_[static_cast<size_t>(i) >> 6] >> (i & 63)) & 1u; }
  // The smallest element >= from, or -1.
  int32_t FindNext(int32_t from) const {
    if (from >= size_) return -1;
    const size_t idx = from < 0 ? 0 : static_cast<size_t>(from);
    const uint64_t bits = words_[idx >> 6] & (~uint64_t{0} << (idx & 63));
    if (bits != 0) return static_cast<int32_t>((idx & ~size_t{63}) + Ctz(bits));
    return FindAfterWord(idx >> 6);
  }
  int32_t size() const { return size_; }
  // Bytes held by the bit levels (capacity).
  size_t MemoryBytes() const;
  absl::Status CheckInvariants() const;

 private:
  // 64^6 > 2^31: six levels hold any int32_t size.
  static constexpr size_t kMaxLevels = 6;
  static uint64_t Bit(size_t idx) { return uint64_t{1} << (idx & 63); }
  static size_t Ctz(uint64_t bits) { return static_cast<size_t>(__builtin_ctzll(bits)); }
  // The `n` bits from bit `i & 63` of a word. REQUIRES: (i & 63) + n <= 64.
  static uint64_t WordMask(size_t i, size_t n) {
    return (n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << (i & 63);
  }
  // Ranges [i, end) that cross a word boundary.
  void InsertRangeSlow(size_t i, size_t end);
  void EraseRangeSlow(size_t i, size_t end);
  // Word `w` of the bottom level became non-empty (empty): set (clear) its summary bits.
  void MarkAbove(size_t w);
  void UnmarkAbove(size_t w);
  // The smallest element in a bottom word after word `w`, or -1.
  int32_t FindAfterWord(size_t w) const;

  int32_t size_ = 0;
  size_t num_levels_ = 0;
  std::array<size_t, kMaxLevels + 1> base_{};  // level l's words: [base_[l], base_[l + 1])
  // One word even for an empty set, so the inline paths never check for it.
  std::vector<uint64_t> words_ = std::vector<uint64_t>(1, 0);
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_INDEX_SET_H_
