#include "cellalloc/buddy_allocator.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hived::cellalloc {

BuddyAllocator::BuddyAllocator(const CellForest* forest) : forest_(forest) {
  const size_t n = static_cast<size_t>(forest_->num_cells());
  state_.assign(n, BuddyState::kCovered);
  rank_.assign(n, 0);
  free_children_.assign(n, 0);
  bad_nodes_.assign(n, 0);
  node_bad_.assign(static_cast<size_t>(forest_->num_nodes()), 0);

  size_t slots = 0;
  for (int32_t i = 0; i < forest_->num_chains(); ++i) {
    const ChainInfo& info = forest_->chain_info(ChainId(static_cast<uint32_t>(i)));
    const size_t width = static_cast<size_t>(info.top_level) + 1;
    level_base_.push_back(slots);
    top_level_.push_back(info.top_level);
    for (CellLevel l = 0; l <= info.top_level; ++l) {
      slot_level_.push_back(l);
      fanout_.push_back(static_cast<uint32_t>(info.child_count[static_cast<size_t>(l)]));
    }
    slots += width;
  }
  // Ranks: ids grow in config order within a chain and level (the forest is breadth-first
  // with contiguous children), so a cell's rank is the number of smaller ids in its slot.
  std::vector<std::vector<uint32_t>> by_slot(slots);
  for (size_t c = 0; c < n; ++c) {
    std::vector<uint32_t>& cells = by_slot[SlotOf(static_cast<uint32_t>(c))];
    rank_[c] = static_cast<uint32_t>(cells.size());
    cells.push_back(static_cast<uint32_t>(c));
  }
  slot_first_.assign(slots + 1, 0);
  cell_at_.reserve(n);
  free_.assign(slots, IndexSet());
  for (size_t s = 0; s < slots; ++s) {
    slot_first_[s] = cell_at_.size();
    cell_at_.insert(cell_at_.end(), by_slot[s].begin(), by_slot[s].end());
    free_[s].Resize(static_cast<int32_t>(by_slot[s].size()));
  }
  slot_first_[slots] = cell_at_.size();
  free_count_.assign(slots, 0);
  obtainable_.assign(slots, 0);
  bad_free_.assign(slots, 0);
  for (int32_t i = 0; i < forest_->num_chains(); ++i) {
    const ChainId ch(static_cast<uint32_t>(i));
    const ChainInfo& info = forest_->chain_info(ch);
    const size_t slot = Slot(ch, info.top_level);
    for (CellId top : info.top_cells) {
      PushFree(top.value(), slot, kNil);
      AddSubtree(top.value(), slot, +1);
    }
  }
}

void BuddyAllocator::PushFree(uint32_t c, size_t slot, uint32_t parent) {
  state_[c] = BuddyState::kFree;
  free_[slot].Insert(static_cast<int32_t>(rank_[c]));
  ++free_count_[slot];
  if (parent != kNil) ++free_children_[parent];
}

void BuddyAllocator::RemoveFree(uint32_t c, size_t slot, uint32_t parent) {
  free_[slot].Erase(static_cast<int32_t>(rank_[c]));
  --free_count_[slot];
  if (parent != kNil) --free_children_[parent];
}

void BuddyAllocator::Split(uint32_t c, size_t slot) {
  RemoveFree(c, slot, forest_->parent(CellId(c)).value());
  state_[c] = BuddyState::kSplit;
  // The children (consecutive ids, hence consecutive ranks) become free below.
  const size_t below = slot - 1;
  const uint32_t first = forest_->first_child(CellId(c)).value();
  const uint32_t count = fanout_[slot];
  for (uint32_t k = first; k < first + count; ++k) state_[k] = BuddyState::kFree;
  free_[below].InsertRange(static_cast<int32_t>(rank_[first]), static_cast<int32_t>(count));
  free_count_[below] += static_cast<int32_t>(count);
  free_children_[c] = count;
}

