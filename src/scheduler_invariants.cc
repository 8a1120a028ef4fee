// SchedulerImpl::CheckInvariants: design.md's invariants, and each component's, checked
// from scratch.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::BuddyState;
using cellalloc::ChainInfo;

absl::Status SchedulerImpl::CheckInvariants() const {
  const cellalloc::CellForest& f = *forest_;
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  HIVED_RETURN_IF_ERROR(buddy_->CheckInvariants());
  HIVED_RETURN_IF_ERROR(pusage_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(vusage_.CheckInvariants());
  const size_t n = static_cast<size_t>(f.num_cells());
  // (1) Leaves and groups.
  std::vector<int32_t> seen_user(n, 0), seen_reserver(n, 0);
  HIVED_RETURN_IF_ERROR(groups_.CheckInvariants());
  // Per-request scratch is empty between calls; the cached decision is well formed.
  HIVED_RETURN_IF_ERROR(cache_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(placer_.CheckInvariants());
  {  // Decide's scratch (DecideScratch) and the planner's overlay.
    const DecideScratch& ds = decide_scratch_;
    const DowngradeOverlay& o = ds.downgrades;
    if (o.active || !o.touched.empty() || !o.free_roots.empty() || !o.unbound_cells.empty() ||
        !ds.vslot_touched.empty() ||
        std::any_of(ds.vslot.begin(), ds.vslot.end(), [](int32_t x) { return x >= 0; }) ||
        std::any_of(o.unbound.begin(), o.unbound.end(), [](uint8_t x) { return x != 0; })) {
      return fail("the decision scratch is not empty between calls");
    }
    if (!planner_->IsIdle())
      return fail("the binding planner's overlay is not empty between plans");
  }
  std::vector<int32_t> doomed(static_cast<size_t>(f.num_chains()), 0);
  for (const VCell& c : v_) doomed[c.chain.value()] += c.doomed ? 1 : 0;
  HIVED_RETURN_IF_ERROR(health_.CheckInvariants(doomed));
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive) continue;
    GroupId id = static_cast<GroupId>(gi);
    for (size_t i = 0; i < g.pleaves.size(); ++i) {
      CellId p = g.pleaves[i];
      if (f.level(p) != 1) return fail("(1) group ", g.name, " holds a non-leaf cell");
      if (g.state == GState::kPreempting) {
        if (p_reserver_[p.value()] != id) {
          return fail("(1) preempting group ", g.name, " does not reserve leaf ", f.address(p));
        }
        ++seen_reserver[p.value()];
      } else {
        if (p_user_[p.value()] != id) {
          return fail("(1) group ", g.name, " does not use leaf ", f.address(p));
        }
        ++seen_user[p.value()];
      }
      VCellId v = g.vleaves[i];
      if (v != kNilId && v_[v].user == id) {
        if (v_[v].bound != p)
          return fail("(4) group ", g.name, " virtual leaf ", VAddress(v),
                      " is not bound to its leaf");
        if (v_[v].vc != g.vc)
          return fail("(5) group ", g.name, " uses a virtual cell of another VC");
      }
      if (v != kNilId && g.running < 0 && g.state != GState::kPreempting) {
        return fail("(1) opportunistic group ", g.name, " holds a virtual leaf");
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    CellId p(static_cast<uint32_t>(i));
    if (f.level(p) != 1) continue;
    GroupId u = p_user_[i], r = p_reserver_[i];
    if ((u != kNilId) != (seen_user[i] == 1) || seen_user[i] > 1) {
      return fail("(1) leaf ", f.address(p), " user does not match the groups");
    }
    if ((r != kNilId) != (seen_reserver[i] == 1) || seen_reserver[i] > 1) {
      return fail("(1) leaf ", f.address(p), " reserver does not match the groups");
    }
    Priority want = kFreePriority;
    if (r != kNilId) {
      want = groups_[r].priority;
      if (u != kNilId) {
        // (6) only lower priority work is preempted.
        if (groups_[u].running >= groups_[r].priority) {
          return fail("(6) group ", groups_[u].name, " is preempted by ", groups_[r].name,
                      " without a lower priority");
        }
        if (groups_[u].state != GState::kBeingPreempted) {
          return fail("(6) group ", groups_[u].name, " on a reserved leaf is not being preempted");
        }
      }
    } else if (u != kNilId) {
      want = groups_[u].running;
    }
    if (pusage_.LeafPriority(p) != want) {
      return fail("priority of leaf ", f.address(p), " is ", pusage_.LeafPriority(p), ", expected ",
                  want);
    }
  }
  // (4) Binding symmetry and virtual leaf priorities.
  for (size_t i = 0; i < v_.size(); ++i) {
    const VCell& v = v_[i];
    VCellId id = static_cast<VCellId>(i);
    int32_t bound_kids = 0;
    for (int32_t k = 0; k < v.num_children; ++k) {
      if (!v_[v.first_child + static_cast<VCellId>(k)].bound.IsNil()) ++bound_kids;
    }
    if (bound_kids != v.bound_children) return fail("(4) bound-children count of ", VAddress(id));
    if (v.level == 1) {
      Priority want = v.user == kNilId                               ? kFreePriority
                      : groups_[v.user].state == GState::kPreempting ? groups_[v.user].priority
                                                                     : groups_[v.user].running;
      if (v.user != kNilId && !groups_[v.user].alive)
        return fail("virtual leaf ", VAddress(id), " held by a dead group");
      if (vusage_.LeafPriority(CellId(id)) != want) {
        return fail("priority of virtual leaf ", VAddress(id), " is ",
                    vusage_.LeafPriority(CellId(id)), ", expected ", want);
      }
      if (v.user != kNilId && v.bound.IsNil())
        return fail("(4) used virtual leaf ", VAddress(id), " is unbound");
    }
    if (v.pinned && v.is_root && v.bound.IsNil())
      return fail("pinned cell ", VAddress(id), " is unbound");
    if (v.bound.IsNil()) continue;
    CellId p = v.bound;
    if (p_bound_[p.value()] != id)
      return fail("(4) ", VAddress(id), " -> ", f.address(p), " is not symmetric");
    if (f.level(p) != v.level || f.chain(p) != v.chain) {
      return fail("(4) ", VAddress(id), " is bound to ", f.address(p),
                  " of another level or chain");
    }
    if (v.parent != kNilId && !v_[v.parent].bound.IsNil() && v_[v.parent].bound != f.parent(p)) {
      return fail("(4) ", VAddress(id), " and its parent are bound to unrelated cells");
    }
    if (v.parent != kNilId && v_[v.parent].bound.IsNil()) {
      return fail("(4) ", VAddress(id), " is bound but its parent is not");
    }
    if (v.is_root && buddy_->state(p) != BuddyState::kUsed) {
      return fail("(4) preassigned ", VAddress(id), " is bound to ", f.address(p),
                  " which the allocator does not hold");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    VCellId v = p_bound_[i];
    if (v != kNilId && v_[v].bound.value() != i)
      return fail("(4) physical ", f.address(CellId(static_cast<uint32_t>(i))),
                  " binding is not symmetric");
  }
  // (3) Safety and VC counters.
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      size_t li = static_cast<size_t>(l);
      int32_t sum = 0;
      for (const Vc& vc : vcs_) {
        const VcChainLevel& s = vc.cl[ch.value()][li];
        int32_t unbound = 0;
        for (size_t k = 0; k < s.roots.size(); ++k) {
          bool ub = v_[s.roots[k]].bound.IsNil();
          if (ub) ++unbound;
          if (ub != s.unbound.Contains(static_cast<int32_t>(k))) {
            return fail("unbound set of VC ", vc.name, " is stale at ", VAddress(s.roots[k]));
          }
        }
        if (unbound != s.free)
          return fail("vc_free of VC ", vc.name, " chain ", info.name, " level ", l);
        sum += s.free;
      }
      if (sum != all_vc_free_[ch.value()][li])
        return fail("all_vc_free of chain ", info.name, " level ", l);
      if (buddy_->obtainable(ch, l) < sum) {
        return fail("(3) safety broken at chain ", info.name, " level ", l, ": ",
                    buddy_->obtainable(ch, l), " obtainable < ", sum, " unbound virtual cells");
      }
    }
    // (3') Joint safety: top-down, the free cells left after every VC takes its unbound
    // cells of a level can still be split into the cells the levels below need.
    int64_t left = 0;
    for (CellLevel l = info.top_level; l >= 1; --l) {
      size_t li = static_cast<size_t>(l);
      if (l < info.top_level) left *= info.child_count[li + 1];
      left += buddy_->free_count(ch, l) - all_vc_free_[ch.value()][li];
      if (left < 0) {
        return fail("(3) joint safety broken at chain ", info.name, " level ", l,
                    ": the free cells cannot back the VCs' unbound cells");
      }
    }
  }
  // Views.
  for (const View& view : views_) {
    for (int32_t i = 0; i < view.index.num_nodes(); ++i) {
      uint32_t cell = view.nodes[static_cast<size_t>(i)];
      int32_t k1, k2;
      bool healthy;
      if (view.physical) {
        k1 = pusage_.UsedAt(CellId(cell), kOpportunisticPriority);
        k2 = pusage_.UsedAbove(CellId(cell), kOpportunisticPriority);
        healthy = buddy_->IsHealthy(CellId(cell));
      } else {
        k1 = vusage_.UsedTotal(CellId(cell));
        k2 = 0;
        healthy = v_[cell].bound.IsNil() || buddy_->IsHealthy(v_[cell].bound);
      }
      if (k1 != view.index.key1(i) || k2 != view.index.key2(i) ||
          healthy != view.index.healthy(i)) {
        return fail("node index is stale for node ", i, " of a ",
                    view.physical ? "physical" : "virtual", " view");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hived
