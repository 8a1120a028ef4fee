// Persistence of GPU sharing (docs/state-format.md version 2, docs/gpu-sharing.md): fractional
// groups, their holders and shares in SaveState / Restore and in group records; a restore
// into a changed cluster (a GPU gone, a node with less CPU); a version-1 document written
// before sharing; and the rule that a share reserved on an open GPU is never a victim.
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/persistence/mutate.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;
using testdata::Make;
using testdata::OpenLeaves;
using testdata::Run;
using testdata::Whole;

ClusterSpec SpecOf(const std::string& yaml) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(yaml, "sharing.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

// Every share a client can see: per open GPU its holder, used milli and memory, sharers.
void Shares(const PhysicalCellStatus& c, std::string* out) {
  if (!c.sharing_holder.empty()) {
    absl::StrAppend(out, c.address, " ", c.sharing_holder, " ", c.shared_milli, " ",
                    c.shared_gpu_memory_mib, " [");
    for (const std::string& g : c.sharers) absl::StrAppend(out, g, " ");
    absl::StrAppend(out, "]\n");
  }
  for (const PhysicalCellStatus& k : c.children) Shares(k, out);
}

std::string Observed(const Scheduler& s) {
  std::string out = *s.SaveState();
  for (const GroupStatus& g : s.Groups()) {
    absl::StrAppend(&out, g.name, " ", GroupStateName(g.state), " ", g.vc, " ", g.priority, " ");
    for (const PodPlacement& p : g.placement.pods) {
      absl::StrAppend(&out, p.node, ":", p.leaf_cell_indices[0], " ");
    }
    absl::StrAppend(&out, "\n");
  }
  for (const PhysicalCellStatus& c : s.PhysicalCluster()) Shares(c, &out);
  return out;
}

GroupRequest WithHost(GroupRequest r, int64_t cpu, int64_t memory) {
  for (GroupMember& m : r.members) {
    m.cpu_milli = cpu;
    m.memory_mib = memory;
  }
  return r;
}

// Guaranteed shares of two VCs and priorities, opportunistic guests on a protected GPU, a
// gang, GB shares with GPU memory, CPU and host memory, and a whole group.
std::unique_ptr<Scheduler> Busy() {
  auto s = Make();
  REQUIRE(Run(*s, Frac("f1", "VC1", 0, 500)) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("f2", "VC1", 0, 300)) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("p1", "VC1", 1, 200)) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("v2", "VC2", 0, 700, {"GA"}, 2)) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("o1", "VC2", -1, 200)) == Outcome::kPlaced);  // a guest on f1's GPU
  GroupRequest gb = WithHost(Frac("gb", "VC1", 0, 400, {"GB"}, 2), 1500, 8000);
  gb.members[0].gpu_memory_mib = 3000;
  REQUIRE(Run(*s, gb) == Outcome::kPlaced);
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 1, "GA")) == Outcome::kPlaced);
  REQUIRE(Run(*s, WithHost(Frac("cpu", "VC2", 0, 100), 6000, 0)) == Outcome::kPlaced);
  return s;
}

TEST_CASE("Restore brings back the same shares on the same GPUs, holders, VCs and priorities",
          "[persistence][sharing]") {
  auto s = Busy();
  const std::string state = *s->SaveState();
  CHECK(absl::StrContains(state, R"("version":2,)"));
  CHECK(absl::StrContains(state, R"("nextShareHolder":)"));
  CHECK(absl::StrContains(state, R"("gpuMilli":400,"gpuMemoryMiB":3000,"cpuMilli":1500,)"));
  CHECK(absl::StrContains(state, R"("leafCellTypes":["GB"])"));
  CHECK(absl::StrContains(state, R"({"name":"hived-share/0",)"));
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> r =
      Scheduler::Restore(SpecOf(testdata::kSharingYaml), state, &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  for (const RestoreReport::Group& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kKept);
  }
  REQUIRE(Observed(**r) == Observed(*s));
  // Further decisions (a new holder's name included) are the saved scheduler's.
  for (const GroupRequest& next : {Frac("n1", "VC1", 0, 900), Frac("n2", "VC2", -1, 600, {"GA"}, 3),
                                   Frac("n3", "VC1", 0, 600, {"GB"})}) {
    ScheduleResult a;
    ScheduleResult b;
    CAPTURE(next.name);
    REQUIRE(Run(*s, next, &a) == Run(**r, next, &b));
    REQUIRE(a.placement.pods.size() == b.placement.pods.size());
    REQUIRE(Observed(**r) == Observed(*s));
  }
  REQUIRE(s->Release("f1").ok());
  REQUIRE((*r)->Release("f1").ok());
  REQUIRE(Observed(**r) == Observed(*s));
}

