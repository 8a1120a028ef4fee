// Regression: HiveD's safe relaxed buddy allocation estimates per level how many free
// higher-level cells may be split. On two racks of two nodes, with beta on n0 and gamma's
// first switch on n1, a gamma request that may not use n1 (not suggested) made the estimate
// split rack1, leaving alpha's two unbound nodes backed by one physical node. The scheduler
// now checks the exact top-down safety before such a split, so the request waits.
#include <memory>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"

namespace hived {
namespace {

GroupRequest Req(const char* name, const char* vc, int32_t leaves) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.members = {{1, leaves}};
  return r;
}

TEST_CASE("Regression: the relaxed split never breaks another VC's safety",
          "[scheduler][regression]") {
  auto spec = LoadClusterSpecString(testdata::kTwoRacksYaml, "two-racks.yaml");
  REQUIRE(spec.ok());
  auto created = Scheduler::Create(*spec);
  REQUIRE(created.ok());
  Scheduler& s = **created;
  auto run = [&](GroupRequest r) {
    auto res = s.Schedule(r, Phase::kPreempting);
    REQUIRE(res.ok());
    REQUIRE(res->outcome == Outcome::kPlaced);
    REQUIRE(s.Allocate(r, res->placement).ok());
    return res->placement;
  };
  CHECK(run(Req("b", "beta", 4)).pods[0].node == "n0");
  CHECK(run(Req("g1", "gamma", 2)).pods[0].node == "n1");
  GroupRequest g2 = Req("g2", "gamma", 2);
  g2.suggested_nodes = std::vector<std::string>{"n2", "n3"};
  auto res = s.Schedule(g2, Phase::kPreempting);
  REQUIRE(res.ok());
  CHECK(res->outcome == Outcome::kWaiting);
  CHECK(res->reason.find("non-suggested") != std::string::npos);
  REQUIRE(s.CheckInvariants().ok());
  // alpha still gets both of its nodes.
  run(Req("a1", "alpha", 4));
  run(Req("a2", "alpha", 4));
  REQUIRE(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
