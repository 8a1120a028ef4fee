// Live config change (issue 29 item 6; hived/scheduler.h "Live config change"): the
// refusals each leave the state exactly as before, and an applied change is a scheduler of
// the new config (new nodes used, removed VCs gone, the version followed).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hived/config.h"
#include "hived/fast_path.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "support/catch.h"

namespace {

using hived::ApplyConfigOptions;
using hived::ClusterSpec;
using hived::GroupRequest;
using hived::Phase;
using hived::RestoreOutcome;
using hived::Scheduler;

ClusterSpec TwoRacks() {
  auto spec =
      hived::LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

GroupRequest Request(const std::string& name, const std::string& vc, int32_t gpus) {
  GroupRequest req;
  req.name = name;
  req.vc = vc;
  req.members = {{/*pod_number=*/1, /*leaf_cell_number=*/gpus}};
  return req;
}

void Run(Scheduler& s, const GroupRequest& req) {
  auto r = s.Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == hived::Outcome::kPlaced);
  REQUIRE(s.Allocate(req, r->placement).ok());
}

TEST_CASE("ApplyConfig: a VC removed under a running group is refused naming it",
          "[config_change][unit]") {
  ClusterSpec spec = TwoRacks();
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  Run(**s, Request("job-1", "dev", 2));
  const std::string before = (*s)->SaveState().value();
  const uint64_t version = (*s)->version();
  ClusterSpec next = spec;
  next.virtual_clusters.erase(next.virtual_clusters.begin() + 2);  // dev
  auto r = (*s)->ApplyConfig(next);
  REQUIRE(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(r.status().message(), "group job-1 would be downgraded"));
  CHECK((*s)->SaveState().value() == before);
  CHECK((*s)->version() == version);

  ApplyConfigOptions apply;
  apply.stranded = ApplyConfigOptions::Stranded::kApply;
  r = (*s)->ApplyConfig(next, apply);
  REQUIRE(r.ok());
  REQUIRE(r->groups.size() == 1);
  CHECK(r->groups[0].outcome == RestoreOutcome::kDowngraded);
  CHECK((*s)->GetGroup("job-1").state == hived::GroupState::kOpportunistic);
  CHECK((*s)->VirtualCluster("dev").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->spec().virtual_clusters.size() == 3);
}

TEST_CASE("ApplyConfig: an invalid config is refused and changes nothing",
          "[config_change][unit]") {
  ClusterSpec spec = TwoRacks();
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  Run(**s, Request("job-1", "prod", 8));
  const std::string before = (*s)->SaveState().value();
  ClusterSpec next = spec;
  next.virtual_clusters[0].virtual_cells[0].cell_number = 3;  // prod: 3 racks of 2
  auto r = (*s)->ApplyConfig(next);
  REQUIRE(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK((*s)->SaveState().value() == before);
  CHECK((*s)->version() == 2);  // the Schedule and the Allocate
}

TEST_CASE("ApplyConfig: added nodes are used and reservations are dropped and reported",
          "[config_change][unit]") {
  ClusterSpec spec = TwoRacks();
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  Run(**s, Request("run", "prod", 8));
  GroupRequest held = Request("held", "research", 8);
  auto reserved = (*s)->Schedule(held, Phase::kPreempting);
  REQUIRE(reserved.ok());
  REQUIRE(reserved->outcome == hived::Outcome::kPlaced);
  const uint64_t version = (*s)->version();

  ClusterSpec next = spec;
  hived::PhysicalCellSpec rack = next.physical_cells[0];
  for (auto& node : rack.cell_children) node.cell_address = "rack2-" + node.cell_address;
  next.physical_cells.push_back(rack);
  next.virtual_clusters[0].virtual_cells[0].cell_number = 2;  // prod: two racks
  auto r = (*s)->ApplyConfig(next);
  REQUIRE(r.ok());
  REQUIRE(r->groups.size() == 2);
  CHECK(r->groups[0].name == "run");
  CHECK(r->groups[0].outcome == RestoreOutcome::kKept);
  CHECK(r->groups[1].name == "held");
  CHECK(r->groups[1].outcome == RestoreOutcome::kDropped);
  CHECK(absl::StrContains(r->groups[1].reason, "Schedule it again"));
  CHECK((*s)->GetGroup("held").state == hived::GroupState::kAbsent);
  CHECK((*s)->version() == version + 1);
  CHECK((*s)->Changes(version).status().code() == absl::StatusCode::kOutOfRange);
  CHECK((*s)->Nodes().size() == 12);

  // prod now holds 64 GPUs: a 48-GPU gang of 8-GPU pods fits.
  GroupRequest big = Request("big", "prod", 8);
  big.members[0].pod_number = 6;
  Run(**s, big);
  auto changes = (*s)->Changes(version + 1);
  REQUIRE(changes.ok());
  CHECK(changes->version == version + 3);
  CHECK(changes->groups == std::vector<std::string>{"big"});
  CHECK((*s)->CheckInvariants().ok());
}

}  // namespace

// Regression (merge of the fast path with ApplyConfig): the swap rebuilds the group table,
// so a handle issued before it could name another group's slot. It is refused instead, and
// HandleOf gives one of the new table.
TEST_CASE("ApplyConfig: fast-path handles issued before the change are stale after it",
          "[config_change][unit]") {
  ClusterSpec spec = TwoRacks();
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  hived::FastResult fast;
  REQUIRE((*s)->ScheduleAndAllocate(Request("job-1", "dev", 2), &fast).ok());
  REQUIRE(fast.outcome == hived::Outcome::kPlaced);
  const hived::GroupHandle old = fast.handle;
  REQUIRE((*s)->ApplyConfig(spec).ok());
  const std::string before = (*s)->SaveState().value();
  absl::Status stale = (*s)->Release(old);
  CHECK(stale.code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(stale.message(), "before the last ApplyConfig"));
  CHECK((*s)->GroupName(old).status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->SaveState().value() == before);
  auto fresh = (*s)->HandleOf("job-1");
  REQUIRE(fresh.ok());
  CHECK(fresh->config_epoch == old.config_epoch + 1);
  CHECK((*s)->GroupName(*fresh).value() == "job-1");
  CHECK((*s)->Release(*fresh).ok());
  CHECK((*s)->GetGroup("job-1").state == hived::GroupState::kAbsent);
}
