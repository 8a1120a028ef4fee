// ChangeLog (src/change_log.h): the state version and a ring of recent changes.
#include "src/change_log.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hived {

ChangeLog::ChangeLog(size_t capacity) : capacity_(capacity), ring_(std::max<size_t>(capacity, 1)) {}

size_t ChangeLog::NextSlot() {
  const size_t cap = ring_.size();
  if (size_ == cap) {  // full: the oldest entry goes, and its version's completeness
    floor_ = std::max(floor_, ring_[begin_].version);
    begin_ = Wrap(begin_ + 1, cap);
    --size_;
    if (pending_ > size_) pending_ = size_;  // a mutation larger than the ring
  }
  const size_t slot = Wrap(begin_ + size_, cap);
  Entry& e = ring_[slot];
  ++size_;
  ++pending_;
  ++taken_;
  e.version = version_ + 1;
  e.node = NodeId();
  return slot;
}

bool ChangeLog::Commit() {
  if (pending_ == 0) return false;
  ++version_;
  pending_ = 0;
  if (capacity_ == 0) {  // the feed is off: nothing kept, no version before this one told
    begin_ = Wrap(begin_ + size_, ring_.size());
    size_ = 0;
    floor_ = version_;
  }
  return true;
}

void ChangeLog::Discard() {
  size_ -= pending_;
  pending_ = 0;
}

ChangeLog::Since ChangeLog::ChangesSince(uint64_t since) const {
  Since out;
  if (since >= version_) return out;
  if (since < floor_) {
    out.complete = false;
    return out;
  }
  const size_t cap = ring_.size();
  const size_t committed = size_ - pending_;
  // Versions are non-decreasing from the oldest: the first entry after `since` by search.
  size_t lo = 0, hi = committed;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (ring_[Wrap(begin_ + mid, cap)].version <= since) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (size_t i = lo; i < committed; ++i) {
    const Entry& e = ring_[Wrap(begin_ + i, cap)];
    if (e.name.empty()) {
      out.nodes.push_back(e.node);
    } else {
      out.groups.push_back(e.name);
    }
  }
  std::sort(out.groups.begin(), out.groups.end());
  out.groups.erase(std::unique(out.groups.begin(), out.groups.end()), out.groups.end());
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  return out;
}

absl::Status ChangeLog::CheckInvariants() const {
  const size_t cap = ring_.size();
  const size_t committed = size_ - std::min(pending_, size_);
  if (size_ > cap || pending_ > size_ || begin_ >= cap || committed > capacity_ ||
      (capacity_ == 0 && floor_ < version_)) {
    return absl::InternalError(absl::StrCat("change log (1): ", size_, " entries, ", pending_,
                                            " pending, oldest at ", begin_, ", capacity ",
                                            capacity_, ", floor ", floor_, ", version ", version_));
  }
  uint64_t prev = 0;
  for (size_t i = 0; i < size_; ++i) {
    const Entry& e = ring_[Wrap(begin_ + i, cap)];
    const bool pending = i >= size_ - pending_;
    const uint64_t want_max = pending ? version_ + 1 : version_;
    if (e.version < prev || e.version > want_max || (!pending && e.version < floor_)) {
      return absl::InternalError(absl::StrCat("change log (", pending ? 2 : 1, "): entry ", i,
                                              " has version ", e.version, " (floor ", floor_,
                                              ", version ", version_, ")"));
    }
    prev = e.version;
  }
  return absl::OkStatus();
}

}  // namespace hived
