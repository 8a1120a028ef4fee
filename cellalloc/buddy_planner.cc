#include "cellalloc/buddy_planner.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hived::cellalloc {

BuddyPlanner::BuddyPlanner(const BuddyAllocator* alloc, const PriorityUsage* usage)
    : alloc_(alloc), forest_(&alloc->forest()), usage_(usage) {
  taken_.assign(static_cast<size_t>(forest_->num_cells()), 0);
  as_.assign(static_cast<size_t>(forest_->num_cells()), 0);
  CellLevel max_level = 1;
  for (int32_t c = 0; c < forest_->num_chains(); ++c) {
    max_level =
        std::max(max_level, forest_->chain_info(ChainId(static_cast<uint32_t>(c))).top_level);
  }
  const size_t levels = static_cast<size_t>(max_level) + 2;
  extra_.assign(levels, {});
  prepend_.assign(levels, {});
  unbound_delta_.assign(levels, 0);
  as_free_list_.assign(levels, {});
}

void BuddyPlanner::Begin(ChainId ch, const PlanContext& context) {
  chain_ = ch;
  ctx_ = context;
  open_ = true;
  if (ctx_.as_if != nullptr) BeginAsIf();
}

void BuddyPlanner::MarkAs(CellId c, uint8_t flag) {
  if (as_[c.value()] == 0) as_touched_.push_back(c.value());
  as_[c.value()] |= flag;
}

bool BuddyPlanner::FreeInStateAsIf(CellId c) const {
  const uint8_t a = as_[c.value()];
  if ((a & kAsFree) != 0) return true;
  return (a & kAsMerged) == 0 && alloc_->state(c) == BuddyState::kFree;
}

void BuddyPlanner::FreeAs(CellId c) {
  // BuddyAllocator::Release on the overlay: free, then merge while every buddy is free.
  MarkAs(c, kAsFree);
  for (CellId p = forest_->parent(c); !p.IsNil(); p = forest_->parent(p)) {
    const int32_t n = forest_->num_children(p);
    for (int32_t k = 0; k < n; ++k) {
      if (!FreeInStateAsIf(forest_->child(p, k))) return;
    }
    for (int32_t k = 0; k < n; ++k) {
      const CellId x = forest_->child(p, k);
      if ((as_[x.value()] & kAsFree) != 0) {
        as_[x.value()] = static_cast<uint8_t>(as_[x.value()] & ~kAsFree);
      } else {
        MarkAs(x, kAsMerged);
      }
    }
    MarkAs(p, kAsFree);
  }
}

void BuddyPlanner::BeginAsIf() {
  as_active_ = true;
  for (CellId c : ctx_.as_if->unbound) MarkAs(c, kAsUnbound);
  for (CellId c : ctx_.as_if->free) FreeAs(c);
  // The free cells of the state-as-if that the allocator's lists lack, per level in id
  // (config) order: walked in step with the allocator's lists by AnyCandidate.
  for (uint32_t x : as_touched_) {
    const CellId c(x);
    if ((as_[x] & kAsFree) != 0 && forest_->chain(c) == chain_) {
      as_free_list_[static_cast<size_t>(forest_->level(c))].push_back(c);
    }
  }
  for (std::vector<CellId>& list : as_free_list_) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
}

int32_t BuddyPlanner::AddNode(CellLevel level) {
  nodes_.emplace_back();
  nodes_.back().level = level;
  return static_cast<int32_t>(nodes_.size()) - 1;
}

void BuddyPlanner::AddChild(int32_t parent, int32_t child) {
  Node& nd = nodes_[static_cast<size_t>(parent)];
  if (nd.last_child < 0) {
    nd.first_child = child;
  } else {
    nodes_[static_cast<size_t>(nd.last_child)].next_sibling = child;
  }
  nd.last_child = child;
  ++nd.num_children;
}