void BuddyAllocator::AddSubtreeCounts(std::vector<int32_t>& counter, size_t slot, int32_t sign) {
  // One cell at its own level, times the fan-out for each level below.
  const size_t bottom = slot - static_cast<size_t>(slot_level_[slot]) + 1;
  int32_t count = sign;
  for (size_t s = slot;; --s) {
    counter[s] += count;
    if (s == bottom) break;
    count *= static_cast<int32_t>(fanout_[s]);
  }
}

void BuddyAllocator::AddSubtree(uint32_t c, size_t slot, int32_t sign) {
  AddSubtreeCounts(obtainable_, slot, sign);
  if (bad_node_count_ > 0 && Bad(c)) AddBadSubtree(c, slot, sign);
}

void BuddyAllocator::AddBadSubtree(uint32_t c, size_t slot, int32_t sign) {
  // Walks only the bad branches (iteratively: a spec may be deep).
  absl::InlinedVector<std::pair<uint32_t, size_t>, 16> stack;
  stack.emplace_back(c, slot);
  while (!stack.empty()) {
    const auto [x, x_slot] = stack.back();
    stack.pop_back();
    if (!forest_->node(CellId(x)).IsNil()) {
      // At or below node level every cell of a bad node is bad.
      AddSubtreeCounts(bad_free_, x_slot, sign);
      continue;
    }
    bad_free_[x_slot] += sign;
    const uint32_t first = forest_->first_child(CellId(x)).value();
    const uint32_t count = fanout_[x_slot];
    for (uint32_t k = first; k < first + count; ++k) {
      if (Bad(k)) stack.emplace_back(k, x_slot - 1);
    }
  }
}

CellId BuddyAllocator::Allocate(ChainId ch, CellLevel level) {
  if (ch.IsNil() || ch.value() >= top_level_.size()) return CellId::Nil();
  const CellLevel top = top_level_[ch.value()];
  if (level < 1 || level > top) return CellId::Nil();
  const size_t target_slot = Slot(ch, level);
  const size_t top_slot = Slot(ch, top);
  size_t slot = target_slot;
  while (slot <= top_slot && free_count_[slot] == 0) ++slot;
  if (slot > top_slot) return CellId::Nil();
  uint32_t c = CellAt(slot, free_[slot].FindNext(0));
  // Every cell on the split path (all but the allocated one) stops being available.
  while (slot > target_slot) {
    AddSingle(c, slot, -1);
    Split(c, slot);
    c = forest_->first_child(CellId(c)).value();
    --slot;
  }
  RemoveFree(c, slot, forest_->parent(CellId(c)).value());
  state_[c] = BuddyState::kUsed;
  AddSubtree(c, slot, -1);
  return CellId(c);
}

bool BuddyAllocator::AllocateCell(CellId cell) {
  if (cell.IsNil() || cell.value() >= state_.size()) return false;
  const uint32_t target = cell.value();
  absl::InlinedVector<uint32_t, 16> path;  // covered ancestors, target's parent first
  uint32_t free_ancestor = target;
  if (state_[target] == BuddyState::kCovered) {
    uint32_t a = forest_->parent(cell).value();
    while (a != kNil && state_[a] == BuddyState::kCovered) {
      path.push_back(a);
      a = forest_->parent(CellId(a)).value();
    }
    if (a == kNil || state_[a] != BuddyState::kFree) return false;  // inside a used cell
    free_ancestor = a;
  } else if (state_[target] != BuddyState::kFree) {
    return false;  // used or split
  }
  const size_t target_slot = SlotOf(target);
  if (free_ancestor != target) {
    size_t slot = target_slot + path.size() + 1;
    AddSingle(free_ancestor, slot, -1);
    Split(free_ancestor, slot);
    for (size_t i = path.size(); i-- > 0;) {
      --slot;
      AddSingle(path[i], slot, -1);
      Split(path[i], slot);
    }
  }
  RemoveFree(target, target_slot, forest_->parent(cell).value());
  state_[target] = BuddyState::kUsed;
  AddSubtree(target, target_slot, -1);
  return true;
}

