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
  physical_.Build(forest_.get());
  planner_ = std::make_unique<cellalloc::BuddyPlanner>(buddy_.get(), &physical_.usage());

  health_ = Health(forest_.get(), buddy_.get());
  HIVED_RETURN_IF_ERROR(vclusters_.Build(spec, forest_.get(), buddy_.get(), &health_));
  placer_ = Placer(forest_.get(), &vclusters_.cells(), &physical_.usage(), &vclusters_.usage());
  BuildViews();
  for (const std::string& type : forest_->leaf_types()) {
    for (ChainId ch : forest_->ChainsOfLeafType(type)) chains_by_leaf_type_.push_back(ch);
  }
  return vclusters_.BindPinned();
}

void SchedulerImpl::BuildViews() {
  views_.clear();
  physical_.AddViews(&views_);  // one per chain: view id == chain id
  vclusters_.AddViews(spec_, &views_);
}

}  // namespace hived