void BuddyPlanner::Abandon() {
  for (uint32_t c : taken_touched_) taken_[c] = 0;
  taken_touched_.clear();
  if (levels_dirty_) {
    for (auto& e : extra_) e.clear();
    for (auto& e : prepend_) e.clear();
    std::fill(unbound_delta_.begin(), unbound_delta_.end(), 0);
    levels_dirty_ = false;
  }
  if (as_active_) {
    for (uint32_t c : as_touched_) as_[c] = 0;
    as_touched_.clear();
    for (std::vector<CellId>& list : as_free_list_) list.clear();
    as_active_ = false;
  }
  nodes_.clear();
  open_ = false;
}

bool BuddyPlanner::IsIdle() const {
  if (open_ || !nodes_.empty() || !taken_touched_.empty()) return false;
  if (as_active_ || !as_touched_.empty()) return false;
  for (size_t l = 0; l < extra_.size(); ++l) {
    if (!extra_[l].empty() || !prepend_[l].empty() || unbound_delta_[l] != 0) return false;
    if (!as_free_list_[l].empty()) return false;
  }
  auto zero = [](uint8_t t) { return t == 0; };
  return std::all_of(taken_.begin(), taken_.end(), zero) &&
         std::all_of(as_.begin(), as_.end(), zero);
}

void BuddyPlanner::Take(CellId p) {
  if (taken_[p.value()]) return;
  taken_[p.value()] = 1;
  taken_touched_.push_back(p.value());
}

void BuddyPlanner::SortedChildren(CellId p, CandList* out) const {
  const int32_t n = forest_->num_children(p);
  // Sized once and written by index (no per-element push_back checks).
  out->resize(static_cast<size_t>(n));
  CellId* o = out->data();
  size_t count = 0;
  for (int32_t k = 0; k < n; ++k) {
    const CellId c = forest_->child(p, k);
    if (!Usable(c)) continue;
    const int32_t u = usage_->UsedTotal(c);
    // Insertion sort, stable: small fan-outs.
    size_t i = count++;
    while (i > 0 && usage_->UsedTotal(o[i - 1]) > u) {
      o[i] = o[i - 1];
      --i;
    }
    o[i] = c;
  }
  out->resize(count);
}

bool BuddyPlanner::Match(int32_t node, CellId p) {
  Take(p);
  nodes_[static_cast<size_t>(node)].cell = p;
  const Node& nd = nodes_[static_cast<size_t>(node)];
  bool ok = true;
  if (nd.num_children == 1) {
    ok = MatchOne(nd.first_child, p);
  } else if (nd.num_children > 1) {
    absl::InlinedVector<int32_t, 8> kids;
    for (int32_t k = nd.first_child; k >= 0; k = nodes_[static_cast<size_t>(k)].next_sibling) {
      kids.push_back(k);
    }
    ok = PlaceUnder(p, kids);
  }
  if (!ok) {
    nodes_[static_cast<size_t>(node)].cell = CellId::Nil();
    Untake(p);
  }
  return ok;
}

void BuddyPlanner::Unmatch(int32_t node) {
  Node& nd = nodes_[static_cast<size_t>(node)];
  for (int32_t k = nd.first_child; k >= 0; k = nodes_[static_cast<size_t>(k)].next_sibling) {
    Unmatch(k);
  }
  if (nd.cell.IsNil()) return;
  Untake(nd.cell);
  nd.cell = CellId::Nil();
}

bool BuddyPlanner::MatchAll(absl::Span<const int32_t> nodes, absl::Span<const CellId> candidates,
                            size_t i) {
  if (i == nodes.size()) return true;
  for (CellId c : candidates) {
    if (taken_[c.value()]) continue;
    if (Match(nodes[i], c)) {
      if (MatchAll(nodes, candidates, i + 1)) return true;
      Unmatch(nodes[i]);
    }
  }
  return false;
}

bool BuddyPlanner::MatchOne(int32_t node, CellId parent) {
  // The first candidate of SortedChildren's order, found in one pass: the first usable
  // child without used leaves, else the first with the fewest.
  CellId best;
  int32_t best_used = 0;
  const int32_t n = forest_->num_children(parent);
  for (int32_t k = 0; k < n; ++k) {
    const CellId c = forest_->child(parent, k);
    if (!Usable(c)) continue;
    const int32_t u = usage_->UsedTotal(c);
    if (best.IsNil() || u < best_used) {
      best = c;
      best_used = u;
      if (u == 0) break;
    }
  }
  if (best.IsNil()) return false;
  if (Match(node, best)) return true;
  // The rest of the order (a failed Match leaves the overlay as it was).
  CandList order;
  SortedChildren(parent, &order);
  for (CellId c : order) {
    if (c != best && Match(node, c)) return true;
  }
  return false;
}

