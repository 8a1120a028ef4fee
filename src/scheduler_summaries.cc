// Filtered views (by node, chain, VC), summary counters (issue 12 item 5), VC usage, capacity.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::ChainInfo;

// ---- Filtered views and summaries (issue 12 item 5) --------------------------------------

namespace {

absl::Status Unknown(const char* what, std::string_view name) {
  return absl::NotFoundError(absl::StrCat(what, " ", ToAbsl(name), " does not exist"));
}

}  // namespace

absl::StatusOr<NodeId> SchedulerImpl::FindNodeOrError(std::string_view node) const {
  const NodeId n = forest_->FindNode(node);
  if (n.IsNil()) return Unknown("node", node);
  return n;
}

absl::StatusOr<ChainId> SchedulerImpl::FindChainOrError(std::string_view chain) const {
  const ChainId ch = forest_->FindChain(chain);
  if (ch.IsNil()) return Unknown("chain", chain);
  return ch;
}

absl::StatusOr<std::vector<NodeStatus>> SchedulerImpl::GetNode(std::string_view node) const {
  HIVED_ASSIGN_OR_RETURN(const NodeId n, FindNodeOrError(node));
  std::vector<NodeStatus> out;
  for (CellId c : forest_->node_cells(n)) out.push_back(NStatus(n, c));
  return out;
}

absl::StatusOr<std::vector<PhysicalCellStatus>> SchedulerImpl::PhysicalNode(
    std::string_view node) const {
  HIVED_ASSIGN_OR_RETURN(const NodeId n, FindNodeOrError(node));
  std::vector<PhysicalCellStatus> out;
  for (CellId c : forest_->node_cells(n)) out.push_back(PStatus(c));
  return out;
}

absl::StatusOr<std::vector<PhysicalCellStatus>> SchedulerImpl::PhysicalChain(
    std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(const ChainId ch, FindChainOrError(chain));
  const std::vector<CellId>& tops = forest_->chain_info(ch).top_cells;
  std::vector<PhysicalCellStatus> out(tops.size());
  for (size_t i = 0; i < tops.size(); ++i) {
    FillPStatus(tops[i], forest_->address(tops[i]), kNilId, "", &out[i]);
  }
  return out;
}

// What the summaries need from the groups, in one pass: per chain the leaves reserved by
// preempting or reserved groups and not used (CellState kReserved); per VC and chain the virtual
// leaves its preempting groups hold and the physical leaves its opportunistic groups use.
SchedulerImpl::GroupTally SchedulerImpl::TallyGroups() const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  GroupTally t;
  t.reserved_free.assign(chains, 0);
  t.vc_reserved.assign(vclusters_.vcs().size() * chains, 0);
  t.vc_opportunistic.assign(vclusters_.vcs().size() * chains, 0);
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive) continue;
    if (g.state == GState::kPreempting || g.state == GState::kReserved) {
      for (size_t i = 0; i < g.pleaves.size(); ++i) {
        const size_t ch = f.chain(g.pleaves[i]).value();
        if (physical_.user(g.pleaves[i]) == kNilId) ++t.reserved_free[ch];
        if (!g.vc.IsNil() && g.vleaves[i] != kNilId) ++t.vc_reserved[g.vc.value() * chains + ch];
      }
    } else if (g.running < 0 && !g.vc.IsNil()) {
      for (CellId p : g.pleaves) {
        if (physical_.user(p) == gi)
          ++t.vc_opportunistic[g.vc.value() * chains + f.chain(p).value()];
      }
    }
  }
  return t;
}

ChainSummary SchedulerImpl::ChainSummaryOf(ChainId ch, const GroupTally& tally) const {
  const cellalloc::CellForest& f = *forest_;
  const ChainInfo& info = f.chain_info(ch);
  ChainSummary s;
  s.chain = info.name;
  s.leaf_cell_type = info.leaf_type;
  int32_t held = 0;  // leaves with a user or a reserver: their priority is set
  for (CellId top : info.top_cells) {
    s.leaves.total += f.leaf_count(top);
    held += physical_.usage().UsedTotal(top);
    s.leaves.opportunistic += physical_.usage().UsedAt(top, kOpportunisticPriority);
  }
  s.leaves.reserved = tally.reserved_free[ch.value()];
  s.leaves.used = held - s.leaves.reserved;
  s.leaves.free = s.leaves.total - held;
  for (uint32_t node_cell : views_[ch.value()].nodes) {
    const CellId c(node_cell);
    ++s.nodes;
    if (!buddy_->IsHealthy(c)) {
      ++s.bad_nodes;
      s.leaves.bad += f.leaf_count(c);
    }
  }
  return s;
}

