// Issue 27 item 2, the last act-then-undo: `Sharing::Recover` recovered its holders one by
// one and, when the core's binding downgraded one (a check its const preview,
// `PreviewBinding`, did not make: the chain's safety, the descent to a free virtual leaf),
// released the holders opened so far. Now the core's recovery binding is one const decision
// (`DecideBinding`, src/recovery.h) that both `Recover` and its preview run
// (`SchedulerImpl::PreviewRecover`, `PreviewAllocate`), so the group is refused before
// anything changes.
//
// The cluster: two racks of two 2-GPU nodes. VC A: a node; VC B: a whole rack; VC C: a node.
// Once C's node is bound in rack 1, binding A's node in rack 0 would leave no whole rack for
// B (safety), while A's node in rack 1 keeps rack 0 whole.
#include <memory>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "src/scheduler_impl.h"
#include "support/catch.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

constexpr char kRacksYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    G-NODE:
      childCellType: G
      childCellNumber: 2
      isNodeLevel: true
    G-RACK:
      childCellType: G-NODE
      childCellNumber: 2
  leafCellTypes:
    G:
      gpuMemoryMiB: 16000
      sharingMode: protected
  physicalCells:
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n0
    - cellAddress: n1
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n2
    - cellAddress: n3
virtualClusters:
  A:
    virtualCells:
    - cellType: G-RACK.G-NODE
      cellNumber: 1
  B:
    virtualCells:
    - cellType: G-RACK
      cellNumber: 1
  C:
    virtualCells:
    - cellType: G-RACK.G-NODE
      cellNumber: 1
)yaml";

Placement On(const std::string& node, int32_t index, const std::string& type = "") {
  return testdata::OneLeaf("G-RACK", node, index, type);
}

ClusterSpec Spec() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kRacksYaml, "racks.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

TEST_CASE("issue 27: a fractional Recover the binding's safety refuses changes nothing",
          "[sharing][regression]") {
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(Spec());
  REQUIRE(created.ok());
  Scheduler& s = **created;
  // C's node bound in rack 1: rack 0 is the only whole rack left for B.
  const absl::StatusOr<AllocateInfo> c =
      s.Recover(testdata::Whole("c", "C", 1, 1, "G"), On("n2", 0, "G-NODE"));
  REQUIRE(c.ok());
  REQUIRE(!c->downgraded);
  const GroupRequest g = testdata::Frac("g", "A", 1, 500, {"G"});
  SECTION("in rack 0 it would break safety: refused, decided before anything changed") {
    const uint64_t version = s.version();
    const absl::StatusOr<std::string> before = s.SaveState();
    REQUIRE(before.ok());
    const absl::StatusOr<AllocateInfo> a = s.Recover(g, On("n0", 0));
    REQUIRE(!a.ok());
    CHECK(a.status().code() == absl::StatusCode::kFailedPrecondition);
    INFO(a.status().message());
    CHECK(a.status().message() ==
          "group g: reopening its GPUs: the VC cannot hold GPUs of chain G-RACK now (binding "
          "0/n0 to VC A would break the safety of chain G-RACK)");
    CHECK(s.version() == version);  // no holder recovered and released again
    const absl::StatusOr<std::string> after = s.SaveState();
    REQUIRE(after.ok());
    CHECK(*after == *before);
    CHECK(s.GetGroup("g").state == GroupState::kAbsent);
    CHECK(testdata::OpenLeaves(s).empty());
  }
  SECTION("in rack 1 rack 0 stays whole: recovered") {
    const absl::StatusOr<AllocateInfo> a = s.Recover(g, On("n3", 1));
    INFO(a.status().message());
    REQUIRE(a.ok());
    CHECK(s.GetGroup("g").state == GroupState::kAllocated);
    CHECK(testdata::OpenLeaves(s) == std::vector<std::string>{"n3/1:500"});
  }
  REQUIRE(s.CheckInvariants().ok());
}

