// The cluster of the MIG tests: a rack of two 2-GPU A100 nodes (m0, m1; built-in geometry
// A100-40GB, `protected` sharing) and one 2-GPU V100 node (v0, no MIG).
// VC1: one A100 node and the V100 node; VC2: one A100 node.
#ifndef HIVED_TESTS_UNIT_SHARING_MIG_CLUSTER_H_
#define HIVED_TESTS_UNIT_SHARING_MIG_CLUSTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived::testdata {

inline constexpr char kMigYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    A100-NODE:
      childCellType: A100
      childCellNumber: 2
      isNodeLevel: true
    A100-RACK:
      childCellType: A100-NODE
      childCellNumber: 2
    V100-NODE:
      childCellType: V100
      childCellNumber: 2
      isNodeLevel: true
  leafCellTypes:
    A100:
      migGeometry: A100-40GB
      sharingMode: protected
  physicalCells:
  - cellType: A100-RACK
    cellChildren:
    - cellAddress: m0
    - cellAddress: m1
  - cellType: V100-NODE
    cellAddress: v0
virtualClusters:
  VC1:
    virtualCells:
    - cellType: A100-RACK.A100-NODE
      cellNumber: 1
    - cellType: V100-NODE
      cellNumber: 1
  VC2:
    virtualCells:
    - cellType: A100-RACK.A100-NODE
      cellNumber: 1
)yaml";

// A MIG group: `pods` pods of `profile` (Frac's request with the share replaced).
inline GroupRequest Mig(const std::string& name, const std::string& vc, Priority prio,
                        const std::string& profile, int32_t pods = 1,
                        std::vector<std::string> types = {}) {
  GroupRequest r = Frac(name, vc, prio, 0, std::move(types), pods);
  r.members[0].mig_profile = profile;
  return r;
}

inline std::unique_ptr<Scheduler> MakeMig() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kMigYaml, "mig.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

// The configured MIG instances of every A100, as "node/index: profile@start=group" (free:
// "=-"), in cluster order.
inline void MigOf(const PhysicalCellStatus& c, const std::string& node,
                  std::vector<std::string>* out) {
  const std::string here = c.is_node_level ? c.address.substr(c.address.rfind('/') + 1) : node;
  if (c.children.empty()) {
    for (const MigInstanceStatus& i : c.mig_instances) {
      out->push_back(node + "/" + c.address.substr(c.address.rfind('/') + 1) + ":" + i.profile +
                     "@" + std::to_string(i.start) + "=" + (i.group.empty() ? "-" : i.group));
    }
  }
  for (const PhysicalCellStatus& k : c.children) MigOf(k, here, out);
}
inline std::vector<std::string> MigInstances(Scheduler& s) {
  std::vector<std::string> out;
  for (const PhysicalCellStatus& c : s.PhysicalCluster()) MigOf(c, "", &out);
  return out;
}

inline int64_t Reconfigurations(Scheduler& s) {
  int64_t n = 0;
  for (const ChainSummary& c : s.ChainSummaries()) n += c.mig_reconfigurations;
  return n;
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SHARING_MIG_CLUSTER_H_
