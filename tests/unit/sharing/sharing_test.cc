// GPU sharing through the public API, on hand-checked cases (tests/unit/sharing/
// sharing_cluster.h): packing inside a VC's cells, new leaves through the whole-GPU path and
// their release, sharing modes, victims as whole groups, CPU and memory, bad requests, views,
// SaveState's record of shares and the config keys.
#include <memory>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;
using testdata::GpuOf;
using testdata::Make;
using testdata::OpenLeaves;
using testdata::Run;
using testdata::Whole;

TEST_CASE("guaranteed shares pack inside the VC's cells and free the leaf when they leave",
          "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Frac("f1", "VC1", 0, 500)) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("f2", "VC1", 0, 400)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "f1") == GpuOf(*s, "f2"));  // the open GPU had room
  REQUIRE(Run(*s, Frac("f3", "VC1", 0, 300)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "f3") != GpuOf(*s, "f1"));  // 100 left: one more whole leaf
  REQUIRE(Run(*s, Frac("f4", "VC1", 0, 100)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "f4") == GpuOf(*s, "f1"));  // tightest fit: exactly fills the first
  REQUIRE(Run(*s, Frac("g1", "VC2", 0, 100)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "g1") != GpuOf(*s, "f3"));  // another VC never shares VC1's GPU
  REQUIRE(Run(*s, Frac("p1", "VC1", 1, 100)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "p1") != GpuOf(*s, "f3"));  // nor another priority
  REQUIRE(OpenLeaves(*s).size() == 4);
  const GroupStatus f1 = s->GetGroup("f1");
  REQUIRE(f1.state == GroupState::kAllocated);
  REQUIRE(f1.request.members[0].gpu_milli == 500);
  // Each VC's guarantee counts the whole leaves its holders took.
  int32_t vc1 = 0;
  for (const VcUsage& u : s->VcUsages()) {
    if (u.vc == "VC1" && u.leaf_cell_type == "GA") vc1 = u.guaranteed_used_leaf_cells;
  }
  REQUIRE(vc1 == 3);
  for (const char* g : {"f1", "f2", "f4"}) REQUIRE(s->Release(g).ok());
  REQUIRE(s->CheckInvariants().ok());
  REQUIRE(OpenLeaves(*s).size() == 3);  // the first GPU's last share left: leaf released
  for (const char* g : {"f3", "g1", "p1"}) REQUIRE(s->Release(g).ok());
  REQUIRE(OpenLeaves(*s).empty());
  REQUIRE(s->Groups().empty());
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("a gang of shares is placed whole", "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Frac("f1", "VC1", 0, 300)) == Outcome::kPlaced);
  ScheduleResult r;
  REQUIRE(Run(*s, Frac("gang", "VC1", 0, 600, {"GA"}, 3), &r) == Outcome::kPlaced);
  REQUIRE(r.placement.pods.size() == 3);
  REQUIRE(OpenLeaves(*s).size() == 3);  // one on f1's GPU, two new leaves (one holder)
  // Too many pods for the VC's 4 GA leaves with 600 each: waits, nothing taken.
  ScheduleResult w;
  REQUIRE(Run(*s, Frac("big", "VC1", 0, 600, {"GA"}, 3), &w) == Outcome::kWaiting);
  REQUIRE(OpenLeaves(*s).size() == 3);
}

TEST_CASE("sharing modes: protected co-location and eviction, separate GPUs", "[sharing]") {
  auto s = Make();
  for (int i = 0; i < 4; ++i) {
    REQUIRE(Run(*s, Frac("g" + std::to_string(i), "VC1", 0, 600)) == Outcome::kPlaced);
  }
  // GA is `protected`: opportunistic shares fill the guaranteed GPUs' room.
  for (int i = 0; i < 4; ++i) {
    REQUIRE(Run(*s, Frac("o" + std::to_string(i), "VC2", -1, 400)) == Outcome::kPlaced);
    REQUIRE(GpuOf(*s, "o" + std::to_string(i)) == GpuOf(*s, "g" + std::to_string(i)));
  }
  // A guaranteed pod of VC1 finds no room and no free leaf in its VC: the guest on its first
  // GPU is the victim, and that GPU takes no new guest meanwhile.
  ScheduleResult r;
  REQUIRE(Run(*s, Frac("need", "VC1", 0, 300), &r) == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"o0"});
  REQUIRE(s->GetGroup("need").state == GroupState::kPreempting);
  REQUIRE(s->GetGroup("o0").state == GroupState::kBeingPreempted);
  REQUIRE(s->GetGroup("o0").preemptor == "need");
  REQUIRE(s->Release("o0").ok());
  REQUIRE(Run(*s, Frac("o9", "VC2", -1, 100)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "o9") != GpuOf(*s, "g0"));  // barred for "need"
  REQUIRE(Run(*s, Frac("need", "VC1", 0, 300)) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "need") == GpuOf(*s, "g0"));
  REQUIRE(s->GetGroup("need").state == GroupState::kAllocated);
  // GB is `separate`: an opportunistic share never joins a guaranteed GPU.
  REQUIRE(Run(*s, Frac("gb", "VC1", 0, 200, {"GB"})) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("ob", "VC2", -1, 200, {"GB"})) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "ob") != GpuOf(*s, "gb"));
}

