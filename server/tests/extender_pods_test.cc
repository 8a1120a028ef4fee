// The extender on the library's per-pod calls (extender.h 1, 2, 4 and 5): filter reserves,
// bind allocates the pod (`AllocatePod`), a deleted pod is released (`ReleasePod`), and a
// reservation whose pod never binds expires (`ExpireReservations`).
#include <cstdint>
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "server/extender.h"
#include "server/tests/extender_fixture.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

using hived::GroupState;
using hived::server::Extender;
using hived::server::testing::BindArgs;
using hived::server::testing::Body;
using hived::server::testing::ChosenNode;
using hived::server::testing::FilterAndBind;
using hived::server::testing::FilterArgs;
using hived::server::testing::GangSpec;
using hived::server::testing::MakePod;
using hived::server::testing::NewExtender;
using hived::server::testing::RecordingBinder;
using hived::server::testing::UserErrorOf;
using nlohmann::json;

// The cluster's free cells: each node's free leaves, then per chain and level the free,
// obtainable and VC-unbound cells (a reservation binds virtual cells), to compare the
// cluster before and after.
std::vector<int32_t> FreeLeaves(const Extender& ext) {
  std::vector<int32_t> free;
  for (const hived::NodeStatus& n : ext.scheduler().Nodes()) free.push_back(n.free_leaf_cells);
  for (const hived::ChainLevelCapacity& c : ext.scheduler().Capacity()) {
    free.insert(free.end(), {c.free, c.obtainable, c.vc_unbound});
  }
  return free;
}

}  // namespace

TEST_CASE("Extender: filter reserves the gang and bind allocates the pod", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  std::string spec = GangSpec("VC2", 0, "gang", 2, 4, "DGX1-P100");
  json p0 = MakePod("gang-0", "g0", spec);
  std::string node = ChosenNode(ext->Filter(FilterArgs(p0)));
  REQUIRE_FALSE(node.empty());
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kReserved);
  CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/gang"))["status"]["allocatedPods"] ==
        json::array());
  REQUIRE(ext->Bind(BindArgs(p0, node)).status == 200);
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAllocated);
  auto pod = ext->scheduler().GetPod("gang", "g0");
  REQUIRE(pod.ok());
  CHECK(pod->placement.node == node);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a gang with one pod deleted keeps running", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  const std::vector<int32_t> idle = FreeLeaves(*ext);
  std::string spec = GangSpec("VC2", 0, "gang", 2, 4, "DGX1-P100");
  json p0 = MakePod("gang-0", "g0", spec);
  json p1 = MakePod("gang-1", "g1", spec);
  FilterAndBind(*ext, p0);
  std::string n1 = FilterAndBind(*ext, p1);
  const std::vector<int32_t> running = FreeLeaves(*ext);
  REQUIRE(running != idle);

  ext->OnPodDeleted(p0);
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAllocated);
  CHECK_FALSE(ext->scheduler().GetPod("gang", "g0").ok());
  CHECK(ext->scheduler().GetPod("gang", "g1").ok());
  CHECK(FreeLeaves(*ext) == running);  // the gang keeps every cell
  CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/gang"))["status"]["allocatedPods"] ==
        json::array({"g1"}));
  // The surviving pod keeps its node.
  CHECK(ChosenNode(ext->Filter(FilterArgs(p1))) == n1);
  CHECK(ext->scheduler().CheckInvariants().ok());

  SECTION("deleting the last pod releases the gang's cells") {
    ext->OnPodDeleted(p1);
    CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAbsent);
    CHECK(FreeLeaves(*ext) == idle);
    CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/"))["items"].empty());
    CHECK(ext->scheduler().CheckInvariants().ok());
  }
  SECTION("a replacement pod takes the deleted pod's slot") {
    json p2 = MakePod("gang-2", "g2", spec);
    FilterAndBind(*ext, p2);
    CHECK(FreeLeaves(*ext) == running);
    CHECK(ext->scheduler().GetPod("gang", "g2").ok());
    CHECK(ext->scheduler().CheckInvariants().ok());
  }
}

