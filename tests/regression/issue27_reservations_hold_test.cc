// Issue 27 item 6: reservations hold. A group whose Preempting-phase `Schedule` answered
// kPlaced after its victims left stayed kPreempting, so a higher-priority `Schedule` on the
// same cells cancelled it with no sign in any result, and its `Allocate` then failed with
// "has no reservation". Now a Preempting-phase kPlaced result reserves whatever path led to
// it, and a cancellation the library does make (of an overlapping Preempting group) is
// listed in the result that made it and told to the cancelled group's next Schedule and
// Allocate. The cluster: tests/unit/sharing/sharing_cluster.h (VC1 holds one 4-GPU GA node
// and the GB node).
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;
using testdata::Whole;

ScheduleResult Sched(Scheduler& s, const GroupRequest& r, Phase phase = Phase::kPreempting) {
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, phase);
  INFO(res.status().message());
  REQUIRE(res.ok());
  const absl::Status inv = s.CheckInvariants();
  INFO(inv.message());
  REQUIRE(inv.ok());
  return *res;
}

TEST_CASE("issue 27: a preemptor's kPlaced survives a higher-priority Schedule on its cells",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  const GroupRequest low = Whole("low", "VC1", 0, 4, "GA");
  const GroupRequest pre = Whole("pre", "VC1", 2, 4, "GA");
  const GroupRequest high = Whole("high", "VC1", 3, 4, "GA");
  REQUIRE(testdata::Run(*s, low) == Outcome::kPlaced);
  ScheduleResult r = Sched(*s, pre);
  REQUIRE(r.outcome == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"low"});
  REQUIRE(s->Release("low").ok());

  SECTION("Preempting phase: the re-check's kPlaced reserves") {
    r = Sched(*s, pre);
    REQUIRE(r.outcome == Outcome::kPlaced);
    CHECK(s->GetGroup("pre").state == GroupState::kReserved);
    const ScheduleResult h = Sched(*s, high);
    CHECK(h.outcome == Outcome::kWaiting);
    CHECK(h.code == ReasonCode::kReservationOverlap);
    CHECK(h.cancelled.empty());
    const absl::StatusOr<AllocateInfo> a = s->Allocate(pre, r.placement);
    INFO(a.status().message());
    CHECK(a.ok());
    CHECK(s->GetGroup("pre").state == GroupState::kAllocated);
  }
  SECTION("Filtering phase: the re-check reserves nothing, and Allocate right after runs it") {
    r = Sched(*s, pre, Phase::kFiltering);
    REQUIRE(r.outcome == Outcome::kPlaced);
    CHECK(s->GetGroup("pre").state == GroupState::kPreempting);
    REQUIRE(s->Allocate(pre, r.placement).ok());
    CHECK(s->GetGroup("pre").state == GroupState::kAllocated);
  }
}

TEST_CASE("issue 27: a cancelled Preempting group is told, and the canceller lists it",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  const GroupRequest low = Whole("low", "VC1", 0, 4, "GA");
  const GroupRequest pre = Whole("pre", "VC1", 2, 4, "GA");
  const GroupRequest high = Whole("high", "VC1", 3, 4, "GA");
  REQUIRE(testdata::Run(*s, low) == Outcome::kPlaced);
  ScheduleResult r = Sched(*s, pre);
  REQUIRE(r.outcome == Outcome::kPreempting);
  // `pre` still waits for `low`: a higher-priority decision on the same cells cancels it.
  const ScheduleResult h = Sched(*s, high);
  REQUIRE(h.outcome == Outcome::kPreempting);
  CHECK(h.cancelled == std::vector<std::string>{"pre"});
  CHECK(s->GetGroup("pre").state == GroupState::kAbsent);

  const absl::StatusOr<AllocateInfo> a = s->Allocate(pre, r.placement);
  REQUIRE(a.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(a.status().message()).find("cancelled by group high") != std::string::npos);

  // The Filtering phase tells it and changes nothing; the Preempting phase tells it once.
  CHECK(Sched(*s, pre, Phase::kFiltering).cancelled_by == "high");
  const ScheduleResult again = Sched(*s, pre);
  CHECK(again.cancelled_by == "high");
  CHECK(Sched(*s, pre).cancelled_by.empty());
}

