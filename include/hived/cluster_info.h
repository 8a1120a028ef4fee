// hived/cluster_info.h: what a `ClusterSpec` describes, derived by HiveD's rules: each cell
// type's level, leaf type and leaf count, the chains (one per top-level cell type), and the
// pinned cells. For tools (the simulator, status pages) that need these facts without
// building a scheduler; the rules are the library's own (the same code validates specs and
// builds the cell forest), so a client never re-derives them.
//
// Example:
//   hived::ClusterDescription d = hived::DescribeCluster(spec);
//   for (const hived::ChainDescription& c : d.chains)
//     std::cout << c.name << ": " << c.leaf_cells << " " << c.leaf_cell_type << "\n";
//
// Thread safety: a free function without shared state; the result is a plain value.
#ifndef HIVED_CLUSTER_INFO_H_
#define HIVED_CLUSTER_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hived/cluster_spec.h"
#include "hived/export.h"

namespace hived {

struct CellTypeDescription {
  std::string name;
  bool is_leaf_type = false;  // a device type: named as a child, not defined in `cellTypes`
  bool is_node_level = false;
  // The fields below are 0 or empty when the type is not well defined (a cycle, a missing
  // child type, a non-positive `childCellNumber`): the validator reports why.
  int32_t level = 0;            // 1 for a leaf type
  std::string leaf_cell_type;   // the device type at the bottom
  int64_t leaf_cells = 0;       // devices in one cell of this type (saturates at 2^60)
  int64_t node_leaf_cells = 0;  // devices of the node-level type at or below it; 0: none
};

struct ChainDescription {
  std::string name;  // the top-level cell type
  std::string leaf_cell_type;
  int32_t top_cells = 0;                // top-level physical cells of this type
  int64_t leaf_cells = 0;               // devices in the whole chain
  std::vector<std::string> cell_types;  // top level first, leaf type last
};

struct PinnedCellDescription {
  std::string pinned_cell_id;
  std::string cell_type;  // derived from the parents' `childCellType`s
  std::string chain;      // the top-level cell's type
  int32_t top_cell = 0;   // index of its top-level cell in `physical_cells`
  int64_t leaf_cells = 0;
};

struct ClusterDescription {
  std::vector<CellTypeDescription> cell_types;      // defined types in config order, then leaves
  std::vector<ChainDescription> chains;             // in order of first appearance
  std::vector<PinnedCellDescription> pinned_cells;  // in config (depth-first) order
  int64_t total_leaf_cells = 0;
};

// Describes `spec`. Exact for a spec `ValidateClusterSpec` accepts; for an invalid spec the
// parts that can be derived are described and the rest left out (never fails or throws).
HIVED_EXPORT ClusterDescription DescribeCluster(const ClusterSpec& spec);

}  // namespace hived

#endif  // HIVED_CLUSTER_INFO_H_
