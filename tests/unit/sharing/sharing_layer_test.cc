// The sharing layer above the whole-GPU core (sharing/layered.h, issue 27 item 1), through the
// public API: what the core's hooks used to answer is now the layer's, and the core's
// shields follow the reserved shares (sharing/layered.h (L1), sharing/sharing.h invariant 8).
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;
using testdata::Make;
using testdata::Run;
using testdata::Whole;

// Regression: with the core's GetGroup hook gone, Sharing asked the core alone whether a
// name was taken, and a fractional group could be scheduled under the name of a running
// CPU-only group (which only Sharing knows).
TEST_CASE("a fractional group named as a running CPU-only group already exists",
          "[sharing][layer]") {
  auto s = Make();
  GroupRequest cpu;
  cpu.name = "c1";
  cpu.vc = "VC1";
  cpu.priority = 0;
  cpu.members = {{1, 0, 0, 0, 1000, 0}};
  REQUIRE(Run(*s, cpu) == Outcome::kPlaced);
  REQUIRE(s->GetGroup("c1").state == GroupState::kAllocated);
  for (Phase phase : {Phase::kFiltering, Phase::kPreempting}) {
    absl::StatusOr<ScheduleResult> r = s->Schedule(Frac("c1", "VC1", 0, 300), phase);
    REQUIRE(absl::IsAlreadyExists(r.status()));
    CHECK_THAT(std::string(r.status().message()), Catch::Contains("c1"));
  }
  REQUIRE(s->CheckInvariants().ok());
  REQUIRE(s->GetGroup("c1").state == GroupState::kAllocated);
}

TEST_CASE("the core's shields follow the reserved shares: set by Schedule, cleared by Unreserve",
          "[sharing][layer][reservations]") {
  auto s = Make();
  // An opportunistic holder on all eight GA GPUs, 400 milli free on each.
  REQUIRE(Run(*s, Frac("o1", "VC2", -1, 600, {"GA"}, 8)) == Outcome::kPlaced);
  const GroupRequest whole = Whole("w", "VC1", 0, 4, "GA");  // VC1's GA node: the holder's GPUs
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    absl::StatusOr<ScheduleResult> res =
        s->Schedule(Frac("o2", "VC2", -1, 300), Phase::kPreempting);
    REQUIRE(res.ok());
    REQUIRE(res->outcome == Outcome::kPlaced);
    REQUIRE(s->CheckInvariants().ok());  // (L1): the shields name o2
    absl::StatusOr<ScheduleResult> w = s->Schedule(whole, Phase::kFiltering);
    REQUIRE(w.ok());
    CHECK(w->code == ReasonCode::kReservationOverlap);
    CHECK_THAT(w->reason, Catch::Contains("reservation of group(s) o2"));
    // Given back: the holder is an ordinary victim again (its guest o1 is named).
    REQUIRE(s->Unreserve("o2").ok());
    REQUIRE(s->CheckInvariants().ok());  // (L1): no shield left
    w = s->Schedule(whole, Phase::kFiltering);
    REQUIRE(w.ok());
    CHECK(w->outcome == Outcome::kPreempting);
    CHECK(w->victims == std::vector<std::string>{"o1"});
  }
}

}  // namespace
}  // namespace hived