TEST_CASE(
    "issue 27: a fractional preemptor's kPlaced holds its new leaf against a "
    "higher-priority Schedule",
    "[scheduler][sharing][regression]") {
  auto s = testdata::Make();
  // VC1's GA node full with whole GPUs at priority 0; a fractional pod at priority 2 needs a
  // new leaf, so its holder preempts one of them.
  const GroupRequest low = Whole("low", "VC1", 0, 4, "GA");
  const GroupRequest frac = Frac("frac", "VC1", 2, 500);
  REQUIRE(testdata::Run(*s, low) == Outcome::kPlaced);
  ScheduleResult r = Sched(*s, frac);
  REQUIRE(r.outcome == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"low"});
  REQUIRE(s->Release("low").ok());
  r = Sched(*s, frac);
  REQUIRE(r.outcome == Outcome::kPlaced);
  REQUIRE(s->GetGroup("frac").state == GroupState::kReserved);
  // A whole group at a higher priority that needs every GA leaf of VC1 waits for it.
  const ScheduleResult h = Sched(*s, Whole("high", "VC1", 3, 4, "GA"));
  CHECK(h.outcome == Outcome::kWaiting);
  CHECK(h.code == ReasonCode::kReservationOverlap);
  const absl::StatusOr<AllocateInfo> a = s->Allocate(frac, r.placement);
  INFO(a.status().message());
  CHECK(a.ok());
}

TEST_CASE("issue 27: a fractional Preempting group cancelled by an overlapping preemptor is told",
          "[scheduler][sharing][regression]") {
  auto s = testdata::Make();
  const GroupRequest low = Whole("low", "VC1", 0, 4, "GA");
  const GroupRequest frac = Frac("frac", "VC1", 2, 500);
  REQUIRE(testdata::Run(*s, low) == Outcome::kPlaced);
  const ScheduleResult r = Sched(*s, frac);
  REQUIRE(r.outcome == Outcome::kPreempting);
  const ScheduleResult h = Sched(*s, Whole("high", "VC1", 3, 4, "GA"));
  REQUIRE(h.outcome == Outcome::kPreempting);
  CHECK(h.cancelled == std::vector<std::string>{"frac"});  // the group, not its holder
  const absl::StatusOr<AllocateInfo> a = s->Allocate(frac, r.placement);
  REQUIRE(a.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(a.status().message()).find("cancelled by group high") != std::string::npos);
  CHECK(Sched(*s, frac).cancelled_by == "high");
}

// The fractional case decided: a protected guaranteed group that evicts guests bars their
// GPU to new guests. When its re-check can neither place it nor evict (the guests left but a
// guaranteed share of its own VC took the room), the Preempting phase gives the preemption
// up (no kWaiting while barring a GPU); the Filtering phase changes nothing and says so.
TEST_CASE("issue 27: a fractional preemptor that cannot place answers kWaiting holding nothing",
          "[scheduler][sharing][regression]") {
  auto s = testdata::Make();
  REQUIRE(testdata::Run(*s, Frac("own", "VC1", 0, 400)) == Outcome::kPlaced);
  REQUIRE(testdata::Run(*s, Whole("fill", "VC1", 0, 3, "GA")) == Outcome::kPlaced);
  REQUIRE(testdata::Run(*s, Whole("fill2", "VC2", 0, 4, "GA")) == Outcome::kPlaced);
  REQUIRE(testdata::Run(*s, Frac("guest", "VC2", -1, 600)) == Outcome::kPlaced);
  REQUIRE(testdata::GpuOf(*s, "guest") == testdata::GpuOf(*s, "own"));
  const GroupRequest g2 = Frac("g2", "VC1", 0, 600);
  ScheduleResult r = Sched(*s, g2);
  REQUIRE(r.outcome == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"guest"});
  REQUIRE(s->Release("guest").ok());
  REQUIRE(testdata::Run(*s, Frac("g3", "VC1", 0, 300)) == Outcome::kPlaced);

  r = Sched(*s, g2, Phase::kFiltering);
  CHECK(r.outcome == Outcome::kWaiting);
  CHECK(r.code == ReasonCode::kReservationBlocked);
  CHECK(s->GetGroup("g2").state == GroupState::kPreempting);

  r = Sched(*s, g2);
  CHECK(r.outcome == Outcome::kWaiting);
  CHECK(s->GetGroup("g2").state == GroupState::kAbsent);
  // The GPU takes guests again.
  CHECK(testdata::Run(*s, Frac("guest2", "VC2", -1, 300)) == Outcome::kPlaced);
  CHECK(testdata::GpuOf(*s, "guest2") == testdata::GpuOf(*s, "own"));
}

}  // namespace
}  // namespace hived
