// Host groups (sharing/sharing.h, docs/gpu-sharing.md): node CPU and host memory for whole-GPU
// pods, and CPU-only pods (leafCellNumber 0), on the hand-checked cluster of
// tests/unit/sharing/sharing_cluster.h (a0, a1: 8000 CPU milli, 64000 MiB; b0: 4000, 32000).
#include <map>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Make;
using testdata::Run;
using testdata::Whole;

GroupRequest CpuOnly(const std::string& name, int64_t cpu, int64_t memory = 0, int32_t pods = 1) {
  GroupRequest r;
  r.name = name;
  r.vc = "VC1";
  r.priority = 0;
  r.members = {{pods, 0, 0, 0, cpu, memory}};
  return r;
}

std::string NodeOf(Scheduler& s, const std::string& group) {
  const GroupStatus g = s.GetGroup(group);
  REQUIRE(g.placement.pods.size() == 1);
  return g.placement.pods[0].node;
}

TEST_CASE("a whole-GPU pod's CPU is counted on its node and skips nodes without it",
          "[sharing][hosts]") {
  auto s = Make();
  GroupRequest w = Whole("w1", "VC1", 0, 1, "GA");
  w.members[0].cpu_milli = 6000;
  REQUIRE(Run(*s, w) == Outcome::kPlaced);
  const std::string first = NodeOf(*s, "w1");
  // VC1's GA cells are one node: its 2000 CPU milli left cannot feed another 6000.
  w.name = "w2";
  ScheduleResult r;
  REQUIRE(Run(*s, w, &r) == Outcome::kWaiting);
  w.members[0].cpu_milli = 2000;
  REQUIRE(Run(*s, w) == Outcome::kPlaced);
  REQUIRE(NodeOf(*s, "w2") == first);
  REQUIRE(s->Release("w1").ok());
  w.name = "w3";
  w.members[0].cpu_milli = 6000;
  REQUIRE(Run(*s, w) == Outcome::kPlaced);  // w1's CPU came back
  REQUIRE(s->CheckInvariants().ok());
  // More than every node has: infeasible, never a crash.
  w.name = "big";
  w.members[0].cpu_milli = 9000;
  absl::StatusOr<ScheduleResult> res = s->Schedule(w, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kInfeasible);
  REQUIRE(res->code == ReasonCode::kPodTooLarge);
}

TEST_CASE("CPU-only pods take a node each, are counted and released", "[sharing][hosts]") {
  auto s = Make();
  REQUIRE(Run(*s, CpuOnly("c1", 3000, 1000)) == Outcome::kPlaced);
  const GroupStatus g = s->GetGroup("c1");
  REQUIRE(g.state == GroupState::kAllocated);
  REQUIRE(g.placement.pods.size() == 1);
  REQUIRE(g.placement.pods[0].leaf_cell_indices.empty());
  // A gang of four 4000-milli pods: wherever c1 went, the nodes hold exactly four more.
  REQUIRE(Run(*s, CpuOnly("c2", 4000, 0, 4)) == Outcome::kPlaced);
  const std::map<std::string, int64_t> declared = {{"a0", 8000}, {"a1", 8000}, {"b0", 4000}};
  std::map<std::string, int64_t> used = {{g.placement.pods[0].node, 3000}};
  for (const PodPlacement& p : s->GetGroup("c2").placement.pods) used[p.node] += 4000;
  for (const auto& [node, cpu] : used) REQUIRE(cpu <= declared.at(node));
  ScheduleResult r;
  REQUIRE(Run(*s, CpuOnly("c3", 4000), &r) == Outcome::kWaiting);  // 1000 left in all
  REQUIRE(r.code == ReasonCode::kInsufficientCapacity);
  REQUIRE(s->Release("c2").ok());
  REQUIRE(Run(*s, CpuOnly("c3", 4000)) == Outcome::kPlaced);
  REQUIRE(s->Release("c3").ok());
  REQUIRE(s->Release("c1").ok());
  REQUIRE(s->Groups().empty());
  REQUIRE(s->Release("c1").code() == absl::StatusCode::kNotFound);
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("a CPU-only pod never goes to a bad node", "[sharing][hosts]") {
  auto s = Make();
  REQUIRE(s->SetNodeHealthy("a0", false).ok());
  REQUIRE(s->SetNodeHealthy("a1", false).ok());
  REQUIRE(Run(*s, CpuOnly("c1", 1000)) == Outcome::kPlaced);
  CHECK(NodeOf(*s, "c1") == "b0");
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("bad host requests are errors or results, never crashes", "[sharing][hosts]") {
  auto s = Make();
  auto code = [&](const GroupRequest& r) {
    return s->Schedule(r, Phase::kFiltering).status().code();
  };
  GroupRequest neg = CpuOnly("x", -1);
  REQUIRE(code(neg) == absl::StatusCode::kInvalidArgument);
  GroupRequest mixed = CpuOnly("x", 100);
  mixed.members.push_back({1, 1, 0, 0, 100, 0});
  REQUIRE(code(mixed) == absl::StatusCode::kInvalidArgument);
  GroupRequest typed = CpuOnly("x", 100);
  typed.leaf_cell_type = "GA";
  REQUIRE(code(typed) == absl::StatusCode::kInvalidArgument);
  REQUIRE(code(CpuOnly("hived-share/1", 100)) == absl::StatusCode::kInvalidArgument);
  GroupRequest novc = CpuOnly("x", 100);
  novc.vc = "NOVC";
  REQUIRE(code(novc) == absl::StatusCode::kNotFound);
  absl::StatusOr<ScheduleResult> big = s->Schedule(CpuOnly("x", 9000), Phase::kFiltering);
  REQUIRE(big.ok());
  REQUIRE(big->outcome == Outcome::kInfeasible);
  // Allocate of a placement on an unknown node, or one the node has no room for.
  Placement p;
  p.pods.resize(1);
  p.pods[0].node = "nowhere";
  REQUIRE(s->Allocate(CpuOnly("x", 100), p).status().code() == absl::StatusCode::kInvalidArgument);
  p.pods[0].node = "b0";
  REQUIRE(s->Allocate(CpuOnly("x", 5000), p).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Allocate(CpuOnly("x", 4000), p).ok());
  REQUIRE(s->Allocate(CpuOnly("x", 1), p).status().code() == absl::StatusCode::kAlreadyExists);
  REQUIRE(s->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