TEST_CASE("Extender: a pod filtered and deleted before its bind gives its reservation up",
          "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  const std::vector<int32_t> idle = FreeLeaves(*ext);
  json p0 = MakePod("solo-0", "s0", GangSpec("VC2", 0, "solo", 1, 8, "DGX1-P100"));
  REQUIRE_FALSE(ChosenNode(ext->Filter(FilterArgs(p0))).empty());
  CHECK(FreeLeaves(*ext) != idle);
  ext->OnPodDeleted(p0);
  CHECK(ext->scheduler().GetGroup("solo").state == GroupState::kAbsent);
  CHECK(FreeLeaves(*ext) == idle);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a pod whose filter reservation expired is filtered again cleanly",
          "[server][unit]") {
  RecordingBinder binder;
  int64_t now = 1'000;
  hived::server::ExtenderOptions options;
  options.reservation_timeout_ms = 5'000;
  options.expiry_period_ms = 0;  // the test expires
  options.clock = [&now] { return now; };
  auto ext = NewExtender(&binder, options);
  const std::vector<int32_t> idle = FreeLeaves(*ext);
  std::string spec = GangSpec("VC2", 0, "gang", 2, 4, "DGX1-P100");
  json p0 = MakePod("gang-0", "g0", spec);
  std::string node = ChosenNode(ext->Filter(FilterArgs(p0)));
  REQUIRE_FALSE(node.empty());
  REQUIRE(ext->scheduler().GetGroup("gang").state == GroupState::kReserved);

  // Not yet due.
  now += 4'999;
  CHECK(ext->ExpireReservations(now).empty());
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kReserved);
  // Due: the reservation and the pod's promised slot are given up.
  now += 1;
  CHECK(ext->ExpireReservations(now) == std::vector<std::string>{"gang"});
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAbsent);
  CHECK(FreeLeaves(*ext) == idle);
  CHECK(ext->Metrics().find("hived_extender_expired_reservations_total 1\n") != std::string::npos);
  // A late bind of the pod is refused (no decision holds), nothing bound.
  CHECK(UserErrorOf(ext->Bind(BindArgs(p0, node))).find("never filtered") != std::string::npos);
  CHECK(binder.calls.empty());

  // Filtered again: scheduled afresh, bound, and its gang completes.
  std::string again = ChosenNode(ext->Filter(FilterArgs(p0)));
  REQUIRE_FALSE(again.empty());
  REQUIRE(ext->Bind(BindArgs(p0, again)).status == 200);
  json p1 = MakePod("gang-1", "g1", spec);
  FilterAndBind(*ext, p1);
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAllocated);
  // A running gang holds no reservation: nothing more expires.
  now += 100'000;
  CHECK(ext->ExpireReservations(now).empty());
  CHECK(ext->scheduler().GetGroup("gang").state == GroupState::kAllocated);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a preemptor that never binds loses its reservation at the deadline",
          "[server][unit]") {
  RecordingBinder binder;
  int64_t now = 0;
  hived::server::ExtenderOptions options;
  options.reservation_timeout_ms = 1'000;
  options.expiry_period_ms = 0;
  options.clock = [&now] { return now; };
  auto ext = NewExtender(&binder, options);
  std::string low_spec = GangSpec("VC2", 0, "low", 2, 8, "DGX1-P100");
  json l0 = MakePod("low-0", "l0", low_spec);
  json l1 = MakePod("low-1", "l1", low_spec);
  FilterAndBind(*ext, l0);
  FilterAndBind(*ext, l1);
  json h0 = MakePod("high-0", "h0", GangSpec("VC2", 100, "high", 1, 8, "DGX1-P100"));
  REQUIRE(
      Body(ext->Preempt(hived::server::testing::PreemptArgs(h0)))["NodeNameToMetaVictims"].size() >=
      1);
  REQUIRE(ext->scheduler().GetGroup("high").state == GroupState::kPreempting);
  now += 1'000;
  CHECK(ext->ExpireReservations(now) == std::vector<std::string>{"high"});
  CHECK(ext->scheduler().GetGroup("high").state == GroupState::kAbsent);
  CHECK(ext->scheduler().GetGroup("low").state == GroupState::kAllocated);
  CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/"))["items"].size() == 1);
  CHECK(ext->scheduler().CheckInvariants().ok());
}
