// bench/bench_topology.h: the cluster the benchmarks measure, built in code. The cellalloc
// tests reuse it (tests may include benchmark helpers; benchmarks include no test headers).
#ifndef HIVED_BENCH_BENCH_TOPOLOGY_H_
#define HIVED_BENCH_BENCH_TOPOLOGY_H_

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hived/cluster_spec.h"

namespace hived::bench {

inline PhysicalCellSpec Rack(std::string type) {
  PhysicalCellSpec cell;
  cell.cell_type = std::move(type);
  return cell;
}

inline PhysicalCellSpec Node(std::string address) {
  PhysicalCellSpec cell;
  cell.cell_address = std::move(address);
  return cell;
}

// The benchmark topology: `racks` racks of `nodes_per_rack` 8-GPU nodes (2 CPU sockets x
// 2 PCIe switches x 2 GPUs), plus `dgx2_racks` racks of 4 16-GPU nodes (a second chain,
// binary levels 2-4-8-16 below the node). Node names are explicit, as in real configs.
inline ClusterSpec RackSpec(int racks, int nodes_per_rack, int dgx2_racks = 0) {
  ClusterSpec spec;
  spec.cell_types = {
      {"V100-SWITCH", "V100", 2, false},     {"V100-SOCKET", "V100-SWITCH", 2, false},
      {"V100-NODE", "V100-SOCKET", 2, true}, {"V100-RACK", "V100-NODE", nodes_per_rack, false},
      {"A100-2GPU", "A100", 2, false},       {"A100-4GPU", "A100-2GPU", 2, false},
      {"A100-8GPU", "A100-4GPU", 2, false},  {"A100-NODE", "A100-8GPU", 2, true},
      {"A100-RACK", "A100-NODE", 4, false}};
  for (int r = 0; r < racks; ++r) {
    PhysicalCellSpec rack = Rack("V100-RACK");
    for (int n = 0; n < nodes_per_rack; ++n) {
      rack.cell_children.push_back(Node(absl::StrCat("v100-r", r, "-n", n)));
    }
    spec.physical_cells.push_back(std::move(rack));
  }
  for (int r = 0; r < dgx2_racks; ++r) {
    PhysicalCellSpec rack = Rack("A100-RACK");
    for (int n = 0; n < 4; ++n)
      rack.cell_children.push_back(Node(absl::StrCat("a100-r", r, "-n", n)));
    spec.physical_cells.push_back(std::move(rack));
  }
  return spec;
}

}  // namespace hived::bench

#endif  // HIVED_BENCH_BENCH_TOPOLOGY_H_
