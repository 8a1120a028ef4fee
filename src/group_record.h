// src/group_record.h: the one builder of a running group's record (hived/state.h's
// `GroupRecord`), for every kind of group: whole (SchedulerImpl::Record adds what only the
// scheduler knows: a downgrade, the virtual leaves), fractional and MIG (Sharing's), and
// CPU-only host groups.
//
// Example: `GroupRecord rec = RunningRecord(request, placement, /*guaranteed=*/true);`
//
// Thread safety: a pure function.
#ifndef HIVED_SRC_GROUP_RECORD_H_
#define HIVED_SRC_GROUP_RECORD_H_

#include <utility>

#include "hived/schedule_result.h"
#include "hived/state.h"

namespace hived {

// The record of a group running at `placement` as asked by `request` (its suggested nodes
// are not kept: a restart is not bound to them): kAllocated when it runs guaranteed, else
// kOpportunistic.
inline GroupRecord RunningRecord(GroupRequest request, Placement placement, bool guaranteed) {
  GroupRecord rec;
  rec.request = std::move(request);
  rec.request.suggested_nodes.reset();
  rec.placement = std::move(placement);
  rec.state = guaranteed ? GroupState::kAllocated : GroupState::kOpportunistic;
  return rec;
}

}  // namespace hived

#endif  // HIVED_SRC_GROUP_RECORD_H_
