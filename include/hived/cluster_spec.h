// hived/cluster_spec.h: the plain-data description of a cluster and its virtual clusters.
//
// A `ClusterSpec` is what HiveD's YAML config says, with HiveD's names mapped to C++:
// cell types (`cellTypes`), top-level physical cells (`physicalCells`) and virtual clusters
// (`virtualClusters`). It can be built from code or loaded from YAML with
// `hived::LoadClusterSpecFile` (hived/config.h). Nothing here is validated on construction;
// `hived::ValidateClusterSpec` (hived/config.h) and `Scheduler::Create` validate it.
//
// Example (HiveD's basic config; C++17, compiled by tests/api/header_example_test.cc):
//   hived::ClusterSpec spec;
//   spec.cell_types = {{"K80-2GPU", "K80", 2, false},
//                      {"K80-NODE", "K80-2GPU", 2, true},
//                      {"3-K80-NODE", "K80-NODE", 3, false}};
//   hived::PhysicalCellSpec rack;
//   rack.cell_type = "3-K80-NODE";
//   for (const char* node : {"10.151.41.20", "10.151.41.21", "10.151.41.22"}) {
//     hived::PhysicalCellSpec cell;
//     cell.cell_address = node;
//     rack.cell_children.push_back(cell);
//   }
//   rack.cell_children[1].pinned_cell_id = "VC2-K80";
//   spec.physical_cells = {rack};
//   spec.virtual_clusters = {{"VC1", {{"3-K80-NODE.K80-NODE", 1}}, {}},
//                            {"VC2", {{"3-K80-NODE.K80-NODE", 1}}, {{"VC2-K80"}}}};
//
// Thread safety: plain values.
#ifndef HIVED_CLUSTER_SPEC_H_
#define HIVED_CLUSTER_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hived {

// One entry of `physicalCluster.cellTypes`. A type named as a `child_cell_type` but not
// defined itself is a leaf cell type (one device, e.g. a GPU model).
struct CellTypeSpec {
  std::string name;               // the map key
  std::string child_cell_type;    // `childCellType`
  int32_t child_cell_number = 0;  // `childCellNumber`
  bool is_node_level = false;     // `isNodeLevel`
};

// One entry of `physicalCluster.physicalCells` (or of a `cellChildren` list below it).
// Children omitted (empty) are generated: `childCellNumber` default children.
struct PhysicalCellSpec {
  std::string cell_type;       // `cellType`: required at top level, derived below it
  std::string cell_address;    // `cellAddress`: node name at node level, device index at leaves
  std::string pinned_cell_id;  // `pinnedCellId`, empty when not pinned
  std::vector<PhysicalCellSpec> cell_children;  // `cellChildren`
  // Node-level cells only (optional, not HiveD's; docs/gpu-sharing.md): the node's CPU in
  // millicores (`cpuMilli`) and host memory in MiB (`memoryMiB`). 0: not declared, no limit.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

// How a GPU of a leaf cell type may be shared (docs/gpu-sharing.md, "The model").
enum class SharingMode {
  // Fractional pods may share it; an opportunistic share only on a GPU without guaranteed
  // shares (the default).
  kSeparate,
  // TGS/AntMan style: opportunistic shares may also fill a GPU guaranteed shares use; the
  // guaranteed shares are protected (those opportunistic shares are their victims).
  kProtected,
  // Whole GPUs only: a fractional request for this type is kInvalidArgument.
  kNone,
};

// One MIG profile of a GPU type (`migProfiles` item): an instance takes `compute_slices` of
// the GPU's compute slices and `memory_slices` consecutive memory slices beginning at one
// of `starts` (memory-slice positions, as `nvidia-smi mig -lgipp` prints `{starts}:size`).
struct MigProfileSpec {
  std::string name;             // `name`, e.g. "1g.10gb"
  int32_t compute_slices = 0;   // `computeSlices`
  int32_t memory_slices = 0;    // `memorySlices`
  std::vector<int32_t> starts;  // `starts`, e.g. [0, 2, 4, 6]
};

// One entry of `physicalCluster.leafCellTypes` (optional, not HiveD's): what sharing needs
// to know about a leaf cell type (a GPU model). A leaf type without an entry has no GPU
// memory limit and `kSeparate` sharing.
struct LeafCellTypeSpec {
  std::string name;                              // the map key: a leaf cell type
  int64_t gpu_memory_mib = 0;                    // `gpuMemoryMiB`; 0: not declared, no limit
  SharingMode sharing = SharingMode::kSeparate;  // `sharingMode`: separate, protected, none
  // MIG (docs/gpu-sharing.md, "MIG"): a built-in geometry by name (`migGeometry`:
  // A100-40GB, A100-80GB, H100-80GB; see BuiltinMigProfiles in hived/config.h) or an explicit
  // one (`migProfiles`, with `migComputeSlices` / `migMemorySlices`). Neither: no MIG.
  std::string mig_geometry;
  int32_t mig_compute_slices = 0;  // `migComputeSlices`; 0: 7 (A100, H100)
  int32_t mig_memory_slices = 0;   // `migMemorySlices`; 0: 8
  std::vector<MigProfileSpec> mig_profiles;
};

// One entry of `virtualClusters.<vc>.virtualCells`: `cell_number` cells of the type at the
// end of the dotted path `cell_type` (which starts with the chain, the top-level type).
struct VirtualCellSpec {
  std::string cell_type;    // `cellType`, e.g. "3-K80-NODE.K80-NODE"
  int32_t cell_number = 0;  // `cellNumber`
};

// One entry of `virtualClusters.<vc>.pinnedCells`.
struct PinnedCellSpec {
  std::string pinned_cell_id;  // `pinnedCellId`
};

struct VirtualClusterSpec {
  std::string name;  // the map key
  std::vector<VirtualCellSpec> virtual_cells;
  std::vector<PinnedCellSpec> pinned_cells;
};

// The whole cluster. Every list keeps config order; ties in scheduling decisions are broken
// by that order, never by hashing.
struct ClusterSpec {
  std::vector<CellTypeSpec> cell_types;
  std::vector<PhysicalCellSpec> physical_cells;
  std::vector<VirtualClusterSpec> virtual_clusters;
  std::vector<LeafCellTypeSpec> leaf_cell_types;  // `physicalCluster.leafCellTypes`
};

// The names in configs and reports: "separate", "protected", "none".
constexpr const char* SharingModeName(SharingMode mode) {
  switch (mode) {
    case SharingMode::kSeparate:
      return "separate";
    case SharingMode::kProtected:
      return "protected";
    case SharingMode::kNone:
      return "none";
  }
  return "unknown";
}

}  // namespace hived

#endif  // HIVED_CLUSTER_SPEC_H_