std::vector<ChainSummary> SchedulerImpl::ChainSummaries() const {
  const GroupTally tally = TallyGroups();
  std::vector<ChainSummary> out;
  for (int32_t c = 0; c < forest_->num_chains(); ++c) {
    out.push_back(ChainSummaryOf(ChainId(static_cast<uint32_t>(c)), tally));
  }
  return out;
}

absl::StatusOr<ChainSummary> SchedulerImpl::GetChainSummary(std::string_view chain) const {
  HIVED_ASSIGN_OR_RETURN(const ChainId ch, FindChainOrError(chain));
  return ChainSummaryOf(ch, TallyGroups());
}

// Per VC and chain, the leaves of bad nodes inside the physical cells bound to the VC: for
// every bad node cell, the VC bound at or above it owns all its leaves, else the VCs bound
// to the topmost bound cells inside it own theirs. O(nodes + bad nodes' cells).
std::vector<int32_t> SchedulerImpl::VcBadLeaves() const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  std::vector<int32_t> bad(vclusters_.vcs().size() * chains, 0);
  // `bound` is bound to a VC's cell; `counted` (at or below it) holds the bad leaves.
  auto add = [&](CellId bound, CellId counted) {
    const VCellId v = vclusters_.BoundTo(bound);
    bad[vclusters_.cell(v).vc.value() * chains + f.chain(counted).value()] += f.leaf_count(counted);
  };
  std::vector<CellId> stack;
  for (const View& view : views_) {
    if (!view.physical) continue;
    for (uint32_t node_cell : view.nodes) {
      const CellId c(node_cell);
      if (buddy_->IsHealthy(c)) continue;
      CellId a = c;
      while (!a.IsNil() && vclusters_.BoundTo(a) == kNilId) a = f.parent(a);
      if (!a.IsNil()) {
        add(a, c);
        continue;
      }
      stack.assign(1, c);
      while (!stack.empty()) {
        const CellId x = stack.back();
        stack.pop_back();
        if (vclusters_.BoundTo(x) != kNilId) {
          add(x, x);
          continue;
        }
        for (int32_t k = 0; k < f.num_children(x); ++k) stack.push_back(f.child(x, k));
      }
    }
  }
  return bad;
}

void SchedulerImpl::AppendVcSummaries(size_t vc, const GroupTally& tally,
                                      const std::vector<int32_t>& bad,
                                      std::vector<VcSummary>* out) const {
  const cellalloc::CellForest& f = *forest_;
  const size_t chains = static_cast<size_t>(f.num_chains());
  std::vector<int32_t> total(chains, 0), held(chains, 0);
  for (VCellId r : vclusters_.vcs()[vc].roots) {
    total[vclusters_.cell(r).chain.value()] += f.type_info(vclusters_.cell(r).type).leaf_count;
    held[vclusters_.cell(r).chain.value()] += vclusters_.usage().UsedTotal(CellId(r));
  }
  for (size_t ch = 0; ch < chains; ++ch) {
    const size_t k = vc * chains + ch;
    if (total[ch] == 0 && tally.vc_opportunistic[k] == 0) continue;
    const ChainInfo& info = f.chain_info(ChainId(static_cast<uint32_t>(ch)));
    VcSummary s;
    s.vc = vclusters_.vcs()[vc].name;
    s.chain = info.name;
    s.leaf_cell_type = info.leaf_type;
    s.leaves.total = total[ch];
    s.leaves.reserved = tally.vc_reserved[k];
    s.leaves.used = held[ch] - s.leaves.reserved;
    s.leaves.free = total[ch] - held[ch];
    s.leaves.bad = bad[k];
    s.opportunistic_used_leaf_cells = tally.vc_opportunistic[k];
    out->push_back(std::move(s));
  }
}

