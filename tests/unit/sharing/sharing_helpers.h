// Helpers of the sharing tests (tests/unit/sharing/sharing_cluster.h's cluster): requests,
// a scheduler, Schedule-and-Allocate, and the GPUs open for sharing.
#ifndef HIVED_TESTS_UNIT_SHARING_SHARING_HELPERS_H_
#define HIVED_TESTS_UNIT_SHARING_SHARING_HELPERS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_cluster.h"

namespace hived::testdata {

inline GroupRequest Frac(const std::string& name, const std::string& vc, Priority prio,
                         int32_t milli, std::vector<std::string> types = {"GA"}, int32_t pods = 1) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.priority = prio;
  r.leaf_cell_types = std::move(types);
  GroupMember m;
  m.pod_number = pods;
  m.leaf_cell_number = 1;
  m.gpu_milli = milli;
  r.members = {m};
  return r;
}

// One pod on leaf `index` of `node` in chain `chain`, with preassigned cell type `type` (none
// when empty): a placement to Recover.
inline Placement OneLeaf(const std::string& chain, const std::string& node, int32_t index,
                         const std::string& type = "") {
  Placement p;
  p.chain = chain;
  PodPlacement pod;
  pod.leaf_cell_number = 1;
  pod.node = node;
  pod.leaf_cell_indices = {index};
  if (!type.empty()) pod.preassigned_cell_types = {type};
  p.pods.push_back(pod);
  return p;
}

inline GroupRequest Whole(const std::string& name, const std::string& vc, Priority prio,
                          int32_t leaves, const std::string& type) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.priority = prio;
  r.leaf_cell_type = type;
  r.members = {{1, leaves}};
  return r;
}

inline std::unique_ptr<Scheduler> Make() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

// Schedules (Preempting phase) and allocates when placed; the outcome.
inline Outcome Run(Scheduler& s, const GroupRequest& r, ScheduleResult* out = nullptr) {
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, Phase::kPreempting);
  REQUIRE(res.ok());
  if (res->outcome == Outcome::kPlaced) REQUIRE(s.Allocate(r, res->placement).ok());
  REQUIRE(s.CheckInvariants().ok());
  if (out != nullptr) *out = *res;
  return res->outcome;
}

inline std::string GpuOf(Scheduler& s, const std::string& group) {
  const GroupStatus g = s.GetGroup(group);
  REQUIRE(g.placement.pods.size() == 1);
  return g.placement.pods[0].node + "/" + std::to_string(g.placement.pods[0].leaf_cell_indices[0]);
}

// Leaves open for sharing, as "node/index:shared milli".
inline void Leaves(const PhysicalCellStatus& c, const std::string& node,
                   std::vector<std::string>* out) {
  const std::string here = c.is_node_level ? c.address.substr(c.address.rfind('/') + 1) : node;
  if (c.children.empty() && !c.sharing_holder.empty()) {
    out->push_back(node + "/" + c.address.substr(c.address.rfind('/') + 1) + ":" +
                   std::to_string(c.shared_milli));
  }
  for (const PhysicalCellStatus& k : c.children) Leaves(k, here, out);
}
inline std::vector<std::string> OpenLeaves(Scheduler& s) {
  std::vector<std::string> out;
  for (const PhysicalCellStatus& c : s.PhysicalCluster()) Leaves(c, "", &out);
  return out;
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SHARING_SHARING_HELPERS_H_
