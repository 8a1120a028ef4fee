// Schedule: request parsing, intra-VC / physical placement, lazy preemption, binding.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::BuddyState;
using cellalloc::ChainInfo;

absl::Status ValidateRequest(const GroupRequest& r) {
  if (r.name.empty()) return absl::InvalidArgumentError("group name is empty");
  if (r.priority < kOpportunisticPriority || r.priority > kMaxGuaranteedPriority) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": priority ", r.priority,
                                                   " is outside -1..", kMaxGuaranteedPriority));
  }
  if (r.members.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, " has no members"));
  }
  int64_t pods = 0;
  for (const GroupMember& m : r.members) {
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", r.name, ": podNumber and leafCellNumber must be positive (got ",
                       m.pod_number, " x ", m.leaf_cell_number, ")"));
    }
    pods += m.pod_number;  // int64: no overflow, members are few
    if (pods > kMaxGroupPods) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": too many pods (more than ", kMaxGroupPods, " in all members)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SchedulerImpl::Req> SchedulerImpl::ParseRequest(const GroupRequest& r) const {
  HIVED_RETURN_IF_ERROR(ValidateRequest(r));
  Req req;
  req.raw = &r;
  req.needs.swap(needs_pool_);  // a buffer kept from the previous request
  req.needs.clear();
  auto it = vc_by_name_.find(r.vc);
  if (it == vc_by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("VC ", r.vc, " does not exist"));
  }
  req.vc = it->second;
  req.guaranteed = r.priority >= kMinGuaranteedPriority;
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number; ++k) req.needs.push_back(m.leaf_cell_number);
  }
  std::sort(req.needs.begin(), req.needs.end());
  const Vc& vc = vcs_[req.vc.value()];
  const cellalloc::CellForest& f = *forest_;
  int32_t largest = 0;
  auto consider_chain = [&](ChainId ch) {
    const ChainInfo& info = f.chain_info(ch);
    largest =
        std::max(largest, f.type_info(info.types[static_cast<size_t>(info.node_level)]).leaf_count);
  };
  if (!r.pinned_cell_id.empty()) {
    if (!req.guaranteed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": an opportunistic group cannot use pinned cell ", r.pinned_cell_id));
    }
    auto p = vc.pinned.find(r.pinned_cell_id);
    if (p == vc.pinned.end()) {
      return absl::NotFoundError(
          absl::StrCat("VC ", r.vc, " does not have pinned cell ", r.pinned_cell_id));
    }
    req.pinned_root = p->second;
    consider_chain(v_[p->second].chain);
  } else if (!r.leaf_cell_type.empty()) {
    const std::vector<ChainId>& chains = f.ChainsOfLeafType(r.leaf_cell_type);
    if (chains.empty()) {
      return absl::NotFoundError(
          absl::StrCat("leaf cell type ", r.leaf_cell_type, " does not exist in the cluster"));
    }
    bool vc_has = false;
    for (ChainId ch : chains) {
      consider_chain(ch);
      vc_has = vc_has || vc.chain_view[ch.value()] >= 0;
    }
    if (req.guaranteed && !vc_has) {
      return absl::InvalidArgumentError(
          absl::StrCat("VC ", r.vc, " does not have leaf cell type ", r.leaf_cell_type));
    }
  } else {
    bool vc_has = false;
    for (int32_t c = 0; c < f.num_chains(); ++c) {
      consider_chain(ChainId(static_cast<uint32_t>(c)));
      vc_has = vc_has || vc.chain_view[static_cast<size_t>(c)] >= 0;
    }
    if (req.guaranteed && !vc_has) {
      return absl::InvalidArgumentError(absl::StrCat(
          "VC ", r.vc, " has no virtual cells outside pinned cells; set pinnedCellId"));
    }
  }
  if (req.needs.back() > largest) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": a pod needs ", req.needs.back(),
                     " leaf cells but the largest node of the requested type has ", largest));
  }
  req.has_suggested = r.suggested_nodes.has_value();
  return req;
}

