// Reservations with time (scheduler.h "Reservations with time", issue 29 item 2): a timed
// Schedule stamps the reservation, views show it, ExpireReservations gives up those at or
// past their deadline in deadline-then-name order and reports them.
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/pods/pods_cluster.h"

namespace hived {
namespace {

using testdata::Gang;

ScheduleResult Timed(Scheduler& s, const GroupRequest& r, int64_t now,
                     std::optional<int64_t> deadline, Phase phase = Phase::kPreempting) {
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, phase, ReservationTime{now, deadline});
  INFO(res.status().message());
  REQUIRE(res.ok());
  testdata::RequireInvariants(s);
  return *res;
}

std::vector<std::string> Names(const std::vector<ExpiredReservation>& e) {
  std::vector<std::string> out;
  for (const ExpiredReservation& x : e) out.push_back(x.group);
  return out;
}

TEST_CASE("Reservation times: a timed reservation shows its times and expires at its deadline",
          "[pods][reservations][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{1, 4}});
  REQUIRE(Timed(*s, r, 100, 150).outcome == Outcome::kPlaced);
  GroupStatus g = s->GetGroup("g");
  CHECK(g.state == GroupState::kReserved);
  CHECK(g.reserved_at == std::optional<int64_t>(100));
  CHECK(g.reservation_deadline == std::optional<int64_t>(150));
  CHECK(g.pods.empty());

  CHECK(s->ExpireReservations(149).empty());
  CHECK(s->GetGroup("g").state == GroupState::kReserved);
  const std::vector<ExpiredReservation> e = s->ExpireReservations(150);
  REQUIRE(e.size() == 1);
  CHECK(e[0].group == "g");
  CHECK(e[0].state == GroupState::kReserved);
  CHECK(e[0].reserved_at == 100);
  CHECK(e[0].deadline == 150);
  CHECK(s->GetGroup("g").state == GroupState::kAbsent);
  for (const NodeStatus& n : s->Nodes()) CHECK(n.free_leaf_cells == n.total_leaf_cells);
  testdata::RequireInvariants(*s);
  CHECK(s->ExpireReservations(1000).empty());
}

TEST_CASE("Reservation times: expiry order is deadline, then name", "[pods][reservations][unit]") {
  auto s = testdata::MakePods();
  Timed(*s, Gang("b", {{1, 1}}), 0, 30);
  Timed(*s, Gang("c", {{1, 1}}), 1, 10);
  Timed(*s, Gang("a", {{1, 1}}), 2, 10);
  Timed(*s, Gang("d", {{1, 1}}), 3, std::nullopt);  // no deadline: never expires
  CHECK(Names(s->ExpireReservations(100)) == std::vector<std::string>{"a", "c", "b"});
  CHECK(s->GetGroup("d").state == GroupState::kReserved);
  CHECK(s->GetGroup("d").reserved_at == std::optional<int64_t>(3));
  CHECK_FALSE(s->GetGroup("d").reservation_deadline.has_value());
  CHECK(s->ExpireReservations(INT64_MAX).empty());
}

TEST_CASE("Reservation times: a repeated Schedule keeps the time made and may move the deadline",
          "[pods][reservations][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{1, 4}});
  Timed(*s, r, 100, 150);
  Timed(*s, r, 120, std::nullopt);  // no deadline given: keeps its own
  CHECK(s->GetGroup("g").reserved_at == std::optional<int64_t>(100));
  CHECK(s->GetGroup("g").reservation_deadline == std::optional<int64_t>(150));
  Timed(*s, r, 140, 300);  // extended
  CHECK(s->GetGroup("g").reserved_at == std::optional<int64_t>(100));
  CHECK(s->GetGroup("g").reservation_deadline == std::optional<int64_t>(300));
  CHECK(s->ExpireReservations(299).empty());

  SECTION("an untimed reservation gets its time from the first timed Schedule") {
    const GroupRequest u = Gang("u", {{1, 4}});
    REQUIRE(s->Schedule(u, Phase::kPreempting).ok());
    CHECK_FALSE(s->GetGroup("u").reserved_at.has_value());
    CHECK(s->ExpireReservations(INT64_MAX - 1).size() == 1);  // g; u has no deadline
    Timed(*s, u, 500, 600);
    CHECK(s->GetGroup("u").reserved_at == std::optional<int64_t>(500));
  }
  SECTION("an allocated group holds no reservation: no times, never expires") {
    absl::StatusOr<ScheduleResult> res = s->Schedule(r, Phase::kPreempting);
    REQUIRE(s->Allocate(r, res->placement).ok());
    CHECK_FALSE(s->GetGroup("g").reserved_at.has_value());
    CHECK(s->ExpireReservations(1000).empty());
    CHECK(s->GetGroup("g").state == GroupState::kAllocated);
  }
  SECTION("a slot reused by a new group starts without times") {
    REQUIRE(s->Unreserve("g").ok());
    REQUIRE(s->Schedule(r, Phase::kPreempting).ok());
    CHECK_FALSE(s->GetGroup("g").reserved_at.has_value());
    CHECK(s->ExpireReservations(1000).empty());
  }
}

TEST_CASE("Reservation times: the Filtering phase reserves nothing and records no time",
          "[pods][reservations][unit]") {
  auto s = testdata::MakePods();
  REQUIRE(Timed(*s, Gang("g", {{1, 4}}), 1, 2, Phase::kFiltering).outcome == Outcome::kPlaced);
  CHECK(s->GetGroup("g").state == GroupState::kAbsent);
  CHECK(s->ExpireReservations(10).empty());
}

TEST_CASE("Reservation times: an expired preemption leaves its victims running",
          "[pods][reservations][unit]") {
  auto s = testdata::MakePods();
  // Fill VC2's one node with a low-priority gang, then preempt it with a higher one.
  const GroupRequest low = Gang("low", {{1, 4}}, 0, "VC2");
  REQUIRE(s->Allocate(low, testdata::Reserve(*s, low)).ok());
  const GroupRequest high = Gang("high", {{1, 4}}, 5, "VC2");
  const ScheduleResult pre = Timed(*s, high, 10, 20);
  REQUIRE(pre.outcome == Outcome::kPreempting);
  CHECK(s->GetGroup("low").state == GroupState::kBeingPreempted);
  CHECK(s->GetGroup("high").reserved_at == std::optional<int64_t>(10));
  const std::vector<ExpiredReservation> e = s->ExpireReservations(25);
  REQUIRE(e.size() == 1);
  CHECK(e[0].group == "high");
  CHECK(e[0].state == GroupState::kPreempting);
  CHECK(s->GetGroup("high").state == GroupState::kAbsent);
  CHECK(s->GetGroup("low").state == GroupState::kAllocated);
  testdata::RequireInvariants(*s);
}

}  // namespace
}  // namespace hived
