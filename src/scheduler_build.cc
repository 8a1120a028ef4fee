// Scheduler construction: the physical forest, every VC's virtual cells, the views.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::BuddyAllocator;
using cellalloc::CellForest;
using cellalloc::ChainInfo;
using cellalloc::PriorityUsage;

absl::StatusOr<std::unique_ptr<SchedulerImpl>> SchedulerImpl::Create(const ClusterSpec& spec) {
  std::vector<ConfigError> errors = ValidateClusterSpec(spec);
  if (!errors.empty()) {
    std::vector<std::string> lines;
    lines.reserve(errors.size());
    for (const ConfigError& e : errors) lines.push_back(e.ToString());
    return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
  }
  std::unique_ptr<SchedulerImpl> impl(new SchedulerImpl());
  HIVED_RETURN_IF_ERROR(impl->Build(spec));
  return impl;
}

VCellId SchedulerImpl::NewVirtualSubtree(VcId vc, ChainId ch, CellLevel level, VCellId parent,
                                         VCellId root, std::vector<int32_t>* level_counters) {
  const ChainInfo& info = forest_->chain_info(ch);
  VCellId id = static_cast<VCellId>(v_.size());
  VCell cell;
  cell.vc = vc;
  cell.chain = ch;
  cell.level = level;
  cell.parent = parent;
  cell.root = root == kNilId ? id : root;
  cell.is_root = root == kNilId;
  cell.index = (*level_counters)[static_cast<size_t>(level)]++;
  cell.type = info.types[static_cast<size_t>(level)];
  v_.push_back(cell);
  // Children get consecutive ids; then each child's subtree is filled.
  std::vector<VCellId> stack = {id};
  while (!stack.empty()) {
    VCellId v = stack.back();
    stack.pop_back();
    CellLevel l = v_[v].level;
    if (l <= 1) continue;
    int32_t k = info.child_count[static_cast<size_t>(l)];
    VCellId first = static_cast<VCellId>(v_.size());
    for (int32_t i = 0; i < k; ++i) {
      VCell c;
      c.vc = vc;
      c.chain = ch;
      c.level = l - 1;
      c.parent = v;
      c.root = v_[v].root;
      c.index = (*level_counters)[static_cast<size_t>(l - 1)]++;
      c.type = info.types[static_cast<size_t>(l - 1)];
      v_.push_back(c);
    }
    v_[v].first_child = first;
    v_[v].num_children = k;
    for (int32_t i = k - 1; i >= 0; --i) stack.push_back(first + static_cast<VCellId>(i));
  }
  return id;
}

