// ExportHivedBindInfo (issue 29, item 4): HiveD's annotations written for a pod of a running
// group read back, through ImportHivedBindInfo, to the group's request and placement.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "support/example_spec.h"

namespace hived {
namespace {

ClusterSpec TwoRacks() { return testing::ExampleSpec("two-racks.yaml"); }

void RequireSameRecord(const GroupRecord& a, const GroupRecord& b) {
  GroupRecord x = a;
  GroupRecord y = b;
  x.virtual_leaf_cells.clear();  // HiveD's record has none
  y.virtual_leaf_cells.clear();
  CHECK(GroupRecordToJson(x) == GroupRecordToJson(y));
}

TEST_CASE("ExportHivedBindInfo: every pod's annotations import to the group's record",
          "[persistence][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  GroupRequest req;
  req.name = "default/train \"42\"";
  req.vc = "research";
  req.priority = 10;
  req.leaf_cell_type = "V100";
  req.lazy_preemption = true;
  req.members = {{/*pod_number=*/1, /*leaf_cell_number=*/2}, {2, 1}, {1, 4}};
  auto r = (*s)->Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE((*s)->Allocate(req, r->placement).ok());
  absl::StatusOr<GroupRecord> rec = (*s)->GetGroupRecord(req.name);
  REQUIRE(rec.ok());
  for (int32_t pod = 0; pod < 4; ++pod) {
    CAPTURE(pod);
    absl::StatusOr<HivedAnnotations> a = ExportHivedBindInfo(*rec, pod);
    REQUIRE(a.ok());
    CAPTURE(a->bind_info_yaml, a->scheduling_spec_yaml);
    absl::StatusOr<GroupRecord> back =
        ImportHivedBindInfo(a->bind_info_yaml, a->scheduling_spec_yaml);
    REQUIRE(back.ok());
    // Members come back in the order written (one per member), pods by size.
    RequireSameRecord(*back, *rec);
    CHECK(a->bind_info_yaml.find(absl::StrCat(
              "node: \"", rec->placement.pods[static_cast<size_t>(pod)].node, "\"")) == 0);
  }
  // Replayed after a restart like a record: the same placement.
  auto fresh = Scheduler::Create(TwoRacks());
  REQUIRE(fresh.ok());
  absl::StatusOr<HivedAnnotations> a = ExportHivedBindInfo(*rec, 0);
  REQUIRE(a.ok());
  absl::StatusOr<GroupRecord> back =
      ImportHivedBindInfo(a->bind_info_yaml, a->scheduling_spec_yaml);
  REQUIRE(back.ok());
  REQUIRE((*fresh)->AllocateRecord(*back).ok());
  CHECK((*fresh)->GetGroup(req.name).placement.pods.size() == 4);
}

TEST_CASE("ExportHivedBindInfo: an opportunistic group round-trips too", "[persistence][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  GroupRequest req;
  req.name = "opp";
  req.vc = "dev";
  req.priority = kOpportunisticPriority;
  req.members = {{/*pod_number=*/3, /*leaf_cell_number=*/8}};
  auto r = (*s)->Schedule(req, Phase::kPreempting);
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE((*s)->Allocate(req, r->placement).ok());
  absl::StatusOr<GroupRecord> rec = (*s)->GetGroupRecord("opp");
  REQUIRE(rec.ok());
  absl::StatusOr<HivedAnnotations> a = ExportHivedBindInfo(*rec, 2);
  REQUIRE(a.ok());
  absl::StatusOr<GroupRecord> back =
      ImportHivedBindInfo(a->bind_info_yaml, a->scheduling_spec_yaml);
  REQUIRE(back.ok());
  RequireSameRecord(*back, *rec);
}

TEST_CASE("ExportHivedBindInfo: refuses what HiveD cannot record", "[persistence][unit]") {
  GroupRecord rec;
  rec.request.name = "g";
  rec.request.vc = "prod";
  rec.request.members = {{1, 2}};
  rec.placement.chain = "V100-RACK";
  rec.placement.pods = {{2, "rack0-node0", {0, 1}, {}, "", -1}};
  CHECK(ExportHivedBindInfo(rec, 0).ok());
  CHECK(ExportHivedBindInfo(rec, 1).status().message() == "group g: no pod 1 (it has 1)");
  CHECK(ExportHivedBindInfo(rec, -1).status().code() == absl::StatusCode::kInvalidArgument);
  GroupRecord frac = rec;
  frac.request.members[0].gpu_milli = 500;
  CHECK(ExportHivedBindInfo(frac, 0).status().message().find("only whole-GPU gangs") !=
        std::string::npos);
  GroupRecord mismatch = rec;
  mismatch.placement.pods[0].leaf_cell_number = 1;
  mismatch.placement.pods[0].leaf_cell_indices = {0};
  CHECK(ExportHivedBindInfo(mismatch, 0).status().code() == absl::StatusCode::kInvalidArgument);
  GroupRecord huge = rec;
  huge.request.name = std::string(1000, 'x');
  CHECK(ExportHivedBindInfo(huge, 5).status().message().size() < 200);
}

}  // namespace
}  // namespace hived
