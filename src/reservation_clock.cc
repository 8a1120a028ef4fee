// Reservations with time (scheduler.h "Reservations with time"): a timed `Schedule` stamps
// the reservation it makes or keeps, `ExpireReservations` gives up those past their
// deadline. The library reads no clock: every time is the caller's.
//
// Where the state lives: two integers in `Group` (src/group_table.h), reset when a slot is
// reused (`GroupTable::Add`); the untimed calls never read or write them. A reservation
// re-placed by `Schedule` (a Preempting group whose placement moved) keeps its times, and
// so does a Preempting group that becomes reserved once its victims are gone.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "src/internal/check.h"
#include "src/scheduler_impl.h"

namespace hived {
namespace {

bool Reservation(const Group& g) {
  return g.alive && (g.state == GState::kReserved || g.state == GState::kPreempting);
}

}  // namespace

absl::StatusOr<ScheduleResult> SchedulerImpl::Schedule(const GroupRequest& request, Phase phase,
                                                       const ReservationTime& time) {
  // The times of a reservation the call may replace (re-placed under the same name).
  int64_t made = kNoTime;
  int64_t deadline = kNoTime;
  if (const GroupId before = groups_.Find(request.name);
      before != kNilId && Reservation(groups_[before])) {
    made = groups_[before].reserved_at;
    deadline = groups_[before].reservation_deadline;
  }
  absl::StatusOr<ScheduleResult> result = Schedule(request, phase);
  if (!result.ok() || phase != Phase::kPreempting) return result;
  const GroupId g = groups_.Find(request.name);
  if (g == kNilId || !Reservation(groups_[g])) return result;
  Group& grp = groups_[g];
  grp.reserved_at = made != kNoTime ? made : time.now;
  grp.reservation_deadline = time.deadline.has_value() ? *time.deadline : deadline;
  return result;
}

std::vector<ExpiredReservation> SchedulerImpl::ExpireReservations(int64_t now) {
  std::vector<ExpiredReservation> out;
  for (const Group& g : groups_.slots()) {
    if (!Reservation(g) || g.reservation_deadline == kNoTime || g.reservation_deadline > now) {
      continue;
    }
    ExpiredReservation e;
    e.group = g.name;
    e.state = g.state == GState::kReserved ? GroupState::kReserved : GroupState::kPreempting;
    e.reserved_at = g.reserved_at;
    e.deadline = g.reservation_deadline;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const ExpiredReservation& a, const ExpiredReservation& b) {
    return std::tie(a.deadline, a.group) < std::tie(b.deadline, b.group);
  });
  for (const ExpiredReservation& e : out) {
    // Each one is live and holds a reservation (Unreserve of one never ends another: a
    // reservation is cancelled only by a new decision), so this cannot fail.
    const absl::Status s = Unreserve(e.group);
    HIVED_CHECK(s.ok()) << s.message();
  }
  return out;
}

void SchedulerImpl::FillReservationTimes(const Group& g, GroupStatus* s) {
  if (!Reservation(g)) return;
  if (g.reserved_at != kNoTime) s->reserved_at = g.reserved_at;
  if (g.reservation_deadline != kNoTime) s->reservation_deadline = g.reservation_deadline;
}

}  // namespace hived