absl::Status SchedulerImpl::Build(const ClusterSpec& spec) {
  spec_ = spec;
  HIVED_ASSIGN_OR_RETURN(CellForest forest, CellForest::Build(spec));
  forest_ = std::make_unique<CellForest>(std::move(forest));
  buddy_ = std::make_unique<BuddyAllocator>(forest_.get());
  const CellForest& f = *forest_;
  const size_t n = static_cast<size_t>(f.num_cells());
  {
    std::vector<CellId> parents(n);
    std::vector<int32_t> leaves(n);
    for (size_t i = 0; i < n; ++i) {
      parents[i] = f.parent(CellId(static_cast<uint32_t>(i)));
      leaves[i] = f.leaf_count(CellId(static_cast<uint32_t>(i)));
    }
    pusage_ = PriorityUsage(std::move(parents), std::move(leaves));
  }
  planner_ = std::make_unique<cellalloc::BuddyPlanner>(buddy_.get(), &pusage_);
  p_bound_.assign(n, kNilId);
  p_user_.assign(n, kNilId);
  p_reserver_.assign(n, kNilId);
  p_nodecell_.assign(n, kNilId);
  p_view_pos_.assign(n, -1);

  const int32_t num_chains = f.num_chains();
  CellLevel max_level = 1;
  for (int32_t c = 0; c < num_chains; ++c) {
    max_level = std::max(max_level, f.chain_info(ChainId(static_cast<uint32_t>(c))).top_level);
  }
  all_vc_free_.assign(static_cast<size_t>(num_chains), {});
  health_ = Health(forest_.get(), buddy_.get());
  for (int32_t c = 0; c < num_chains; ++c) {
    all_vc_free_[static_cast<size_t>(c)].assign(
        static_cast<size_t>(f.chain_info(ChainId(static_cast<uint32_t>(c))).top_level) + 2, 0);
  }

  // Virtual clusters.
  std::vector<std::pair<VCellId, CellId>> pinned_bindings;
  for (size_t vi = 0; vi < spec.virtual_clusters.size(); ++vi) {
    const VirtualClusterSpec& vs = spec.virtual_clusters[vi];
    VcId vc(static_cast<uint32_t>(vi));
    if (vc_by_name_.contains(vs.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("virtualClusters: duplicate virtual cluster ", vs.name));
    }
    vc_by_name_[vs.name] = vc;
    vcs_.emplace_back();
    Vc& v = vcs_.back();
    v.name = vs.name;
    v.cl.resize(static_cast<size_t>(num_chains));
    v.chain_view.assign(static_cast<size_t>(num_chains), -1);
    for (int32_t c = 0; c < num_chains; ++c) {
      v.cl[static_cast<size_t>(c)].resize(
          static_cast<size_t>(f.chain_info(ChainId(static_cast<uint32_t>(c))).top_level) + 2);
    }
    int32_t root_counter = 0;
    for (size_t ci = 0; ci < vs.virtual_cells.size(); ++ci) {
      const VirtualCellSpec& cs = vs.virtual_cells[ci];
      std::vector<std::string> parts = absl::StrSplit(cs.cell_type, '.');
      std::string where = absl::StrCat("virtualClusters.", vs.name, ".virtualCells[", ci, "]");
      ChainId ch = f.FindChain(parts.front());
      CellTypeId type = f.FindType(parts.back());
      if (ch.IsNil()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": chain ", parts.front(),
                                                       " is not a top-level physical cell type"));
      }
      const ChainInfo& info = f.chain_info(ch);
      if (type.IsNil() || f.type_info(type).level > info.top_level ||
          info.types[static_cast<size_t>(f.type_info(type).level)] != type) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": cell type ", parts.back(), " is not in chain ", parts.front()));
      }
      if (cs.cell_number < 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": negative cellNumber"));
      }
      CellLevel level = f.type_info(type).level;
      VcChainLevel& slot = v.cl[ch.value()][static_cast<size_t>(level)];
      for (int32_t k = 0; k < cs.cell_number; ++k) {
        std::vector<int32_t> counters(static_cast<size_t>(info.top_level) + 2, 0);
        counters[static_cast<size_t>(level)] = root_counter++;
        VCellId root = NewVirtualSubtree(vc, ch, level, kNilId, kNilId, &counters);
        v_[root].slot_pos = static_cast<int32_t>(slot.roots.size());
        slot.roots.push_back(root);
        ++slot.free;
        ++slot.reserved;
        v.roots.push_back(root);
      }
    }
    for (size_t pi = 0; pi < vs.pinned_cells.size(); ++pi) {
      const std::string& id = vs.pinned_cells[pi].pinned_cell_id;
      CellId pc = f.FindPinned(id);
      if (pc.IsNil()) {
        return absl::InvalidArgumentError(absl::StrCat("virtualClusters.", vs.name, ".pinnedCells[",
                                                       pi, "]: pinned cell ", id,
                                                       " is not found in physicalCells"));
      }
      bool taken = std::any_of(pinned_bindings.begin(), pinned_bindings.end(),
                               [&](const auto& b) { return b.second == pc; });
      if (taken || v.pinned.contains(id)) {
        return absl::InvalidArgumentError(absl::StrCat("virtualClusters.", vs.name, ".pinnedCells[",
                                                       pi, "]: pinned cell ", id,
                                                       " is already used by a virtual cluster"));
      }
      ChainId ch = f.chain(pc);
      const ChainInfo& info = f.chain_info(ch);
      std::vector<int32_t> counters(static_cast<size_t>(info.top_level) + 2, 0);
      counters[static_cast<size_t>(f.level(pc))] = root_counter++;
      VCellId root = NewVirtualSubtree(vc, ch, f.level(pc), kNilId, kNilId, &counters);
      ++v.cl[ch.value()][static_cast<size_t>(f.level(pc))].reserved;
      v.pinned[id] = root;
      v.roots.push_back(root);
      pinned_bindings.emplace_back(root, pc);
    }
  }
  for (const auto& binding : pinned_bindings) {
    const VCellId root = binding.first;
    // Every cell of the subtree is pinned: ids of a subtree are contiguous from the root.
    VCellId end = root + 1;
    while (end < v_.size() && v_[end].root == root) ++end;
    for (VCellId x = root; x < end; ++x) v_[x].pinned = true;
  }

  {
    const size_t vn = v_.size();
    std::vector<CellId> parents(vn);
    std::vector<int32_t> leaves(vn);
    for (size_t i = 0; i < vn; ++i) {
      parents[i] = v_[i].parent == kNilId ? CellId::Nil() : CellId(v_[i].parent);
      leaves[i] = f.type_info(v_[i].type).leaf_count;
    }
    vusage_ = PriorityUsage(std::move(parents), std::move(leaves));
    placer_ = Placer(forest_.get(), &v_, &pusage_, &vusage_);
  }
  for (Vc& v : vcs_) {
    for (auto& per_chain : v.cl) {
      for (VcChainLevel& s : per_chain) {
        s.unbound.Resize(static_cast<int32_t>(s.roots.size()));
        for (size_t i = 0; i < s.roots.size(); ++i) s.unbound.Insert(static_cast<int32_t>(i));
      }
    }
  }
  for (size_t vi = 0; vi < vcs_.size(); ++vi) {
    for (int32_t c = 0; c < num_chains; ++c) {
      auto& per = vcs_[vi].cl[static_cast<size_t>(c)];
      for (size_t l = 0; l < per.size(); ++l)
        all_vc_free_[static_cast<size_t>(c)][l] += per[l].free;
    }
  }
  // Node-level cell of every cell at or below node level.
  for (size_t i = 0; i < n; ++i) {
    CellId c(static_cast<uint32_t>(i));
    if (f.node(c).IsNil()) continue;
    CellId x = c;
    while (!f.is_node_level(x)) x = f.parent(x);
    p_nodecell_[i] = x.value();
  }
  BuildViews();
  for (const std::string& type : forest_->leaf_types()) {
    for (ChainId ch : forest_->ChainsOfLeafType(type)) chains_by_leaf_type_.push_back(ch);
  }
  // Pinned cells are bound for good.
  for (auto& [root, pc] : pinned_bindings) {
    if (!buddy_->AllocateCell(pc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("pinned cell ", f.pinned_id(pc),
                       " cannot be reserved (it overlaps another pinned cell)"));
    }
    BindCell(root, pc);
  }
  for (int32_t c = 0; c < num_chains; ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      int32_t need = all_vc_free_[static_cast<size_t>(c)][static_cast<size_t>(l)];
      int32_t have = buddy_->obtainable(ch, l);
      if (have < need) {
        return absl::InvalidArgumentError(
            absl::StrCat("virtualClusters: insufficient physical cells at chain ", info.name,
                         " level ", l, ": ", need, " needed, ", have, " available"));
      }
    }
  }
  return absl::OkStatus();
}