TEST_CASE("reserved and preempting fractional groups are not saved, as whole ones",
          "[persistence][sharing]") {
  auto s = Busy();
  absl::StatusOr<ScheduleResult> kept = s->Schedule(Frac("res", "VC1", 0, 100), Phase::kPreempting);
  REQUIRE(kept.ok());
  REQUIRE(kept->outcome == Outcome::kPlaced);  // reserved on an open GPU
  REQUIRE(s->GetGroup("res").state == GroupState::kReserved);
  CHECK(s->GetGroupRecord("res").status().code() == absl::StatusCode::kFailedPrecondition);
  const std::string state = *s->SaveState();
  CHECK_FALSE(absl::StrContains(state, R"("name":"res")"));
  absl::StatusOr<std::unique_ptr<Scheduler>> r =
      Scheduler::Restore(SpecOf(testdata::kSharingYaml), state);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  CHECK((*r)->GetGroup("res").state == GroupState::kAbsent);
  REQUIRE(s->Unreserve("res").ok());
  REQUIRE(Observed(**r) == Observed(*s));
}

TEST_CASE("a fractional group's record round-trips through JSON and AllocateRecord",
          "[persistence][sharing]") {
  auto s = Busy();
  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("gb");
  REQUIRE(rec.ok());
  CHECK(rec->state == GroupState::kAllocated);
  CHECK(rec->request.members[0].gpu_memory_mib == 3000);
  const std::string json = GroupRecordToJson(*rec);
  absl::StatusOr<GroupRecord> back = GroupRecordFromJson(json);
  REQUIRE(back.ok());
  REQUIRE(GroupRecordToJson(*back) == json);
  // Holders have no record of their own (they are saved with SaveState only).
  CHECK(s->GetGroupRecord("hived-share/0").status().code() ==
        absl::StatusCode::kFailedPrecondition);

  auto fresh = Make();
  absl::StatusOr<AllocateInfo> info = fresh->AllocateRecord(*back);
  INFO(info.status().message());
  REQUIRE(info.ok());
  REQUIRE(fresh->CheckInvariants().ok());
  const GroupStatus g = fresh->GetGroup("gb");
  CHECK(g.state == GroupState::kAllocated);
  CHECK(g.placement.pods.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(g.placement.pods[i].node == rec->placement.pods[i].node);
    CHECK(g.placement.pods[i].leaf_cell_indices == rec->placement.pods[i].leaf_cell_indices);
  }
  REQUIRE(fresh->GetGroupRecord("gb").ok());
  CHECK(GroupRecordToJson(*fresh->GetGroupRecord("gb")) == json);
  // Strict: a GPU the cluster does not have is kInvalidArgument, nothing placed.
  GroupRecord nowhere = *back;
  nowhere.request.name = "gb2";
  nowhere.placement.pods[0].leaf_cell_indices = {7};
  CHECK(fresh->AllocateRecord(nowhere).status().code() == absl::StatusCode::kInvalidArgument);
  // A fractional record runs as asked: a guaranteed request saved opportunistic is refused.
  GroupRecord wrong = *back;
  wrong.request.name = "gb3";
  wrong.state = GroupState::kOpportunistic;
  CHECK(fresh->AllocateRecord(wrong).status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(fresh->CheckInvariants().ok());
}

TEST_CASE("a restore into a changed cluster skips the shares it cannot account, reported",
          "[persistence][sharing]") {
  auto s = Busy();
  const std::string state = *s->SaveState();
  const GroupStatus gb = s->GetGroup("gb");
  REQUIRE(gb.placement.pods[0].node == "b0");

  SECTION("a GPU gone: its holder keeps its other GPUs, the pods on it are skipped") {
    // b0 keeps one GPU of two: gb's second pod (on b0/1) and the holder's leaf b0/1 go.
    std::string yaml = absl::StrReplaceAll(testdata::kSharingYaml,
                                           {{"      childCellType: GB\n      childCellNumber: 2",
                                             "      childCellType: GB\n      childCellNumber: 1"}});
    REQUIRE(gb.placement.pods[1].leaf_cell_indices[0] == 1);
    RestoreReport report;
    absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(
        SpecOf(yaml), state, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
    REQUIRE(r.ok());
    REQUIRE((*r)->CheckInvariants().ok());
    int partial = 0;
    for (const RestoreReport::Group& g : report.groups) {
      CAPTURE(g.name, g.reason);
      if (g.name == "gb") {
        CHECK(g.outcome == RestoreOutcome::kPartial);
        CHECK_THAT(g.reason, Catch::Contains("pod 1 on b0:1: the cluster has no such GPU"));
        ++partial;
      } else if (g.outcome == RestoreOutcome::kPartial) {  // the GB holder
        CHECK(absl::StartsWith(g.name, "hived-share/"));
        CHECK_THAT(g.reason, Catch::Contains("b0:1"));
        ++partial;
      } else {
        CHECK(g.outcome == RestoreOutcome::kKept);
      }
    }
    CHECK(partial == 2);
    // The group runs with the pod it still has; its record is kept whole (saved again as
    // it was, so a later restore into the full cluster accounts it again).
    CHECK((*r)->GetGroup("gb").placement.pods.size() == 2);
    const std::vector<std::string> open = OpenLeaves(**r);
    CHECK(std::find(open.begin(), open.end(), "b0/0:400") != open.end());
    REQUIRE((*r)->Release("gb").ok());
    REQUIRE((*r)->CheckInvariants().ok());
  }

  SECTION("a node with less CPU: the pods beyond it are skipped, an empty holder released") {
    // `cpu` (6000 CPU milli on its node) no longer fits its node's 4000.
    const std::string node = s->GetGroup("cpu").placement.pods[0].node;
    std::string yaml = absl::StrReplaceAll(
        testdata::kSharingYaml, {{absl::StrCat("cellAddress: ", node, "\n      cpuMilli: 8000"),
                                  absl::StrCat("cellAddress: ", node, "\n      cpuMilli: 4000")}});
    REQUIRE(yaml != testdata::kSharingYaml);
    RestoreReport report;
    absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(SpecOf(yaml), state, &report);
    REQUIRE(r.ok());
    REQUIRE((*r)->CheckInvariants().ok());
    bool seen = false;
    for (const RestoreReport::Group& g : report.groups) {
      CAPTURE(g.name, g.reason);
      if (g.name == "cpu") {
        CHECK(g.outcome == RestoreOutcome::kPartial);
        CHECK_THAT(g.reason, Catch::Contains("the node lacks its CPU or host memory"));
        seen = true;
      } else if (g.outcome == RestoreOutcome::kDropped) {  // cpu's holder, now without shares
        CHECK(absl::StartsWith(g.name, "hived-share/"));
        CHECK_THAT(g.reason, Catch::Contains("released"));
        CHECK((*r)->GetGroup(g.name).state == GroupState::kAbsent);
      } else {
        CHECK(g.outcome == RestoreOutcome::kKept);
      }
    }
    CHECK(seen);
    // Saved again, the same document restores the same way (a fixed point).
    const std::string again = *(*r)->SaveState();
    absl::StatusOr<std::unique_ptr<Scheduler>> r2 = Scheduler::Restore(SpecOf(yaml), again);
    REQUIRE(r2.ok());
    REQUIRE((*r2)->CheckInvariants().ok());
    CHECK(*(*r2)->SaveState() == again);
  }

  SECTION("the VC of guaranteed shares gone: their holders downgrade, the shares are skipped") {
    ClusterSpec smaller = SpecOf(testdata::kSharingYaml);
    smaller.virtual_clusters.pop_back();  // VC2
    RestoreReport report;
    absl::StatusOr<std::unique_ptr<Scheduler>> r =
        Scheduler::Restore(smaller, state, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
    REQUIRE(r.ok());
    REQUIRE((*r)->CheckInvariants().ok());
    for (const RestoreReport::Group& g : report.groups) {
      CAPTURE(g.name, g.reason);
      if (g.name == "v2" || g.name == "cpu") CHECK(g.outcome == RestoreOutcome::kPartial);
      if (g.name == "f1" || g.name == "gb" || g.name == "o1") {
        CHECK(g.outcome == RestoreOutcome::kKept);
      }
    }
  }
}

// Hostile input: a saved state with shares, holders, guests and CPU mutated at random.
// Restore never crashes; what it accepts is a consistent scheduler that reports every group.
TEST_CASE("Restore: mutated sharing documents never crash and never break an invariant",
          "[persistence][sharing]") {
  auto s = Busy();
  const std::string state = *s->SaveState();
  const ClusterSpec spec = SpecOf(testdata::kSharingYaml);
  std::mt19937_64 rng(13);
  const std::string alphabet = "0123456789-ab/GAB\"[]{},:hived-share ";
  int accepted = 0;
  int not_kept = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::string doc = hived::testing::Mutate(state, alphabet, rng);
    CAPTURE(doc);
    RestoreReport report;
    absl::StatusOr<std::unique_ptr<Scheduler>> r =
        Scheduler::Restore(spec, doc, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
    if (!r.ok()) {
      CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++accepted;
    REQUIRE((*r)->CheckInvariants().ok());
    for (const RestoreReport::Group& g : report.groups) {
      not_kept += g.outcome == RestoreOutcome::kKept ? 0 : 1;
    }
  }
  CHECK(accepted > 50);  // not vacuous: many mutations still parse
  CHECK(not_kept > 10);  // and some change what a record means
}

TEST_CASE("a version-1 state (before sharing) still loads", "[persistence][sharing]") {
  // Written by the version-1 writer (a whole-GPU state of tests/testdata/
  // sched-two-racks-4vc.yaml: groups, a lazy downgrade, a pinned cell, a bad node).
  std::ifstream in(std::string(HIVED_SOURCE_DIR) +
                   "/tests/unit/persistence/testdata/state-v1.json");
  REQUIRE(in.good());
  const std::string v1((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(absl::StrContains(v1, R"("version":1,)"));
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-two-racks-4vc.yaml");
  REQUIRE(spec.ok());
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(*spec, v1, &report);
  REQUIRE(r.ok());
  REQUIRE((*r)->CheckInvariants().ok());
  REQUIRE(report.groups.size() >= 3);
  for (const RestoreReport::Group& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kKept);
  }
  CHECK(report.notes.empty());
  // Nothing of version 1 changed meaning: written again, only the version differs.
  CHECK(*(*r)->SaveState() == absl::StrReplaceAll(v1, {{R"("version":1,)", R"("version":2,)"}}));
  // Keys of version 2 are not part of version 1.
  const std::string with_share = absl::StrReplaceAll(
      v1, {{R"("leafCellNumber":8}])", R"("leafCellNumber":8,"gpuMilli":5}])"}});
  REQUIRE(with_share != v1);
  absl::StatusOr<std::unique_ptr<Scheduler>> bad = Scheduler::Restore(*spec, with_share);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("gpuMilli: unknown key in a version 1 document"));
}

TEST_CASE("version 2 keys: bad amounts and the reserved MIG keys are located errors",
          "[persistence][sharing]") {
  auto s = Busy();
  const std::string state = *s->SaveState();
  const ClusterSpec spec = SpecOf(testdata::kSharingYaml);
  auto error = [&](const std::string& from, const std::string& to) {
    const std::string doc = absl::StrReplaceAll(state, {{from, to}});
    REQUIRE(doc != state);
    absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(spec, doc);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  CHECK_THAT(error(R"("gpuMilli":400)", R"("gpuMilli":1001)"),
             Catch::Contains(".members[0].gpuMilli: integer out of range 1..1000"));
  CHECK_THAT(error(R"("gpuMilli":400)", R"("gpuMilli":"x")"),
             Catch::Contains("gpuMilli: expected an integer, got string"));
  CHECK_THAT(error(R"("cpuMilli":1500)", R"("cpuMilli":-1)"),
             Catch::Contains("cpuMilli: integer out of range 0.."));
  CHECK_THAT(error(R"("gpuMilli":400)", R"("gpuMilli":400,"migProfile":"1g.10gb")"),
             Catch::Contains("migProfile: a MIG profile in a version 2 document (reserved "
                             "there; MIG is new in version 3)"));
  CHECK_THAT(error(R"("groups":[)", R"("migLayouts":[],"groups":[)"),
             Catch::Contains("$.migLayouts: unknown key in a version 2 document (it is new in "
                             "version 3)"));
  CHECK_THAT(error(R"("nextShareHolder":)", R"("nextShareHolder":-)"),
             Catch::Contains("$.nextShareHolder: integer out of range"));
  // An empty MIG profile is the default: accepted.
  const std::string empty_mig =
      absl::StrReplaceAll(state, {{R"("gpuMilli":400)", R"("gpuMilli":400,"migProfile":"")"}});
  CHECK(Scheduler::Restore(spec, empty_mig).ok());
}

// Regression: a share reserved (Preempting-phase kPlaced) on an open GPU was a victim of a
// whole-GPU preemptor that took the GPU's holder; it must wait, as for a reserved whole group.
TEST_CASE("a share reserved on an open GPU is never a whole-GPU preemptor's victim",
          "[persistence][sharing][reservations]") {
  auto s = Make();
  // An opportunistic holder on all eight GA GPUs, 400 milli free on each.
  REQUIRE(Run(*s, Frac("o1", "VC2", -1, 600, {"GA"}, 8)) == Outcome::kPlaced);
  absl::StatusOr<ScheduleResult> res = s->Schedule(Frac("o2", "VC2", -1, 300), Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  REQUIRE(s->GetGroup("o2").state == GroupState::kReserved);
  const GroupRequest whole = Whole("w", "VC1", 0, 4, "GA");  // VC1's GA node: the holder's GPUs
  for (Phase phase : {Phase::kFiltering, Phase::kPreempting}) {
    CAPTURE(PhaseName(phase));
    absl::StatusOr<ScheduleResult> w = s->Schedule(whole, phase);
    REQUIRE(w.ok());
    CHECK(w->outcome == Outcome::kWaiting);
    CHECK(w->code == ReasonCode::kReservationOverlap);
    CHECK_THAT(w->reason, Catch::Contains("reservation of group(s) o2"));
    CHECK(w->victims.empty());
    REQUIRE(s->CheckInvariants().ok());
    CHECK(s->GetGroup("o1").state == GroupState::kOpportunistic);
    CHECK(s->GetGroup("w").state == GroupState::kAbsent);
  }
  // The reservation is allocated: it runs, and is then an ordinary victim.
  REQUIRE(s->Allocate(Frac("o2", "VC2", -1, 300), res->placement).ok());
  absl::StatusOr<ScheduleResult> w = s->Schedule(whole, Phase::kPreempting);
  REQUIRE(w.ok());
  CHECK(w->outcome == Outcome::kPreempting);
  CHECK(w->victims == std::vector<std::string>{"o1", "o2"});
  REQUIRE(s->CheckInvariants().ok());
}

// The same rule for a protected guaranteed group evicting opportunistic guests from its own
// GPUs: a reserved guest is not evicted (its share is not counted free).
TEST_CASE("a reserved opportunistic guest is never evicted by a protected guaranteed group",
          "[persistence][sharing][reservations]") {
  auto s = Make();
  for (int i = 0; i < 4; ++i) {  // VC1's four GA GPUs, 400 milli free on each
    REQUIRE(Run(*s, Frac("g" + std::to_string(i), "VC1", 0, 600)) == Outcome::kPlaced);
  }
  // o0 reserved on the lowest GPU, o1..o3 running as guests on the others.
  absl::StatusOr<ScheduleResult> res = s->Schedule(Frac("o0", "VC2", -1, 400), Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  for (int i = 1; i < 4; ++i) {
    REQUIRE(Run(*s, Frac("o" + std::to_string(i), "VC2", -1, 400)) == Outcome::kPlaced);
  }
  absl::StatusOr<ScheduleResult> p = s->Schedule(Frac("p", "VC1", 0, 400), Phase::kPreempting);
  REQUIRE(p.ok());
  REQUIRE(p->outcome == Outcome::kPreempting);
  CHECK(p->victims == std::vector<std::string>{"o1"});  // before the fix: o0, the reservation
  REQUIRE(s->CheckInvariants().ok());
  CHECK(s->GetGroup("o0").state == GroupState::kReserved);
}

}  // namespace
}  // namespace hived
