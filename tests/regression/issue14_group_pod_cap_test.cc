// Regression (issue 14): only each member's pod count was capped, so a request of many
// members could ask for 10^6 pods each and the scheduler expanded them one entry per pod
// (gigabytes). The total over all members is now capped by `kMaxGroupPods`, checked in
// O(members) by the one validation `Schedule` and `Allocate` share, before anything is
// allocated per pod; the sum is 64-bit, so it cannot wrap.
#include <cstdint>
#include <limits>
#include <memory>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"

namespace hived {
namespace {

std::unique_ptr<Scheduler> TwoRacks() {
  auto spec = LoadClusterSpecString(testdata::kTwoRacksYaml, "two-racks.yaml");
  REQUIRE(spec.ok());
  auto created = Scheduler::Create(*spec);
  REQUIRE(created.ok());
  return std::move(*created);
}

TEST_CASE("Regression: a request's total pods over all members is capped (kInvalidArgument)",
          "[scheduler][regression]") {
  std::unique_ptr<Scheduler> s = TwoRacks();
  GroupRequest r;
  r.name = "huge";
  r.vc = "alpha";
  SECTION("many members, each within the old per-member cap") {
    r.members.assign(4000, GroupMember{1000000, 1});  // 4 * 10^9 pods in all
  }
  SECTION("members whose sum would overflow 32 bits") {
    r.members.assign(3, GroupMember{std::numeric_limits<int32_t>::max(), 1});
  }
  SECTION("one pod over the cap") { r.members = {{kMaxGroupPods, 1}, {1, 2}}; }
  auto scheduled = s->Schedule(r, Phase::kPreempting);
  REQUIRE_FALSE(scheduled.ok());
  CHECK(scheduled.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(scheduled.status().message().find("too many pods") != std::string::npos);
  // Allocate applies the same validation (a placement from elsewhere, e.g. recovery).
  auto allocated = s->Allocate(r, Placement());
  REQUIRE_FALSE(allocated.ok());
  CHECK(allocated.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(s->Recover(r, Placement()).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(s->Groups().empty());
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("Regression: a request of exactly kMaxGroupPods pods is valid (and infeasible here)",
          "[scheduler][regression]") {
  std::unique_ptr<Scheduler> s = TwoRacks();
  GroupRequest r;
  r.name = "at-cap";
  r.vc = "alpha";
  r.members = {{kMaxGroupPods - 1, 1}, {1, 1}};
  auto scheduled = s->Schedule(r, Phase::kPreempting);
  REQUIRE(scheduled.ok());
  CHECK(scheduled->outcome == Outcome::kInfeasible);
  CHECK(scheduled->code == ReasonCode::kGroupTooLarge);
}

}  // namespace
}  // namespace hived