void BuddyAllocator::Release(CellId cell) {
  if (cell.IsNil() || cell.value() >= state_.size()) return;
  const uint32_t c = cell.value();
  if (state_[c] != BuddyState::kUsed) return;
  size_t slot = SlotOf(c);
  uint32_t p = forest_->parent(cell).value();
  PushFree(c, slot, p);
  AddSubtree(c, slot, +1);
  // Merge while every sibling is free: the children leave the list, the parent joins.
  while (p != kNil && free_children_[p] == fanout_[slot + 1]) {
    const uint32_t first = forest_->first_child(CellId(p)).value();
    const uint32_t count = fanout_[slot + 1];
    for (uint32_t k = first; k < first + count; ++k) state_[k] = BuddyState::kCovered;
    free_[slot].EraseRange(static_cast<int32_t>(rank_[first]), static_cast<int32_t>(count));
    free_count_[slot] -= static_cast<int32_t>(count);
    free_children_[p] = 0;
    ++slot;
    const uint32_t grandparent = forest_->parent(CellId(p)).value();
    PushFree(p, slot, grandparent);
    AddSingle(p, slot, +1);
    p = grandparent;
  }
}

BuddyState BuddyAllocator::state(CellId c) const { return state_[c.value()]; }

bool BuddyAllocator::IsAvailable(CellId c) const {
  uint32_t x = c.value();
  while (state_[x] == BuddyState::kCovered) {
    x = forest_->parent(CellId(x)).value();
    if (x == kNil) return false;
  }
  return state_[x] == BuddyState::kFree;
}

CellId BuddyAllocator::FirstFree(ChainId ch, CellLevel level) const {
  if (ch.IsNil() || ch.value() >= top_level_.size()) return CellId::Nil();
  if (level < 1 || level > top_level_[ch.value()]) return CellId::Nil();
  const size_t slot = Slot(ch, level);
  const int32_t r = free_[slot].FindNext(0);
  return r < 0 ? CellId::Nil() : CellId(CellAt(slot, r));
}

CellId BuddyAllocator::NextFree(CellId c) const {
  const size_t slot = SlotOf(c.value());
  const int32_t r = free_[slot].FindNext(static_cast<int32_t>(rank_[c.value()]) + 1);
  return r < 0 ? CellId::Nil() : CellId(CellAt(slot, r));
}

int32_t BuddyAllocator::free_count(ChainId ch, CellLevel level) const {
  if (ch.IsNil() || ch.value() >= top_level_.size()) return 0;
  if (level < 1 || level > top_level_[ch.value()]) return 0;
  return free_count_[Slot(ch, level)];
}

int32_t BuddyAllocator::obtainable(ChainId ch, CellLevel level) const {
  if (ch.IsNil() || ch.value() >= top_level_.size()) return 0;
  if (level < 1 || level > top_level_[ch.value()]) return 0;
  return obtainable_[Slot(ch, level)];
}

int32_t BuddyAllocator::bad_free(ChainId ch, CellLevel level) const {
  if (ch.IsNil() || ch.value() >= top_level_.size()) return 0;
  if (level < 1 || level > top_level_[ch.value()]) return 0;
  return bad_free_[Slot(ch, level)];
}

