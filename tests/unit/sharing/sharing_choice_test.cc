// The stranded rule's choice of an open GPU or of a fresh leaf's node (sharing/
// sharing_choice.cc; docs/gpu-sharing.md, "The library's rule"), through the public API, on
// the cases its tie-breaks and exclusions decide (issue 27's mutation check: each of these
// once survived a one-line mutant, scripts/mutants.txt):
//  - a GPU carved into MIG instances takes no fractional share, even with one instance;
//  - among open GPUs that strand equally, the fullest one (least milli left) wins;
//  - a fresh leaf's node is never an unhealthy one, even when it strands least.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/mig_cluster.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived::testdata {
namespace {

std::string NodeOf(Scheduler& s, const std::string& group) {
  const std::string gpu = GpuOf(s, group);
  return gpu.substr(0, gpu.find('/'));
}

TEST_CASE("a fractional share skips a GPU holding a single MIG instance", "[sharing][mig]") {
  auto s = MakeMig();
  REQUIRE(Run(*s, Mig("m", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);
  const std::string carved = GpuOf(*s, "m");
  // VC1's other A100 is free: the share opens it rather than join the carved GPU.
  REQUIRE(Run(*s, Frac("fr", "VC1", 0, 100, {"A100"})) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "fr") != carved);
  CHECK(NodeOf(*s, "fr") == NodeOf(*s, "m"));  // VC1's A100 node
  // A second share joins the open fractional GPU, never the carved one.
  REQUIRE(Run(*s, Frac("fr2", "VC1", 0, 100, {"A100"})) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "fr2") == GpuOf(*s, "fr"));
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("among open GPUs that strand equally the fullest one takes the share", "[sharing]") {
  auto s = Make();
  // Only 100-milli shares are ever admitted, and GA nodes have CPU and memory to spare: every
  // GPU with free milli can still run the typical share, so each choice strands nothing.
  for (int i = 0; i < 10; ++i) {
    REQUIRE(Run(*s, Frac("a" + std::to_string(i), "VC1", 0, 100)) == Outcome::kPlaced);
  }
  const std::string first = GpuOf(*s, "a0");
  for (int i = 1; i < 10; ++i) REQUIRE(GpuOf(*s, "a" + std::to_string(i)) == first);
  REQUIRE(Run(*s, Frac("b", "VC1", 0, 100)) == Outcome::kPlaced);  // the first GPU is full
  const std::string second = GpuOf(*s, "b");
  REQUIRE(second != first);
  for (int i = 0; i < 7; ++i) REQUIRE(s->Release("a" + std::to_string(i)).ok());
  // The first GPU has 300 used (600 left after the share), the second 100 (800 left).
  REQUIRE(Run(*s, Frac("t", "VC1", 0, 100)) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "t") == first);
  // And the other way round: the second GPU is now the fuller one.
  for (const char* g : {"a7", "a8", "a9", "t"}) REQUIRE(s->Release(g).ok());
  for (int i = 0; i < 3; ++i) {
    REQUIRE(Run(*s, Frac("c" + std::to_string(i), "VC1", 0, 100)) == Outcome::kPlaced);
    REQUIRE(GpuOf(*s, "c" + std::to_string(i)) == second);
  }
  CHECK(s->CheckInvariants().ok());
}

// Three 2-GPU nodes in one rack owned by one VC; no CPU or memory declared, and no share
// admitted yet: every fresh leaf strands nothing, so the first node in order with a free
// leaf is the stranded rule's node.
constexpr char kThreeNodes[] = R"yaml(
physicalCluster:
  cellTypes:
    G-NODE:
      childCellType: G
      childCellNumber: 2
      isNodeLevel: true
    G-RACK:
      childCellType: G-NODE
      childCellNumber: 3
  leafCellTypes:
    G:
      sharingMode: protected
  physicalCells:
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n0
    - cellAddress: n1
    - cellAddress: n2
virtualClusters:
  VC1:
    virtualCells:
    - cellType: G-RACK
      cellNumber: 1
)yaml";

TEST_CASE("a fresh leaf is opened on a healthy node even when a bad one strands least",
          "[sharing]") {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kThreeNodes, "three.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> made = Scheduler::Create(*spec);
  REQUIRE(made.ok());
  Scheduler& s = **made;
  // A whole GPU in use on n2 only (n0 and n1 filled first, then emptied).
  REQUIRE(Run(s, Whole("w0", "VC1", 0, 2, "G")) == Outcome::kPlaced);
  REQUIRE(Run(s, Whole("w1", "VC1", 0, 2, "G")) == Outcome::kPlaced);
  REQUIRE(Run(s, Whole("w2", "VC1", 0, 1, "G")) == Outcome::kPlaced);
  REQUIRE(s.GetGroup("w0").placement.pods[0].node == "n0");
  REQUIRE(s.GetGroup("w1").placement.pods[0].node == "n1");
  REQUIRE(s.GetGroup("w2").placement.pods[0].node == "n2");
  REQUIRE(s.Release("w0").ok());
  REQUIRE(s.Release("w1").ok());
  REQUIRE(s.SetNodeHealthy("n0", false).ok());
  // n0 strands no more than n1 but is bad: an opportunistic share's fresh leaf goes to n1, the
  // first healthy node by the rule (the whole-GPU packing alone would pick n2, beside w2).
  REQUIRE(Run(s, Frac("f", "VC1", -1, 300, {"G"})) == Outcome::kPlaced);
  CHECK(NodeOf(s, "f") == "n1");
  CHECK(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::testdata
