// Placer (src/placer.h): the greedy node choice and the leaf choice inside a node
// (scheduler.h rules 3-5), over const state; and SchedulerImpl's placement test hooks.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/placer.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::ChainInfo;

Placer::Placer(const cellalloc::CellForest* forest, const std::vector<state::VCell>* vcells,
               const cellalloc::PriorityUsage* pusage, const cellalloc::PriorityUsage* vusage)
    : forest_(forest), v_(vcells), pusage_(pusage), vusage_(vusage), suggested_(forest) {
  ptaken_.Reset(static_cast<size_t>(forest->num_cells()));
  vtaken_.Reset(vcells->size());
}

absl::Status Placer::CheckInvariants() const {
  HIVED_RETURN_IF_ERROR(suggested_.CheckInvariants());
  if (suggested_.active()) return absl::InternalError("(1) suggested nodes marked between calls");
  if (!ptaken_.IsClear() || !vtaken_.IsClear()) {
    return absl::InternalError("(1) leaves still counted as taken between calls");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Node choice.

bool Placer::NodeEligible(const state::View& view, int32_t pos) const {
  if (!suggested_.active()) return true;
  uint32_t cell = view.nodes[static_cast<size_t>(pos)];
  CellId pc = view.physical ? CellId(cell) : (*v_)[cell].bound;
  if (pc.IsNil()) return true;  // an unbound virtual node counts as suggested
  return suggested_.Allows(forest_->node(pc));
}

int32_t Placer::NodeFree(const state::View& view, int32_t pos, Priority q, bool pass1) const {
  const internal::NodeIndex& ix = view.index;
  if (pass1) return ix.total(pos) - ix.key1(pos) - ix.key2(pos);
  return Usage(view).FreeLeavesFor(CellId(view.nodes[static_cast<size_t>(pos)]), q);
}

NodeId Placer::PhysicalNode(const state::View& view, int32_t pos) const {
  const uint32_t cell = view.nodes[static_cast<size_t>(pos)];
  const CellId pc = view.physical ? CellId(cell) : (*v_)[cell].bound;
  return pc.IsNil() ? NodeId() : forest_->node(pc);
}

bool Placer::FindNodes(const state::View& view, const std::vector<int32_t>& needs, Priority q,
                       bool pass1, std::vector<int32_t>* pod_node, std::string* reason,
                       ReasonCode* code, const Names& names, const NodeRoom* room) const {
  const internal::NodeIndex& ix = view.index;
  pod_node->assign(needs.size(), -1);
  int32_t cur = -1, cur_bucket = 0, picked = 0;
  int64_t cur_cpu = 0, cur_memory = 0;  // what the request's pods on `cur` take
  // Whether the node at `pos` holds pod `k` besides `cpu` and `memory` (room: src/node_room.h).
  auto roomy = [&](int32_t pos, size_t k, int64_t cpu, int64_t memory) {
    if (room == nullptr) return true;
    const NodeId n = PhysicalNode(view, pos);
    return n.IsNil() || room->Fits(n.value(), cpu + room->PodCpu(k), memory + room->PodMemory(k));
  };
  const int32_t nb = ix.num_buckets();
  for (size_t k = 0; k < needs.size(); ++k) {
    const int32_t need = needs[k];
    if (cur >= 0 && NodeFree(view, cur, q, pass1) - picked >= need &&
        roomy(cur, k, cur_cpu, cur_memory)) {
      (*pod_node)[k] = cur;
      picked += need;
      if (room != nullptr) {
        cur_cpu += room->PodCpu(k);
        cur_memory += room->PodMemory(k);
      }
      continue;
    }
    int32_t found = -1;
    int32_t b = cur >= 0 ? cur_bucket : 0;
    int32_t from = cur >= 0 ? cur + 1 : 0;
    for (; b < nb; ++b, from = 0) {
      if (ix.bucket_count(b) == 0) continue;
      const bool exact = pass1 && ix.uniform();
      if (exact && ix.max_total() - ix.bucket_key1(b) - ix.bucket_key2(b) < need) continue;
      for (int32_t n = ix.NextInBucket(b, from); n >= 0; n = ix.NextInBucket(b, n + 1)) {
        if (!exact && NodeFree(view, n, q, pass1) < need) continue;
        if (!NodeEligible(view, n) || !roomy(n, k, 0, 0)) continue;
        found = n;
        break;
      }
      if (found >= 0) break;
    }
    if (found < 0) {
      // Explain: the first node HiveD's order would reach that fits but may not be used.
      const cellalloc::CellForest& f = *forest_;
      auto describe = [&](int32_t n) {
        uint32_t cell = view.nodes[static_cast<size_t>(n)];
        if (view.physical) return f.node_name(f.node(CellId(cell)));
        CellId pc = (*v_)[cell].bound;
        return pc.IsNil() ? names.vaddress(cell)
                          : absl::StrCat(f.node_name(f.node(pc)), " (virtual cell ",
                                         names.vaddress(cell), ")");
      };
      std::string where = view.physical
                              ? absl::StrCat(" when scheduling in physical cluster, chain ",
                                             f.chain_info(view.chain).name)
                              : absl::StrCat(" when scheduling in VC ", ToAbsl(names.vc),
                                             ", chain ", f.chain_info(view.chain).name);
      if (suggested_.active()) {
        for (int32_t bb = 0; bb < nb; ++bb) {
          for (int32_t n = ix.NextInBucket(bb, 0); n >= 0; n = ix.NextInBucket(bb, n + 1)) {
            if (!NodeEligible(view, n) && NodeFree(view, n, q, pass1) >= need) {
              *code = ReasonCode::kNonSuggestedNode;
              *reason =
                  absl::StrCat("have to use at least one non-suggested node ", describe(n), where);
              return false;
            }
          }
        }
      }
      std::vector<int32_t> bad = ix.unhealthy_nodes();
      std::sort(bad.begin(), bad.end(), [&](int32_t x, int32_t y) {
        bool ex = NodeEligible(view, x), ey = NodeEligible(view, y);
        if (ex != ey) return ex;
        if (ix.key1(x) != ix.key1(y)) return ix.key1(x) > ix.key1(y);
        if (ix.key2(x) != ix.key2(y)) return ix.key2(x) < ix.key2(y);
        return x < y;
      });
      for (int32_t n : bad) {
        if (NodeFree(view, n, q, pass1) >= need) {
          *code = ReasonCode::kBadNode;
          *reason = absl::StrCat("have to use at least one bad node ", describe(n), where);
          return false;
        }
      }
      // Insufficient capacity: name the level that lacks cells.
      const ChainInfo& info = f.chain_info(view.chain);
      CellLevel level = 1;
      while (level < info.node_level &&
             f.type_info(info.types[static_cast<size_t>(level)]).leaf_count < need) {
        ++level;
      }
      int64_t used = 0;
      for (const auto& entry : view.histogram) used += entry.second;
      *code = ReasonCode::kInsufficientCapacity;
      *reason = absl::StrCat(
          "insufficient capacity", where, ": pod ", k + 1, " of ", needs.size(), " needs ", need,
          " free leaf cells in one ",
          f.type_info(info.types[static_cast<size_t>(info.node_level)]).name, " (level ",
          info.node_level, "; ideally one ",
          f.type_info(info.types[static_cast<size_t>(level)]).name, ", level ", level, ")",
          q == kOpportunisticPriority ? ""
                                      : absl::StrCat(" counting leaves used below priority ", q),
          "; ", view.physical ? "the chain" : "the VC", " has ", view.total_leaves - used, " of ",
          view.total_leaves, " leaf cells free");
      return false;
    }
    cur = found;
    cur_bucket = b;
    picked = need;
    if (room != nullptr) {
      cur_cpu = room->PodCpu(k);
      cur_memory = room->PodMemory(k);
    }
    (*pod_node)[k] = cur;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Leaf choice inside a node.

template <bool kPhysical>
void Placer::ChooseLeaves(uint32_t node_cell, int32_t need, Priority q,
                          std::vector<uint32_t>* out) {
  const cellalloc::CellForest& f = *forest_;
  const std::vector<state::VCell>& cells = *v_;
  const cellalloc::PriorityUsage& u = kPhysical ? *pusage_ : *vusage_;
  TakenLeaves& taken = kPhysical ? ptaken_ : vtaken_;
  auto level = [&](uint32_t c) -> CellLevel {
    if constexpr (kPhysical) return f.level(CellId(c));
    return cells[c].level;
  };
  auto nchildren = [&](uint32_t c) -> int32_t {
    if constexpr (kPhysical) return f.num_children(CellId(c));
    return cells[c].num_children;
  };
  auto child = [&](uint32_t c, int32_t k) -> uint32_t {
    if constexpr (kPhysical) return f.child(CellId(c), k).value();
    return cells[c].first_child + static_cast<uint32_t>(k);
  };
  auto parent = [&](uint32_t c) -> uint32_t {
    if constexpr (kPhysical) return f.parent(CellId(c)).value();
    return cells[c].parent;
  };
  auto usable = [&](uint32_t c) { return u.FreeLeavesFor(CellId(c), q) - taken.total(c); };
  auto free_count = [&](uint32_t c) {
    return u.leaf_count(CellId(c)) - u.UsedTotal(CellId(c)) - taken.free(c);
  };
  // One leaf (most pods): the lowest cell with a usable leaf is a leaf, and among leaves a
  // free one beats a preemptible one, then depth-first order. So the choice below is the
  // first free untaken leaf depth-first, else the first usable one: found by walking down
  // to the first child that has one, touching levels x fan-out cells instead of every
  // usable child's subtree. (Counts are consistent: a cell with a free untaken leaf has a
  // child with one; if not, the general search below decides.)
  if (need == 1) {
    for (int pass = 0; pass < 2; ++pass) {
      auto has = [&](uint32_t c) { return pass == 0 ? free_count(c) > 0 : usable(c) > 0; };
      if (!has(node_cell)) continue;
      uint32_t c = node_cell;
      while (level(c) > 1) {
        const int32_t n = nchildren(c);
        int32_t k = 0;
        while (k < n && !has(child(c, k))) ++k;
        if (k == n) break;
        c = child(c, k);
      }
      if (level(c) != 1) break;  // inconsistent counts: the general search decides
      out->push_back(c);
      taken.Take(c, /*is_free=*/pass == 0, node_cell, parent);
      return;
    }
  }
  // The lowest cell with enough usable leaves; ties: more free (not preempting) leaves up to
  // `need`, then depth-first child order.
  uint32_t best = node_cell;
  CellLevel best_level = level(node_cell);
  int32_t best_free = std::min(free_count(node_cell), need);
  absl::InlinedVector<uint32_t, 32> stack = {node_cell};
  while (!stack.empty()) {
    uint32_t c = stack.back();
    stack.pop_back();
    CellLevel l = level(c);
    int32_t fr = std::min(free_count(c), need);
    if (l < best_level || (l == best_level && fr > best_free)) {
      best = c;
      best_level = l;
      best_free = fr;
    }
    // Exact early exit: when no child can hold `need` leaves (every cell of a level has the
    // same leaf count), no later cell is lower, and none of this level has more than
    // `need` free leaves counted, so the first such cell with `need` free ones wins.
    if (best == c && fr == need && (l == 1 || u.leaf_count(CellId(child(c, 0))) < need)) break;
    for (int32_t k = nchildren(c) - 1; k >= 0; --k) {
      uint32_t ch = child(c, k);
      if (usable(ch) >= need) stack.push_back(ch);
    }
  }
  // Take leaves in `best`: free ones first, then preemptible ones, depth-first.
  int32_t got = 0;
  auto take = [&](uint32_t leaf, bool is_free) {
    out->push_back(leaf);
    ++got;
    taken.Take(leaf, is_free, node_cell, parent);
  };
  for (int pass = 0; pass < 2 && got < need; ++pass) {
    stack.clear();
    stack.push_back(best);
    while (!stack.empty() && got < need) {
      uint32_t c = stack.back();
      stack.pop_back();
      if (level(c) == 1) {
        if (taken.total(c) > 0) continue;
        Priority pr = u.LeafPriority(CellId(c));
        bool is_free = pr == kFreePriority;
        if (pass == 0 ? is_free : (!is_free && pr < q)) take(c, is_free);
        continue;
      }
      for (int32_t k = nchildren(c) - 1; k >= 0; --k) {
        uint32_t ch = child(c, k);
        if (pass == 0 ? free_count(ch) > 0 : usable(ch) > 0) stack.push_back(ch);
      }
    }
  }
  HIVED_CHECK(got == need) << "leaf choice found " << got << " of " << need;
}

template void Placer::ChooseLeaves<true>(uint32_t, int32_t, Priority, std::vector<uint32_t>*);
template void Placer::ChooseLeaves<false>(uint32_t, int32_t, Priority, std::vector<uint32_t>*);

// ---------------------------------------------------------------------------------------
// SchedulerImpl: the node choice with the scheduler's names, and test hooks.

bool SchedulerImpl::FindNodes(const Placer& placer, const View& view,
                              const std::vector<int32_t>& needs, Priority q, bool pass1,
                              std::vector<int32_t>* pod_node, std::string* reason, ReasonCode* code,
                              const NodeRoom* room) const {
  const std::string_view vc = view.physical ? std::string_view() : vclusters_.vc(view.vc).name;
  return placer.FindNodes(view, needs, q, pass1, pod_node, reason, code,
                          Placer::Names{[this](uint32_t v) { return vclusters_.Address(v); }, vc},
                          room);
}

NodeId SchedulerImpl::NodeShort(const std::vector<int32_t>& needs,
                                const std::vector<CellId>& pleaves, const NodeRoom& room) const {
  // Per node, what the pods placed on it so far take (few nodes per request: a short list).
  absl::InlinedVector<std::pair<NodeId, std::pair<int64_t, int64_t>>, 8> taken;
  size_t at = 0;
  for (size_t k = 0; k < needs.size() && at < pleaves.size(); ++k) {
    const NodeId n = forest_->node(pleaves[at]);
    at += static_cast<size_t>(needs[k]);
    auto it = std::find_if(taken.begin(), taken.end(), [&](const auto& e) { return e.first == n; });
    if (it == taken.end()) it = taken.insert(taken.end(), {n, {0, 0}});
    it->second.first += room.PodCpu(k);
    it->second.second += room.PodMemory(k);
    if (!room.Fits(n.value(), it->second.first, it->second.second)) return n;
  }
  return NodeId();
}

const SchedulerImpl::View* SchedulerImpl::ViewForTesting(std::string_view vc,
                                                         std::string_view chain) const {
  ChainId ch = forest_->FindChain(chain);
  if (ch.IsNil()) return nullptr;
  if (vc.empty()) return &views_[ch.value()];
  const VcId vc_id = vclusters_.FindVc(ToAbsl(vc));
  if (vc_id.IsNil()) return nullptr;
  int32_t id = vclusters_.vc(vc_id).chain_view[ch.value()];
  return id < 0 ? nullptr : &views_[static_cast<size_t>(id)];
}

std::vector<int32_t> SchedulerImpl::FindNodesForTesting(std::string_view vc, std::string_view chain,
                                                        const std::vector<int32_t>& needs,
                                                        Priority q) const {
  const View* view = ViewForTesting(vc, chain);
  if (view == nullptr) return {};
  std::vector<int32_t> out;
  std::string reason;
  ReasonCode code = ReasonCode::kNone;
  if (!FindNodes(placer_, *view, needs, q, q == kOpportunisticPriority, &out, &reason, &code))
    return {};
  return out;
}

std::vector<SchedulerImpl::NodeForTesting> SchedulerImpl::ViewNodesForTesting(
    std::string_view vc, std::string_view chain, Priority q) const {
  const View* view = ViewForTesting(vc, chain);
  if (view == nullptr) return {};
  const internal::NodeIndex& ix = view->index;
  std::vector<NodeForTesting> out;
  for (int32_t n = 0; n < ix.num_nodes(); ++n) {
    out.push_back({ix.healthy(n), ix.key1(n), ix.key2(n),
                   placer_.NodeFree(*view, n, q, q == kOpportunisticPriority)});
  }
  return out;
}

}  // namespace hived
