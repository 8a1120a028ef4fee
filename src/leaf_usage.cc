// Leaf usage: the priority of physical and virtual leaves, the views' usage histograms and
// node keys. (The virtual leaves' usage itself is written by `VirtualClusters::SetLeaf`.)
#include <algorithm>
#include <utility>
#include <vector>

#include "src/scheduler_impl.h"

namespace hived {

namespace {

void HistAdd(std::vector<std::pair<Priority, int32_t>>* h, Priority p, int32_t delta) {
  if (p == kFreePriority) return;
  auto it = std::lower_bound(
      h->begin(), h->end(), p,
      [](const std::pair<Priority, int32_t>& e, Priority x) { return e.first < x; });
  if (it == h->end() || it->first != p) it = h->insert(it, {p, 0});
  it->second += delta;
  if (it->second == 0) h->erase(it);
}

}  // namespace

void SchedulerImpl::SetVLeaf(VCellId v, Priority p, GroupId user) {
  if (SetVLeafUsage(v, p, user)) UpdateVNodeKey(vclusters_.cell(v).view_node);
}

void SchedulerImpl::SetPLeaf(CellId p, Priority prio) {
  if (SetPLeafUsage(p, prio)) UpdatePNodeKey(physical_.node_cell(p));
}

bool SchedulerImpl::SetVLeafUsage(VCellId v, Priority p, GroupId user) {
  Priority old = vclusters_.SetLeaf(v, p, user);
  if (old == p) return false;
  VCellId node = vclusters_.cell(v).view_node;
  View& view = views_[static_cast<size_t>(vclusters_.cell(node).view)];
  HistAdd(&view.histogram, old, -1);
  HistAdd(&view.histogram, p, +1);
  return true;
}

bool SchedulerImpl::SetPLeafUsage(CellId p, Priority prio) {
  const Priority old = physical_.SetLeafPriority(p, prio);
  if (old == prio) return false;
  NoteLeafChanged(p, old, prio);
  View& view = views_[forest_->chain(p).value()];
  HistAdd(&view.histogram, old, -1);
  HistAdd(&view.histogram, prio, +1);
  return true;
}

void SchedulerImpl::NodeKeys::TouchP(CellId leaf) {
  const uint32_t nc = s_->physical_.node_cell(leaf).value();
  if (nc == pnode_) return;
  if (pnode_ != kNilId) s_->UpdatePNodeKey(CellId(pnode_));
  pnode_ = nc;
}

void SchedulerImpl::NodeKeys::TouchV(VCellId leaf) {
  const VCellId node = s_->vclusters_.cell(leaf).view_node;
  if (node == vnode_) return;
  if (vnode_ != kNilId) s_->UpdateVNodeKey(vnode_);
  vnode_ = node;
}

void SchedulerImpl::NodeKeys::Flush() {
  if (pnode_ != kNilId) s_->UpdatePNodeKey(CellId(pnode_));
  if (vnode_ != kNilId) s_->UpdateVNodeKey(vnode_);
  pnode_ = kNilId;
  vnode_ = kNilId;
}

void SchedulerImpl::UpdateVNodeKey(VCellId node) {
  View& view = views_[static_cast<size_t>(vclusters_.cell(node).view)];
  view.index.SetKeys(vclusters_.cell(node).view_pos, vclusters_.usage().UsedTotal(CellId(node)), 0);
}

void SchedulerImpl::UpdatePNodeKey(CellId nc) {
  View& view = views_[forest_->chain(nc).value()];
  view.index.SetKeys(physical_.view_pos(nc), physical_.usage().UsedAt(nc, kOpportunisticPriority),
                     physical_.usage().UsedAbove(nc, kOpportunisticPriority));
}

void SchedulerImpl::ReleaseVLeaf(VCellId v) {
  SetVLeaf(v, kFreePriority, kNilId);
  vclusters_.UnbindUp(v);
}

void SchedulerImpl::ReleaseVLeaf(VCellId v, NodeKeys* keys) {
  if (SetVLeafUsage(v, kFreePriority, kNilId)) keys->TouchV(v);
  vclusters_.UnbindUp(v);
}

}  // namespace hived
