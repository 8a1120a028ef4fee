// MIG and host groups in the saved state (docs/state-format.md, version 3): the records and
// placements name each MIG pod's instance; Restore rebuilds the layouts exactly and
// re-counts the nodes' CPU and memory; a document with overlapping or impossible MIG
// instances or with host groups over a node's capacity is refused with its JSON path; the
// checked-in version-3 document keeps loading as written; states without MIG or CPU-only
// groups are still written as version 2.
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "support/mig_host_cluster.h"
#include "unit/sharing/mig_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived::testdata {
namespace {

using V = std::vector<std::string>;

std::unique_ptr<Scheduler> MakeHost() {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(MigHostSpec());
  REQUIRE(s.ok());
  return std::move(*s);
}

GroupRequest CpuOnly(const std::string& name, int32_t pods, int64_t cpu) {
  GroupRequest r;
  r.name = name;
  r.vc = "VC1";
  r.priority = 0;
  GroupMember m;
  m.pod_number = pods;
  m.leaf_cell_number = 0;
  m.cpu_milli = cpu;
  r.members = {m};
  return r;
}

// A scheduler with a MIG GPU holding a 3g.20gb (a, at 4) and a 1g.5gb (b, at 0), a freed
// 2g.10gb's instance (at 2) left configured, a whole-GPU host group (h, 3000 CPU milli) and a
// CPU-only group (c, 2 x 1000).
std::unique_ptr<Scheduler> Populated() {
  auto s = MakeHost();
  REQUIRE(Run(*s, Mig("a", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("b", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("f", "VC1", 0, "2g.10gb")) == Outcome::kPlaced);
  REQUIRE(s->Release("f").ok());  // its instance stays configured, free
  GroupRequest h = Whole("h", "VC1", 0, 1, "V100");
  h.members[0].cpu_milli = 3000;
  REQUIRE(Run(*s, h) == Outcome::kPlaced);
  REQUIRE(Run(*s, CpuOnly("c", 2, 1000)) == Outcome::kPlaced);
  REQUIRE(s->CheckInvariants().ok());
  return s;
}

std::string Placed(Scheduler& s, const std::string& group) {
  const GroupStatus g = s.GetGroup(group);
  REQUIRE(g.placement.pods.size() == 1);
  return g.placement.pods[0].mig_profile + "@" + std::to_string(g.placement.pods[0].mig_start);
}

TEST_CASE("MIG placements name the instance, records and SaveState hold MIG and host groups",
          "[persistence][mig]") {
  auto s = Populated();
  // The placement names the instance the views show.
  const std::string gpu = GpuOf(*s, "a");
  CHECK(GpuOf(*s, "b") == gpu);
  CHECK(MigInstances(*s) == V{gpu + ":1g.5gb@0=b", gpu + ":2g.10gb@2=-", gpu + ":3g.20gb@4=a"});
  CHECK(Placed(*s, "a") == "3g.20gb@4");
  CHECK(Placed(*s, "b") == "1g.5gb@0");
  CHECK(s->GetGroup("h").placement.pods[0].mig_start == -1);
  // Records: the MIG profile and start, a host group's CPU.
  absl::StatusOr<GroupRecord> a = s->GetGroupRecord("a");
  REQUIRE(a.ok());
  CHECK(absl::StrContains(GroupRecordToJson(*a), R"("migProfile":"3g.20gb")"));
  CHECK(absl::StrContains(GroupRecordToJson(*a), R"("migStart":4)"));
  absl::StatusOr<GroupRecord> rec = GroupRecordFromJson(GroupRecordToJson(*a));
  REQUIRE(rec.ok());
  CHECK(rec->placement.pods[0].mig_profile == "3g.20gb");
  CHECK(rec->placement.pods[0].mig_start == 4);
  absl::StatusOr<GroupRecord> h = s->GetGroupRecord("h");
  REQUIRE(h.ok());
  CHECK(h->request.members[0].cpu_milli == 3000);
  absl::StatusOr<GroupRecord> c = s->GetGroupRecord("c");
  REQUIRE(c.ok());
  CHECK(c->request.members[0].leaf_cell_number == 0);

  absl::StatusOr<std::string> state = s->SaveState();
  REQUIRE(state.ok());
  CHECK(absl::StrContains(*state, R"("version":3,)"));
  CHECK(absl::StrContains(*state, R"("migLayouts":[)"));
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(MigHostSpec(), *state, &report);
  REQUIRE(r.ok());
  for (const RestoreReport::Group& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kKept);
  }
  REQUIRE((*r)->CheckInvariants().ok());
  CHECK(MigInstances(**r) == MigInstances(*s));
  CHECK(Reconfigurations(**r) == Reconfigurations(*s));
  CHECK(*(*r)->SaveState() == *state);
  // The same next decision: a 2g.10gb reuses the free 2g@2 on both.
  REQUIRE(Run(*s, Mig("n", "VC1", 0, "2g.10gb")) == Outcome::kPlaced);
  REQUIRE(Run(**r, Mig("n", "VC1", 0, "2g.10gb")) == Outcome::kPlaced);
  CHECK(Placed(**r, "n") == "2g.10gb@2");
  CHECK(MigInstances(**r) == MigInstances(*s));
  // Host use re-counted: the V100 node had 3000 of 4000 CPU milli used by h, and c's pods
  // 1000 each on some node; a 1500-milli host pod cannot go to v0 on either.
  GroupRequest big = Whole("big", "VC1", 0, 1, "V100");
  big.members[0].cpu_milli = 1500;
  CHECK(Run(*s, big) == Run(**r, big));
  CHECK(*(*r)->SaveState() == *s->SaveState());
}

TEST_CASE("Restore refuses impossible MIG instances and host use, naming the JSON path",
          "[persistence][mig]") {
  auto s = Populated();
  const std::string state = *s->SaveState();
  auto refused = [&](const std::string& from, const std::string& to, const std::string& what,
                     ClusterSpec spec = MigHostSpec()) {
    const std::string bad = absl::StrReplaceAll(state, {{from, to}});
    REQUIRE(bad != state);
    absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(spec, bad);
    REQUIRE_FALSE(r.ok());
    INFO(r.status().message());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(r.status().message(), what));
  };
  const std::string layout = R"([["1g.5gb",0],["2g.10gb",2],["3g.20gb",4]])";
  REQUIRE(absl::StrContains(state, layout));
  // Overlapping instances in a saved layout (a 1g.5gb at 1 inside a 2g.10gb's slices 0..1).
  refused(layout, R"([["2g.10gb",0],["1g.5gb",1],["3g.20gb",4]])",
          "$.migLayouts[0]: GPU 0/m0/0: instance 1 (1g.5gb@1): overlaps");
  // A layout start the profile does not allow.
  refused(layout, R"([["1g.5gb",0],["2g.10gb",3],["3g.20gb",4]])",
          "3 is not an allowed start of profile 2g.10gb");
  // A layout profile the GPU type lacks.
  refused(layout, R"([["9g.90gb",0],["2g.10gb",2],["3g.20gb",4]])",
          "$.migLayouts[0].instances[0]: GPU 0/m0/0 (A100) has no MIG profile 9g.90gb");
  // Counters that cannot have made the layout.
  refused(R"("creations":3)", R"("creations":2)", "$.migLayouts[0]: GPU 0/m0/0: 2 creations");
  // A pod's start the profile does not allow (1g.5gb at 7: past its starts 0..6).
  refused(R"("physicalLeafCellIndices":[0],"migStart":0})",
          R"("physicalLeafCellIndices":[0],"migStart":7})",
          ".placement.pods[0].migStart: 7 is not an allowed start of profile 1g.5gb");
  // A pod's instance the saved layout does not have (b's 1g.5gb onto the free 2g's slices).
  refused(R"("physicalLeafCellIndices":[0],"migStart":0})",
          R"("physicalLeafCellIndices":[0],"migStart":2})",
          "the saved layout of GPU 0/m0/0 ($.migLayouts[0]) has no 1g.5gb instance at 2");
  // A member's profile the GPU type lacks.
  refused(R"("migProfile":"1g.5gb")", R"("migProfile":"1g.6gb")", ".members[0].migProfile: GPU m");
  // Host groups over a node's CPU: h's 3000 milli made 5000 on the 4000-milli V100 node.
  refused(R"("cpuMilli":3000)", R"("cpuMilli":5000)", "node v0: the saved host groups use 5000");
  refused(R"("cpuMilli":3000)", R"("cpuMilli":5000)", "$.groups[");
}

TEST_CASE("Restore without saved layouts: MIG pods overlapping each other are refused",
          "[persistence][mig]") {
  auto s = MakeHost();
  REQUIRE(Run(*s, Mig("a", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("b", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "a") == GpuOf(*s, "b"));
  std::string state = *s->SaveState();
  // Drop the layouts: the pods' records alone must still not overlap.
  const size_t from = state.find(R"("migLayouts":[)");
  const size_t to = state.find(R"("bindings":)");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  state.erase(from, to - from);
  {
    RestoreReport report;
    absl::StatusOr<std::unique_ptr<Scheduler>> r =
        Scheduler::Restore(MigHostSpec(), state, &report);
    REQUIRE(r.ok());  // the instances are created where the records say
    REQUIRE((*r)->CheckInvariants().ok());
    CHECK(MigInstances(**r) == MigInstances(*s));
  }
  const std::string bad = absl::StrReplaceAll(state, {{R"("migStart":4)", R"("migStart":0)"}});
  REQUIRE(bad != state);
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(MigHostSpec(), bad);
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(absl::StrContains(r.status().message(), "$.groups[1].placement.pods[0].migStart"));
  CHECK(absl::StrContains(r.status().message(), "used by $.groups[0].placement.pods[0]"));
}

TEST_CASE("MIG keys are refused in version 2 documents, states without them stay version 2",
          "[persistence][mig]") {
  auto s = MakeHost();
  GroupRequest h = Whole("h", "VC1", 0, 1, "V100");
  REQUIRE(Run(*s, h) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("f", "VC1", 0, 300, {"V100"})) == Outcome::kPlaced);
  const std::string v2 = *s->SaveState();
  CHECK(absl::StrContains(v2, R"("version":2,)"));
  auto a = Populated();
  const std::string v3 = *a->SaveState();
  const std::string as_v2 = absl::StrReplaceAll(v3, {{R"("version":3,)", R"("version":2,)"}});
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(MigHostSpec(), as_v2);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::StrContains(r.status().message(), "new in version 3"));
}

TEST_CASE("the checked-in version-3 state keeps loading as written", "[persistence][mig]") {
  // Written by this library (Populated() above, saved): MIG groups and a free configured
  // instance, a whole-GPU host group and a CPU-only group.
  std::ifstream in(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/state/state-v3-mig-host.json");
  REQUIRE(in.good());
  const std::string v3((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(absl::StrContains(v3, R"("version":3,)"));
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(MigHostSpec(), v3, &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  REQUIRE(report.groups.size() >= 5);
  for (const RestoreReport::Group& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kKept);
  }
  CHECK(report.notes.empty());
  CHECK(Placed(**r, "a") == "3g.20gb@4");
  CHECK(Placed(**r, "b") == "1g.5gb@0");
  CHECK((*r)->GetGroup("c").state == GroupState::kAllocated);
  CHECK(*(*r)->SaveState() == v3);
}

// Regression: replaying a CPU-only group's record (AllocateRecord, Restore) looked the group
// up among the scheduler's whole groups, where it is not (an index out of range).
TEST_CASE("AllocateRecord replays a CPU-only record, a downgraded one is refused",
          "[persistence][hosts]") {
  auto s = MakeHost();
  REQUIRE(Run(*s, CpuOnly("c", 2, 1000)) == Outcome::kPlaced);
  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("c");
  REQUIRE(rec.ok());
  auto t = MakeHost();
  REQUIRE(t->AllocateRecord(*rec).ok());
  REQUIRE(t->CheckInvariants().ok());
  CHECK(t->GetGroup("c").state == GroupState::kAllocated);
  CHECK(GroupRecordToJson(*t->GetGroupRecord("c")) == GroupRecordToJson(*rec));
  GroupRecord downgraded = *rec;
  downgraded.request.name = "d";
  downgraded.state = GroupState::kOpportunistic;
  absl::StatusOr<AllocateInfo> info = t->AllocateRecord(downgraded);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(info.status().message(), "a CPU-only group runs as asked"));
  CHECK(t->GetGroup("d").state == GroupState::kAbsent);
  REQUIRE(t->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::testdata