std::vector<CellId> BuddyAllocator::SetNodeHealthy(NodeId node, bool healthy) {
  std::vector<CellId> changed;
  if (node.IsNil() || node.value() >= node_bad_.size()) return changed;
  const uint8_t bad = healthy ? 0 : 1;
  if (node_bad_[node.value()] == bad) return changed;
  const int32_t sign = healthy ? -1 : +1;
  // Flip the node first: cells at or below node level read their health from it.
  node_bad_[node.value()] = bad;
  bad_node_count_ += sign;
  for (CellId cell : forest_->node_cells(node)) {
    const ChainId ch = forest_->chain(cell);
    // Every cell of the node's subtree changes health; the available ones move bad_free.
    struct Item {
      uint32_t cell;
      bool available;
    };
    absl::InlinedVector<Item, 32> stack;
    stack.push_back({cell.value(), IsAvailable(cell)});
    while (!stack.empty()) {
      const Item item = stack.back();
      stack.pop_back();
      const CellId id(item.cell);
      changed.push_back(id);
      if (item.available) bad_free_[Slot(ch, forest_->level(id))] += sign;
      const uint32_t first = forest_->first_child(id).value();
      const uint32_t count = static_cast<uint32_t>(forest_->num_children(id));
      for (uint32_t k = 0; k < count; ++k) {
        const uint32_t child = first + k;
        const bool available = state_[child] == BuddyState::kFree ||
                               (state_[child] == BuddyState::kCovered && item.available);
        stack.push_back({child, available});
      }
    }
    // Ancestors above node level count bad nodes; health changes at 0 <-> 1.
    for (uint32_t a = forest_->parent(cell).value(); a != kNil;
         a = forest_->parent(CellId(a)).value()) {
      const bool was_bad = bad_nodes_[a] != 0;
      bad_nodes_[a] += sign;
      if (was_bad != (bad_nodes_[a] != 0)) {
        changed.push_back(CellId(a));
        if (IsAvailable(CellId(a))) bad_free_[Slot(ch, forest_->level(CellId(a)))] += sign;
      }
    }
  }
  std::stable_sort(changed.begin(), changed.end(), [this](CellId a, CellId b) {
    const CellLevel la = forest_->level(a);
    const CellLevel lb = forest_->level(b);
    return la != lb ? la < lb : a < b;
  });
  return changed;
}

