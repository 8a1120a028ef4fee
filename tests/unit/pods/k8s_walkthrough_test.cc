// The Kubernetes-shaped walk-through of docs/integration.md ("Pods, one at a time"): its
// code blocks are this file's snippet regions (tests/api/snippets_test.cc checks they are
// quoted verbatim), run here against the pods test cluster.
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/pods/pods_cluster.h"

namespace hived {
namespace {

TEST_CASE("Walk-through: filter, permit with a deadline, bind per pod, delete a pod, restart",
          "[pods][unit]") {
  std::unique_ptr<Scheduler> owned = testdata::MakePods();
  Scheduler& scheduler = *owned;
  hived::GroupRequest req = testdata::Gang("job-1", {{/*pod_number=*/2, /*leaf_cell_number=*/2}});
  const std::vector<std::string> pods = {"job-1-0", "job-1-1"};
  int64_t now_ms = 1'000;
  std::map<std::string, hived::PodPlacement> bound_at;  // the manager's own record of binds

  // [snippet: k8s-filter]
  // Filter (any goroutine, any pod of the gang): which nodes would the gang use?
  absl::StatusOr<hived::ScheduleResult> filter = scheduler.Schedule(req, hived::Phase::kFiltering);
  if (!filter.ok()) FAIL(filter.status());  // a bad request: the pod is unschedulable
  // kPlaced: the pods' nodes are filter->placement.pods[i].node; kWaiting: none fits now.
  // [end snippet]
  REQUIRE(filter->outcome == hived::Outcome::kPlaced);

  // [snippet: k8s-permit]
  // Reserve, then Permit: hold the gang's cells while its pods gather, at most 30 s.
  absl::StatusOr<hived::ScheduleResult> reserved = scheduler.Schedule(
      req, hived::Phase::kPreempting, hived::ReservationTime{now_ms, now_ms + 30'000});
  if (!reserved.ok() || reserved->outcome != hived::Outcome::kPlaced) FAIL("not reserved");
  // A timer, every second: reservations past their deadline are given back (Unreserve);
  // their pods go back to the queue.
  for (const hived::ExpiredReservation& e : scheduler.ExpireReservations(now_ms)) {
    std::cout << "requeue " << e.group << " (reserved at " << e.reserved_at << ")\n";
  }
  // [end snippet]
  REQUIRE(scheduler.GetGroup("job-1").state == hived::GroupState::kReserved);

  // [snippet: k8s-bind]
  // Bind, pod by pod: the first pod runs the gang; each pod gets its node and devices.
  for (const std::string& pod_name : pods) {
    hived::Pod pod;
    pod.name = pod_name;
    pod.leaf_cell_number = 2;
    absl::StatusOr<hived::PodAllocation> bound =
        scheduler.AllocatePod(req, reserved->placement, pod);
    if (!bound.ok()) FAIL(bound.status());  // e.g. kAlreadyExists: bound twice
    // Bind pod_name to bound->pod.placement.node, devices bound->pod.placement.leaf_cell_indices;
    // store the gang's record with the pod (HiveD's pod-bind-info) for a restart.
    bound_at[pod_name] = bound->pod.placement;
    absl::StatusOr<hived::GroupRecord> record = scheduler.GetGroupRecord(req.name);
    std::string annotation = hived::GroupRecordToJson(*record);
    // [end snippet]
    CHECK(bound->pod.name == pod_name);
    CHECK(!annotation.empty());
  }
  CHECK(scheduler.GetGroup("job-1").pods.size() == 2);
  now_ms += 60'000;
  CHECK(scheduler.ExpireReservations(now_ms).empty());  // it runs: nothing to expire

  const std::string annotation = GroupRecordToJson(*scheduler.GetGroupRecord("job-1"));
  // [snippet: k8s-delete]
  // A pod is deleted: its slot is free again; the gang's cells go with its last pod.
  absl::StatusOr<hived::PodRelease> released = scheduler.ReleasePod("job-1", "job-1-0");
  if (released.ok() && *released == hived::PodRelease::kGang) std::cout << "job-1 ended\n";
  // [end snippet]
  REQUIRE(released.ok());
  CHECK(*released == hived::PodRelease::kPodOnly);

  std::unique_ptr<Scheduler> restarted_owned = testdata::MakePods();
  Scheduler& restarted = *restarted_owned;
  const std::vector<std::string> running = {"job-1-1"};
  // [snippet: k8s-restart]
  // After a restart, every bound pod is replayed from the record stored with it: the first
  // pod of a gang rebuilds the gang, the later ones attach.
  for (const std::string& pod_name : running) {
    absl::StatusOr<hived::GroupRecord> record = hived::GroupRecordFromJson(annotation);
    hived::Pod pod;
    pod.name = pod_name;
    pod.leaf_cell_number = 2;
    pod.node = bound_at[pod_name].node;  // where it runs: its slot in the gang
    pod.first_leaf_index = bound_at[pod_name].leaf_cell_indices.front();
    absl::StatusOr<hived::PodAllocation> back = restarted.RecoverPod(*record, pod);
    if (!back.ok()) std::cerr << pod_name << ": " << back.status() << "\n";
  }
  // [end snippet]
  REQUIRE(restarted.GetGroup("job-1").pods.size() == 1);
  CHECK(restarted.GetGroup("job-1").pods[0].index == 1);
  CHECK(restarted.GetGroup("job-1").state == GroupState::kAllocated);
  testdata::RequireInvariants(restarted);
}

}  // namespace
}  // namespace hived
