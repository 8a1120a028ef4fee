// Persistence (issue 12 items 1 and 2): GroupRecord JSON, SaveState / Restore with the
// per-group report, the full request in GroupStatus, and bad input (located errors). Restore
// of changed clusters, corrupted or mutated documents: persistence_restore_test.cc.
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/persistence/mutate.h"
#include "unit/persistence/persistence_support.h"

namespace {

using hived::GroupRecord;
using hived::GroupRequest;
using hived::GroupState;
using hived::Outcome;
using hived::Phase;
using hived::RestoreOutcome;
using hived::RestoreReport;
using hived::Scheduler;
using hived::persistence_test::ErrorOf;
using hived::persistence_test::FullRecord;
using hived::persistence_test::New;
using hived::persistence_test::PinnedReq;
using hived::persistence_test::Req;
using hived::persistence_test::Run;
using hived::persistence_test::RunOnSecondNode;
using hived::persistence_test::Save;
using hived::persistence_test::TwoRacks;
using hived::persistence_test::TwoRacksPath;

TEST_CASE("GroupRecord: JSON keeps every field and is stable", "[persistence][unit]") {
  const GroupRecord rec = FullRecord();
  const std::string json = hived::GroupRecordToJson(rec);
  auto back = hived::GroupRecordFromJson(json);
  REQUIRE(back.ok());
  CHECK(back->request.name == rec.request.name);
  CHECK(back->request.vc == rec.request.vc);
  CHECK(back->request.priority == 5);
  CHECK(back->request.leaf_cell_type == "GPU");
  CHECK(back->request.pinned_cell_id == "v3-pin");
  CHECK(back->request.lazy_preemption);
  REQUIRE(back->request.members.size() == 2);
  CHECK(back->request.members[1].pod_number == 2);
  CHECK(back->request.members[1].leaf_cell_number == 1);
  CHECK(back->state == GroupState::kOpportunistic);
  CHECK(back->downgrade_reason == rec.downgrade_reason);
  CHECK(back->preemptor == "big");
  CHECK(back->placement.chain == "GRACK");
  REQUIRE(back->placement.pods.size() == 3);
  CHECK(back->placement.pods[2].leaf_cell_indices == std::vector<int32_t>{2, 3});
  CHECK(back->placement.pods[2].preassigned_cell_types == std::vector<std::string>{"GSOCKET", ""});
  CHECK(back->virtual_leaf_cells == rec.virtual_leaf_cells);
  CHECK(hived::GroupRecordToJson(*back) == json);
  CHECK(absl::StartsWith(json, R"({"name":"job-7","virtualCluster":"v3","priority":5,)"));
}

TEST_CASE("GroupRecord: bad JSON is a located error", "[persistence][unit]") {
  const std::string good = hived::GroupRecordToJson(FullRecord());
  struct Case {
    std::string json;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{\"name\": \"x\",\n  \"priority\": }", "malformed JSON at line 2, column 15"},
      {"", "malformed JSON"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper than 32 levels"},
      {"[1]", "$: expected an object, got array"},
      {absl::StrReplaceAll(good, {{"\"priority\":5", "\"priority\":5000"}}),
       "$.priority: integer out of range -1..1000"},
      {absl::StrReplaceAll(good, {{"\"priority\":5", "\"priority\":\"5\""}}),
       "$.priority: expected an integer, got string"},
      {absl::StrReplaceAll(good, {{"\"physicalNode\":\"r0n2\"", "\"physicalNod\":\"r0n2\""}}),
       "$.placement.pods[0].physicalNod: unknown key"},
      {absl::StrReplaceAll(good, {{"[2,3]", "[2]"}}),
       "$.placement.pods[2].physicalLeafCellIndices: 1 indices for 2 leaf cells"},
      {absl::StrReplaceAll(good, {{"\"opportunistic\"", "\"preempting\""}}),
       "$.state: expected allocated or opportunistic, got preempting"},
      {absl::StrReplaceAll(good, {{"\"v3/1/0\",", ""}}),
       "$.virtualLeafCells: 3 virtual cells for 4 leaf cells"},
      {absl::StrReplaceAll(
           good, {{"\"members\":[", "\"members\":[{\"podNumber\":0,\"leafCellNumber\":1},"}}),
       "$.members[0].podNumber: integer out of range 1..1000000"},
      {absl::StrReplaceAll(good, {{"\"name\":\"job-7\"", "\"name\":\"\""}}), "$.name: empty"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    auto rec = hived::GroupRecordFromJson(c.json);
    REQUIRE_FALSE(rec.ok());
    CHECK(rec.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(rec.status().message()), Catch::Contains(c.expect));
  }
}

TEST_CASE("GroupStatus: carries the full request, also after a downgrade", "[persistence][unit]") {
  std::unique_ptr<Scheduler> s = New(TwoRacks());
  GroupRequest low = Req("low", "v2", 1, 2, 8);
  low.lazy_preemption = true;
  low.leaf_cell_type = "GPU";
  Run(*s, low);
  GroupRequest pinned = PinnedReq(0, 1, 4);
  pinned.members.push_back({2, 1});
  Run(*s, pinned);

  hived::GroupStatus st = s->GetGroup("pinned");
  CHECK(st.request.name == "pinned");
  CHECK(st.request.vc == "v3");
  CHECK(st.request.pinned_cell_id == "v3-pin");
  REQUIRE(st.request.members.size() == 2);
  CHECK(st.request.members[0].leaf_cell_number == 4);
  CHECK(st.request.members[1].pod_number == 2);

  // A higher-priority group of v2 lazily preempts `low`: it runs at -1, asked for 1.
  GroupRequest high = Req("high", "v2", 2, 1, 8);
  auto res = s->Schedule(high, Phase::kPreempting);
  REQUIRE(res.ok());
  st = s->GetGroup("low");
  CHECK(st.state == GroupState::kOpportunistic);
  CHECK(st.priority == hived::kOpportunisticPriority);
  CHECK(st.request.priority == 1);
  CHECK(st.request.lazy_preemption);
  CHECK(st.request.leaf_cell_type == "GPU");
  CHECK_FALSE(st.downgrade_reason.empty());

  CHECK(s->GetGroup("nobody").request.name == "nobody");
  CHECK(s->GetGroup("nobody").state == GroupState::kAbsent);
}

TEST_CASE("SaveState / Restore: the restored scheduler is the same scheduler",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  RunOnSecondNode(*s);
  GroupRequest lazy = Req("lazy", "v1", 0, 1, 2);
  lazy.lazy_preemption = true;
  Run(*s, lazy);
  Run(*s, Req("opp", "v4", -1, 1, 1));
  GroupRequest pinned = PinnedReq(3, 1, 2);
  Run(*s, pinned);
  REQUIRE(s->SetNodeHealthy("r1n3", false).ok());

  const std::string state = Save(*s);
  CHECK(absl::StartsWith(state, R"({"schema":"hived.scheduler-state","version":2,"config":")"));
  CHECK(absl::StrContains(state, R"("badNodes":["r1n3"],"doomedCells":[],"groups":[)"));
  RestoreReport report;
  auto r = Scheduler::Restore(spec, state, &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  CHECK(Save(**r) == state);
  REQUIRE(report.groups.size() == 4);
  for (const auto& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kKept);
  }
  CHECK(report.groups[0].name == "b");
  CHECK(report.groups[0].path == "$.groups[0]");
  for (const char* vc : {"v1", "v2", "v3", "v4"}) {
    auto a = s->VirtualCluster(vc);
    auto b = (*r)->VirtualCluster(vc);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    std::vector<std::string> bound_a, bound_b;
    std::function<void(const std::vector<hived::VirtualCellStatus>&, std::vector<std::string>*)>
        walk =
            [&](const std::vector<hived::VirtualCellStatus>& cells, std::vector<std::string>* out) {
              for (const auto& c : cells) {
                out->push_back(absl::StrCat(c.address, "=", c.physical_cell, ":",
                                            hived::CellStateName(c.state), ":", c.priority));
                walk(c.children, out);
              }
            };
    walk(*a, &bound_a);
    walk(*b, &bound_b);
    CHECK(bound_a == bound_b);
  }
  // The same next decision on both.
  const GroupRequest next = Req("next", "v2", 0, 1, 8);
  auto ra = s->Schedule(next, Phase::kFiltering);
  auto rb = (*r)->Schedule(next, Phase::kFiltering);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(ra->outcome == rb->outcome);
  REQUIRE(ra->placement.pods.size() == rb->placement.pods.size());
  CHECK(ra->placement.pods[0].node == rb->placement.pods[0].node);
}

TEST_CASE("SaveState: preempting groups are not persisted, their victims are saved running",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("low", "v2", 0, 2, 8));
  auto res = s->Schedule(Req("high", "v2", 5, 1, 8), Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPreempting);
  CHECK(s->GetGroup("low").state == GroupState::kBeingPreempted);
  const std::string state = Save(*s);
  CHECK_FALSE(absl::StrContains(state, "\"high\""));
  CHECK(absl::StrContains(state, R"("name":"low","virtualCluster":"v2","priority":0,)"));
  CHECK(absl::StrContains(state, R"("state":"allocated")"));
  auto r = Scheduler::Restore(spec, state);
  REQUIRE(r.ok());
  CHECK((*r)->GetGroup("low").state == GroupState::kAllocated);
  CHECK((*r)->GetGroup("high").state == GroupState::kAbsent);
  // The manager schedules the preemptor again: the same victims.
  auto again = (*r)->Schedule(Req("high", "v2", 5, 1, 8), Phase::kPreempting);
  REQUIRE(again.ok());
  CHECK(again->outcome == Outcome::kPreempting);
  CHECK(again->victims == std::vector<std::string>{"low"});
}

// Regression (found by the persistence property test): an opportunistic victim kept naming
// its preemptor after the preemption was cancelled, although only a lazily downgraded group
// names one while it is not being preempted (GroupStatus::preemptor).
TEST_CASE("CancelPreemption: an opportunistic victim no longer names the preemptor",
          "[persistence][regression]") {
  std::unique_ptr<Scheduler> s = New(TwoRacks());
  // Fill the cluster's nodes with opportunistic work, so a guaranteed group must preempt.
  for (int i = 0; i < 8; ++i) Run(*s, Req(absl::StrCat("opp", i), "v4", -1, 1, 8));
  auto res = s->Schedule(Req("high", "v1", 0, 1, 8), Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPreempting);
  REQUIRE(res->victims.size() == 1);
  const std::string victim = res->victims[0];
  CHECK(s->GetGroup(victim).preemptor == "high");
  REQUIRE(s->CancelPreemption("high").ok());
  CHECK(s->GetGroup(victim).state == GroupState::kOpportunistic);
  CHECK(s->GetGroup(victim).preemptor.empty());
}

TEST_CASE("Restore: a recorded downgrade is kept with its reason and original priority",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  GroupRequest low = Req("low", "v2", 1, 2, 8);
  low.lazy_preemption = true;
  Run(*s, low);
  auto res = s->Schedule(Req("high", "v2", 2, 1, 8), Phase::kPreempting);
  REQUIRE(res.ok());
  const std::string state = Save(*s);
  RestoreReport report;
  auto r = Scheduler::Restore(spec, state, &report);
  REQUIRE(r.ok());
  CHECK(Save(**r) == state);
  const hived::GroupStatus st = (*r)->GetGroup("low");
  CHECK(st.state == GroupState::kOpportunistic);
  CHECK(st.request.priority == 1);
  CHECK(st.downgrade_reason == s->GetGroup("low").downgrade_reason);
  REQUIRE(report.groups.size() == 1);
  CHECK(report.groups[0].outcome == RestoreOutcome::kKept);  // it ran opportunistic before
}

TEST_CASE("Restore: bad documents are located errors", "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("a", "v1", 0, 1, 8));
  Run(*s, Req("b", "v1", 0, 1, 8));
  const std::string state = Save(*s);

  CHECK_THAT(ErrorOf(spec, absl::StrReplaceAll(state, {{"\"version\":2", "\"version\":4"}})),
             Catch::Contains("$.version: version 4 is not readable by this library (it reads "
                             "versions 1 to 3)"));
  CHECK_THAT(ErrorOf(spec, absl::StrReplaceAll(state, {{"\"version\":2", "\"version\":0"}})),
             Catch::Contains("$.version: version 0 is not readable"));
  CHECK_THAT(ErrorOf(spec, absl::StrReplaceAll(state, {{"hived.scheduler-state", "other"}})),
             Catch::Contains("$.schema: expected hived.scheduler-state, got other"));
  CHECK_THAT(ErrorOf(spec, state.substr(0, state.size() / 2)),
             Catch::Contains("saved state: malformed JSON at line 2"));
  CHECK_THAT(ErrorOf(spec, absl::StrReplaceAll(state, {{"\"name\":\"b\"", "\"name\":\"a\""}})),
             Catch::Contains("$.groups[1].name: duplicate group a (also at $.groups[0])"));
  const std::string node_a = s->GetGroup("a").placement.pods[0].node;
  CHECK_THAT(
      ErrorOf(spec, absl::StrReplaceAll(state, {{absl::StrCat("\"physicalNode\":\"", node_a, "\""),
                                                 "\"physicalNode\":7"}})),
      Catch::Contains("$.groups[0].placement.pods[0].physicalNode: expected a string, got number"));
  CHECK_THAT(ErrorOf(spec, "{\"schema\":\"hived.scheduler-state\",\"version\":1}"),
             Catch::Contains("$.groups: missing"));
  CHECK_THAT(ErrorOf(spec, "null"), Catch::Contains("$: expected an object, got null"));
}

}  // namespace
