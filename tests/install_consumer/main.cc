// Links the installed hived and drives its public API: load a config, place a job (its
// cells reserved; another job's reservation given back with Unreserve), run it, save the
// scheduler's state, restart from it (and from one job's record), release the job.
// Exits non-zero if any step does not behave as documented.
#include <cstdio>
#include <memory>
#include <string>

#include "hived/cluster_info.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "hived/version.h"

namespace {

constexpr char kConfig[] = R"(
physicalCluster:
  cellTypes:
    K80-2GPU: {childCellType: K80, childCellNumber: 2}
    K80-NODE: {childCellType: K80-2GPU, childCellNumber: 2, isNodeLevel: true}
    3-K80-NODE: {childCellType: K80-NODE, childCellNumber: 3}
  physicalCells:
  - cellType: 3-K80-NODE
    cellChildren:
    - cellAddress: node-a
    - cellAddress: node-b
    - cellAddress: node-c
virtualClusters:
  VC1:
    virtualCells: [{cellType: 3-K80-NODE.K80-NODE, cellNumber: 2}]
)";

int Fail(const char* step, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", step, std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main() {
  absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecString(kConfig, "inline");
  if (!spec.ok()) {
    std::fprintf(stderr, "config: %s\n", std::string(spec.status().message()).c_str());
    return 1;
  }
  // 3 nodes of 2 x 2 K80s in one chain, as the library derives it.
  const hived::ClusterDescription cluster = hived::DescribeCluster(*spec);
  if (cluster.chains.size() != 1 || cluster.total_leaf_cells != 12) {
    std::fprintf(stderr, "describe: %zu chains, %lld leaf cells\n", cluster.chains.size(),
                 static_cast<long long>(cluster.total_leaf_cells));
    return 1;
  }
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> scheduler = hived::Scheduler::Create(*spec);
  if (!scheduler.ok()) {
    std::fprintf(stderr, "create: %s\n", std::string(scheduler.status().message()).c_str());
    return 1;
  }
  hived::GroupRequest job;
  job.name = "job-1";
  job.vc = "VC1";
  job.members = {{/*pod_number=*/2, /*leaf_cell_number=*/4}};
  absl::StatusOr<hived::ScheduleResult> result =
      (*scheduler)->Schedule(job, hived::Phase::kPreempting);
  if (!result.ok() || result->outcome != hived::Outcome::kPlaced) return 1;
  std::printf("job-1: %s\n", hived::OutcomeName(result->outcome));
  for (const hived::PodPlacement& pod : result->placement.pods) {
    std::printf("pod on %s:", pod.node.c_str());
    for (int32_t index : pod.leaf_cell_indices) std::printf(" %d", index);
    std::printf("\n");
  }
  // The kPlaced result is reserved: a second job cannot get its cells; Unreserve gives
  // the second one's reservation back (e.g. its bind failed).
  hived::GroupRequest other = job;
  other.name = "job-2";
  other.priority = hived::kOpportunisticPriority;  // any idle cell: node-c
  other.members = {{/*pod_number=*/1, /*leaf_cell_number=*/4}};
  absl::StatusOr<hived::ScheduleResult> second =
      (*scheduler)->Schedule(other, hived::Phase::kPreempting);
  if (!second.ok() || second->outcome != hived::Outcome::kPlaced ||
      second->placement.pods[0].node == result->placement.pods[0].node ||
      second->placement.pods[0].node == result->placement.pods[1].node) {
    std::fprintf(stderr, "reserve: job-2 got job-1's cells\n");
    return 1;
  }
  if ((*scheduler)->GetGroup("job-2").state != hived::GroupState::kReserved) return 1;
  if (absl::Status s = (*scheduler)->Unreserve("job-2"); !s.ok()) return Fail("unreserve", s);
  if ((*scheduler)->GetGroup("job-2").state != hived::GroupState::kAbsent) return 1;
  if (!(*scheduler)->Allocate(job, result->placement).ok()) return 1;

  // Restart: the saved state rebuilds the same scheduler (SaveState is byte-identical).
  absl::StatusOr<std::string> state = (*scheduler)->SaveState();
  if (!state.ok()) return Fail("save", state.status());
  hived::RestoreReport report;
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> restored =
      hived::Scheduler::Restore(*spec, *state, &report);
  if (!restored.ok()) return Fail("restore", restored.status());
  absl::StatusOr<std::string> again = (*restored)->SaveState();
  if (!again.ok() || *again != *state || report.groups.size() != 1 ||
      report.groups[0].outcome != hived::RestoreOutcome::kKept) {
    std::fprintf(stderr, "restore: the restored scheduler differs\n");
    return 1;
  }
  const hived::GroupStatus status = (*restored)->GetGroup("job-1");
  if (status.state != hived::GroupState::kAllocated || status.request.members.size() != 1) {
    return 1;
  }
  std::printf("job-1 after restore: %s, %s\n", hived::GroupStateName(status.state),
              hived::RestoreOutcomeName(report.groups[0].outcome));
  // A manager persisting per job: one record, to JSON and back, replayed after a restart.
  absl::StatusOr<hived::GroupRecord> record = (*restored)->GetGroupRecord("job-1");
  if (!record.ok()) return Fail("record", record.status());
  absl::StatusOr<hived::GroupRecord> back =
      hived::GroupRecordFromJson(hived::GroupRecordToJson(*record));
  if (!back.ok()) return Fail("record", back.status());
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> fresh = hived::Scheduler::Create(*spec);
  if (!fresh.ok()) return Fail("create", fresh.status());
  absl::StatusOr<hived::AllocateInfo> info = (*fresh)->AllocateRecord(*back);
  if (!info.ok()) return Fail("replay", info.status());
  if (info->downgraded) return 1;

  if (!(*restored)->Release("job-1").ok()) return 1;
  if (!(*restored)->CheckInvariants().ok()) return 1;
  std::printf("hived %s: placed, reserved, unreserved, ran, saved, restored and released\n",
              hived::VersionString());
  return 0;
}
