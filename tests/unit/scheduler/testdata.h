// HiveD's design config (hived-configs/design.yaml, comments removed) and small configs
// for the scheduler unit tests.
#ifndef HIVED_TESTS_UNIT_SCHEDULER_TESTDATA_H_
#define HIVED_TESTS_UNIT_SCHEDULER_TESTDATA_H_

namespace hived::testdata {

inline constexpr char kDesignYaml[] = R"yaml(
kubeApiServerAddress: http://10.10.10.10:8080
physicalCluster:
  cellTypes:
    CT1-NODE:
      childCellType: CT1
      childCellNumber: 2
      isNodeLevel: true
    DGX1-P100-PCI-SWITCH:
      childCellType: DGX1-P100
      childCellNumber: 2
    DGX1-P100-CPU-SOCKET:
      childCellType: DGX1-P100-PCI-SWITCH
      childCellNumber: 2
    DGX1-P100-NODE:
      childCellType: DGX1-P100-CPU-SOCKET
      childCellNumber: 2
      isNodeLevel: true
    3-DGX1-P100-NODE:
      childCellType: DGX1-P100-NODE
      childCellNumber: 3
    DGX1-V100-PCI-SWITCH:
      childCellType: DGX1-V100
      childCellNumber: 2
    DGX1-V100-CPU-SOCKET:
      childCellType: DGX1-V100-PCI-SWITCH
      childCellNumber: 2
    DGX1-V100-NODE:
      childCellType: DGX1-V100-CPU-SOCKET
      childCellNumber: 2
      isNodeLevel: true
    2-DGX1-V100-NODE:
      childCellType: DGX1-V100-NODE
      childCellNumber: 2
    DGX2-V100-NODE-2-GPU:
      childCellType: DGX2-V100
      childCellNumber: 2
    DGX2-V100-NODE-4-GPU:
      childCellType: DGX2-V100-NODE-2-GPU
      childCellNumber: 2
    DGX2-V100-NODE-8-GPU:
      childCellType: DGX2-V100-NODE-4-GPU
      childCellNumber: 2
    DGX2-V100-NODE:
      childCellType: DGX2-V100-NODE-8-GPU
      childCellNumber: 2
      isNodeLevel: true
    2-DGX2-V100-NODE:
      childCellType: DGX2-V100-NODE
      childCellNumber: 2
    3-DGX2-V100-NODE:
      childCellType: DGX2-V100-NODE
      childCellNumber: 3
    4-DGX2-V100-NODE:
      childCellType: 2-DGX2-V100-NODE
      childCellNumber: 2
    IB-DGX2-V100-NODE-2-GPU:
      childCellType: IB-DGX2-V100-V100
      childCellNumber: 2
    IB-DGX2-V100-NODE-4-GPU:
      childCellType: IB-DGX2-V100-NODE-2-GPU
      childCellNumber: 2
    IB-DGX2-V100-NODE-8-GPU:
      childCellType: IB-DGX2-V100-NODE-4-GPU
      childCellNumber: 2
    IB-DGX2-V100-NODE:
      childCellType: IB-DGX2-V100-NODE-8-GPU
      childCellNumber: 2
      isNodeLevel: true
    2-IB-DGX2-V100-NODE:
      childCellType: IB-DGX2-V100-NODE
      childCellNumber: 2
  physicalCells:
  - cellType: CT1-NODE
    cellAddress: 0.0.0.0
  - cellType: CT1-NODE
    cellAddress: 0.0.0.1
  - cellType: CT1-NODE
    cellAddress: 1.0.0.2
    cellChildren:
    - cellAddress: 8
      pinnedCellId: VC1-YQW-CT1
    - cellAddress: 9
  - cellType: 3-DGX1-P100-NODE
    cellChildren:
    - cellAddress: 1.0.0.2
      cellChildren: null
    - cellAddress: 1.0.0.1
      cellChildren:
      - cellAddress: 0
        cellChildren:
        - cellAddress: 0
          cellChildren:
          - cellAddress: 0
          - cellAddress: 1
        - cellAddress: 1
          cellChildren:
          - cellAddress: 2
          - cellAddress: 3
      - cellAddress: 1
        cellChildren:
        - cellAddress: 2
          cellChildren:
          - cellAddress: 4
          - cellAddress: 5
        - cellAddress: 3
          cellChildren:
          - cellAddress: 6
          - cellAddress: 7
    - cellAddress: 1.0.0.0
      cellChildren:
      - cellAddress: 1
        cellChildren:
        - cellAddress: 1
          cellChildren:
          - cellAddress: 1
          - cellAddress: 3
        - cellAddress: 0
          cellChildren:
          - cellAddress: 4
          - cellAddress: 7
      - cellAddress: 0
        cellChildren:
        - cellAddress: 1
          cellChildren:
          - cellAddress: 0
          - cellAddress: 2
        - cellAddress: 0
          cellChildren:
          - cellAddress: 6
          - cellAddress: 5
  - cellType: DGX2-V100-NODE
    cellAddress: 0.0.1.0
  - cellType: DGX2-V100-NODE
    cellAddress: 0.0.5.0
  - cellType: 3-DGX2-V100-NODE
    cellChildren:
    - cellAddress: 0.0.2.0
    - cellAddress: 0.0.2.1
    - cellAddress: 0.0.2.2
  - cellType: 4-DGX2-V100-NODE
    cellChildren:
    - pinnedCellId: VC1-YQW-DGX2
      cellChildren:
      - cellAddress: 0.0.3.0
      - cellAddress: 0.0.3.1
    - cellChildren:
      - cellAddress: 0.0.3.2
      - cellAddress: 0.0.3.3
  - cellType: 4-DGX2-V100-NODE
    cellChildren:
    - cellChildren:
      - cellAddress: 0.0.4.0
      - cellAddress: 0.0.4.1
    - cellChildren:
      - cellAddress: 0.0.4.2
      - cellAddress: 0.0.4.3
  - cellType: 2-IB-DGX2-V100-NODE
    pinnedCellId: VC1-YQW-IB-DGX2
    cellChildren:
    - cellAddress: 0.1.0.0
    - cellAddress: 0.1.0.1
virtualClusters:
  VC1:
    virtualCells:
    - cellType: 4-DGX2-V100-NODE.2-DGX2-V100-NODE.DGX2-V100-NODE
      cellNumber: 2
    - cellType: 3-DGX2-V100-NODE.DGX2-V100-NODE
      cellNumber: 2
    - cellType: DGX2-V100-NODE
      cellNumber: 2
    - cellType: 4-DGX2-V100-NODE.2-DGX2-V100-NODE
      cellNumber: 1
    pinnedCells:
    - pinnedCellId: VC1-YQW-CT1
    - pinnedCellId: VC1-YQW-DGX2
    - pinnedCellId: VC1-YQW-IB-DGX2
  VC2:
    virtualCells:
    - cellType: 3-DGX1-P100-NODE.DGX1-P100-NODE
      cellNumber: 2
    - cellType: 3-DGX1-P100-NODE.DGX1-P100-NODE.DGX1-P100-CPU-SOCKET
      cellNumber: 2
    - cellType: CT1-NODE
      cellNumber: 1
)yaml";

