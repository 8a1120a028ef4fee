// Persistence (issue 12 items 1 and 2): GroupRecord JSON, SaveState / Restore with the
// per-group report, the full request in GroupStatus, and bad input (located errors).
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

namespace {

using hived::GroupRecord;
using hived::GroupRequest;
using hived::GroupState;
using hived::Outcome;
using hived::Phase;
using hived::RestoreOutcome;
using hived::RestoreReport;
using hived::Scheduler;

// 2 racks x 4 nodes x 8 GPUs; v1 a rack, v2 two nodes, v3 a pinned node + a socket, v4 a
// socket (tests/testdata/sched-two-racks-4vc.yaml).
std::string TwoRacksPath() {
  return std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-two-racks-4vc.yaml";
}

hived::ClusterSpec TwoRacks() {
  auto spec = hived::LoadClusterSpecFile(TwoRacksPath());
  REQUIRE(spec.ok());
  return *spec;
}

std::unique_ptr<Scheduler> New(const hived::ClusterSpec& spec) {
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

GroupRequest Req(const std::string& name, const std::string& vc, int priority, int pods,
                 int leaves) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.priority = priority;
  r.members = {{pods, leaves}};
  return r;
}

// A group in v3's pinned node.
GroupRequest PinnedReq(int priority, int pods, int leaves) {
  GroupRequest r = Req("pinned", "v3", priority, pods, leaves);
  r.pinned_cell_id = "v3-pin";
  return r;
}

// Schedules and allocates; REQUIREs kPlaced.
void Run(Scheduler& s, const GroupRequest& r) {
  auto res = s.Schedule(r, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  REQUIRE(s.Allocate(r, res->placement).ok());
}

// Two whole nodes of v2, the first released: `b` runs on v2's second virtual node, where
// HiveD's recovery rule alone (without the recorded virtual cells) would bind the first.
void RunOnSecondNode(Scheduler& s) {
  Run(s, Req("a", "v2", 0, 1, 8));
  Run(s, Req("b", "v2", 0, 1, 8));
  REQUIRE(s.Release("a").ok());
}

std::string Save(const Scheduler& s) {
  absl::StatusOr<std::string> state = s.SaveState();
  REQUIRE(state.ok());
  return *state;
}

std::string ErrorOf(const hived::ClusterSpec& spec, const std::string& state) {
  auto restored = Scheduler::Restore(spec, state);
  REQUIRE_FALSE(restored.ok());
  CHECK(restored.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(restored.status().message());
}

GroupRecord FullRecord() {
  GroupRecord rec;
  rec.request.name = "job-7";
  rec.request.vc = "v3";
  rec.request.priority = 5;
  rec.request.leaf_cell_type = "GPU";
  rec.request.pinned_cell_id = "v3-pin";
  rec.request.lazy_preemption = true;
  rec.request.members = {{1, 2}, {2, 1}};
  rec.state = GroupState::kOpportunistic;
  rec.downgrade_reason = "lazily preempted by group big \"one\"";
  rec.preemptor = "big";
  rec.placement.chain = "GRACK";
  rec.placement.pods = {{1, "r0n2", {0}, {"GSOCKET"}},
                        {1, "r0n2", {1}, {"GSOCKET"}},
                        {2, "r0n2", {2, 3}, {"GSOCKET", ""}}};
  rec.virtual_leaf_cells = {"v3/1/0", "v3/1/1", "v3/1/2", ""};
  return rec;
}

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

TEST_CASE("Restore: a changed cluster or corrupted records give a per-group report",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("a", "v1", 0, 1, 8));
  Run(*s, Req("b", "v2", 0, 1, 8));
  Run(*s, Req("c", "v1", 0, 1, 4));
  Run(*s, Req("d", "v4", -1, 1, 1));
  const std::string state = Save(*s);
  const hived::GroupStatus a = s->GetGroup("a");
  const hived::GroupStatus b = s->GetGroup("b");
  const hived::GroupStatus c = s->GetGroup("c");

  // a: its node no longer exists; b: its VC no longer exists; c: a corrupted leaf index
  // lands on a's leaves... rather on d's leaf; d: kept.
  std::string changed = absl::StrReplaceAll(
      state, {{absl::StrCat("\"physicalNode\":\"", a.placement.pods[0].node, "\""),
               "\"physicalNode\":\"gone\""},
              {"\"virtualCluster\":\"v2\"", "\"virtualCluster\":\"v9\""}});
  RestoreReport report;
  auto r = Scheduler::Restore(spec, changed, &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  REQUIRE(report.groups.size() == 4);
  CHECK(report.groups[0].name == "a");
  // Every leaf of `a` is on the gone node: dropped, never a group on a node that does not
  // exist (issue 29; it was kPartial holding nothing).
  CHECK(report.groups[0].outcome == RestoreOutcome::kDropped);
  CHECK_THAT(report.groups[0].reason, Catch::Contains("none of its leaf cells is in the cluster"));
  CHECK_THAT(report.groups[0].reason, Catch::Contains("gone:"));
  CHECK((*r)->GetGroup("a").state == GroupState::kAbsent);
  CHECK(report.groups[1].name == "b");
  CHECK(report.groups[1].outcome == RestoreOutcome::kDowngraded);
  CHECK_THAT(report.groups[1].reason, Catch::Contains("VC v9 does not exist"));
  CHECK((*r)->GetGroup("b").state == GroupState::kOpportunistic);
  CHECK(report.groups[2].outcome == RestoreOutcome::kKept);
  CHECK(report.groups[3].outcome == RestoreOutcome::kKept);

  // Two records on the same leaves: the second is dropped, with the reason; nothing lost
  // silently.
  const std::string clash = absl::StrReplaceAll(
      state, {{absl::StrCat("\"physicalNode\":\"", c.placement.pods[0].node, "\""),
               absl::StrCat("\"physicalNode\":\"", b.placement.pods[0].node, "\"")}});
  report = RestoreReport();
  r = Scheduler::Restore(spec, clash, &report);
  REQUIRE(r.ok());
  REQUIRE(report.groups.size() == 4);
  CHECK(report.groups[2].name == "c");
  CHECK(report.groups[2].outcome == RestoreOutcome::kDropped);
  CHECK_THAT(report.groups[2].reason, Catch::Contains("used by group b"));
  CHECK((*r)->GetGroup("c").state == GroupState::kAbsent);

  // A bad node the cluster no longer has is reported; an unknown virtual cell is ignored
  // (recovery picks one, as for HiveD's records).
  REQUIRE(s->SetNodeHealthy("r1n3", false).ok());
  std::string odd =
      absl::StrReplaceAll(Save(*s), {{"\"r1n3\"", "\"r9n9\""}, {"\"v1/0/", "\"v1/7/"}});
  report = RestoreReport();
  r = Scheduler::Restore(spec, odd, &report);
  REQUIRE(r.ok());
  CHECK(report.unknown_nodes == std::vector<std::string>{"r9n9"});
  for (const auto& g : report.groups) CHECK(g.outcome == RestoreOutcome::kKept);
}

TEST_CASE("Restore: saved bindings apply only to the same cluster structure",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  // A group in v3's pinned node binds cells there that stay bound after it ends.
  GroupRequest pinned = PinnedReq(0, 1, 2);
  Run(*s, pinned);
  Run(*s, Req("a", "v1", 0, 1, 8));
  REQUIRE(s->Release("pinned").ok());
  const std::string state = Save(*s);
  REQUIRE(absl::StrContains(state, R"({"virtualCell":"v3/1/)"));

  // A corrupted binding is skipped with its path; the rest is restored.
  RestoreReport report;
  auto r = Scheduler::Restore(
      spec,
      absl::StrReplaceAll(state, {{R"({"virtualCell":"v3/1/0",)", R"({"virtualCell":"v3/9/0",)"}}),
      &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  REQUIRE_FALSE(report.notes.empty());
  CHECK_THAT(report.notes[0],
             Catch::Matches(R"(\$\.bindings\[\d+\]: no virtual cell v3/9/0; skipped)"));

  // Another structure (a node renamed): the bindings are skipped, the groups recovered.
  std::ifstream in(TwoRacksPath());
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto renamed = hived::LoadClusterSpecString(absl::StrReplaceAll(yaml, {{"r1n3", "r1n9"}}));
  REQUIRE(renamed.ok());
  report = RestoreReport();
  // Strict restore (issue 29): refused unless asked for, then reported.
  CHECK(Scheduler::Restore(*renamed, state).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  r = Scheduler::Restore(*renamed, state, &report,
                         hived::RestoreOptions{hived::SpecMismatch::kRestoreAnyway});
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  CHECK(report.spec_match == hived::SpecMatch::kDifferent);
  REQUIRE(report.notes.size() == 2);
  CHECK_THAT(report.notes[0], Catch::StartsWith("$.config: saved on another cluster"));
  CHECK_THAT(report.notes[1], Catch::StartsWith("$.config: the cluster's cells or VCs changed"));
  REQUIRE(report.groups.size() == 1);
  CHECK(report.groups[0].outcome == RestoreOutcome::kKept);
  CHECK((*r)->GetGroup("a").state == GroupState::kAllocated);
}

TEST_CASE("GetGroupRecord / AllocateRecord: per-job records keep the virtual cells",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  RunOnSecondNode(*s);
  auto record = s->GetGroupRecord("b");
  REQUIRE(record.ok());
  REQUIRE(record->virtual_leaf_cells.size() == 8);
  CHECK(record->virtual_leaf_cells[0].rfind("v2/1/", 0) == 0);
  auto json = hived::GroupRecordFromJson(hived::GroupRecordToJson(*record));
  REQUIRE(json.ok());

  auto with = Scheduler::Create(spec);
  auto without = Scheduler::Create(spec);
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  auto info = (*with)->AllocateRecord(*json);
  REQUIRE(info.ok());
  CHECK_FALSE(info->downgraded);
  REQUIRE((*without)->Recover(json->request, json->placement).ok());
  auto bound = [](const Scheduler& x) {
    auto cells = x.VirtualCluster("v2");
    REQUIRE(cells.ok());
    return (*cells)[0].physical_cell + "|" + (*cells)[1].physical_cell;
  };
  CHECK(bound(**with) == bound(*s));
  CHECK(bound(**without) != bound(*s));
  CHECK(hived::GroupRecordToJson(*(*with)->GetGroupRecord("b")) ==
        hived::GroupRecordToJson(*record));

  CHECK(s->GetGroupRecord("nobody").status().code() == absl::StatusCode::kNotFound);
  auto res = s->Schedule(Req("high", "v2", 5, 2, 8), Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPreempting);
  CHECK(s->GetGroupRecord("high").status().code() == absl::StatusCode::kFailedPrecondition);
}

// Hostile input: a rich saved state (pinned bindings, bad nodes, doomed cells, a lazily
// downgraded group) mutated at random. Restore never crashes; what it accepts is a
// consistent scheduler.
TEST_CASE("Restore: mutated documents never crash and never break an invariant",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  GroupRequest pinned = PinnedReq(0, 1, 2);
  Run(*s, pinned);
  GroupRequest lazy = Req("lazy", "v2", 1, 1, 8);
  lazy.lazy_preemption = true;
  Run(*s, lazy);
  Run(*s, Req("a", "v1", 0, 2, 4));
  Run(*s, Req("o", "v4", -1, 1, 2));
  REQUIRE(s->Schedule(Req("high", "v2", 2, 2, 8), Phase::kPreempting).ok());
  REQUIRE(s->Release("pinned").ok());
  for (const char* node : {"r0n0", "r0n1", "r1n2", "r1n3"}) {
    REQUIRE(s->SetNodeHealthy(node, false).ok());
  }
  const std::string state = Save(*s);
  REQUIRE(absl::StrContains(state, "\"bad\":true"));
  {
    // `high` was Preempting: its reservation is not persisted, so v2's cells it held are
    // free after the restore and v2 needs a doomed cell. The restored state is then a fixed
    // point.
    auto r = Scheduler::Restore(spec, state);
    REQUIRE(r.ok());
    const std::string once = Save(**r);
    CHECK(once != state);
    CHECK(absl::StrContains(once, R"("doomedCells":["v2/0","v3/0","v4/0"])"));
    auto r2 = Scheduler::Restore(spec, once);
    REQUIRE(r2.ok());
    REQUIRE(Save(**r2) == once);
  }
  std::mt19937_64 rng(12);
  const std::string alphabet = "0123456789-v/r\"[]{},:abnt ";
  int accepted = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::string doc = hived::testing::Mutate(state, alphabet, rng);
    CAPTURE(doc);
    RestoreReport report;
    auto r = Scheduler::Restore(spec, doc, &report,
                                hived::RestoreOptions{hived::SpecMismatch::kRestoreAnyway});
    if (!r.ok()) {
      CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++accepted;
    REQUIRE((*r)->CheckInvariants().ok());
  }
  CHECK(accepted > 50);  // not vacuous: many mutations still parse
}

// Regression: nlohmann-json throws on strings that are not UTF-8 when writing; a caller's
// group name must not make SaveState throw.
TEST_CASE("SaveState: names that are not UTF-8 are written with U+FFFD", "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("job\xff", "v1", 0, 1, 1));
  const std::string state = Save(*s);
  CHECK(absl::StrContains(state, "\"name\":\"job\xef\xbf\xbd\""));
  auto r = Scheduler::Restore(spec, state);
  REQUIRE(r.ok());
  CHECK(r.value()->GetGroup("job\xef\xbf\xbd").state == GroupState::kAllocated);
  CHECK(absl::StrContains(hived::GroupRecordToJson(*s->GetGroupRecord("job\xff")),
                          "job\xef\xbf\xbd"));
}

// The issue's example: a corrupted persisted placement (leaf index 99) must not shrink the
// job silently.
TEST_CASE("Restore: a leaf index the node does not have is reported", "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("job", "v1", 0, 1, 2));
  const hived::GroupStatus job = s->GetGroup("job");
  const std::string state = Save(*s);
  const std::string indices = absl::StrCat("[", job.placement.pods[0].leaf_cell_indices[0], ",",
                                           job.placement.pods[0].leaf_cell_indices[1], "]");
  REQUIRE(absl::StrContains(state, indices));
  RestoreReport report;
  auto r = Scheduler::Restore(
      spec,
      absl::StrReplaceAll(
          state,
          {{indices, absl::StrCat("[", job.placement.pods[0].leaf_cell_indices[0], ",99]")}}),
      &report);
  REQUIRE(r.ok());
  REQUIRE(report.groups.size() == 1);
  CHECK(report.groups[0].outcome == RestoreOutcome::kPartial);
  CHECK_THAT(report.groups[0].reason, Catch::Contains(job.placement.pods[0].node + ":99"));
  REQUIRE(r.value()->CheckInvariants().ok());
}

// The same corruption replayed per job (AllocateRecord, Recover) is an invalid placement:
// kInvalidArgument naming the group and pod, nothing allocated.
TEST_CASE("AllocateRecord / Recover: a leaf index the node does not have is kInvalidArgument",
          "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  Run(*s, Req("job", "v1", 0, 1, 2));
  auto record = s->GetGroupRecord("job");
  REQUIRE(record.ok());
  record->placement.pods[0].leaf_cell_indices[1] = 99;
  std::unique_ptr<Scheduler> fresh = New(spec);
  for (int how = 0; how < 2; ++how) {
    auto info = how == 0 ? fresh->AllocateRecord(*record)
                         : fresh->Recover(record->request, record->placement);
    CHECK(info.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(info.status().message()),
               Catch::Contains("group job, pod 0 on node " + record->placement.pods[0].node +
                               ": leaf cell 99 is not in the cluster"));
  }
  CHECK(fresh->Groups().empty());
  REQUIRE(fresh->CheckInvariants().ok());
}

TEST_CASE("Restore: an empty scheduler round-trips", "[persistence][unit]") {
  const hived::ClusterSpec spec = TwoRacks();
  std::unique_ptr<Scheduler> s = New(spec);
  const std::string state = Save(*s);
  CHECK_THAT(
      state,
      Catch::Matches(
          R"(\{"schema":"hived.scheduler-state","version":2,"config":"[0-9a-f]{16}","badNodes":\[\],"doomedCells":\[\],"groups":\[\],"bindings":\[\]\}\n)"));
  auto r = Scheduler::Restore(spec, state);
  REQUIRE(r.ok());
  CHECK(Save(**r) == state);
}

}  // namespace
