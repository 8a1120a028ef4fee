// Issue 27 item 2, probe-then-act: Sharing tried a holder on the stranded rule's node with a
// Filtering-phase Schedule and, when it placed, scheduled again in the caller's phase (two
// decisions that could differ). Now one decision is applied only when it places
// (`SchedulerImpl::Apply::kOnlyPlaced`): any other outcome is answered as the Filtering phase
// answers it, with nothing changed. The cluster: tests/unit/sharing/sharing_cluster.h.
#include <memory>
#include <string>

#include "hived/config.h"
#include "src/scheduler_impl.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"

namespace hived {
namespace {

GroupRequest Whole(const std::string& name, Priority prio, int32_t leaves) {
  GroupRequest r;
  r.name = name;
  r.vc = "VC1";
  r.priority = prio;
  r.leaf_cell_type = "GA";
  r.members = {{1, leaves}};
  return r;
}

TEST_CASE("issue 27: a decision applied only when it places changes nothing otherwise",
          "[scheduler][regression]") {
  auto spec = LoadClusterSpecString(testdata::kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  auto created = SchedulerImpl::Create(*spec);
  REQUIRE(created.ok());
  SchedulerImpl& s = **created;
  const GroupRequest low = Whole("low", 0, 2);
  absl::StatusOr<ScheduleResult> r = s.Schedule(low, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE(s.Allocate(low, r->placement).ok());

  SECTION("a placing decision is applied (reserved)") {
    r = s.Schedule(Whole("fits", 2, 2), Phase::kPreempting, nullptr,
                   SchedulerImpl::Apply::kOnlyPlaced);
    REQUIRE(r.ok());
    CHECK(r->outcome == Outcome::kPlaced);
    CHECK(s.GetGroup("fits").state == GroupState::kReserved);
  }
  SECTION("a preempting decision is answered, not applied") {
    r = s.Schedule(Whole("big", 2, 4), Phase::kPreempting, nullptr,
                   SchedulerImpl::Apply::kOnlyPlaced);
    REQUIRE(r.ok());
    CHECK(r->outcome == Outcome::kPreempting);
    CHECK(s.GetGroup("big").state == GroupState::kAbsent);
    CHECK(s.GetGroup("low").state == GroupState::kAllocated);
    r = s.Schedule(Whole("big", 2, 4), Phase::kPreempting, nullptr);
    REQUIRE(r.ok());
    CHECK(r->outcome == Outcome::kPreempting);
    CHECK(s.GetGroup("big").state == GroupState::kPreempting);
  }
  REQUIRE(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