bool BuddyPlanner::PlaceUnder(CellId parent, absl::Span<const int32_t> nodes) {
  if (nodes.size() == 1) return MatchOne(nodes[0], parent);
  CandList cands;
  SortedChildren(parent, &cands);
  return cands.size() >= nodes.size() && MatchAll(nodes, cands, 0);
}

template <typename Fn>
bool BuddyPlanner::AnyCandidate(CellLevel l, Fn&& fn) const {
  const size_t li = static_cast<size_t>(l);
  for (CellId c : prepend_[li]) {
    if (!taken_[c.value()] && fn(c)) return true;
  }
  if (!as_active_) {
    for (CellId c = alloc_->FirstFree(chain_, l); !c.IsNil(); c = alloc_->NextFree(c)) {
      if (!taken_[c.value()] && fn(c)) return true;
    }
  } else {
    // The state-as-if's free list: the allocator's without the merged cells, and the cells
    // freed as if, in one id-ordered walk.
    const std::vector<CellId>& freed = as_free_list_[li];
    size_t j = 0;
    CellId c = alloc_->FirstFree(chain_, l);
    while (!c.IsNil() || j < freed.size()) {
      CellId x;
      if (j < freed.size() && (c.IsNil() || freed[j] < c)) {
        x = freed[j++];
      } else {
        x = c;
        c = alloc_->NextFree(c);
        if ((as_[x.value()] & kAsMerged) != 0) continue;
      }
      if (!taken_[x.value()] && fn(x)) return true;
    }
  }
  for (CellId c : extra_[li]) {
    if (!taken_[c.value()] && fn(c)) return true;
  }
  return false;
}

std::vector<CellId> BuddyPlanner::Candidates(CellLevel l) const {
  std::vector<CellId> out;
  AnyCandidate(l, [&](CellId c) {
    out.push_back(c);
    return false;
  });
  return out;
}

bool BuddyPlanner::AllocAtLevel(CellLevel l, int32_t node) {
  const CellLevel target = nodes_[static_cast<size_t>(node)].level;
  if (l == target) {
    // Candidates in free-list order; the usable ones are stable-sorted by used leaves, so
    // the first usable one without any is tried first: stream until then.
    std::vector<CellId> deferred;
    const bool found = AnyCandidate(l, [&](CellId c) {
      if (!Usable(c)) return false;
      if (usage_->UsedTotal(c) == 0) return Match(node, c);
      deferred.push_back(c);
      return false;
    });
    if (found) return true;
    std::stable_sort(deferred.begin(), deferred.end(), [&](CellId a, CellId b) {
      return usage_->UsedTotal(a) < usage_->UsedTotal(b);
    });
    for (CellId c : deferred) {
      if (Match(node, c)) return true;
    }
    return false;
  }
  levels_dirty_ = true;
  const size_t li = static_cast<size_t>(l);
  for (CellId x : Candidates(l)) {
    if (!Usable(x)) continue;
    Take(x);
    std::vector<CellId>& lower = extra_[li - 1];
    const size_t mark = lower.size();
    for (int32_t k = 0; k < forest_->num_children(x); ++k) lower.push_back(forest_->child(x, k));
    if (AllocAtLevel(l - 1, node)) return true;
    lower.resize(mark);
    Untake(x);
  }
  return false;
}

bool BuddyPlanner::BuddyAlloc(int32_t node) {
  const CellLevel target = nodes_[static_cast<size_t>(node)].level;
  const CellLevel top = forest_->chain_info(chain_).top_level;
  for (CellLevel l = target; l <= top; ++l) {
    if (AnyCandidate(l, [](CellId) { return true; })) return AllocAtLevel(l, node);
  }
  return false;
}

