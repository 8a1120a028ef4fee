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

// The stranded rule (Sharing::PlaceStranded) chooses when some node declares CPU or memory.
std::unique_ptr<Scheduler> MakeDeclaring(std::string yaml, const std::vector<std::string>& nodes) {
  for (const std::string& n : nodes) {
    const std::string at = "    - cellAddress: " + n + "\n";
    yaml.replace(yaml.find(at), at.size(), at + "      cpuMilli: 8000\n      memoryMiB: 64000\n");
  }
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(yaml, "declaring.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

TEST_CASE("a fractional share skips a GPU holding a single MIG instance", "[sharing][mig]") {
  auto s = MakeDeclaring(kMigYaml, {"m0", "m1"});
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

// Three 2-GPU nodes in one rack owned by one VC (CPU and memory declared by the test, to
// spare); no share admitted yet: every fresh leaf strands nothing, so the first node in
// order with a free leaf is the stranded rule's node.
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
  auto made = MakeDeclaring(kThreeNodes, {"n0", "n1", "n2"});
  Scheduler& s = *made;
  auto node = [&](const std::string& g) { return s.GetGroup(g).placement.pods[0].node; };
  // The tally learns one shape: a host pod of two whole GPUs (admitted, then gone).
  GroupRequest h = Whole("h", "VC1", 0, 2, "G");
  h.members[0].cpu_milli = 1000;
  REQUIRE(Run(s, h) == Outcome::kPlaced);
  REQUIRE(s.Release("h").ok());
  // One GPU used on n0 and on n2, none on n1.
  REQUIRE(Run(s, Whole("a", "VC1", 0, 1, "G")) == Outcome::kPlaced);
  REQUIRE(Run(s, Whole("b", "VC1", 0, 1, "G")) == Outcome::kPlaced);
  REQUIRE(Run(s, Whole("c", "VC1", 0, 2, "G")) == Outcome::kPlaced);
  REQUIRE(Run(s, Whole("d", "VC1", 0, 1, "G")) == Outcome::kPlaced);
  REQUIRE(node("a") == "n0");
  REQUIRE(node("b") == "n0");
  REQUIRE(node("c") == "n1");
  REQUIRE(node("d") == "n2");
  REQUIRE(s.Release("b").ok());
  REQUIRE(s.Release("c").ok());
  REQUIRE(s.SetNodeHealthy("n0", false).ok());
  // A fresh leaf on n0 or n2 fills a node the two-GPU shape no longer fits (it strands less),
  // on n1 it breaks the only pair left. n0 is bad: the rule's node is n2, where the share goes.
  REQUIRE(Run(s, Frac("f", "VC1", -1, 300, {"G"})) == Outcome::kPlaced);
  CHECK(NodeOf(s, "f") == "n2");
  CHECK(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::testdata
