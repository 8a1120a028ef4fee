// Restore of saved states and per-group records through the public API (persistence_test.cc's
// helpers): changed clusters, corrupted and mutated documents, and round trips.
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
