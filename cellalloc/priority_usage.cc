#include "cellalloc/priority_usage.h"

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
  entries_.resize(parents_.size());
  used_total_.assign(parents_.size(), 0);
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

void PriorityUsage::Add(CellId c, Priority p, int32_t delta) {
  used_total_[c.value()] += delta;
  Entries& list = entries_[c.value()];
  // Fast paths for the common single-priority cell: no search, no element moves.
  if (list.empty()) {
    list.push_back(Entry{p, delta});
    return;
  }
  if (list.size() == 1 && list.front().priority == p) {
    list.front().count += delta;
    if (list.front().count == 0) list.pop_back();
    return;
  }
  size_t i = 0;
  while (i < list.size() && list[i].priority > p) ++i;
  if (i < list.size() && list[i].priority == p) {
    list[i].count += delta;
    if (list[i].count == 0) list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
  } else {
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(i), Entry{p, delta});
  }
}

void PriorityUsage::SetLeafPriority(CellId leaf, Priority priority) {
  const Priority old = LeafPriority(leaf);
  if (old == priority) return;
  for (CellId c = leaf; !c.IsNil(); c = parents_[c.value()]) {
    if (old != kFreePriority) Add(c, old, -1);
    if (priority != kFreePriority) Add(c, priority, +1);
  }
}

Priority PriorityUsage::LeafPriority(CellId leaf) const {
  const Entries& list = entries_[leaf.value()];
  return list.empty() ? kFreePriority : list.front().priority;
}

int32_t PriorityUsage::UsedAt(CellId c, Priority p) const {
  for (const Entry& e : entries_[c.value()]) {
    if (e.priority == p) return e.count;
    if (e.priority < p) break;
  }
  return 0;
}

int32_t PriorityUsage::UsedAbove(CellId c, Priority p) const {
  int32_t sum = 0;
  for (const Entry& e : entries_[c.value()]) {
    if (e.priority <= p) break;
    sum += e.count;
  }
  return sum;
}

int32_t PriorityUsage::UsedAtOrAbove(CellId c, Priority p) const {
  int32_t sum = 0;
  for (const Entry& e : entries_[c.value()]) {
    if (e.priority < p) break;
    sum += e.count;
  }
  return sum;
}

int32_t PriorityUsage::FreeLeavesFor(CellId c, Priority p) const {
  return leaf_counts_[c.value()] - UsedAtOrAbove(c, p);
}

Priority PriorityUsage::MaxPriority(CellId c) const {
  const Entries& list = entries_[c.value()];
  return list.empty() ? kFreePriority : list.front().priority;
}

int32_t PriorityUsage::leaf_count(CellId c) const { return leaf_counts_[c.value()]; }

absl::Status PriorityUsage::CheckInvariants() const {
  const size_t n = parents_.size();
  std::vector<uint8_t> is_parent(n, 0);
  for (size_t c = 0; c < n; ++c) {
    if (!parents_[c].IsNil()) is_parent[parents_[c].value()] = 1;
  }
  std::vector<std::map<Priority, int32_t>> expected(n);
  for (size_t c = 0; c < n; ++c) {
    if (is_parent[c] != 0) continue;
    const Entries& list = entries_[c];
    if (list.size() > 1 || (!list.empty() && list.front().count != 1)) {
      return absl::InternalError(absl::StrCat("priority usage invariant (1) violated: leaf ", c,
                                              " is counted more than once"));
    }
    if (list.empty()) continue;
    for (CellId a(static_cast<uint32_t>(c)); !a.IsNil(); a = parents_[a.value()]) {
      ++expected[a.value()][list.front().priority];
    }
  }
  for (size_t c = 0; c < n; ++c) {
    const Entries& list = entries_[c];
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
    if (total != used_total_[c]) {
      return absl::InternalError(absl::StrCat("priority usage invariant (4) violated: cell ", c,
                                              " has total ", used_total_[c], ", counts sum to ",
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
                 leaf_counts_.capacity() * sizeof(int32_t) + entries_.capacity() * sizeof(Entries) +
                 used_total_.capacity() * sizeof(int32_t);
  for (const Entries& e : entries_) {
    if (e.capacity() > 1) bytes += e.capacity() * sizeof(Entry);
  }
  return bytes;
}

}  // namespace hived::cellalloc