// Two racks of two 4-GPU nodes (switches of 2 GPUs). alpha: 2 nodes, beta: 1 node,
// gamma: 2 switches.
inline constexpr char kTwoRacksYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    G-2:
      childCellType: G
      childCellNumber: 2
    G-NODE:
      childCellType: G-2
      childCellNumber: 2
      isNodeLevel: true
    G-RACK:
      childCellType: G-NODE
      childCellNumber: 2
  physicalCells:
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n0
    - cellAddress: n1
  - cellType: G-RACK
    cellChildren:
    - cellAddress: n2
    - cellAddress: n3
virtualClusters:
  alpha:
    virtualCells:
    - cellType: G-RACK.G-NODE
      cellNumber: 2
  beta:
    virtualCells:
    - cellType: G-RACK.G-NODE
      cellNumber: 1
  gamma:
    virtualCells:
    - cellType: G-RACK.G-NODE.G-2
      cellNumber: 2
)yaml";

// Four racks of four 8-GPU nodes (node -> 2 sockets -> 2 switches -> 2 GPUs); VC1 owns
// two racks, VC2 one rack and two nodes, VC3 two nodes.
inline constexpr char kFourRacksYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    V-SW:
      childCellType: V
      childCellNumber: 2
    V-SOCKET:
      childCellType: V-SW
      childCellNumber: 2
    V-NODE:
      childCellType: V-SOCKET
      childCellNumber: 2
      isNodeLevel: true
    V-RACK:
      childCellType: V-NODE
      childCellNumber: 4
  physicalCells:
  - cellType: V-RACK
    cellChildren: [{cellAddress: a0}, {cellAddress: a1}, {cellAddress: a2}, {cellAddress: a3}]
  - cellType: V-RACK
    cellChildren: [{cellAddress: b0}, {cellAddress: b1}, {cellAddress: b2}, {cellAddress: b3}]
  - cellType: V-RACK
    cellChildren: [{cellAddress: c0}, {cellAddress: c1}, {cellAddress: c2}, {cellAddress: c3}]
  - cellType: V-RACK
    cellChildren: [{cellAddress: d0}, {cellAddress: d1}, {cellAddress: d2}, {cellAddress: d3}]
virtualClusters:
  VC1:
    virtualCells:
    - cellType: V-RACK
      cellNumber: 2
  VC2:
    virtualCells:
    - cellType: V-RACK
      cellNumber: 1
    - cellType: V-RACK.V-NODE
      cellNumber: 2
  VC3:
    virtualCells:
    - cellType: V-RACK.V-NODE
      cellNumber: 2
)yaml";

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SCHEDULER_TESTDATA_H_