std::vector<VcSummary> SchedulerImpl::VcSummaries() const {
  const GroupTally tally = TallyGroups();
  const std::vector<int32_t> bad = VcBadLeaves();
  std::vector<VcSummary> out;
  for (size_t vc = 0; vc < vclusters_.vcs().size(); ++vc) AppendVcSummaries(vc, tally, bad, &out);
  return out;
}

absl::StatusOr<std::vector<VcSummary>> SchedulerImpl::GetVcSummary(std::string_view vc) const {
  const VcId id = vclusters_.FindVc(ToAbsl(vc));
  if (id.IsNil()) return Unknown("VC", vc);
  std::vector<VcSummary> out;
  AppendVcSummaries(id.value(), TallyGroups(), VcBadLeaves(), &out);
  return out;
}

std::vector<VcUsage> SchedulerImpl::VcUsages() const {
  // One pass over the VCs' cells and one over the groups: O(cells of VCs' roots + groups'
  // leaves), not VCs x groups.
  const cellalloc::CellForest& f = *forest_;
  const std::vector<std::string>& types = f.leaf_types();
  std::vector<size_t> type_of_chain(static_cast<size_t>(f.num_chains()));
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    const std::string& t = f.chain_info(ChainId(static_cast<uint32_t>(c))).leaf_type;
    type_of_chain[static_cast<size_t>(c)] =
        static_cast<size_t>(std::find(types.begin(), types.end(), t) - types.begin());
  }
  std::vector<VcUsage> table(vclusters_.vcs().size() * types.size());  // [vc][leaf type]
  for (size_t vc = 0; vc < vclusters_.vcs().size(); ++vc) {
    for (size_t t = 0; t < types.size(); ++t) {
      table[vc * types.size() + t].vc = vclusters_.vcs()[vc].name;
      table[vc * types.size() + t].leaf_cell_type = types[t];
    }
    for (VCellId r : vclusters_.vcs()[vc].roots) {
      table[vc * types.size() + type_of_chain[vclusters_.cell(r).chain.value()]]
          .reserved_leaf_cells += f.type_info(vclusters_.cell(r).type).leaf_count;
    }
  }
  for (size_t gi = 0; gi < groups_.slots().size(); ++gi) {
    const Group& g = groups_.slots()[gi];
    if (!g.alive || g.vc.IsNil() || g.state == GState::kPreempting ||
        g.state == GState::kReserved) {
      continue;
    }
    for (CellId p : g.pleaves) {
      if (physical_.user(p) != gi) continue;
      VcUsage& u = table[g.vc.value() * types.size() + type_of_chain[f.chain(p).value()]];
      ++(g.running >= 0 ? u.guaranteed_used_leaf_cells : u.opportunistic_used_leaf_cells);
    }
  }
  std::vector<VcUsage> out;
  for (VcUsage& u : table) {
    if (u.reserved_leaf_cells > 0 || u.guaranteed_used_leaf_cells > 0 ||
        u.opportunistic_used_leaf_cells > 0) {
      out.push_back(std::move(u));
    }
  }
  return out;
}

std::vector<ChainLevelCapacity> SchedulerImpl::Capacity() const {
  const cellalloc::CellForest& f = *forest_;
  std::vector<ChainLevelCapacity> out;
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      ChainLevelCapacity cap;
      cap.chain = info.name;
      cap.level = l;
      cap.cell_type = f.type_info(info.types[static_cast<size_t>(l)]).name;
      cap.total = info.cells_at_level[static_cast<size_t>(l)];
      cap.free = buddy_->free_count(ch, l);
      cap.obtainable = buddy_->obtainable(ch, l);
      cap.bad_free = buddy_->bad_free(ch, l);
      for (const Vc& vc : vclusters_.vcs())
        cap.vc_reserved += vc.cl[ch.value()][static_cast<size_t>(l)].reserved;
      cap.vc_unbound = vclusters_.all_free(ch)[static_cast<size_t>(l)];
      out.push_back(cap);
    }
  }
  return out;
}

}  // namespace hived
