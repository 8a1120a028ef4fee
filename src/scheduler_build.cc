// Scheduler construction: the physical forest, the virtual clusters (built by
// `VirtualClusters`), the views.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::BuddyAllocator;
using cellalloc::CellForest;
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
  p_user_.assign(n, kNilId);
  p_reserver_.assign(n, kNilId);
  p_nodecell_.assign(n, kNilId);
  p_view_pos_.assign(n, -1);

  health_ = Health(forest_.get(), buddy_.get());
  HIVED_RETURN_IF_ERROR(vclusters_.Build(spec, forest_.get(), buddy_.get(), &health_));
  placer_ = Placer(forest_.get(), &vclusters_.cells(), &pusage_, &vclusters_.usage());
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
  return vclusters_.BindPinned();
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
  vclusters_.AddViews(spec_, &views_);
}

}  // namespace hived