absl::StatusOr<ScheduleResult> SchedulerImpl::Schedule(const GroupRequest& request, Phase phase) {
  auto existing = group_by_name_.find(request.name);
  if (existing != group_by_name_.end()) {
    const Group& g = groups_[existing->second];
    if (g.state != GState::kPreempting) {
      return absl::AlreadyExistsError(absl::StrCat("group ", request.name, " is already running"));
    }
    absl::StatusOr<ScheduleResult> result = RecheckPreempting(existing->second, request, phase);
    Settle();
    return result;
  }
  HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
  absl::StatusOr<ScheduleResult> result = ScheduleNew(req, phase);
  needs_pool_.swap(req.needs);
  Settle();
  return result;
}

namespace {
// Sets and clears the per-request suggested-node marks.
}  // namespace

absl::StatusOr<ScheduleResult> SchedulerImpl::ScheduleNew(const Req& req, Phase phase) {
  const GroupRequest& r = *req.raw;
  const cellalloc::CellForest& f = *forest_;
  // Suggested nodes: mark the nodes and every cell above them.
  if (req.has_suggested) {
    sugg_active_ = true;
    for (const std::string& name : *r.suggested_nodes) {
      NodeId n = f.FindNode(name);
      if (n.IsNil() || node_suggested_[n.value()]) continue;
      node_suggested_[n.value()] = 1;
      sugg_nodes_.push_back(n);
      for (CellId c : f.node_cells(n)) {
        for (CellId x = c; !x.IsNil(); x = f.parent(x)) {
          if (p_suggested_[x.value()]++ == 0) sugg_touched_.push_back(x.value());
        }
      }
    }
  }
  struct Cleanup {
    SchedulerImpl* s;
    ~Cleanup() {
      for (NodeId n : s->sugg_nodes_) s->node_suggested_[n.value()] = 0;
      for (uint32_t c : s->sugg_touched_) s->p_suggested_[c] = 0;
      s->sugg_nodes_.clear();
      s->sugg_touched_.clear();
      s->sugg_active_ = false;
    }
  } cleanup{this};

  std::vector<std::string> reasons;
  bool all_infeasible = true;
  Attempt found;
  ChainId found_chain;
  std::vector<GroupId> lazy_done;
  auto try_view = [&](int32_t view_id) {
    Attempt a = TryGuaranteed(req, view_id, phase, &lazy_done);
    if (a.ok) {
      found = std::move(a);
      found_chain = views_[static_cast<size_t>(view_id)].chain;
      return true;
    }
    all_infeasible = all_infeasible && a.infeasible;
    reasons.push_back(std::move(a.reason));
    return false;
  };
  auto try_chain = [&](ChainId ch) {
    if (req.guaranteed) {
      int32_t view = vcs_[req.vc.value()].chain_view[ch.value()];
      if (view < 0) return false;
      return try_view(view);
    }
    Attempt a = TryOpportunistic(req, ch);
    if (a.ok) {
      found = std::move(a);
      found_chain = ch;
      return true;
    }
    all_infeasible = all_infeasible && a.infeasible;
    reasons.push_back(std::move(a.reason));
    return false;
  };
  bool ok = false;
  if (req.pinned_root != kNilId) {
    ok = try_view(vcs_[req.vc.value()].pinned_view.at(r.pinned_cell_id));
  } else if (!r.leaf_cell_type.empty()) {
    for (ChainId ch : f.ChainsOfLeafType(r.leaf_cell_type)) {
      if ((ok = try_chain(ch))) break;
    }
  } else {
    for (ChainId ch : chains_by_leaf_type_) {
      if ((ok = try_chain(ch))) break;
    }
  }

  ScheduleResult result;
  if (!ok) {
    result.outcome = all_infeasible && !reasons.empty() ? Outcome::kInfeasible : Outcome::kWaiting;
    result.reason = absl::StrJoin(reasons, "; ");
    if (result.reason.empty()) result.reason = "no chain of the requested leaf cell type";
    return result;
  }
  // Victims and overlapping preemptors.
  std::vector<GroupId> victims, overlapping;
  for (CellId p : found_pleaves_) {
    GroupId u = p_user_[p.value()];
    GroupId rv = p_reserver_[p.value()];
    if (u != kNilId && std::find(victims.begin(), victims.end(), u) == victims.end()) {
      victims.push_back(u);
    }
    if (rv != kNilId &&
        std::find(overlapping.begin(), overlapping.end(), rv) == overlapping.end()) {
      overlapping.push_back(rv);
    }
  }
  FillPlacement(found_chain, req.needs, found_pleaves_, found_vleaves_, &result.placement);
  if (phase == Phase::kFiltering) {
    // Decide only: undo lazy preemptions. A placement that needs them is reported as a
    // preemption whose victims include the groups that would be downgraded.
    for (auto it = lazy_done.rbegin(); it != lazy_done.rend(); ++it) {
      RevertDowngrade(*it, groups_[*it].priority);
      if (std::find(victims.begin(), victims.end(), *it) == victims.end()) victims.push_back(*it);
    }
    if (!lazy_done.empty()) {
      result.reason = "lazily preemptible victims would be downgraded to opportunistic";
    }
    if (!overlapping.empty()) {
      std::vector<std::string> names;
      for (GroupId g : overlapping) names.push_back(groups_[g].name);
      std::sort(names.begin(), names.end());
      result.outcome = Outcome::kWaiting;
      result.placement = Placement();
      result.reason = absl::StrCat("the placement overlaps the reservation of preempting group(s) ",
                                   absl::StrJoin(names, ", "),
                                   "; schedule in the Preempting phase to cancel them");
      return result;
    }
    if (!victims.empty()) {
      result.outcome = Outcome::kPreempting;
      for (GroupId g : victims) result.victims.push_back(groups_[g].name);
      std::sort(result.victims.begin(), result.victims.end());
      return result;
    }
    result.outcome = Outcome::kPlaced;
    if (lazy_done.empty()) {  // the virtual cells are valid only without the downgrades
      CacheDecision(req, found_chain);
    }
    return result;
  }
  if (!lazy_done.empty()) ++epoch_;
  for (GroupId g : overlapping) CancelInternal(g);
  if (!overlapping.empty()) {
    victims.clear();
    for (CellId p : found_pleaves_) {
      GroupId u = p_user_[p.value()];
      if (u != kNilId && std::find(victims.begin(), victims.end(), u) == victims.end()) {
        victims.push_back(u);
      }
    }
  }
  if (victims.empty()) {
    result.outcome = Outcome::kPlaced;
    CacheDecision(req, found_chain);
    return result;
  }
  // Create the preempting group: reserve every leaf.
  ++epoch_;
  GroupId g = NewGroup(r, req.vc);
  Group& grp = groups_[g];
  grp.state = GState::kPreempting;
  grp.running = r.priority;
  grp.chain = found_chain;
  grp.placement = result.placement;
  grp.pleaves = found_pleaves_;
  grp.vleaves = found_vleaves_;
  for (size_t i = 0; i < found_pleaves_.size(); ++i) {
    CellId p = found_pleaves_[i];
    VCellId v = found_vleaves_[i];
    GroupId u = p_user_[p.value()];
    if (u != kNilId) {
      Group& victim = groups_[u];
      victim.state = GState::kBeingPreempted;
      victim.preemptor = r.name;
      ++victim.reserved_by_others;
    }
    if (v != kNilId) {
      BindLeafPath(v, p);
      SetVLeaf(v, r.priority, g);
    }
    p_reserver_[p.value()] = g;
    SetPLeaf(p, r.priority);
  }
  result.outcome = Outcome::kPreempting;
  for (GroupId x : victims) result.victims.push_back(groups_[x].name);
  std::sort(result.victims.begin(), result.victims.end());
  return result;
}

