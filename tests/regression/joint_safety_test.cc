// Safety is joint (src/virtual_clusters.h invariant 5): per level, top-down, the obtainable
// cells must cover the unbound preassigned cells of that level and those the levels above
// split into, not only that level's own. The recovery binding (`DecideBinding`) and
// Restore's saved bindings checked each level alone, so they accepted a binding after
// which one VC's guaranteed cells could only be had by taking another's, and
// `CheckInvariants` failed.
//
// The cluster (tests/unit/scheduler/three_racks.h kTightNodesYaml): two racks of two 2-GPU
// nodes, every GPU reserved: VC a holds a GPU and a rack, VC b a GPU and a node. With b's GPU bound
// on m0, a's GPU bound on m1 leaves two obtainable nodes for b's node and a rack for a's, but the
// rack is one of the nodes.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/scheduler/three_racks.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

Placement OnGpu(const std::string& node, int32_t index) {
  return testdata::OneLeaf("G-RACK", node, index, "G");
}

// The scheduler with b's GPU recovered on m0.
std::unique_ptr<Scheduler> WithBOnM0() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(testdata::kTightNodesYaml, "tight.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  const absl::StatusOr<AllocateInfo> b =
      (*s)->Recover(testdata::Whole("gb", "b", 1, 1, "G"), OnGpu("m0", 0));
  REQUIRE(b.ok());
  REQUIRE(!b->downgraded);
  REQUIRE((*s)->CheckInvariants().ok());
  return std::move(*s);
}

TEST_CASE("Safety: a recovered binding that only the joint check refuses is downgraded",
          "[scheduler][regression]") {
  std::unique_ptr<Scheduler> s = WithBOnM0();
  SECTION("a's GPU on m1 would leave b's node nothing once a's rack is bound: downgraded") {
    const absl::StatusOr<AllocateInfo> a =
        s->Recover(testdata::Whole("ga", "a", 1, 1, "G"), OnGpu("m1", 0));
    INFO(a.status().message());
    REQUIRE(a.ok());
    CHECK(a->downgraded);
    CHECK(a->reason == "binding 0/m1/0 to VC a would break the safety of chain G-RACK");
  }
  SECTION("a's GPU beside b's on m0 keeps its virtual cells") {
    const absl::StatusOr<AllocateInfo> a =
        s->Recover(testdata::Whole("ga", "a", 1, 1, "G"), OnGpu("m0", 1));
    REQUIRE(a.ok());
    CHECK(!a->downgraded);
  }
  const absl::Status inv = s->CheckInvariants();
  INFO(inv.message());
  CHECK(inv.ok());
}

TEST_CASE("Safety: Restore skips a saved binding that only the joint check refuses",
          "[scheduler][regression]") {
  std::unique_ptr<Scheduler> s = WithBOnM0();
  const absl::StatusOr<std::string> saved = s->SaveState();
  REQUIRE(saved.ok());
  INFO(*saved);
  // A hand-edited state binding a's GPU cell to a GPU of m1 (no group holds it).
  const std::string tail = R"("bindings":[)";
  REQUIRE(saved->find(tail) != std::string::npos);
  const std::string edited = absl::StrReplaceAll(*saved, {{tail, absl::StrCat(tail, R"(
{"virtualCell":"a/0","physicalCell":"0/m1/0"})")}});
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(testdata::kTightNodesYaml, "tight.yaml");
  REQUIRE(spec.ok());
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> r = Scheduler::Restore(*spec, edited, &report);
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes[0] == "$.bindings[0]: binding it would break the VCs' safety; skipped");
  const absl::Status inv = (*r)->CheckInvariants();
  INFO(inv.message());
  CHECK(inv.ok());
  CHECK(*(*r)->SaveState() == *saved);
}

}  // namespace
}  // namespace hived
