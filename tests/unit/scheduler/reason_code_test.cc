// Typed wait reasons (issue 9 step 3): every way `Schedule` can decline gives a
// `ReasonCode` a program can branch on, next to the located message.
#include <memory>
#include <string>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"

namespace hived {
namespace {

class TwoRacks {
 public:
  TwoRacks() {
    auto spec = LoadClusterSpecString(testdata::kTwoRacksYaml, "two-racks.yaml");
    REQUIRE(spec.ok());
    auto created = Scheduler::Create(*spec);
    REQUIRE(created.ok());
    s_ = std::move(*created);
  }

  ScheduleResult Schedule(const std::string& name, const std::string& vc, Priority priority,
                          int32_t pods, int32_t leaves, Phase phase = Phase::kPreempting,
                          bool lazy = false) {
    GroupRequest r;
    r.name = name;
    r.vc = vc;
    r.priority = priority;
    r.lazy_preemption = lazy;
    r.members = {{pods, leaves}};
    auto result = s_->Schedule(r, phase);
    REQUIRE(result.ok());
    if (phase == Phase::kPreempting && result->outcome == Outcome::kPlaced) {
      REQUIRE(s_->Allocate(r, result->placement).ok());
    }
    return *result;
  }

  Scheduler& s() { return *s_; }

 private:
  std::unique_ptr<Scheduler> s_;
};

TEST_CASE("Scheduler: placed and preempting results carry no reason code", "[scheduler][unit]") {
  TwoRacks t;
  CHECK(t.Schedule("a", "alpha", 1, 1, 4).code == ReasonCode::kNone);
  CHECK(t.Schedule("b", "alpha", 1, 1, 4).code == ReasonCode::kNone);
  ScheduleResult r = t.Schedule("c", "alpha", 5, 1, 4);
  CHECK(r.outcome == Outcome::kPreempting);
  CHECK(r.code == ReasonCode::kNone);
}

TEST_CASE("Scheduler: infeasible requests say whether a pod or the group is too large",
          "[scheduler][unit]") {
  TwoRacks t;
  // gamma's cells are 2-GPU switches: a 4-GPU pod fits a node but none of gamma's.
  ScheduleResult pod = t.Schedule("p", "gamma", 1, 1, 4);
  CHECK(pod.outcome == Outcome::kInfeasible);
  CHECK(pod.code == ReasonCode::kPodTooLarge);
  ScheduleResult group = t.Schedule("g", "gamma", 1, 3, 2);
  CHECK(group.outcome == Outcome::kInfeasible);
  CHECK(group.code == ReasonCode::kGroupTooLarge);
}

TEST_CASE("Scheduler: a full VC waits with kInsufficientCapacity", "[scheduler][unit]") {
  TwoRacks t;
  t.Schedule("b1", "beta", 1, 1, 4);
  ScheduleResult r = t.Schedule("b2", "beta", 1, 1, 1);
  CHECK(r.outcome == Outcome::kWaiting);
  CHECK(r.code == ReasonCode::kInsufficientCapacity);
  CHECK(r.reason.find("insufficient capacity") != std::string::npos);
}

TEST_CASE("Scheduler: a bad or non-suggested node in the way is named by its code",
          "[scheduler][unit]") {
  TwoRacks t;
  // beta's only node is bound to n0 by a running group; n0 then goes bad.
  t.Schedule("b1", "beta", 1, 1, 1);
  REQUIRE(t.s().SetNodeHealthy("n0", false).ok());
  ScheduleResult bad = t.Schedule("b2", "beta", 1, 1, 1);
  CHECK(bad.outcome == Outcome::kWaiting);
  CHECK(bad.code == ReasonCode::kBadNode);
  REQUIRE(t.s().SetNodeHealthy("n0", true).ok());
  GroupRequest r;
  r.name = "b3";
  r.vc = "beta";
  r.members = {{1, 1}};
  r.suggested_nodes = std::vector<std::string>{"n3"};
  auto sugg = t.s().Schedule(r, Phase::kPreempting);
  REQUIRE(sugg.ok());
  CHECK(sugg->outcome == Outcome::kWaiting);
  CHECK(sugg->code == ReasonCode::kNonSuggestedNode);
}

TEST_CASE("Scheduler: misuse such as an unknown leaf type is a status, not a reason code",
          "[scheduler][unit]") {
  TwoRacks t;
  GroupRequest r;
  r.name = "x";
  r.vc = "alpha";
  r.leaf_cell_type = "NOPE";
  r.members = {{1, 1}};
  auto result = t.s().Schedule(r, Phase::kPreempting);
  CHECK_FALSE(result.ok());  // misuse is a status, not a reason code
}

TEST_CASE("Scheduler: Filtering reports lazy downgrades and reservation overlaps by code",
          "[scheduler][unit]") {
  TwoRacks t;
  t.Schedule("lazy1", "alpha", 1, 1, 4, Phase::kPreempting, /*lazy=*/true);
  t.Schedule("lazy2", "alpha", 1, 1, 4, Phase::kPreempting, /*lazy=*/true);
  ScheduleResult lazy = t.Schedule("high", "alpha", 5, 1, 4, Phase::kFiltering);
  CHECK(lazy.outcome == Outcome::kPreempting);
  CHECK(lazy.code == ReasonCode::kLazyDowngrade);
  // A Preempting group's reservation, then a Filtering request that would overlap it.
  t.Schedule("o1", "beta", 1, 1, 4);
  ScheduleResult reserve = t.Schedule("o2", "beta", 5, 1, 4);
  REQUIRE(reserve.outcome == Outcome::kPreempting);
  ScheduleResult overlap = t.Schedule("o3", "beta", 9, 1, 4, Phase::kFiltering);
  CHECK(overlap.outcome == Outcome::kWaiting);
  CHECK(overlap.code == ReasonCode::kReservationOverlap);
}

}  // namespace
}  // namespace hived