TEST_CASE("an owner's whole-GPU group preempts opportunistic shares as whole groups", "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Frac("o1", "VC2", -1, 300, {"GB"})) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("o2", "VC2", -1, 300, {"GB"})) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "o1") == GpuOf(*s, "o2"));
  ScheduleResult r;
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 2, "GB"), &r) == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"o1", "o2"});  // not the holder
  REQUIRE(s->GetGroup("o1").state == GroupState::kBeingPreempted);
  REQUIRE(s->GetGroup("o1").preemptor == "w");
  // A being-preempted GPU takes no new share.
  REQUIRE(Run(*s, Frac("o3", "VC2", -1, 100, {"GB"})) == Outcome::kWaiting);
  REQUIRE(s->Release("o1").ok());
  REQUIRE(s->Release("o2").ok());
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 2, "GB")) == Outcome::kPlaced);
  REQUIRE(s->GetGroup("w").state == GroupState::kAllocated);
}

TEST_CASE("a preempting fractional group keeps its new leaf's reservation", "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Whole("ow", "VC2", -1, 2, "GB")) == Outcome::kPlaced);  // opportunistic
  ScheduleResult r;
  REQUIRE(Run(*s, Frac("f", "VC1", 0, 500, {"GB"}), &r) == Outcome::kPreempting);
  REQUIRE(r.victims == std::vector<std::string>{"ow"});
  REQUIRE(s->GetGroup("f").state == GroupState::kPreempting);
  REQUIRE(s->Release("ow").ok());
  REQUIRE(Run(*s, Frac("f", "VC1", 0, 500, {"GB"})) == Outcome::kPlaced);
  REQUIRE(s->GetGroup("f").state == GroupState::kAllocated);
  // Cancelling a preemption gives the reservation back.
  REQUIRE(Run(*s, Whole("ow2", "VC2", -1, 1, "GB")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("h", "VC1", 0, 600, {"GB"}), &r) == Outcome::kPreempting);
  REQUIRE(s->CancelPreemption("h").ok());
  REQUIRE(s->GetGroup("h").state == GroupState::kAbsent);
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("CPU, host memory and GPU memory bound the shares", "[sharing]") {
  auto s = Make();
  GroupRequest a = Frac("m1", "VC1", 0, 100);
  a.members[0].gpu_memory_mib = 10000;
  REQUIRE(Run(*s, a) == Outcome::kPlaced);
  a.name = "m2";
  REQUIRE(Run(*s, a) == Outcome::kPlaced);
  REQUIRE(GpuOf(*s, "m1") != GpuOf(*s, "m2"));  // 16000 MiB per GA GPU
  GroupRequest c = Frac("c1", "VC1", 0, 100);
  c.members[0].cpu_milli = 5000;
  REQUIRE(Run(*s, c) == Outcome::kPlaced);
  c.name = "c2";  // VC1's GA cells are one node: 3000 CPU milli left there
  ScheduleResult r;
  REQUIRE(Run(*s, c, &r) == Outcome::kWaiting);
  c.members[0].cpu_milli = 3000;
  REQUIRE(Run(*s, c) == Outcome::kPlaced);
}

TEST_CASE("bad fractional requests are errors, never crashes", "[sharing]") {
  auto s = Make();
  auto code = [&](const GroupRequest& r) {
    return s->Schedule(r, Phase::kFiltering).status().code();
  };
  REQUIRE(code(Frac("x", "VC1", 0, 1001)) == absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "VC1", 0, -5)) == absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "VC1", 0, 100, {"NOPE"})) == absl::StatusCode::kInvalidArgument);
  GroupRequest two = Frac("x", "VC1", 0, 100);
  two.members[0].leaf_cell_number = 2;
  REQUIRE(code(two) == absl::StatusCode::kInvalidArgument);
  GroupRequest cpu = Frac("x", "VC1", 0, 100);
  cpu.members[0].cpu_milli = 9000;  // no node has it
  REQUIRE(code(cpu) == absl::StatusCode::kInvalidArgument);
  GroupRequest mixed = Frac("x", "VC1", 0, 100);
  mixed.members.push_back({1, 1});
  REQUIRE(code(mixed) == absl::StatusCode::kInvalidArgument);
  GroupRequest whole_cpu = Whole("x", "VC1", 0, 1, "GA");  // a host group now
  whole_cpu.members[0].cpu_milli = 100;
  REQUIRE(code(whole_cpu) == absl::StatusCode::kOk);
  GroupRequest whole_types = Whole("x", "VC1", 0, 1, "");
  whole_types.leaf_cell_types = {"GA"};
  REQUIRE(code(whole_types) == absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("hived-share/0", "VC1", 0, 100)) == absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "NOVC", 0, 100)) != absl::StatusCode::kOk);
  // A GB pod for VC2, which has no GB cells: not placeable as guaranteed.
  absl::StatusOr<ScheduleResult> r =
      s->Schedule(Frac("x", "VC2", 0, 100, {"GB"}), Phase::kFiltering);
  REQUIRE((!r.ok() || r->outcome != Outcome::kPlaced));
  REQUIRE(Run(*s, Frac("f", "VC1", 0, 100)) == Outcome::kPlaced);
  REQUIRE(s->Schedule(Frac("f", "VC1", 0, 100), Phase::kFiltering).status().code() ==
          absl::StatusCode::kAlreadyExists);
  REQUIRE(s->Release("hived-share/0").code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(s->CancelPreemption("f").code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("Allocate takes only what Schedule decided, Recover a placement from elsewhere",
          "[sharing]") {
  auto s = Make();
  GroupRequest r = Frac("f", "VC1", 0, 400);
  absl::StatusOr<ScheduleResult> res = s->Schedule(r, Phase::kFiltering);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  Placement other = res->placement;  // another free GPU of the same node
  const int32_t chosen = other.pods[0].leaf_cell_indices[0];
  other.pods[0].leaf_cell_indices[0] = chosen == 3 ? 2 : 3;
  absl::StatusOr<AllocateInfo> refused = s->Allocate(r, other);
  REQUIRE(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(std::string(refused.status().message()).find("pod 0") != std::string::npos);
  REQUIRE(s->GetGroup("f").state == GroupState::kAbsent);
  REQUIRE(s->Recover(r, other).ok());
  REQUIRE(s->GetGroup("f").placement.pods[0].leaf_cell_indices[0] ==
          other.pods[0].leaf_cell_indices[0]);
  REQUIRE(s->CheckInvariants().ok());
  // A GPU a whole group uses, a GPU without room, a GPU that does not exist.
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 1, "GB")) == Outcome::kPlaced);
  GroupRequest g = Frac("g", "VC1", 0, 100, {"GB"});
  Placement on_w = s->GetGroup("w").placement;
  REQUIRE(s->Recover(g, on_w).status().code() == absl::StatusCode::kFailedPrecondition);
  GroupRequest big = Frac("big", "VC1", 0, 700);
  REQUIRE(s->Recover(big, s->GetGroup("f").placement).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Allocate(big, s->GetGroup("f").placement).status().code() ==
          absl::StatusCode::kFailedPrecondition);  // never scheduled
  Placement nowhere = other;
  nowhere.pods[0].leaf_cell_indices[0] = 17;
  REQUIRE(s->Recover(big, nowhere).status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(s->CheckInvariants().ok());
}

// Regression (found by the MIG property test): with several allowed types, the answer was
// the first type's even when that type was an error for the VC (it has no GB) and a later
// type gave an ordinary wait; a type the VC lacks is an error for that type only.
TEST_CASE("allowed types: a type the VC lacks does not hide another type's wait", "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Whole("w", "VC2", 0, 4, "GA")) == Outcome::kPlaced);  // VC2's GA node full
  GroupRequest f = Frac("f", "VC2", 0, 500, {"GB", "GA"});
  absl::StatusOr<ScheduleResult> res = s->Schedule(f, Phase::kFiltering);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kWaiting);
  REQUIRE(s->Release("w").ok());
  res = s->Schedule(f, Phase::kFiltering);  // and with room, GA places it
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  // Every allowed type an error for the VC: the first error is the answer.
  absl::StatusOr<ScheduleResult> bad =
      s->Schedule(Frac("g", "VC2", 0, 500, {"GB"}), Phase::kFiltering);
  REQUIRE_FALSE(bad.ok());
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("SaveState records a fractional group, and the views show shares", "[sharing]") {
  auto s = Make();
  REQUIRE(Run(*s, Frac("f1", "VC1", 0, 250)) == Outcome::kPlaced);
  absl::StatusOr<std::string> saved =
      s->SaveState();  // tests/unit/persistence/sharing_state_test.cc
  REQUIRE(saved.ok());
  REQUIRE(saved->find(R"({"name":"f1",)") != std::string::npos);
  REQUIRE(s->GetGroupRecord("f1").ok());
  const std::vector<std::string> open = OpenLeaves(*s);
  REQUIRE(open.size() == 1);
  REQUIRE(open[0].substr(open[0].find(':')) == ":250");
}

TEST_CASE("the sharing config keys load, write back and reject bad values", "[sharing][config]") {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(testdata::kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  REQUIRE(spec->leaf_cell_types.size() == 2);
  REQUIRE(spec->leaf_cell_types[0].gpu_memory_mib == 16000);
  REQUIRE(spec->leaf_cell_types[0].sharing == SharingMode::kProtected);
  REQUIRE(spec->physical_cells[0].cell_children[1].cpu_milli == 8000);
  REQUIRE(spec->physical_cells[1].memory_mib == 32000);
  absl::StatusOr<ClusterSpec> back = LoadClusterSpecString(ClusterSpecToYaml(*spec), "back.yaml");
  REQUIRE(back.ok());
  REQUIRE(ClusterSpecToYaml(*back) == ClusterSpecToYaml(*spec));
}

}  // namespace
}  // namespace hived