void SchedulerImpl::CacheDecision(const Req& req, ChainId chain) {
  cache_.name = req.raw->name;
  cache_.epoch = epoch_;
  cache_.chain = chain;
  cache_.needs = req.needs;
  cache_.pleaves.swap(found_pleaves_);  // swaps keep both buffers' capacity
  cache_.vleaves.swap(found_vleaves_);
}

absl::StatusOr<ScheduleResult> SchedulerImpl::RecheckPreempting(GroupId g,
                                                                const GroupRequest& request,
                                                                Phase phase) {
  Group& grp = groups_[g];
  const cellalloc::CellForest& f = *forest_;
  bool blocked = false;
  std::string why;
  for (CellId p : grp.pleaves) {
    NodeId n = f.node(p);
    if (!buddy_->IsNodeHealthy(n)) {
      blocked = true;
      why = absl::StrCat("node ", f.node_name(n), " is bad");
      break;
    }
    if (request.suggested_nodes.has_value() &&
        std::find(request.suggested_nodes->begin(), request.suggested_nodes->end(),
                  f.node_name(n)) == request.suggested_nodes->end()) {
      blocked = true;
      why = absl::StrCat("node ", f.node_name(n), " is not suggested");
      break;
    }
  }
  if (blocked && phase == Phase::kPreempting) {
    ++epoch_;
    CancelInternal(g);
    HIVED_ASSIGN_OR_RETURN(Req req, ParseRequest(request));
    return ScheduleNew(req, phase);
  }
  ScheduleResult result;
  result.placement = grp.placement;
  for (CellId p : grp.pleaves) {
    GroupId u = p_user_[p.value()];
    if (u != kNilId && u != g) {
      const std::string& name = groups_[u].name;
      if (std::find(result.victims.begin(), result.victims.end(), name) == result.victims.end()) {
        result.victims.push_back(name);
      }
    }
  }
  std::sort(result.victims.begin(), result.victims.end());
  if (blocked) {
    result.outcome = Outcome::kWaiting;
    result.reason =
        absl::StrCat("the reservation of preempting group ", grp.name, " is blocked: ", why,
                     "; schedule in the Preempting phase to re-place it");
    return result;
  }
  result.outcome = result.victims.empty() ? Outcome::kPlaced : Outcome::kPreempting;
  return result;
}

