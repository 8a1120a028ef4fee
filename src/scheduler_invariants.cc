// SchedulerImpl::CheckInvariants: scheduler_impl.h's invariants, and each component's, checked
// from scratch.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

absl::Status SchedulerImpl::CheckInvariants() const {
  const cellalloc::CellForest& f = *forest_;
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  HIVED_RETURN_IF_ERROR(buddy_->CheckInvariants());
  HIVED_RETURN_IF_ERROR(physical_.CheckInvariants(views_));
  const size_t n = static_cast<size_t>(f.num_cells());
  // (1) Leaves and groups.
  std::vector<int32_t> seen_user(n, 0), seen_reserver(n, 0);
  HIVED_RETURN_IF_ERROR(groups_.CheckInvariants());
  // Per-request scratch is empty between calls; the cached decision is well formed.
  HIVED_RETURN_IF_ERROR(reservations_.CheckInvariants());
  HIVED_RETURN_IF_ERROR(changes_.CheckInvariants());
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
  // Filter's pooled scratch (the ones in use belong to filters running now).
  HIVED_RETURN_IF_ERROR(filter_pool_.CheckEach([&](const FilterScratch& fs) -> absl::Status {
    if (absl::Status placer = fs.placer.CheckInvariants(); !placer.ok()) return placer;
    if (!fs.planner->IsIdle() || !fs.scratch.vslot_touched.empty() ||
        fs.scratch.downgrades.active) {
      return fail("a pooled filter scratch is not empty between calls");
    }
    return absl::OkStatus();
  }));
  std::vector<int32_t> doomed(static_cast<size_t>(f.num_chains()), 0);
  for (const VCell& c : vclusters_.cells()) doomed[c.chain.value()] += c.doomed ? 1 : 0;
  HIVED_RETURN_IF_ERROR(health_.CheckInvariants(doomed));
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive) continue;
    GroupId id = static_cast<GroupId>(gi);
    for (size_t i = 0; i < g.pleaves.size(); ++i) {
      CellId p = g.pleaves[i];
      if (f.level(p) != 1) return fail("(1) group ", g.name, " holds a non-leaf cell");
      if (g.state == GState::kPreempting || g.state == GState::kReserved) {
        if (physical_.reserver(p) != id) {
          return fail("(1) preempting or reserved group ", g.name, " does not reserve leaf ",
                      f.address(p));
        }
        // Reservations (R1): a reserved group has no victims and nobody uses its leaves.
        if (g.state == GState::kReserved &&
            (physical_.user(p) != kNilId || g.reserved_by_others != 0)) {
          return fail("(R1) leaf ", f.address(p), " reserved by ", g.name, " is used by ",
                      physical_.user(p) != kNilId ? groups_[physical_.user(p)].name : "nobody",
                      " (", g.reserved_by_others, " reservations on the group's own leaves)");
        }
        ++seen_reserver[p.value()];
      } else {
        if (physical_.user(p) != id) {
          return fail("(1) group ", g.name, " does not use leaf ", f.address(p));
        }
        ++seen_user[p.value()];
      }
      VCellId v = g.vleaves[i];
      if (v != kNilId && vclusters_.cell(v).user == id) {
        if (vclusters_.cell(v).bound != p)
          return fail("(4) group ", g.name, " virtual leaf ", vclusters_.Address(v),
                      " is not bound to its leaf");
        if (vclusters_.cell(v).vc != g.vc)
          return fail("(5) group ", g.name, " uses a virtual cell of another VC");
      }
      if (g.state == GState::kReserved && v != kNilId && vclusters_.cell(v).user != id) {
        return fail("(R2) reserved group ", g.name, " does not hold virtual leaf ",
                    vclusters_.Address(v));
      }
      if (v != kNilId && g.running < 0 && g.state != GState::kPreempting &&
          g.state != GState::kReserved) {
        return fail("(1) opportunistic group ", g.name, " holds a virtual leaf");
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    CellId p(static_cast<uint32_t>(i));
    if (f.level(p) != 1) continue;
    GroupId u = physical_.user(p), r = physical_.reserver(p);
    if ((u != kNilId) != (seen_user[i] == 1) || seen_user[i] > 1) {
      return fail("(1) leaf ", f.address(p), " user does not match the groups");
    }
    if ((r != kNilId) != (seen_reserver[i] == 1) || seen_reserver[i] > 1) {
      return fail("(1) leaf ", f.address(p), " reserver does not match the groups");
    }
    Priority want = kFreePriority;
    if (r != kNilId) {
      want = groups_[r].priority;  // (R2) for a reserved group
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
    if (physical_.usage().LeafPriority(p) != want) {
      return fail("priority of leaf ", f.address(p), " is ", physical_.usage().LeafPriority(p),
                  ", expected ", want);
    }
  }
  // (3) safety and (4) binding: the virtual clusters' invariants; virtual leaf priorities.
  HIVED_RETURN_IF_ERROR(vclusters_.CheckInvariants());
  for (VCellId id = 0; id < vclusters_.cells().size(); ++id) {
    const VCell& v = vclusters_.cell(id);
    if (v.level != 1) continue;
    Priority want =
        v.user == kNilId ? kFreePriority
        : groups_[v.user].state == GState::kPreempting || groups_[v.user].state == GState::kReserved
            ? groups_[v.user].priority
            : groups_[v.user].running;
    if (v.user != kNilId && !groups_[v.user].alive)
      return fail("virtual leaf ", vclusters_.Address(id), " held by a dead group");
    if (vclusters_.usage().LeafPriority(CellId(id)) != want) {
      return fail("priority of virtual leaf ", vclusters_.Address(id), " is ",
                  vclusters_.usage().LeafPriority(CellId(id)), ", expected ", want);
    }
    if (v.user != kNilId && v.bound.IsNil())
      return fail("(4) used virtual leaf ", vclusters_.Address(id), " is unbound");
  }
  // Views.
  for (const View& view : views_) {
    for (int32_t i = 0; i < view.index.num_nodes(); ++i) {
      uint32_t cell = view.nodes[static_cast<size_t>(i)];
      int32_t k1, k2;
      bool healthy;
      if (view.physical) {
        k1 = physical_.usage().UsedAt(CellId(cell), kOpportunisticPriority);
        k2 = physical_.usage().UsedAbove(CellId(cell), kOpportunisticPriority);
        healthy = buddy_->IsHealthy(CellId(cell));
      } else {
        k1 = vclusters_.usage().UsedTotal(CellId(cell));
        k2 = 0;
        healthy =
            vclusters_.cell(cell).bound.IsNil() || buddy_->IsHealthy(vclusters_.cell(cell).bound);
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
