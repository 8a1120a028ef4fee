// The cluster of the sharing tests: two 4-GPU nodes of GA (a rack; 16 GB, `protected`
// sharing), one 2-GPU node of GB (`separate`); CPU and host memory on every node.
// VC1: one GA node and the GB node; VC2: one GA node.
#ifndef HIVED_TESTS_UNIT_SHARING_SHARING_CLUSTER_H_
#define HIVED_TESTS_UNIT_SHARING_SHARING_CLUSTER_H_

namespace hived::testdata {

inline constexpr char kSharingYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    GA-NODE:
      childCellType: GA
      childCellNumber: 4
      isNodeLevel: true
    GA-RACK:
      childCellType: GA-NODE
      childCellNumber: 2
    GB-NODE:
      childCellType: GB
      childCellNumber: 2
      isNodeLevel: true
  leafCellTypes:
    GA:
      gpuMemoryMiB: 16000
      sharingMode: protected
    GB:
      sharingMode: separate
  physicalCells:
  - cellType: GA-RACK
    cellChildren:
    - cellAddress: a0
      cpuMilli: 8000
      memoryMiB: 64000
    - cellAddress: a1
      cpuMilli: 8000
      memoryMiB: 64000
  - cellType: GB-NODE
    cellAddress: b0
    cpuMilli: 4000
    memoryMiB: 32000
virtualClusters:
  VC1:
    virtualCells:
    - cellType: GA-RACK.GA-NODE
      cellNumber: 1
    - cellType: GB-NODE
      cellNumber: 1
  VC2:
    virtualCells:
    - cellType: GA-RACK.GA-NODE
      cellNumber: 1
)yaml";

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SHARING_SHARING_CLUSTER_H_