std::string SchedulerImpl::Infeasibility(const Req& req, const View& view) const {
  // The checks first: the message is built only when the request is infeasible (this runs
  // for every chain tried, so the feasible case must not pay for string formatting).
  const int32_t largest = view.index.max_total();
  int64_t total = 0;
  for (int32_t n : req.needs) total += n;
  const bool too_big_pod = req.needs.back() > largest;
  if (!too_big_pod && total <= view.total_leaves) return std::string();
  const cellalloc::CellForest& f = *forest_;
  const ChainInfo& info = f.chain_info(view.chain);
  std::string where =
      view.physical ? absl::StrCat("chain ", info.name)
                    : absl::StrCat("VC ", vcs_[view.vc.value()].name, ", chain ", info.name,
                                   req.pinned_root != kNilId
                                       ? absl::StrCat(", pinned cell ", req.raw->pinned_cell_id)
                                       : std::string());
  if (too_big_pod) {
    return absl::StrCat(where, ": a pod needs ", req.needs.back(),
                        " leaf cells on one node but the largest node ",
                        view.physical ? "" : "the VC has ", "has ", largest);
  }
  return absl::StrCat(where, ": the group needs ", total, " leaf cells but ",
                      view.physical ? "the chain has " : "the VC reserves ", view.total_leaves);
}

