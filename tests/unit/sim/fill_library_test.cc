// `--policy hived` of the fill experiment: the library decides (sim/policies/fill_library.h). Hand-
// checked cases on a two-node list: CPU steers a whole-GPU pod, a CPU-only pod is placed
// and counted, shares are packed, and a departure releases the pod's group.
#include "sim/policies/fill_library.h"

#include <memory>
#include <string>
#include <vector>

#include "sim/policies/fill_cluster.h"
#include "sim/policies/fill_policy.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"

namespace hived::sim {
namespace {

FillPod Pod(int64_t cpu, int32_t num_gpu, int32_t milli, int64_t memory = 0) {
  return testing::MakeFillPod(cpu, num_gpu, milli, memory);
}

// Chooses through `policy` and mirrors the choice on `c` (as RunFill does).
FillChoice Place(FillPolicy& policy, FillCluster& c, const FillPod& pod) {
  std::vector<int32_t> feasible;
  for (int32_t n = 0; n < c.node_count(); ++n) {
    if (c.Fits(n, pod)) feasible.push_back(n);
  }
  REQUIRE(!feasible.empty());
  const FillChoice choice = policy.Choose(c, pod, feasible);
  if (choice.node >= 0) {
    c.Place(pod, choice.node, choice.gpus);
    policy.Placed(c, pod, choice);
  }
  INFO(policy.Check().ToString());
  REQUIRE(policy.Check().ok());
  return choice;
}

TEST_CASE("fill --policy hived: the library places every kind of pod", "[sim][fill][library]") {
  const OpenbNodeList nodes = testing::MakeOpenbNodes("a,8000,32768,2,T4\nb,32000,65536,2,T4\n");
  FillCluster c(nodes);
  FillPolicyContext ctx;
  ctx.nodes = &nodes;
  std::unique_ptr<FillPolicy> p = MakeFillPolicy(PolicyKind::kHived, ctx, c.node_count());
  REQUIRE(p->Check().ok());
  // A whole GPU with 20000 CPU milli: only b has it.
  const FillChoice whole = Place(*p, c, Pod(20000, 1, 1000));
  CHECK(whole.node == 1);
  // Two shares of one GPU pack on one GPU.
  const FillChoice s1 = Place(*p, c, Pod(1000, 1, 400));
  const FillChoice s2 = Place(*p, c, Pod(1000, 1, 500));
  REQUIRE(s1.node >= 0);
  CHECK(s1.node == s2.node);
  CHECK(s1.gpus == s2.gpus);
  // A CPU-only pod: placed, its CPU counted (the fill model checks the mirror).
  const FillChoice cpu = Place(*p, c, Pod(4000, 0, 0, 1024));
  REQUIRE(cpu.node >= 0);
  CHECK(cpu.gpus == 0);
  // Departures release the groups: the whole GPU's CPU comes back to b.
  c.Remove(Pod(20000, 1, 1000), whole.node, whole.gpus);
  p->Removed(c, Pod(20000, 1, 1000), whole);
  REQUIRE(p->Check().ok());
  CHECK(Place(*p, c, Pod(20000, 1, 1000)).node == 1);
  REQUIRE(c.CheckInvariants().ok());
}

TEST_CASE("fill --policy hived: a bad node list is the policy's error, not a crash",
          "[sim][fill][library]") {
  FillPolicyContext ctx;  // no node list
  std::unique_ptr<FillPolicy> p = MakeFillPolicy(PolicyKind::kHived, ctx, 0);
  CHECK(p->Check().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hived::sim
