#include "cellalloc/priority_usage.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cellalloc/cell_forest.h"

namespace hived::cellalloc {

PriorityUsage::PriorityUsage(std::vector<CellId> parents, std::vector<int32_t> leaf_counts)
    : parents_(std::move(parents)), leaf_counts_(std::move(leaf_counts)) {
  leaf_counts_.resize(parents_.size(), 1);
  cells_.resize(parents_.size());
}

PriorityUsage PriorityUsage::ForForest(const CellForest& forest) {
  const size_t n = static_cast<size_t>(forest.num_cells());
  std::vector<CellId> parents(n);
  std::vector<int32_t> leaf_counts(n);
  for (size_t c = 0; c < n; ++c) {
    const CellId id(static_cast<uint32_t>(c));
    parents[c] = forest.parent(id);
    leaf_counts[c] = forest.leaf_count(id);
  }
  return PriorityUsage(std::move(parents), std::move(leaf_counts));
}

inline void PriorityUsage::Increment(CellUsage& u, Priority p) {
  ++u.total;
  // p is the highest priority, or the cell is unused (then it has no side list).
  if (u.top == p || u.top_count == 0) {
    u.top = p;
    ++u.top_count;
    return;
  }
  AddSlow(u, p, +1);
}

inline void PriorityUsage::Decrement(CellUsage& u, Priority p) {
  --u.total;
  // p stays the highest priority, or it was the only one.
  if (u.top == p && (u.top_count > 1 || u.rest == kNoRest)) {
    --u.top_count;
    return;
  }
  AddSlow(u, p, -1);
}

PriorityUsage::Entries PriorityUsage::ListOf(const CellUsage& u) const {
  Entries list;
  if (u.top_count != 0) list.push_back(Entry{u.top, u.top_count});
  if (u.rest != kNoRest) {
    const std::vector<Entry>& rest = rest_[u.rest];
    list.insert(list.end(), rest.begin(), rest.end());
  }
  return list;
}

void PriorityUsage::AddSlow(CellUsage& u, Priority p, int32_t delta) {
  // Here the cell is used and either p is not its highest priority, or p's count drops to 0
  // while lower priorities remain in the side list.
  if (p == u.top) {  // the highest priority leaves: the next one moves inline
    std::vector<Entry>& rest = rest_[u.rest];
    u.top = rest.front().priority;
    u.top_count = rest.front().count;
    rest.erase(rest.begin());
    if (rest.empty()) ReleaseRest(u);
    return;
  }
  if (u.rest == kNoRest) {
    if (free_rest_.empty()) {
      u.rest = static_cast<uint32_t>(rest_.size());
      rest_.emplace_back();
    } else {
      u.rest = free_rest_.back();
      free_rest_.pop_back();
    }
  }
  std::vector<Entry>& rest = rest_[u.rest];
  if (p > u.top) {  // a new highest priority: the old one moves to the side list
    rest.insert(rest.begin(), Entry{u.top, u.top_count});
    u.top = p;
    u.top_count = delta;
    return;
  }
  auto it = rest.begin();
  while (it != rest.end() && it->priority > p) ++it;
  if (it != rest.end() && it->priority == p) {
    it->count += delta;
    if (it->count == 0) rest.erase(it);
    if (rest.empty()) ReleaseRest(u);
  } else {
    rest.insert(it, Entry{p, delta});
  }
}

void PriorityUsage::ReleaseRest(CellUsage& u) {
  free_rest_.push_back(u.rest);
  u.rest = kNoRest;
}

void PriorityUsage::SetLeafPriority(CellId leaf, Priority priority) {
  const Priority old = LeafPriority(leaf);
  if (old == priority) return;
  CellUsage* cells = cells_.data();
  const CellId* parents = parents_.data();
  // One loop per kind of change, so the walk up does no per-level test of the kind.
  if (old == kFreePriority) {
    for (CellId c = leaf; !c.IsNil(); c = parents[c.value()]) Increment(cells[c.value()], priority);
  } else if (priority == kFreePriority) {
    for (CellId c = leaf; !c.IsNil(); c = parents[c.value()]) Decrement(cells[c.value()], old);
  } else {
    for (CellId c = leaf; !c.IsNil(); c = parents[c.value()]) {
      Decrement(cells[c.value()], old);
      Increment(cells[c.value()], priority);
    }
  }
}

int32_t PriorityUsage::UsedBetweenSlow(const CellUsage& u, Priority lo, Priority hi) const {
  int32_t sum = u.top >= lo && u.top <= hi ? u.top_count : 0;
  for (const Entry& e : rest_[u.rest]) {
    if (e.priority < lo) break;
    if (e.priority <= hi) sum += e.count;
  }
  return sum;
}

absl::Status PriorityUsage::CheckInvariants() const {
  const size_t n = parents_.size();
  std::vector<uint8_t> is_parent(n, 0);
  for (size_t c = 0; c < n; ++c) {
    if (!parents_[c].IsNil()) is_parent[parents_[c].value()] = 1;
  }
  // Side lists: each held by one cell or free, never both (invariant 5).
  std::vector<uint8_t> list_seen(rest_.size(), 0);
  for (uint32_t r : free_rest_) {
    if (r >= rest_.size() || list_seen[r] != 0 || !rest_[r].empty()) {
      return absl::InternalError(absl::StrCat("priority usage invariant (5) violated: side list ",
                                              r, " is free twice or not empty"));
    }
    list_seen[r] = 1;
  }
  for (size_t c = 0; c < n; ++c) {
    const CellUsage& u = cells_[c];
    if (u.rest == kNoRest) continue;
    if (u.rest >= rest_.size() || list_seen[u.rest] != 0 || rest_[u.rest].empty() ||
        u.top_count == 0) {
      return absl::InternalError(absl::StrCat("priority usage invariant (5) violated: cell ", c,
                                              " holds a shared, free or empty side list"));
    }
    list_seen[u.rest] = 1;
  }
  if (std::find(list_seen.begin(), list_seen.end(), 0) != list_seen.end()) {
    return absl::InternalError("priority usage invariant (5) violated: a side list is lost");
  }
  std::vector<std::map<Priority, int32_t>> expected(n);
  for (size_t c = 0; c < n; ++c) {
    if (is_parent[c] != 0) continue;
    const CellUsage& u = cells_[c];
    if (u.rest != kNoRest || (u.top_count != 0 && u.top_count != 1)) {
      return absl::InternalError(absl::StrCat("priority usage invariant (1) violated: leaf ", c,
                                              " is counted more than once"));
    }
    if (u.top_count == 0) continue;
    for (CellId a(static_cast<uint32_t>(c)); !a.IsNil(); a = parents_[a.value()]) {
      ++expected[a.value()][u.top];
    }
  }
  for (size_t c = 0; c < n; ++c) {
    const Entries list = ListOf(cells_[c]);
    int32_t total = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].count <= 0 || (i > 0 && list[i - 1].priority <= list[i].priority)) {
        return absl::InternalError(absl::StrCat("priority usage invariant (2) violated: cell ", c,
                                                " has a malformed count list"));
      }
      auto it = expected[c].find(list[i].priority);
      if (it == expected[c].end() || it->second != list[i].count) {
        return absl::InternalError(absl::StrCat("priority usage invariant (2) violated: cell ", c,
                                                " counts ", list[i].count, " leaves at priority ",
                                                list[i].priority, ", its leaves say ",
                                                it == expected[c].end() ? 0 : it->second));
      }
      total += list[i].count;
    }
    if (list.size() != expected[c].size()) {
      return absl::InternalError(absl::StrCat("priority usage invariant (2) violated: cell ", c,
                                              " misses a priority its leaves use"));
    }
    if (total != cells_[c].total) {
      return absl::InternalError(absl::StrCat("priority usage invariant (4) violated: cell ", c,
                                              " has total ", cells_[c].total, ", counts sum to ",
                                              total));
    }
    if (total > leaf_counts_[c]) {
      return absl::InternalError(absl::StrCat("priority usage invariant (1) violated: cell ", c,
                                              " uses ", total, " leaves of ", leaf_counts_[c]));
    }
    const Priority expected_max = expected[c].empty() ? kFreePriority : expected[c].rbegin()->first;
    if (MaxPriority(CellId(static_cast<uint32_t>(c))) != expected_max) {
      return absl::InternalError(absl::StrCat("priority usage invariant (3) violated at cell ", c,
                                              ": max priority is not ", expected_max));
    }
  }
  return absl::OkStatus();
}

size_t PriorityUsage::MemoryBytes() const {
  size_t bytes = sizeof(*this) + parents_.capacity() * sizeof(CellId) +
                 leaf_counts_.capacity() * sizeof(int32_t) + cells_.capacity() * sizeof(CellUsage) +
                 rest_.capacity() * sizeof(rest_[0]) + free_rest_.capacity() * sizeof(uint32_t);
  for (const std::vector<Entry>& e : rest_) bytes += e.capacity() * sizeof(Entry);
  return bytes;
}

}  // namespace hived::cellalloc
