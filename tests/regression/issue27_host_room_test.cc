// Issue 27 item 3, host groups: a whole-GPU group whose pods ask node CPU or host memory was
// scheduled without the nodes' CPU, then given back (`Unreserve`) when several of its pods
// overfilled one node, so it waited although another node had room. Now `ScheduleHost`
// hands the scheduler a `NodeRoom` (src/node_room.h) with each pod's ask in the parsed
// request's order (pods by leaf count, then member order: `PodsInNeedsOrder`), and the node
// choice refuses a node that cannot hold the pods placed on it: one decision, nothing undone.
// The cluster: tests/unit/sharing/sharing_cluster.h (a0 and a1: 4 GA GPUs and 8000 CPU milli
// each; b0: 2 GB GPUs and 4000).
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

// A whole-GPU host group: members {pods, leaves, cpu}, opportunistic, GA.
GroupRequest Host(const std::string& name, const std::vector<std::vector<int64_t>>& members) {
  GroupRequest r;
  r.name = name;
  r.vc = "VC1";
  r.priority = -1;
  r.leaf_cell_type = "GA";
  for (const std::vector<int64_t>& m : members) {
    GroupMember g;
    g.pod_number = static_cast<int32_t>(m[0]);
    g.leaf_cell_number = static_cast<int32_t>(m[1]);
    g.cpu_milli = m[2];
    r.members.push_back(g);
  }
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

TEST_CASE("issue 27: a host group's pods go to the next node with CPU room, in one decision",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  // One GPU and 5000 CPU milli on a0: 3 GPUs and 3000 CPU milli left there.
  GroupRequest filler = Host("filler", {{1, 1, 5000}});
  filler.suggested_nodes = std::vector<std::string>{"a0"};
  REQUIRE(testdata::Run(*s, filler) == Outcome::kPlaced);
  // Two pods of 2000 CPU milli: HiveD's packing puts both on a0, which holds one of them.
  const GroupRequest pair = Host("pair", {{2, 1, 2000}});

  const absl::StatusOr<ScheduleResult> probe = s->Schedule(pair, Phase::kFiltering);
  REQUIRE(probe.ok());
  INFO(probe->reason);
  REQUIRE(probe->outcome == Outcome::kPlaced);
  CHECK(s->GetGroup("pair").state == GroupState::kAbsent);
  const absl::StatusOr<ScheduleResult> again = s->Schedule(pair, Phase::kFiltering);
  REQUIRE(again.ok());
  CHECK(Where(again->placement) == Where(probe->placement));  // Filtering changed nothing
  CHECK(s->GetGroup("pair").state == GroupState::kAbsent);

  ScheduleResult placed;
  REQUIRE(testdata::Run(*s, pair, &placed) == Outcome::kPlaced);
  CHECK(Where(placed.placement) == Where(probe->placement));
  REQUIRE(placed.placement.pods.size() == 2);
  std::set<std::string> nodes;
  for (const PodPlacement& pod : placed.placement.pods) nodes.insert(pod.node);
  CHECK(nodes == std::set<std::string>{"a0", "a1"});
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("issue 27: a host group's CPU asks follow its pods sorted by leaf count",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  // One GPU and 1000 CPU milli on a0: 3 GPUs and 7000 CPU milli left there.
  GroupRequest filler = Host("filler", {{1, 1, 1000}});
  filler.suggested_nodes = std::vector<std::string>{"a0"};
  REQUIRE(testdata::Run(*s, filler) == Outcome::kPlaced);
  // Members not in leaf order: the 2-GPU pod asks 6000, the 1-GPU pod 2000 (both nodes have
  // room for either, a0 not for both). The scheduler lists the 1-GPU pod first.
  const GroupRequest mixed = Host("mixed", {{1, 2, 6000}, {1, 1, 2000}});
  ScheduleResult placed;
  const Outcome o = testdata::Run(*s, mixed, &placed);
  INFO(placed.reason);
  REQUIRE(o == Outcome::kPlaced);
  REQUIRE(placed.placement.pods.size() == 2);
  std::map<std::string, int64_t> free{{"a0", 7000}, {"a1", 8000}};
  std::string big_node;
  for (const PodPlacement& pod : placed.placement.pods) {
    if (pod.leaf_cell_number == 2) big_node = pod.node;
    free[pod.node] -= pod.leaf_cell_number == 2 ? 6000 : 2000;
  }
  CHECK(big_node == "a1");  // after the 1-GPU pod, a0 cannot feed 6000 more
  // Each pod's ask is counted on its own node: a CPU-only pod of exactly what is left fits
  // there, one more milli does not (before, the asks were counted in member order).
  auto probe = [&](Scheduler& sch, const std::string& node) {
    if (free[node] <= 0) return;
    GroupRequest r;
    r.name = "cpu";
    r.vc = "VC1";
    r.priority = 0;
    r.members = {{1, 0, 0, 0, free[node] + 1, 0}};
    r.suggested_nodes = std::vector<std::string>{node};
    const absl::StatusOr<ScheduleResult> over = sch.Schedule(r, Phase::kFiltering);
    REQUIRE(over.ok());
    CHECK(over->outcome == Outcome::kWaiting);
    r.members[0].cpu_milli = free[node];
    const absl::StatusOr<ScheduleResult> fits = sch.Schedule(r, Phase::kFiltering);
    REQUIRE(fits.ok());
    INFO(node << " " << fits->reason);
    CHECK(fits->outcome == Outcome::kPlaced);
  };
  probe(*s, "a0");
  probe(*s, "a1");
  REQUIRE(s->CheckInvariants().ok());
  // Restore counts the saved pods in the same order (its check and `AllocateHost`).
  const absl::StatusOr<std::string> saved = s->SaveState();
  REQUIRE(saved.ok());
  const absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecString(testdata::kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> back = Scheduler::Restore(*spec, *saved);
  INFO(back.status().message());
  REQUIRE(back.ok());
  probe(**back, "a0");
  probe(**back, "a1");
  REQUIRE((*back)->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
