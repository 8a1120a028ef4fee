// The one rule for unknown names (hived/scheduler.h, "Unknown names"): a config-defined name
// the config lacks is kNotFound, in views and mutations alike; a group that is not live is
// kAbsent in GetGroup and kNotFound for mutations.
#include <memory>
#include <string>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived {
namespace {

std::unique_ptr<Scheduler> TwoRacks() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

TEST_CASE("Unknown names: config names are kNotFound in views and mutations", "[api][unit]") {
  std::unique_ptr<Scheduler> s = TwoRacks();
  CHECK(s->VirtualCluster("no-such-vc").status().code() == absl::StatusCode::kNotFound);
  CHECK(s->VirtualCluster("v1").ok());
  CHECK(s->SetNodeHealthy("no-such-node", false).code() == absl::StatusCode::kNotFound);
  GroupRequest req;
  req.name = "g";
  req.vc = "no-such-vc";
  req.members = {{1, 1}};
  CHECK(s->Schedule(req, Phase::kFiltering).status().code() == absl::StatusCode::kNotFound);
  req.vc = "v1";
  req.leaf_cell_type = "no-such-type";
  CHECK(s->Schedule(req, Phase::kFiltering).status().code() == absl::StatusCode::kNotFound);
  req.leaf_cell_type.clear();
  req.pinned_cell_id = "no-such-pin";
  CHECK(s->Schedule(req, Phase::kFiltering).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Unknown names: a group that is not live is kAbsent to views, kNotFound to mutations",
          "[api][unit]") {
  std::unique_ptr<Scheduler> s = TwoRacks();
  const GroupStatus never = s->GetGroup("never-seen");
  CHECK(never.name == "never-seen");
  CHECK(never.state == GroupState::kAbsent);
  CHECK(never.placement.pods.empty());
  CHECK(s->Release("never-seen").code() == absl::StatusCode::kNotFound);
  CHECK(s->CancelPreemption("never-seen").code() == absl::StatusCode::kNotFound);

  // A released group is absent again, like one never seen.
  GroupRequest req;
  req.name = "g";
  req.vc = "v1";
  req.members = {{1, 2}};
  absl::StatusOr<ScheduleResult> r = s->Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE(s->Allocate(req, r->placement).ok());
  CHECK(s->GetGroup("g").state == GroupState::kAllocated);
  REQUIRE(s->Release("g").ok());
  CHECK(s->GetGroup("g").state == GroupState::kAbsent);
  CHECK(s->Release("g").code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hived
