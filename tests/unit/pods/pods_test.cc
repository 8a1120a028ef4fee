// Pods within gangs (scheduler.h "Pods", issue 29 item 1): the first pod runs the gang,
// later pods take the next free slot of their size, the last pod's release releases the
// gang, a gang allocated whole has pods named by index, views and records name the pods,
// and a gang is rebuilt from one pod's record.
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/pods/pods_cluster.h"

namespace hived {
namespace {

using testdata::Gang;
using testdata::NamedPod;
using testdata::Reserve;

std::vector<std::string> PodNames(const GroupStatus& g) {
  std::vector<std::string> out;
  for (const PodIdentity& p : g.pods) out.push_back(std::to_string(p.index) + ":" + p.name);
  return out;
}

int32_t FreeLeaves(const Scheduler& s) {
  int32_t free = 0;
  for (const NodeStatus& n : s.Nodes()) free += n.free_leaf_cells;
  return free;
}

TEST_CASE("Pods: the first pod runs the gang and later pods take the next free slot of their size",
          "[pods][unit]") {
  auto s = testdata::MakePods();
  // Placement order: pods by leaf_cell_number ascending: slots 0, 1 (1 leaf), 2 (2 leaves).
  const GroupRequest r = Gang("g", {{1, 2}, {2, 1}});
  const Placement p = Reserve(*s, r);
  REQUIRE(p.pods.size() == 3);

  absl::StatusOr<PodAllocation> a = s->AllocatePod(r, p, NamedPod("big", 2, "uid-big"));
  INFO(a.status().message());
  REQUIRE(a.ok());
  CHECK(a->started_gang);
  CHECK(a->pod.index == 2);
  CHECK(a->pod.group == "g");
  CHECK(a->pod.uid == "uid-big");
  CHECK(a->pod.placement.node == p.pods[2].node);
  CHECK(a->pod.placement.leaf_cell_indices == p.pods[2].leaf_cell_indices);
  // The gang runs: every leaf is held, as HiveD's first AddAllocatedPod does.
  CHECK(s->GetGroup("g").state == GroupState::kAllocated);
  CHECK(FreeLeaves(*s) == 16 - 4);
  CHECK(PodNames(s->GetGroup("g")) == std::vector<std::string>{"2:big"});
  testdata::RequireInvariants(*s);

  a = s->AllocatePod(r, p, NamedPod("small-a", 1));
  REQUIRE(a.ok());
  CHECK_FALSE(a->started_gang);
  CHECK(a->pod.index == 0);
  a = s->AllocatePod(r, {}, NamedPod("small-b", 1));  // later pods: the placement is not read
  REQUIRE(a.ok());
  CHECK(a->pod.index == 1);
  CHECK(PodNames(s->GetGroup("g")) == std::vector<std::string>{"0:small-a", "1:small-b", "2:big"});

  absl::StatusOr<PodStatus> look = s->GetPod("g", "small-b");
  REQUIRE(look.ok());
  CHECK(look->group == "g");
  CHECK(look->index == 1);
  CHECK(look->placement.node == p.pods[1].node);
  CHECK(look->placement.leaf_cell_indices == p.pods[1].leaf_cell_indices);

  // Releasing pods one at a time; the gang goes with its last.
  absl::StatusOr<PodRelease> rel = s->ReleasePod("g", "small-a");
  REQUIRE(rel.ok());
  CHECK(*rel == PodRelease::kPodOnly);
  CHECK(FreeLeaves(*s) == 16 - 4);  // all-or-nothing release, as HiveD
  // A new pod of that size takes the freed slot.
  a = s->AllocatePod(r, {}, NamedPod("small-c", 1));
  REQUIRE(a.ok());
  CHECK(a->pod.index == 0);
  for (const char* name : {"small-c", "big"}) {
    rel = s->ReleasePod("g", name);
    REQUIRE(rel.ok());
    CHECK(*rel == PodRelease::kPodOnly);
  }
  testdata::RequireInvariants(*s);
  rel = s->ReleasePod("g", "small-b");
  REQUIRE(rel.ok());
  CHECK(*rel == PodRelease::kGang);
  CHECK(s->GetGroup("g").state == GroupState::kAbsent);
  CHECK(FreeLeaves(*s) == 16);
  testdata::RequireInvariants(*s);
}

TEST_CASE("Pods: a pod naming its node and first leaf takes the slot that starts there",
          "[pods][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{3, 1}});
  const Placement p = Reserve(*s, r);
  Pod pod = NamedPod("third", 1);
  pod.node = p.pods[2].node;
  pod.first_leaf_index = p.pods[2].leaf_cell_indices[0];
  absl::StatusOr<PodAllocation> a = s->AllocatePod(r, p, pod);
  REQUIRE(a.ok());
  CHECK(a->pod.index == 2);
  a = s->AllocatePod(r, p, NamedPod("first", 1));
  REQUIRE(a.ok());
  CHECK(a->pod.index == 0);
}

TEST_CASE("Pods: a gang allocated whole has every pod, named by its index", "[pods][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{3, 1}});
  const Placement p = Reserve(*s, r);
  REQUIRE(s->Allocate(r, p).ok());
  CHECK(PodNames(s->GetGroup("g")) == std::vector<std::string>{"0:0", "1:1", "2:2"});
  // Its record has no pods: the format of a gang allocated whole is unchanged.
  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("g");
  REQUIRE(rec.ok());
  CHECK(rec->pods.empty());
  CHECK(GroupRecordToJson(*rec).find("allocatedPods") == std::string::npos);

  absl::StatusOr<PodStatus> one = s->GetPod("g", "1");
  REQUIRE(one.ok());
  CHECK(one->placement.leaf_cell_indices == p.pods[1].leaf_cell_indices);
  CHECK(s->GetPod("g", "01").status().code() == absl::StatusCode::kNotFound);

  REQUIRE(s->ReleasePod("g", "1").ok());
  CHECK(PodNames(s->GetGroup("g")) == std::vector<std::string>{"0:0", "2:2"});
  absl::StatusOr<PodAllocation> a = s->AllocatePod(r, p, NamedPod("again", 1));
  REQUIRE(a.ok());
  CHECK(a->pod.index == 1);
  CHECK(PodNames(s->GetGroup("g")) == std::vector<std::string>{"0:0", "1:again", "2:2"});
  rec = s->GetGroupRecord("g");
  REQUIRE(rec.ok());
  CHECK(rec->pods.size() == 3);
  testdata::RequireInvariants(*s);
  // The whole-gang Release still ends the gang with its pods.
  REQUIRE(s->Release("g").ok());
  CHECK(s->GetGroup("g").pods.empty());
  CHECK(FreeLeaves(*s) == 16);
}

TEST_CASE("Pods: saved state and group records keep the pods", "[pods][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{1, 2}, {2, 1}});
  const Placement p = Reserve(*s, r);
  REQUIRE(s->AllocatePod(r, p, NamedPod("big", 2, "u1")).ok());
  REQUIRE(s->AllocatePod(r, p, NamedPod("small", 1)).ok());
  const GroupRequest whole = Gang("w", {{2, 1}});
  REQUIRE(s->Allocate(whole, Reserve(*s, whole)).ok());

  absl::StatusOr<std::string> saved = s->SaveState();
  REQUIRE(saved.ok());
  CHECK(saved->find("\"allocatedPods\":[{\"slot\":0,\"name\":\"small\"},"
                    "{\"slot\":2,\"name\":\"big\",\"uid\":\"u1\"}]") != std::string::npos);
  absl::StatusOr<std::unique_ptr<Scheduler>> back =
      Scheduler::Restore(testdata::PodsSpec(), *saved);
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(testdata::Fingerprint(**back) == testdata::Fingerprint(*s));
  absl::StatusOr<std::string> again = (*back)->SaveState();
  REQUIRE(again.ok());
  CHECK(*again == *saved);
  CHECK(PodNames((*back)->GetGroup("w")) == std::vector<std::string>{"0:0", "1:1"});
  // The restored gang keeps working pod by pod.
  absl::StatusOr<PodAllocation> a = (*back)->AllocatePod(r, {}, NamedPod("small2", 1));
  REQUIRE(a.ok());
  CHECK(a->pod.index == 1);

  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("g");
  REQUIRE(rec.ok());
  REQUIRE(rec->pods.size() == 2);
  CHECK(rec->pods[0] == PodIdentity{0, "small", ""});
  CHECK(rec->pods[1] == PodIdentity{2, "big", "u1"});
  absl::StatusOr<GroupRecord> read = GroupRecordFromJson(GroupRecordToJson(*rec));
  INFO(read.status().message());
  REQUIRE(read.ok());
  CHECK(read->pods == rec->pods);
  CHECK(GroupRecordToJson(*read) == GroupRecordToJson(*rec));

  // AllocateRecord of that record elsewhere rebuilds the gang with those pods.
  auto t = testdata::MakePods();
  REQUIRE(t->AllocateRecord(*read).ok());
  CHECK(PodNames(t->GetGroup("g")) == std::vector<std::string>{"0:small", "2:big"});
  testdata::RequireInvariants(*t);
}

TEST_CASE("Pods: a document without pods (older than pods) restores every pod by index",
          "[pods][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{2, 1}});
  REQUIRE(s->Allocate(r, Reserve(*s, r)).ok());
  absl::StatusOr<std::string> saved = s->SaveState();
  REQUIRE(saved.ok());
  CHECK(saved->find("allocatedPods") == std::string::npos);
  absl::StatusOr<std::unique_ptr<Scheduler>> back =
      Scheduler::Restore(testdata::PodsSpec(), *saved);
  REQUIRE(back.ok());
  CHECK(PodNames((*back)->GetGroup("g")) == std::vector<std::string>{"0:0", "1:1"});
  CHECK((*back)->SaveState().value() == *saved);
}

TEST_CASE("Pods: a gang is rebuilt from one pod's record and the later pods attach",
          "[pods][unit]") {
  auto s = testdata::MakePods();
  const GroupRequest r = Gang("g", {{1, 2}, {2, 1}});
  const Placement p = Reserve(*s, r);
  REQUIRE(s->AllocatePod(r, p, NamedPod("a", 1)).ok());
  REQUIRE(s->AllocatePod(r, p, NamedPod("b", 1)).ok());
  REQUIRE(s->AllocatePod(r, p, NamedPod("c", 2)).ok());
  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("g");
  REQUIRE(rec.ok());

  // After a restart, pods come back in any order, each with the gang's record and its own
  // node and first leaf (HiveD: the first pod's bind info rebuilds the gang).
  auto t = testdata::MakePods();
  Pod c = NamedPod("c", 2);
  c.node = p.pods[2].node;
  c.first_leaf_index = p.pods[2].leaf_cell_indices[0];
  absl::StatusOr<PodAllocation> a = t->RecoverPod(*rec, c);
  INFO(a.status().message());
  REQUIRE(a.ok());
  CHECK(a->started_gang);
  CHECK(a->pod.index == 2);
  CHECK(PodNames(t->GetGroup("g")) == std::vector<std::string>{"2:c"});
  CHECK(t->GetGroup("g").placement.pods.size() == 3);
  Pod b = NamedPod("b", 1);
  b.node = p.pods[1].node;
  b.first_leaf_index = p.pods[1].leaf_cell_indices[0];
  a = t->RecoverPod(*rec, b);
  REQUIRE(a.ok());
  CHECK_FALSE(a->started_gang);
  CHECK(a->pod.index == 1);
  a = t->RecoverPod(*rec, NamedPod("a", 1));
  REQUIRE(a.ok());
  CHECK(a->pod.index == 0);
  CHECK(testdata::Fingerprint(*t) == testdata::Fingerprint(*s));
  testdata::RequireInvariants(*t);
}

}  // namespace
}  // namespace hived