TEST_CASE("issue 27: the core's previews of Allocate and Recover answer what the calls do",
          "[scheduler][regression]") {
  absl::StatusOr<std::unique_ptr<SchedulerImpl>> created = SchedulerImpl::Create(Spec());
  REQUIRE(created.ok());
  SchedulerImpl& s = **created;
  REQUIRE(s.Recover(testdata::Whole("c", "C", 1, 1, "G"), On("n2", 0, "G-NODE")).ok());
  const auto same = [&](const GroupRequest& r, const Placement& p, bool recover) {
    const uint64_t epoch = s.epoch();
    const absl::StatusOr<AllocateInfo> preview =
        recover ? s.PreviewRecover(r, p) : s.PreviewAllocate(r, p);
    CHECK(s.epoch() == epoch);  // a preview changes nothing
    const absl::StatusOr<AllocateInfo> real = recover ? s.Recover(r, p) : s.Allocate(r, p);
    REQUIRE(preview.ok() == real.ok());
    if (!real.ok()) {
      CHECK(preview.status() == real.status());
      CHECK(s.epoch() == epoch);  // a refused call changes nothing either
      return;
    }
    CHECK(preview->downgraded == real->downgraded);
    CHECK(preview->reason == real->reason);
  };
  SECTION("a guaranteed Recover the safety check downgrades (the old preview accepted it)") {
    const GroupRequest w = testdata::Whole("w", "A", 1, 1, "G");
    const absl::StatusOr<AllocateInfo> preview = s.PreviewRecover(w, On("n0", 0, "G-NODE"));
    REQUIRE(preview.ok());
    CHECK(preview->downgraded);
    CHECK(preview->reason == "binding 0/n0 to VC A would break the safety of chain G-RACK");
    same(w, On("n0", 0, "G-NODE"), /*recover=*/true);
  }
  SECTION("a guaranteed Recover that keeps its virtual cells") {
    same(testdata::Whole("w", "A", 1, 1, "G"), On("n3", 0, "G-NODE"), /*recover=*/true);
  }
  SECTION("a Recover on a used leaf") {
    same(testdata::Whole("w", "A", 1, 1, "G"), On("n2", 0, "G-NODE"), /*recover=*/true);
  }
  SECTION("an Allocate of the Filtering decision, and one without a reservation") {
    const GroupRequest w = testdata::Whole("w", "C", 1, 1, "G");
    const absl::StatusOr<ScheduleResult> r = s.Schedule(w, Phase::kFiltering);
    REQUIRE(r.ok());
    REQUIRE(r->outcome == Outcome::kPlaced);
    same(w, r->placement, /*recover=*/false);
    same(testdata::Whole("x", "C", 1, 1, "G"), r->placement, /*recover=*/false);
  }
  REQUIRE(s.CheckInvariants().ok());
}

// Restore's last act-then-undo: a whole group none of whose leaves is in the cluster was
// restored (a group on no leaf) and then released by the layer (sharing/layered_state.cc).
// Now the core's Recover refuses it in Restore's mode (leaves the cluster lacks ignored), as
// decided, with nothing changed; a group with some of its leaves still comes back partial.
TEST_CASE("issue 27: Restore's Recover refuses a group on no leaf of the cluster up front",
          "[scheduler][regression]") {
  absl::StatusOr<std::unique_ptr<SchedulerImpl>> created = SchedulerImpl::Create(Spec());
  REQUIRE(created.ok());
  SchedulerImpl& s = **created;
  const uint64_t epoch = s.epoch();
  int32_t ignored = -1;
  const absl::StatusOr<AllocateInfo> gone =
      s.Recover(testdata::Whole("w", "A", 1, 1, "G"), On("n9", 0, "G-NODE"), &ignored);
  REQUIRE(!gone.ok());
  CHECK(gone.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(gone.status().message() ==
        "none of its leaf cells is in the cluster (leaf cells not in the cluster are ignored: "
        "n9:0)");
  CHECK(ignored == -1);
  CHECK(s.epoch() == epoch);
  CHECK(s.GetGroup("w").state == GroupState::kAbsent);

  Placement half = On("n9", 0, "G-NODE");
  half.pods.push_back(On("n1", 1, "G-NODE").pods[0]);
  GroupRequest two = testdata::Whole("w", "A", 1, 1, "G");
  two.members = {{2, 1}};  // two pods of one GPU each
  const absl::StatusOr<AllocateInfo> partial = s.Recover(two, half, &ignored);
  INFO(partial.status().message());
  REQUIRE(partial.ok());
  CHECK(ignored == 1);
  CHECK(s.GetGroup("w").state == GroupState::kAllocated);
  REQUIRE(s.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
