#include "cellalloc/index_set.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hived::cellalloc {

void IndexSet::Resize(int32_t n) {
  size_ = n;
  num_levels_ = 0;
  size_t words = (static_cast<size_t>(n) + 63) / 64;
  if (words == 0) words = 1;
  size_t total = 0;
  for (;;) {
    base_[num_levels_++] = total;
    total += words;
    if (words == 1) break;
    words = (words + 63) / 64;
  }
  base_[num_levels_] = total;
  words_.assign(total, 0);
}

void IndexSet::MarkAbove(size_t w) {
  for (size_t level = 1; level < num_levels_; ++level) {
    uint64_t& word = words_[base_[level] + (w >> 6)];
    const bool was_empty = word == 0;
    word |= Bit(w);
    if (!was_empty) return;
    w >>= 6;
  }
}

void IndexSet::UnmarkAbove(size_t w) {
  for (size_t level = 1; level < num_levels_; ++level) {
    uint64_t& word = words_[base_[level] + (w >> 6)];
    word &= ~Bit(w);
    if (word != 0) return;
    w >>= 6;
  }
}

void IndexSet::InsertRangeSlow(size_t i, size_t end) {
  while (i < end) {
    const size_t bits = std::min<size_t>(64 - (i & 63), end - i);
    const size_t w = i >> 6;
    const bool was_empty = words_[w] == 0;
    words_[w] |= WordMask(i, bits);
    if (was_empty) MarkAbove(w);
    i += bits;
  }
}

void IndexSet::EraseRangeSlow(size_t i, size_t end) {
  while (i < end) {
    const size_t bits = std::min<size_t>(64 - (i & 63), end - i);
    const size_t w = i >> 6;
    const bool was_set = words_[w] != 0;
    words_[w] &= ~WordMask(i, bits);
    if (was_set && words_[w] == 0) UnmarkAbove(w);
    i += bits;
  }
}

int32_t IndexSet::FindAfterWord(size_t w) const {
  // Bit `pos` of level l stands for word `pos` of level l - 1. Climb while the rest of the
  // current word holds nothing at or after `pos`, then descend along the lowest set bits.
  size_t level = 1;
  size_t pos = w + 1;
  for (;;) {
    if (level == num_levels_) return -1;  // past the top word
    const size_t k = pos >> 6;
    if (k < base_[level + 1] - base_[level]) {
      const uint64_t bits = words_[base_[level] + k] & (~uint64_t{0} << (pos & 63));
      if (bits != 0) {
        pos = k * 64 + Ctz(bits);
        break;
      }
    }
    pos = k + 1;
    ++level;
  }
  while (level > 0) {
    --level;
    pos = pos * 64 + Ctz(words_[base_[level] + pos]);
  }
  return pos < static_cast<size_t>(size_) ? static_cast<int32_t>(pos) : -1;
}

size_t IndexSet::MemoryBytes() const { return words_.capacity() * sizeof(uint64_t); }

absl::Status IndexSet::CheckInvariants() const {
  for (size_t level = 0; level + 1 < num_levels_; ++level) {
    for (size_t w = 0; w < base_[level + 1] - base_[level]; ++w) {
      const bool nonzero = words_[base_[level] + w] != 0;
      const bool summary = ((words_[base_[level + 1] + (w >> 6)] >> (w & 63)) & 1u) != 0;
      if (nonzero != summary) {
        return absl::InternalError(
            absl::StrCat("index set invariant (1) violated: word ", w, " of level ", level, " is ",
                         nonzero ? "non-empty" : "empty", " but its summary bit says otherwise"));
      }
    }
  }
  for (size_t i = static_cast<size_t>(size_); i < (base_[1] - base_[0]) * 64; ++i) {
    if (((words_[i >> 6] >> (i & 63)) & 1u) != 0) {
      return absl::InternalError(
          absl::StrCat("index set invariant (2) violated: element ", i, " >= size ", size_));
    }
  }
  return absl::OkStatus();
}

}  // namespace hived::cellalloc