absl::Status BuddyAllocator::CheckInvariants() const {
  const uint32_t n = static_cast<uint32_t>(state_.size());
  auto fail = [&](uint32_t c, int invariant, std::string_view what) {
    return absl::InternalError(
        absl::StrCat("buddy allocator invariant (", invariant, ") violated at cell ", c,
                     " (address ", c == kNil ? std::string("-") : forest_->address(CellId(c)),
                     "): ", absl::string_view(what.data(), what.size())));
  };
  // Raw arrays keep this cheap enough to run after every step of the property tests even
  // in unoptimised builds.
  const BuddyState* st = state_.data();
  const uint32_t* parent = forest_->parent_.data();
  const uint32_t* first_child = forest_->first_child_.data();
  const uint32_t* node = forest_->node_.data();
  const uint16_t* type = forest_->type_.data();
  const uint16_t* chain = forest_->chain_.data();
  std::vector<uint32_t> fanout;
  std::vector<uint8_t> node_level;
  std::vector<CellLevel> level;
  for (const CellTypeInfo& t : forest_->types_) {
    fanout.push_back(static_cast<uint32_t>(t.child_count));
    node_level.push_back(t.is_node_level ? 1 : 0);
    level.push_back(t.level);
  }
  auto bad = [&](uint32_t c) {
    return node[c] != kNil ? node_bad_[node[c]] != 0 : bad_nodes_[c] != 0;
  };
  // Forward pass (parents have smaller ids than children): states and availability.
  std::vector<uint8_t> available(n, 0);
  std::vector<int32_t> obtainable(obtainable_.size(), 0);
  std::vector<int32_t> bad_free(bad_free_.size(), 0);
  size_t free_cells = 0;
  for (uint32_t c = 0; c < n; ++c) {
    const uint32_t p = parent[c];
    const BuddyState s = st[c];
    if (p == kNil) {
      if (s == BuddyState::kCovered) return fail(c, 2, "a top-level cell is covered");
    } else {
      const bool should_be_covered = st[p] != BuddyState::kSplit;
      if (should_be_covered != (s == BuddyState::kCovered)) {
        return fail(c, 2,
                    should_be_covered ? "inside a free or used cell but not covered"
                                      : "child of a split cell is covered");
      }
    }
    if (s == BuddyState::kFree) ++free_cells;
    available[c] =
        s == BuddyState::kFree || (s == BuddyState::kCovered && p != kNil && available[p] != 0);
    // Free children count and the buddy rule.
    const uint32_t count = fanout[type[c]];
    const BuddyState* children = count == 0 ? nullptr : st + first_child[c];
    uint32_t free_children = 0;
    for (uint32_t k = 0; k < count; ++k) {
      if (children[k] == BuddyState::kFree) ++free_children;
    }
    if (free_children != free_children_[c]) return fail(c, 3, "free-children count is wrong");
    if (s == BuddyState::kSplit && count > 0 && free_children == count) {
      return fail(c, 1, "a split cell has all of its children free (unmerged buddies)");
    }
    if (available[c] != 0) {
      const size_t slot = level_base_[chain[c]] + static_cast<size_t>(level[type[c]]);
      ++obtainable[slot];
      if (bad(c)) ++bad_free[slot];
    }
  }
  // Backward pass: split cells have a used descendant; bad-node counts.
  std::vector<uint8_t> has_used(n, 0);
  std::vector<int32_t> bad_nodes(n, 0);
  for (uint32_t c = n; c-- > 0;) {
    if (st[c] == BuddyState::kUsed) has_used[c] = 1;
    if (st[c] == BuddyState::kSplit && has_used[c] == 0) {
      return fail(c, 1, "a split cell has no used descendant");
    }
    if (node_level[type[c]] != 0 && node_bad_[node[c]] != 0) bad_nodes[c] = 1;
    if (node[c] == kNil && bad_nodes[c] != bad_nodes_[c]) {
      return fail(c, 5,
                  absl::StrCat("bad-node count is ", bad_nodes_[c], ", expected ", bad_nodes[c]));
    }
    const uint32_t p = parent[c];
    if (p != kNil) {
      has_used[p] = static_cast<uint8_t>(has_used[p] | has_used[c]);
      if (node[p] == kNil) bad_nodes[p] += bad_nodes[c];  // p is above node level
    }
  }
  int32_t bad_node_count = 0;
  for (uint8_t b : node_bad_) bad_node_count += b;
  if (bad_node_count != bad_node_count_) {
    return fail(kNil, 5,
                absl::StrCat("bad node count is ", bad_node_count_, ", expected ", bad_node_count));
  }
  // Lists.
  size_t listed = 0;
  for (int32_t i = 0; i < forest_->num_chains(); ++i) {
    const ChainId ch(static_cast<uint32_t>(i));
    for (CellLevel l = 1; l <= top_level_[ch.value()]; ++l) {
      const size_t slot = Slot(ch, l);
      int32_t length = 0;
      for (int32_t r = free_[slot].FindNext(0); r >= 0; r = free_[slot].FindNext(r + 1)) {
        const uint32_t c = CellAt(slot, r);
        if (rank_[c] != static_cast<uint32_t>(r) || SlotOf(c) != slot) {
          return fail(c, 3, "rank table is corrupt");
        }
        if (state_[c] != BuddyState::kFree) return fail(c, 3, "on a free list but not free");
        ++length;
      }
      if (length != free_count_[slot]) {
        return fail(kNil, 3,
                    absl::StrCat("free_count of chain ", i, " level ", l, " is ", free_count_[slot],
                                 ", list length ", length));
      }
      listed += static_cast<size_t>(length);
      if (obtainable[slot] != obtainable_[slot]) {
        return fail(kNil, 4,
                    absl::StrCat("obtainable of chain ", i, " level ", l, " is ", obtainable_[slot],
                                 ", expected ", obtainable[slot]));
      }
      if (bad_free[slot] != bad_free_[slot]) {
        return fail(kNil, 4,
                    absl::StrCat("bad_free of chain ", i, " level ", l, " is ", bad_free_[slot],
                                 ", expected ", bad_free[slot]));
      }
    }
  }
  if (listed != free_cells) {
    return fail(kNil, 3,
                absl::StrCat(free_cells, " cells are free but ", listed, " are on free lists"));
  }
  return absl::OkStatus();
}

size_t BuddyAllocator::MemoryBytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  size_t sets = 0;
  for (const IndexSet& set : free_) sets += sizeof(set) + set.MemoryBytes();
  return sizeof(*this) + bytes(state_) + bytes(rank_) + bytes(cell_at_) + bytes(slot_first_) +
         sets + bytes(free_children_) + bytes(bad_nodes_) + bytes(node_bad_) + bytes(level_base_) +
         bytes(top_level_) + bytes(slot_level_) + bytes(fanout_) + bytes(free_count_) +
         bytes(obtainable_) + bytes(bad_free_);
}

}  // namespace hived::cellalloc
