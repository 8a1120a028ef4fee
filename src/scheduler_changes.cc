// The state version, `Changes(since)` and the paged group view (issue 29 item 3): what a
// cache or an inspect API follows instead of re-reading the full views (src/change_log.h).
//
// What is noted per mutation (a superset of what changed, never less):
//  - nodes: every node with a leaf going from free to used or back (NodeStatus counts free
//    leaves; `NoteLeafChanged`, from the one writer of physical leaf usage,
//    `SetPLeafUsage`), and the node of a `SetNodeHealthy` (its health);
//  - groups: the users and reservers of every leaf whose usage changed (victims, lazy
//    downgrades, a cancelled preemptor's victims), and the groups the call names: its own,
//    a Schedule's victims and cancelled reservations (`EndChange`).
// A group's status changes only with its leaves' usage or by a call naming it: its state,
// priority, placement and notes are set by the calls that hold, use, downgrade, cancel or
// release its leaves.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/scheduler_impl.h"

namespace hived {

void SchedulerImpl::NoteLeafChanged(CellId p, Priority old, Priority now) {
  if ((old == kFreePriority) != (now == kFreePriority)) changes_.NoteNode(forest_->node(p));
  // Leaves come in runs per group: note a name once per run, not per leaf.
  const GroupId u = physical_.user(p);
  if (u != kNilId && u != noted_user_) {
    changes_.NoteGroup(groups_[u].name);
    noted_user_ = u;
  }
  const GroupId r = physical_.reserver(p);
  if (r != kNilId && r != noted_reserver_) {
    changes_.NoteGroup(groups_[r].name);
    noted_reserver_ = r;
  }
}

void SchedulerImpl::EndChange(uint64_t epoch_before, bool changed, std::string_view group,
                              const ScheduleResult* result) {
  noted_user_ = kNilId;
  noted_reserver_ = kNilId;
  if (!changed && epoch_ == epoch_before && !changes_.pending()) return;
  if (!group.empty()) changes_.NoteGroup(group);
  if (result != nullptr) {
    for (const std::string& v : result->victims) changes_.NoteGroup(v);
    for (const std::string& c : result->cancelled) changes_.NoteGroup(c);
  }
  changes_.Commit();
}

void SchedulerImpl::NoteNodeChanged(std::string_view node) {
  const NodeId n = forest_->FindNode(node);
  if (!n.IsNil()) changes_.NoteNode(n);
}

void SchedulerImpl::ResetChangeLog(size_t capacity) {
  changes_ = ChangeLog(capacity);
  noted_user_ = kNilId;
  noted_reserver_ = kNilId;
}

absl::StatusOr<StateChanges> SchedulerImpl::Changes(uint64_t since) const {
  if (since > changes_.version()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version ", since, " is ahead of the scheduler's state version ", changes_.version()));
  }
  ChangeLog::Since s = changes_.ChangesSince(since);
  if (!s.complete && changes_.capacity() == 0) {
    return absl::OutOfRangeError(absl::StrCat(
        "the change feed is off (SchedulerOptions::change_log_capacity 0): the changes since "
        "version ",
        since, " are not kept; re-read the full views"));
  }
  if (!s.complete) {
    return absl::OutOfRangeError(absl::StrCat(
        "the changes since version ", since, " are no longer kept (the oldest kept follow version ",
        changes_.floor(), "); re-read the full views"));
  }
  StateChanges out;
  out.version = changes_.version();
  out.groups = std::move(s.groups);
  for (NodeId n : s.nodes) out.nodes.push_back(forest_->node_name(n));
  std::sort(out.nodes.begin(), out.nodes.end());
  return out;
}

std::vector<GroupStatus> SchedulerImpl::Groups(std::string_view after, int32_t limit) const {
  std::vector<GroupStatus> out;
  if (limit <= 0) return out;
  const size_t k = static_cast<size_t>(limit);
  // The k smallest names above `after`, without sorting the rest: a max-heap of k groups,
  // O(groups × log k) name comparisons; statuses are built for the page only.
  std::vector<const Group*> heap;
  heap.reserve(k);
  auto by_name = [](const Group* a, const Group* b) { return a->name < b->name; };
  for (const Group& g : groups_.slots()) {
    if (!g.alive || std::string_view(g.name) <= after) continue;
    if (heap.size() < k) {
      heap.push_back(&g);
      std::push_heap(heap.begin(), heap.end(), by_name);
    } else if (g.name < heap.front()->name) {
      std::pop_heap(heap.begin(), heap.end(), by_name);
      heap.back() = &g;
      std::push_heap(heap.begin(), heap.end(), by_name);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), by_name);
  for (const Group* g : heap) out.push_back(GStatus(*g));
  return out;
}

}  // namespace hived
