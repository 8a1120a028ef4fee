// The cluster of the pod and reservation-time tests: one rack of four 4-GPU nodes (n0..n3),
// VC1 owning three nodes, VC2 one; and helpers over the public API.
#ifndef HIVED_TESTS_UNIT_PODS_PODS_CLUSTER_H_
#define HIVED_TESTS_UNIT_PODS_PODS_CLUSTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"

namespace hived::testdata {

inline constexpr char kPodsYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    GPU-NODE:
      childCellType: GPU
      childCellNumber: 4
      isNodeLevel: true
    RACK:
      childCellType: GPU-NODE
      childCellNumber: 4
  physicalCells:
  - cellType: RACK
    cellChildren:
    - cellAddress: n0
    - cellAddress: n1
    - cellAddress: n2
    - cellAddress: n3
virtualClusters:
  VC1:
    virtualCells:
    - cellType: RACK.GPU-NODE
      cellNumber: 3
  VC2:
    virtualCells:
    - cellType: RACK.GPU-NODE
      cellNumber: 1
)yaml";

inline ClusterSpec PodsSpec() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kPodsYaml);
  INFO(spec.status().message());
  REQUIRE(spec.ok());
  return *spec;
}

inline std::unique_ptr<Scheduler> MakePods() {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(PodsSpec());
  INFO(s.status().message());
  REQUIRE(s.ok());
  return std::move(*s);
}

// A guaranteed gang: `members` as {pod_number, leaf_cell_number}.
inline GroupRequest Gang(const std::string& name, std::vector<GroupMember> members,
                         Priority priority = 1, const std::string& vc = "VC1") {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.priority = priority;
  r.members = std::move(members);
  return r;
}

inline Pod NamedPod(const std::string& name, int32_t leaves, const std::string& uid = "") {
  Pod p;
  p.name = name;
  p.uid = uid;
  p.leaf_cell_number = leaves;
  return p;
}

// Schedules `r` in the Preempting phase (it must be placed: reserved) and returns the placement.
inline Placement Reserve(Scheduler& s, const GroupRequest& r) {
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, Phase::kPreempting);
  INFO(res.status().message());
  REQUIRE(res.ok());
  INFO(res->reason);
  REQUIRE(res->outcome == Outcome::kPlaced);
  return res->placement;
}

inline void RequireInvariants(const Scheduler& s) {
  const absl::Status inv = s.CheckInvariants();
  INFO(inv.message());
  REQUIRE(inv.ok());
}

// Everything a view or a restart could tell apart: every group and the saved state.
inline std::string Fingerprint(const Scheduler& s) {
  std::string out;
  for (const GroupStatus& g : s.Groups()) {
    out += g.name + ":" + std::string(GroupStateName(g.state)) + ":";
    for (const PodIdentity& p : g.pods)
      out += std::to_string(p.index) + "=" + p.name + "/" + p.uid + ",";
    out += g.reserved_at.has_value() ? std::to_string(*g.reserved_at) : "-";
    out += g.reservation_deadline.has_value() ? std::to_string(*g.reservation_deadline) : "-";
    out += ";";
  }
  absl::StatusOr<std::string> saved = s.SaveState();
  REQUIRE(saved.ok());
  return out + *saved;
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_PODS_PODS_CLUSTER_H_