SchedulerImpl::Attempt SchedulerImpl::TryGuaranteed(const Req& req, int32_t view_id, Phase phase,
                                                    std::vector<GroupId>* lazy_done) {
  (void)phase;
  Attempt a;
  const View& view = views_[static_cast<size_t>(view_id)];
  std::string inf = Infeasibility(req, view);
  if (!inf.empty()) {
    a.infeasible = true;
    a.reason = std::move(inf);
    return a;
  }
  const Priority p = req.raw->priority;
  std::vector<int32_t>& pod_node = scratch_pod_node_;
  Priority q = kOpportunisticPriority;
  bool ok = FindNodes(view, req.needs, q, /*pass1=*/true, &pod_node, &a.reason);
  if (!ok && view.HasUsageBelow(p)) {
    std::string reason2;
    ok = FindNodes(view, req.needs, p, /*pass1=*/false, &pod_node, &reason2);
    q = p;
    if (!ok && reason2.find("insufficient") == std::string::npos) a.reason = std::move(reason2);
  }
  if (!ok) return a;
  std::vector<uint32_t>& leaves = scratch_leaves_;
  leaves.clear();
  for (size_t k = 0; k < req.needs.size(); ++k) {
    ChooseLeaves<false>(view.nodes[static_cast<size_t>(pod_node[k])], req.needs[k], q, &leaves);
  }
  ClearTaken();
  // Lazy preemption: downgrade lazily preemptible running groups on the chosen leaves.
  size_t lazy_mark = lazy_done->size();
  if (req.pinned_root == kNilId && q != kOpportunisticPriority) {
    for (uint32_t v : leaves) {
      CellId pc = v_[v].bound;
      if (pc.IsNil()) continue;
      GroupId u = p_user_[pc.value()];
      if (u == kNilId) continue;
      Group& victim = groups_[u];
      if (!victim.lazy || victim.running < kMinGuaranteedPriority ||
          victim.state != GState::kRunning) {
        continue;
      }
      DowngradeGroup(u, req.raw->name, absl::StrCat("lazily preempted by group ", req.raw->name));
      lazy_done->push_back(u);
    }
  }
  if (!MapPlacement(view.chain, leaves, &found_pleaves_)) {
    for (size_t i = lazy_done->size(); i > lazy_mark; --i) {
      GroupId u = (*lazy_done)[i - 1];
      RevertDowngrade(u, groups_[u].priority);
    }
    lazy_done->resize(lazy_mark);
    a.reason = absl::StrCat(
        "VC ", vcs_[req.vc.value()].name, ", chain ", forest_->chain_info(view.chain).name,
        ": mapping the virtual placement to physical cells would need at least one ",
        sugg_active_ ? "bad or non-suggested" : "bad", " node");
    return a;
  }
  a.ok = true;
  found_vleaves_.assign(leaves.begin(), leaves.end());
  return a;
}

SchedulerImpl::Attempt SchedulerImpl::TryOpportunistic(const Req& req, ChainId ch) {
  Attempt a;
  const View& view = views_[ch.value()];
  std::string inf = Infeasibility(req, view);
  if (!inf.empty()) {
    a.infeasible = true;
    a.reason = std::move(inf);
    return a;
  }
  std::vector<int32_t>& pod_node = scratch_pod_node_;
  if (!FindNodes(view, req.needs, kOpportunisticPriority, /*pass1=*/true, &pod_node, &a.reason)) {
    return a;
  }
  std::vector<uint32_t>& leaves = scratch_leaves_;
  leaves.clear();
  for (size_t k = 0; k < req.needs.size(); ++k) {
    ChooseLeaves<true>(view.nodes[static_cast<size_t>(pod_node[k])], req.needs[k],
                       kOpportunisticPriority, &leaves);
  }
  ClearTaken();
  a.ok = true;
  found_pleaves_.clear();
  for (uint32_t x : leaves) found_pleaves_.push_back(CellId(x));
  found_vleaves_.assign(leaves.size(), kNilId);
  return a;
}

// ---------------------------------------------------------------------------------------
// Node choice.

bool SchedulerImpl::NodeEligible(const View& view, int32_t pos) const {
  if (!sugg_active_) return true;
  uint32_t cell = view.nodes[static_cast<size_t>(pos)];
  CellId pc = view.physical ? CellId(cell) : v_[cell].bound;
  if (pc.IsNil()) return true;  // an unbound virtual node counts as suggested
  return node_suggested_[forest_->node(pc).value()] != 0;
}

int32_t SchedulerImpl::NodeFree(const View& view, int32_t pos, Priority q, bool pass1) const {
  const internal::NodeIndex& ix = view.index;
  if (pass1) return ix.total(pos) - ix.key1(pos) - ix.key2(pos);
  return Usage(view).FreeLeavesFor(CellId(view.nodes[static_cast<size_t>(pos)]), q);
}

