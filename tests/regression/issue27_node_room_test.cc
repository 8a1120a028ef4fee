// Issue 27 item 3: node CPU and host memory are placement constraints. A fractional group's
// new leaves were chosen by the scheduler without the nodes' CPU, then given back
// (`Unreserve`) when several new pods overfilled one node, so the group waited although
// another node had room. Now the node choice counts the nodes' CPU and host memory
// (src/node_room.h) with the request's earlier pods on the same node: one decision, nothing
// undone. The cluster: tests/unit/sharing/sharing_cluster.h (a0 and a1: 4 GA GPUs and 8000
// CPU milli each).
#include <set>
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;

GroupRequest WithCpu(GroupRequest r, int64_t cpu) {
  for (GroupMember& m : r.members) m.cpu_milli = cpu;
  return r;
}

std::string Where(const Placement& p) {
  std::string out;
  for (const PodPlacement& pod : p.pods) {
    out += pod.node + ":";
    for (int32_t i : pod.leaf_cell_indices) out += std::to_string(i) + ",";
    out += " ";
  }
  return out;
}

TEST_CASE("issue 27: new pods go to the next node with CPU room, in one decision",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  // A whole GPU's worth of shares and 5000 CPU milli on one node: its first GPU is full.
  ScheduleResult first;
  REQUIRE(testdata::Run(*s, WithCpu(Frac("filler", "VC2", -1, 1000), 5000), &first) ==
          Outcome::kPlaced);
  const std::string busy = first.placement.pods.at(0).node;
  // Two pods of 2000 CPU milli each: the busy node (3000 free) holds one, not both.
  const GroupRequest pair = WithCpu(Frac("pair", "VC2", -1, 500, {"GA"}, 2), 2000);

  const absl::StatusOr<ScheduleResult> probe = s->Schedule(pair, Phase::kFiltering);
  REQUIRE(probe.ok());
  INFO(probe->reason);
  REQUIRE(probe->outcome == Outcome::kPlaced);
  CHECK(s->GetGroup("pair").state == GroupState::kAbsent);
  const std::vector<std::string> open_before = testdata::OpenLeaves(*s);
  const absl::StatusOr<ScheduleResult> again = s->Schedule(pair, Phase::kFiltering);
  REQUIRE(again.ok());
  CHECK(Where(again->placement) == Where(probe->placement));  // the Filtering phase changed nothing
  CHECK(testdata::OpenLeaves(*s) == open_before);

  ScheduleResult placed;
  REQUIRE(testdata::Run(*s, pair, &placed) == Outcome::kPlaced);
  CHECK(Where(placed.placement) == Where(probe->placement));
  REQUIRE(placed.placement.pods.size() == 2);
  std::set<std::string> nodes;
  for (const PodPlacement& pod : placed.placement.pods) nodes.insert(pod.node);
  CHECK(nodes == std::set<std::string>{"a0", "a1"});
  CHECK(nodes.count(busy) == 1);
  REQUIRE(s->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