void SchedulerImpl::BuildViews() {
  const CellForest& f = *forest_;
  views_.clear();
  // Physical views, one per chain (view id == chain id).
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    View view;
    view.chain = ch;
    view.physical = true;
    std::vector<CellId> stack;
    const auto& tops = f.chain_info(ch).top_cells;
    for (auto it = tops.rbegin(); it != tops.rend(); ++it) stack.push_back(*it);
    while (!stack.empty()) {
      CellId x = stack.back();
      stack.pop_back();
      if (f.is_node_level(x)) {
        p_view_pos_[x.value()] = static_cast<int32_t>(view.nodes.size());
        view.nodes.push_back(x.value());
        continue;
      }
      for (int32_t k = f.num_children(x) - 1; k >= 0; --k) stack.push_back(f.child(x, k));
    }
    std::vector<int32_t> totals;
    for (uint32_t x : view.nodes) {
      totals.push_back(f.leaf_count(CellId(x)));
      view.total_leaves += totals.back();
    }
    view.index.Init(totals, /*two_keys=*/true);
    views_.push_back(std::move(view));
  }
  // Virtual views.
  auto add_virtual_view = [&](VcId vc, ChainId ch, const std::vector<VCellId>& roots) {
    View view;
    view.vc = vc;
    view.chain = ch;
    int32_t id = static_cast<int32_t>(views_.size());
    CellLevel node_level = f.chain_info(ch).node_level;
    for (VCellId root : roots) {
      std::vector<VCellId> stack = {root};
      while (!stack.empty()) {
        VCellId x = stack.back();
        stack.pop_back();
        if (v_[x].level <= node_level) {
          v_[x].view = id;
          v_[x].view_pos = static_cast<int32_t>(view.nodes.size());
          view.nodes.push_back(x);
          // Leaves below it point to it.
          std::vector<VCellId> down = {x};
          while (!down.empty()) {
            VCellId y = down.back();
            down.pop_back();
            if (v_[y].level == 1) v_[y].view_node = x;
            for (int32_t k = 0; k < v_[y].num_children; ++k) {
              down.push_back(v_[y].first_child + static_cast<VCellId>(k));
            }
          }
          continue;
        }
        for (int32_t k = v_[x].num_children - 1; k >= 0; --k) {
          stack.push_back(v_[x].first_child + static_cast<VCellId>(k));
        }
      }
    }
    std::vector<int32_t> totals;
    for (uint32_t x : view.nodes) {
      totals.push_back(f.type_info(v_[x].type).leaf_count);
      view.total_leaves += totals.back();
    }
    view.index.Init(totals, /*two_keys=*/false);
    views_.push_back(std::move(view));
    return id;
  };
  for (size_t vi = 0; vi < vcs_.size(); ++vi) {
    Vc& v = vcs_[vi];
    for (int32_t c = 0; c < f.num_chains(); ++c) {
      std::vector<VCellId> roots;
      for (VCellId r : v.roots) {
        if (!v_[r].pinned && v_[r].chain.value() == static_cast<uint32_t>(c)) roots.push_back(r);
      }
      if (roots.empty()) continue;
      v.chain_view[static_cast<size_t>(c)] = add_virtual_view(
          VcId(static_cast<uint32_t>(vi)), ChainId(static_cast<uint32_t>(c)), roots);
    }
    // Pinned views in config order of the VC's pinned cells.
    for (const PinnedCellSpec& ps : spec_.virtual_clusters[vi].pinned_cells) {
      VCellId root = v.pinned.at(ps.pinned_cell_id);
      v.pinned_view[ps.pinned_cell_id] =
          add_virtual_view(VcId(static_cast<uint32_t>(vi)), v_[root].chain, {root});
    }
  }
}

}  // namespace hived