bool BuddyPlanner::PlaceRoot(int32_t node) {
  if (!BuddyAlloc(node) && !SafeRelaxedAlloc(node)) return false;
  levels_dirty_ = true;
  ++unbound_delta_[static_cast<size_t>(nodes_[static_cast<size_t>(node)].level)];
  return true;
}

bool BuddyPlanner::SafeRelaxedAlloc(int32_t node) {
  const CellForest& f = *forest_;
  const ChainInfo& info = f.chain_info(chain_);
  const CellLevel target = nodes_[static_cast<size_t>(node)].level;
  const CellLevel top = info.top_level;
  std::vector<int64_t> freecnt(static_cast<size_t>(top) + 2, 0);
  std::vector<int64_t> unbound(static_cast<size_t>(top) + 2, 0);
  for (CellLevel i = 1; i <= top; ++i) {
    const size_t ii = static_cast<size_t>(i);
    freecnt[ii] = static_cast<int64_t>(Candidates(i).size());
    unbound[ii] = (*ctx_.vc_unbound)[ii] - unbound_delta_[ii];
  }
  auto safe_after_split = [&](CellLevel from) {
    std::vector<int64_t> fr = freecnt;
    std::vector<int64_t> ub = unbound;
    fr[static_cast<size_t>(from)] -= 1;
    for (CellLevel j = target; j < from; ++j) {
      fr[static_cast<size_t>(j)] += info.child_count[static_cast<size_t>(j) + 1] - 1;
    }
    ub[static_cast<size_t>(target)] -= 1;
    int64_t left = 0;
    for (CellLevel j = top; j >= 1; --j) {
      const size_t jj = static_cast<size_t>(j);
      if (j < top) left *= info.child_count[jj + 1];
      left += fr[jj] - ub[jj];
      if (left < 0) return false;
    }
    return true;
  };
  levels_dirty_ = true;
  const size_t ti = static_cast<size_t>(target);
  const std::vector<CellId> saved_prepend = prepend_[ti];
  std::vector<CellId> split_roots;  // the free cells split by this relaxed attempt
  auto unsplit = [&]() {
    for (CellId x : split_roots) Untake(x);
    prepend_[ti] = saved_prepend;
  };
  for (CellLevel i = target + 1; i <= top; ++i) {
    if (freecnt[static_cast<size_t>(i)] == 0 || !safe_after_split(i)) continue;
    std::vector<CellId> batch;
    for (CellId x : Candidates(i)) {
      if (!Usable(x)) continue;
      Take(x);
      split_roots.push_back(x);
      // Descendants at the target level, depth-first.
      std::vector<CellId> stack = {x};
      while (!stack.empty()) {
        const CellId y = stack.back();
        stack.pop_back();
        if (f.level(y) == target) {
          batch.push_back(y);
          continue;
        }
        for (int32_t c = f.num_children(y) - 1; c >= 0; --c) stack.push_back(f.child(y, c));
      }
    }
    batch.insert(batch.end(), prepend_[ti].begin(), prepend_[ti].end());
    prepend_[ti] = std::move(batch);
    if (AllocAtLevel(target, node)) {
      // Keep only the split the chosen cell needs, as the real buddy allocation will do:
      // its ancestors up to the free cell are split and their other children become free.
      const CellId chosen = nodes_[static_cast<size_t>(node)].cell;
      unsplit();
      bool from_split = false;
      for (CellId a = f.parent(chosen); !a.IsNil() && !from_split; a = f.parent(a)) {
        from_split = std::find(split_roots.begin(), split_roots.end(), a) != split_roots.end();
      }
      CellId child = chosen;
      while (from_split) {
        const CellId a = f.parent(child);
        Take(a);
        for (int32_t c = 0; c < f.num_children(a); ++c) {
          const CellId sib = f.child(a, c);
          if (sib != child) extra_[static_cast<size_t>(f.level(sib))].push_back(sib);
        }
        if (std::find(split_roots.begin(), split_roots.end(), a) != split_roots.end()) break;
        child = a;
      }
      return true;
    }
  }
  unsplit();
  return false;
}

}  // namespace hived::cellalloc