bool SchedulerImpl::FindNodes(const View& view, const std::vector<int32_t>& needs, Priority q,
                              bool pass1, std::vector<int32_t>* pod_node,
                              std::string* reason) const {
  const internal::NodeIndex& ix = view.index;
  pod_node->assign(needs.size(), -1);
  int32_t cur = -1, cur_bucket = 0, picked = 0;
  const int32_t nb = ix.num_buckets();
  for (size_t k = 0; k < needs.size(); ++k) {
    const int32_t need = needs[k];
    if (cur >= 0 && NodeFree(view, cur, q, pass1) - picked >= need) {
      (*pod_node)[k] = cur;
      picked += need;
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
        if (!NodeEligible(view, n)) continue;
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
        CellId pc = v_[cell].bound;
        return pc.IsNil()
                   ? VAddress(cell)
                   : absl::StrCat(f.node_name(f.node(pc)), " (virtual cell ", VAddress(cell), ")");
      };
      std::string where = view.physical
                              ? absl::StrCat(" when scheduling in physical cluster, chain ",
                                             f.chain_info(view.chain).name)
                              : absl::StrCat(" when scheduling in VC ", vcs_[view.vc.value()].name,
                                             ", chain ", f.chain_info(view.chain).name);
      if (sugg_active_) {
        for (int32_t bb = 0; bb < nb; ++bb) {
          for (int32_t n = ix.NextInBucket(bb, 0); n >= 0; n = ix.NextInBucket(bb, n + 1)) {
            if (!NodeEligible(view, n) && NodeFree(view, n, q, pass1) >= need) {
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
    (*pod_node)[k] = cur;
  }
  return true;
}

const SchedulerImpl::View* SchedulerImpl::ViewForTesting(std::string_view vc,
                                                         std::string_view chain) const {
  ChainId ch = forest_->FindChain(chain);
  if (ch.IsNil()) return nullptr;
  if (vc.empty()) return &views_[ch.value()];
  auto it = vc_by_name_.find(ToAbsl(vc));
  if (it == vc_by_name_.end()) return nullptr;
  int32_t id = vcs_[it->second.value()].chain_view[ch.value()];
  return id < 0 ? nullptr : &views_[static_cast<size_t>(id)];
}

std::vector<int32_t> SchedulerImpl::FindNodesForTesting(std::string_view vc, std::string_view chain,
                                                        const std::vector<int32_t>& needs,
                                                        Priority q) const {
  const View* view = ViewForTesting(vc, chain);
  if (view == nullptr) return {};
  std::vector<int32_t> out;
  std::string reason;
  if (!FindNodes(*view, needs, q, q == kOpportunisticPriority, &out, &reason)) return {};
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
                   NodeFree(*view, n, q, q == kOpportunisticPriority)});
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Leaf choice inside a node.

template <bool kPhysical>
void SchedulerImpl::ChooseLeaves(uint32_t node_cell, int32_t need, Priority q,
                                 std::vector<uint32_t>* out) {
  const cellalloc::CellForest& f = *forest_;
  const cellalloc::PriorityUsage& u = kPhysical ? pusage_ : vusage_;
  std::vector<int32_t>& taken_total = kPhysical ? taken_total_ : vtaken_total_;
  std::vector<int32_t>& taken_free = kPhysical ? taken_free_ : vtaken_free_;
  std::vector<uint32_t>& touched = kPhysical ? taken_touched_ : vtaken_touched_;
  auto level = [&](uint32_t c) -> CellLevel {
    if constexpr (kPhysical) return f.level(CellId(c));
    return v_[c].level;
  };
  auto nchildren = [&](uint32_t c) -> int32_t {
    if constexpr (kPhysical) return f.num_children(CellId(c));
    return v_[c].num_children;
  };
  auto child = [&](uint32_t c, int32_t k) -> uint32_t {
    if constexpr (kPhysical) return f.child(CellId(c), k).value();
    return v_[c].first_child + static_cast<uint32_t>(k);
  };
  auto parent = [&](uint32_t c) -> uint32_t {
    if constexpr (kPhysical) return f.parent(CellId(c)).value();
    return v_[c].parent;
  };
  auto usable = [&](uint32_t c) { return u.FreeLeavesFor(CellId(c), q) - taken_total[c]; };
  auto free_count = [&](uint32_t c) {
    return u.leaf_count(CellId(c)) - u.UsedTotal(CellId(c)) - taken_free[c];
  };
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
    for (uint32_t x = leaf;; x = parent(x)) {
      if (taken_total[x]++ == 0 && taken_free[x] == 0) touched.push_back(x);
      if (is_free) ++taken_free[x];
      if (x == node_cell) break;
    }
  };
  for (int pass = 0; pass < 2 && got < need; ++pass) {
    stack.clear();
    stack.push_back(best);
    while (!stack.empty() && got < need) {
      uint32_t c = stack.back();
      stack.pop_back();
      if (level(c) == 1) {
        if (taken_total[c] > 0) continue;
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

template void SchedulerImpl::ChooseLeaves<true>(uint32_t, int32_t, Priority,
                                                std::vector<uint32_t>*);
template void SchedulerImpl::ChooseLeaves<false>(uint32_t, int32_t, Priority,
                                                 std::vector<uint32_t>*);

void SchedulerImpl::ClearTaken() {
  for (uint32_t c : taken_touched_) taken_total_[c] = taken_free_[c] = 0;
  for (uint32_t c : vtaken_touched_) vtaken_total_[c] = vtaken_free_[c] = 0;
  taken_touched_.clear();
  vtaken_touched_.clear();
}

// ---------------------------------------------------------------------------------------
// Binding: the virtual cells a placement needs, planned on physical cells by cellalloc.

bool SchedulerImpl::MapPlacement(ChainId ch, const std::vector<VCellId>& vleaves,
                                 std::vector<CellId>* pleaves) {
  cellalloc::PlanContext context;
  context.bound = &p_bound_;
  if (sugg_active_) {
    context.node_suggested = &node_suggested_;
    context.cell_suggested = &p_suggested_;
  }
  context.vc_unbound = &all_vc_free_[ch.value()];
  planner_->Begin(ch, context);
  // Inline storage: a placement binds few roots and few cells under bound parents.
  absl::InlinedVector<int32_t, 8> pre_roots;
  absl::InlinedVector<std::pair<VCellId, absl::InlinedVector<int32_t, 4>>, 4> under_bound;
  for (VCellId leaf : vleaves) {
    if (!v_[leaf].bound.IsNil()) continue;
    int32_t child_slot = -1;
    VCellId x = leaf;
    while (true) {
      if (vslot_[x] >= 0) {
        if (child_slot >= 0) planner_->AddChild(vslot_[x], child_slot);
        break;
      }
      const int32_t slot = planner_->AddNode(v_[x].level);
      vslot_[x] = slot;
      vslot_touched_.push_back(x);
      if (child_slot >= 0) planner_->AddChild(slot, child_slot);
      child_slot = slot;
      if (v_[x].is_root) {
        pre_roots.push_back(slot);
        break;
      }
      VCellId parent = v_[x].parent;
      if (!v_[parent].bound.IsNil()) {
        auto it = std::find_if(under_bound.begin(), under_bound.end(),
                               [&](const auto& e) { return e.first == parent; });
        if (it == under_bound.end()) {
          under_bound.emplace_back();
          under_bound.back().first = parent;
          under_bound.back().second.push_back(slot);
        } else {
          it->second.push_back(slot);
        }
        break;
      }
      x = parent;
    }
  }
  bool ok = true;
  for (int32_t slot : pre_roots) {
    if (!planner_->PlaceRoot(slot)) {
      ok = false;
      break;
    }
  }
  if (ok) {
    for (auto& [parent, slots] : under_bound) {
      if (!planner_->PlaceUnder(v_[parent].bound, slots)) {
        ok = false;
        break;
      }
    }
  }
  if (ok) {
    pleaves->clear();
    pleaves->reserve(vleaves.size());
    for (VCellId leaf : vleaves) {
      CellId p = v_[leaf].bound;
      if (p.IsNil()) p = planner_->cell(vslot_[leaf]);
      HIVED_CHECK(!p.IsNil()) << "unmapped virtual leaf " << VAddress(leaf);
      pleaves->push_back(p);
    }
  }
  planner_->Abandon();
  for (VCellId v : vslot_touched_) vslot_[v] = -1;
  vslot_touched_.clear();
  return ok;
}

}  // namespace hived
