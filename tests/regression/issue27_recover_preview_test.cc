// Issue 27 item 2: Recover without a retry loop. A guaranteed fractional group recovered on
// GPUs not open yet reopens them through a holder that needs its VC's preassigned cell
// types; Sharing tried the VC's types in order (Recover, downgraded: Release, Recover
// again). Now the scheduler's const preview (`PreviewRecover`, src/recovery.h `DecideBinding`)
// picks the type and one Recover follows. The cluster: tests/unit/sharing/sharing_cluster.h (VC1: a
// GA-NODE of the rack, then the GB node; so a GB GPU needs VC1's second type).
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;

Placement On(const std::string& chain, const std::string& node, int32_t index) {
  return testdata::OneLeaf(chain, node, index);
}

TEST_CASE("issue 27: Recover reopens a GPU with the VC's type the preview picks, in one step",
          "[scheduler][regression]") {
  auto s = testdata::Make();
  SECTION("the VC's second type (the first is of another chain)") {
    const GroupRequest g = Frac("g", "VC1", 1, 500, {"GB"});
    const absl::StatusOr<AllocateInfo> a = s->Recover(g, On("GB-NODE", "b0", 1));
    INFO(a.status().message());
    REQUIRE(a.ok());
    CHECK(s->GetGroup("g").state == GroupState::kAllocated);
    CHECK(testdata::OpenLeaves(*s) == std::vector<std::string>{"b0/1:500"});
  }
  SECTION("the VC's first type") {
    const GroupRequest g = Frac("g", "VC1", 1, 500, {"GA"});
    const absl::StatusOr<AllocateInfo> a = s->Recover(g, On("GA-RACK", "a0", 2));
    INFO(a.status().message());
    REQUIRE(a.ok());
    CHECK(s->GetGroup("g").state == GroupState::kAllocated);
  }
  SECTION("no type fits: nothing is recovered and the binding's reason is given") {
    REQUIRE(testdata::Run(*s, testdata::Whole("w", "VC1", 1, 2, "GB")) == Outcome::kPlaced);
    REQUIRE(s->Release("w").ok());
    // VC2 has no GB cell: its only type is of another chain.
    const GroupRequest g = Frac("g", "VC2", 1, 500, {"GB"});
    const absl::StatusOr<AllocateInfo> a = s->Recover(g, On("GB-NODE", "b0", 0));
    REQUIRE(!a.ok());
    CHECK(a.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(s->GetGroup("g").state == GroupState::kAbsent);
    CHECK(testdata::OpenLeaves(*s).empty());
  }
  REQUIRE(s->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
