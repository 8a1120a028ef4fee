// tests/unit/cellalloc/test_specs.h: ClusterSpecs built in code for the cellalloc tests
// and benchmarks: HiveD's example configs (the parts that matter) and generated clusters.
#ifndef HIVED_TESTS_UNIT_CELLALLOC_TEST_SPECS_H_
#define HIVED_TESTS_UNIT_CELLALLOC_TEST_SPECS_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_topology.h"
#include "hived/cluster_spec.h"

namespace hived::cellalloc::testing {

inline PhysicalCellSpec Cell(std::string address, std::vector<PhysicalCellSpec> children = {},
                             std::string pinned = "") {
  PhysicalCellSpec cell;
  cell.cell_address = std::move(address);
  cell.cell_children = std::move(children);
  cell.pinned_cell_id = std::move(pinned);
  return cell;
}

inline PhysicalCellSpec Top(std::string type, std::string address = "",
                            std::vector<PhysicalCellSpec> children = {}, std::string pinned = "") {
  PhysicalCellSpec cell = Cell(std::move(address), std::move(children), std::move(pinned));
  cell.cell_type = std::move(type);
  return cell;
}

// HiveD's `basic.yaml`: 3 K80 nodes of 2 x 2 GPUs in one rack.
inline ClusterSpec BasicSpec() {
  ClusterSpec spec;
  spec.cell_types = {{"K80-2GPU", "K80", 2, false},
                     {"K80-NODE", "K80-2GPU", 2, true},
                     {"3-K80-NODE", "K80-NODE", 3, false}};
  spec.physical_cells = {
      Top("3-K80-NODE", "",
          {Cell("10.151.41.20"), Cell("10.151.41.21", {}, "VC2-K80"), Cell("10.151.41.22")})};
  return spec;
}

// HiveD's `design.yaml` physical cluster, transcribed field by field.
inline ClusterSpec DesignSpec() {
  ClusterSpec spec;
  spec.cell_types = {
      {"CT1-NODE", "CT1", 2, true},
      {"DGX1-P100-PCI-SWITCH", "DGX1-P100", 2, false},
      {"DGX1-P100-CPU-SOCKET", "DGX1-P100-PCI-SWITCH", 2, false},
      {"DGX1-P100-NODE", "DGX1-P100-CPU-SOCKET", 2, true},
      {"3-DGX1-P100-NODE", "DGX1-P100-NODE", 3, false},
      {"DGX1-V100-PCI-SWITCH", "DGX1-V100", 2, false},
      {"DGX1-V100-CPU-SOCKET", "DGX1-V100-PCI-SWITCH", 2, false},
      {"DGX1-V100-NODE", "DGX1-V100-CPU-SOCKET", 2, true},
      {"2-DGX1-V100-NODE", "DGX1-V100-NODE", 2, false},
      {"DGX2-V100-NODE-2-GPU", "DGX2-V100", 2, false},
      {"DGX2-V100-NODE-4-GPU", "DGX2-V100-NODE-2-GPU", 2, false},
      {"DGX2-V100-NODE-8-GPU", "DGX2-V100-NODE-4-GPU", 2, false},
      {"DGX2-V100-NODE", "DGX2-V100-NODE-8-GPU", 2, true},
      {"2-DGX2-V100-NODE", "DGX2-V100-NODE", 2, false},
      {"3-DGX2-V100-NODE", "DGX2-V100-NODE", 3, false},
      {"4-DGX2-V100-NODE", "2-DGX2-V100-NODE", 2, false},
      {"IB-DGX2-V100-NODE-2-GPU", "IB-DGX2-V100-V100", 2, false},
      {"IB-DGX2-V100-NODE-4-GPU", "IB-DGX2-V100-NODE-2-GPU", 2, false},
      {"IB-DGX2-V100-NODE-8-GPU", "IB-DGX2-V100-NODE-4-GPU", 2, false},
      {"IB-DGX2-V100-NODE", "IB-DGX2-V100-NODE-8-GPU", 2, true},
      {"2-IB-DGX2-V100-NODE", "IB-DGX2-V100-NODE", 2, false},
  };
  auto sw = [](std::string a, std::string g0, std::string g1) {
    return Cell(std::move(a), {Cell(std::move(g0)), Cell(std::move(g1))});
  };
  spec.physical_cells = {
      Top("CT1-NODE", "0.0.0.0"),
      Top("CT1-NODE", "0.0.0.1"),
      Top("CT1-NODE", "1.0.0.2", {Cell("8", {}, "VC1-YQW-CT1"), Cell("9")}),
      Top("3-DGX1-P100-NODE", "",
          {Cell("1.0.0.2"),
           Cell("1.0.0.1", {Cell("0", {sw("0", "0", "1"), sw("1", "2", "3")}),
                            Cell("1", {sw("2", "4", "5"), sw("3", "6", "7")})}),
           Cell("1.0.0.0", {Cell("1", {sw("1", "1", "3"), sw("0", "4", "7")}),
                            Cell("0", {sw("1", "0", "2"), sw("0", "6", "5")})})}),
      Top("DGX2-V100-NODE", "0.0.1.0"),
      Top("DGX2-V100-NODE", "0.0.5.0"),
      Top("3-DGX2-V100-NODE", "", {Cell("0.0.2.0"), Cell("0.0.2.1"), Cell("0.0.2.2")}),
      Top("4-DGX2-V100-NODE", "",
          {Cell("", {Cell("0.0.3.0"), Cell("0.0.3.1")}, "VC1-YQW-DGX2"),
           Cell("", {Cell("0.0.3.2"), Cell("0.0.3.3")})}),
      Top("4-DGX2-V100-NODE", "",
          {Cell("", {Cell("0.0.4.0"), Cell("0.0.4.1")}),
           Cell("", {Cell("0.0.4.2"), Cell("0.0.4.3")})}),
      Top("2-IB-DGX2-V100-NODE", "", {Cell("0.1.0.0"), Cell("0.1.0.1")}, "VC1-YQW-IB-DGX2"),
  };
  return spec;
}

// The benchmark topology (bench/bench_topology.h), so tests exercise what is measured.
using ::hived::bench::RackSpec;

// Racks of `nodes_per_rack` flat 16-GPU nodes (non-power-of-two fan-out when 3).
inline ClusterSpec FlatSpec(int racks, int nodes_per_rack, int gpus_per_node) {
  ClusterSpec spec;
  spec.cell_types = {{"K-NODE", "K", gpus_per_node, true},
                     {"K-RACK", "K-NODE", nodes_per_rack, false}};
  for (int r = 0; r < racks; ++r) {
    PhysicalCellSpec rack = Top("K-RACK");
    for (int n = 0; n < nodes_per_rack; ++n) {
      rack.cell_children.push_back(Cell(absl::StrCat("k-r", r, "-n", n)));
    }
    spec.physical_cells.push_back(std::move(rack));
  }
  return spec;
}

}  // namespace hived::cellalloc::testing

#endif  // HIVED_TESTS_UNIT_CELLALLOC_TEST_SPECS_H_
