// src/schedule_changed.h: whether a Preempting-phase decision changed the scheduler's state
// (it placed or reserved the group, or cancelled another's reservation), so the change log
// notes it. One rule for the façade's Schedule calls and the sharing layer's holder calls.
//
// Thread safety: a pure function.
#ifndef HIVED_SRC_SCHEDULE_CHANGED_H_
#define HIVED_SRC_SCHEDULE_CHANGED_H_

#include "hived/schedule_result.h"

namespace hived {

// `outcome` and `detail` of a Preempting-phase decision that succeeded.
inline bool ScheduleChangedState(Outcome outcome, const ScheduleResult& detail) {
  return outcome == Outcome::kPlaced || outcome == Outcome::kPreempting ||
         !detail.cancelled.empty();
}

}  // namespace hived

#endif  // HIVED_SRC_SCHEDULE_CHANGED_H_
