#include "cellalloc/index_set.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hived::cellalloc {

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

void IndexSet::Mark(size_t level, size_t idx) {
  for (; level < levels_.size(); ++level) {
    uint64_t& w = levels_[level][idx >> 6];
    const bool was_empty = w == 0;
    w |= uint64_t{1} << (idx & 63);
    if (!was_empty) return;
    idx >>= 6;
  }
}

void IndexSet::Unmark(size_t level, size_t idx) {
  for (; level < levels_.size(); ++level) {
    uint64_t& w = levels_[level][idx >> 6];
    w &= ~(uint64_t{1} << (idx & 63));
    if (w != 0) return;
    idx >>= 6;
  }
}

namespace {

// The bits of word `i >> 6` covering [i, end) (at most the rest of that word); `*bits` gets
// their count.
uint64_t WordMask(size_t i, size_t end, size_t* bits) {
  *bits = std::min<size_t>(64 - (i & 63), end - i);
  return (*bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << *bits) - 1)) << (i & 63);
}

}  // namespace

void IndexSet::InsertRange(int32_t first, int32_t count) {
  size_t i = static_cast<size_t>(first);
  const size_t end = i + static_cast<size_t>(count);
  std::vector<uint64_t>& words = levels_[0];
  while (i < end) {
    const size_t w = i >> 6;
    size_t bits;
    const uint64_t mask = WordMask(i, end, &bits);
    const bool was_empty = words[w] == 0;
    words[w] |= mask;
    if (was_empty) Mark(1, w);
    i += bits;
  }
}

void IndexSet::EraseRange(int32_t first, int32_t count) {
  size_t i = static_cast<size_t>(first);
  const size_t end = i + static_cast<size_t>(count);
  std::vector<uint64_t>& words = levels_[0];
  while (i < end) {
    const size_t w = i >> 6;
    size_t bits;
    const uint64_t mask = WordMask(i, end, &bits);
    const bool was_set = words[w] != 0;
    words[w] &= ~mask;
    if (was_set && words[w] == 0) Unmark(1, w);
    i += bits;
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

size_t IndexSet::MemoryBytes() const {
  size_t bytes = levels_.capacity() * sizeof(levels_[0]);
  for (const auto& level : levels_) bytes += level.capacity() * sizeof(uint64_t);
  return bytes;
}

}  // namespace hived::cellalloc
