// VirtualClusters construction: every VC's virtual cells from the spec, their views, and
// the pinned cells' bindings.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/virtual_clusters.h"

namespace hived {

using cellalloc::CellForest;
using cellalloc::ChainInfo;
using cellalloc::PriorityUsage;

VCellId VirtualClusters::NewVirtualSubtree(VcId vc, ChainId ch, CellLevel level,
                                           std::vector<int32_t>* level_counters) {
  const ChainInfo& info = forest_->chain_info(ch);
  VCellId id = static_cast<VCellId>(cells_.size());
  VCell cell;
  cell.vc = vc;
  cell.chain = ch;
  cell.level = level;
  cell.root = id;
  cell.is_root = true;
  cell.index = (*level_counters)[static_cast<size_t>(level)]++;
  cell.type = info.types[static_cast<size_t>(level)];
  cells_.push_back(cell);
  // Children get consecutive ids; then each child's subtree is filled.
  std::vector<VCellId> stack = {id};
  while (!stack.empty()) {
    VCellId v = stack.back();
    stack.pop_back();
    CellLevel l = cells_[v].level;
    if (l <= 1) continue;
    int32_t k = info.child_count[static_cast<size_t>(l)];
    VCellId first = static_cast<VCellId>(cells_.size());
    for (int32_t i = 0; i < k; ++i) {
      VCell c;
      c.vc = vc;
      c.chain = ch;
      c.level = l - 1;
      c.parent = v;
      c.root = cells_[v].root;
      c.index = (*level_counters)[static_cast<size_t>(l - 1)]++;
      c.type = info.types[static_cast<size_t>(l - 1)];
      cells_.push_back(c);
    }
    cells_[v].first_child = first;
    cells_[v].num_children = k;
    for (int32_t i = k - 1; i >= 0; --i) stack.push_back(first + static_cast<VCellId>(i));
  }
  return id;
}

absl::Status VirtualClusters::Build(const ClusterSpec& spec, const CellForest* forest,
                                    cellalloc::BuddyAllocator* buddy, Health* health) {
  forest_ = forest;
  buddy_ = buddy;
  health_ = health;
  const CellForest& f = *forest_;
  p_bound_.assign(static_cast<size_t>(f.num_cells()), kNilId);
  const int32_t num_chains = f.num_chains();
  all_free_.assign(static_cast<size_t>(num_chains), {});
  for (int32_t c = 0; c < num_chains; ++c) {
    all_free_[static_cast<size_t>(c)].assign(
        static_cast<size_t>(f.chain_info(ChainId(static_cast<uint32_t>(c))).top_level) + 2, 0);
  }

  for (size_t vi = 0; vi < spec.virtual_clusters.size(); ++vi) {
    const VirtualClusterSpec& vs = spec.virtual_clusters[vi];
    VcId vc(static_cast<uint32_t>(vi));
    if (by_name_.contains(vs.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("virtualClusters: duplicate virtual cluster ", vs.name));
    }
    by_name_[vs.name] = vc;
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
      ChainLevel& slot = v.cl[ch.value()][static_cast<size_t>(level)];
      for (int32_t k = 0; k < cs.cell_number; ++k) {
        std::vector<int32_t> counters(static_cast<size_t>(info.top_level) + 2, 0);
        counters[static_cast<size_t>(level)] = root_counter++;
        VCellId root = NewVirtualSubtree(vc, ch, level, &counters);
        cells_[root].slot_pos = static_cast<int32_t>(slot.roots.size());
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
      bool taken = std::any_of(pinned_.begin(), pinned_.end(),
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
      VCellId root = NewVirtualSubtree(vc, ch, f.level(pc), &counters);
      ++v.cl[ch.value()][static_cast<size_t>(f.level(pc))].reserved;
      v.pinned[id] = root;
      v.roots.push_back(root);
      pinned_.emplace_back(root, pc);
    }
  }
  for (const auto& binding : pinned_) {
    const VCellId root = binding.first;
    // Every cell of the subtree is pinned: ids of a subtree are contiguous from the root.
    VCellId end = root + 1;
    while (end < cells_.size() && cells_[end].root == root) ++end;
    for (VCellId x = root; x < end; ++x) cells_[x].pinned = true;
  }

  // Built by appending: its doubling spare (up to half of it on a large cluster) is returned.
  cells_.shrink_to_fit();
  {
    const size_t vn = cells_.size();
    std::vector<CellId> parents(vn);
    std::vector<int32_t> leaves(vn);
    for (size_t i = 0; i < vn; ++i) {
      parents[i] = cells_[i].parent == kNilId ? CellId::Nil() : CellId(cells_[i].parent);
      leaves[i] = f.type_info(cells_[i].type).leaf_count;
    }
    usage_ = PriorityUsage(std::move(parents), std::move(leaves));
  }
  for (Vc& v : vcs_) {
    for (auto& per_chain : v.cl) {
      for (ChainLevel& s : per_chain) {
        s.unbound.Resize(static_cast<int32_t>(s.roots.size()));
        for (size_t i = 0; i < s.roots.size(); ++i) s.unbound.Insert(static_cast<int32_t>(i));
      }
    }
  }
  for (const Vc& v : vcs_) {
    for (int32_t c = 0; c < num_chains; ++c) {
      const auto& per = v.cl[static_cast<size_t>(c)];
      for (size_t l = 0; l < per.size(); ++l) all_free_[static_cast<size_t>(c)][l] += per[l].free;
    }
  }
  return absl::OkStatus();
}

void VirtualClusters::AddViews(const ClusterSpec& spec, std::vector<View>* views) {
  views_ = views;
  const CellForest& f = *forest_;
  auto add_virtual_view = [&](VcId vc, ChainId ch, const std::vector<VCellId>& roots) {
    View view;
    view.vc = vc;
    view.chain = ch;
    int32_t id = static_cast<int32_t>(views_->size());
    CellLevel node_level = f.chain_info(ch).node_level;
    for (VCellId root : roots) {
      std::vector<VCellId> stack = {root};
      while (!stack.empty()) {
        VCellId x = stack.back();
        stack.pop_back();
        if (cells_[x].level <= node_level) {
          cells_[x].view = id;
          cells_[x].view_pos = static_cast<int32_t>(view.nodes.size());
          view.nodes.push_back(x);
          // Leaves below it point to it.
          std::vector<VCellId> down = {x};
          while (!down.empty()) {
            VCellId y = down.back();
            down.pop_back();
            if (cells_[y].level == 1) cells_[y].view_node = x;
            for (int32_t k = 0; k < cells_[y].num_children; ++k) {
              down.push_back(cells_[y].first_child + static_cast<VCellId>(k));
            }
          }
          continue;
        }
        for (int32_t k = cells_[x].num_children - 1; k >= 0; --k) {
          stack.push_back(cells_[x].first_child + static_cast<VCellId>(k));
        }
      }
    }
    std::vector<int32_t> totals;
    for (uint32_t x : view.nodes) {
      totals.push_back(f.type_info(cells_[x].type).leaf_count);
      view.total_leaves += totals.back();
    }
    view.index.Init(totals, /*two_keys=*/false);
    views_->push_back(std::move(view));
    return id;
  };
  for (size_t vi = 0; vi < vcs_.size(); ++vi) {
    Vc& v = vcs_[vi];
    for (int32_t c = 0; c < f.num_chains(); ++c) {
      std::vector<VCellId> roots;
      for (VCellId r : v.roots) {
        if (!cells_[r].pinned && cells_[r].chain.value() == static_cast<uint32_t>(c)) {
          roots.push_back(r);
        }
      }
      if (roots.empty()) continue;
      v.chain_view[static_cast<size_t>(c)] = add_virtual_view(
          VcId(static_cast<uint32_t>(vi)), ChainId(static_cast<uint32_t>(c)), roots);
    }
    // Pinned views in config order of the VC's pinned cells.
    for (const PinnedCellSpec& ps : spec.virtual_clusters[vi].pinned_cells) {
      VCellId root = v.pinned.at(ps.pinned_cell_id);
      v.pinned_view[ps.pinned_cell_id] =
          add_virtual_view(VcId(static_cast<uint32_t>(vi)), cells_[root].chain, {root});
    }
  }
}

absl::Status VirtualClusters::BindPinned() {
  const CellForest& f = *forest_;
  // Pinned cells are bound for good.
  for (auto& [root, pc] : pinned_) {
    if (!buddy_->AllocateCell(pc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("pinned cell ", f.pinned_id(pc),
                       " cannot be reserved (it overlaps another pinned cell)"));
    }
    BindCell(root, pc);
  }
  for (int32_t c = 0; c < f.num_chains(); ++c) {
    ChainId ch(static_cast<uint32_t>(c));
    const ChainInfo& info = f.chain_info(ch);
    for (CellLevel l = 1; l <= info.top_level; ++l) {
      int32_t need = all_free_[static_cast<size_t>(c)][static_cast<size_t>(l)];
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

}  // namespace hived
