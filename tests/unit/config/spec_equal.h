// tests/unit/config/spec_equal.h: equality of the plain-data spec structs, for round-trip
// tests and the config fuzzer. Field by field, order included.
#ifndef HIVED_TESTS_UNIT_CONFIG_SPEC_EQUAL_H_
#define HIVED_TESTS_UNIT_CONFIG_SPEC_EQUAL_H_

#include "hived/cluster_spec.h"

namespace hived {

inline bool operator==(const CellTypeSpec& a, const CellTypeSpec& b) {
  return a.name == b.name && a.child_cell_type == b.child_cell_type &&
         a.child_cell_number == b.child_cell_number && a.is_node_level == b.is_node_level;
}
inline bool operator==(const PhysicalCellSpec& a, const PhysicalCellSpec& b) {
  return a.cell_type == b.cell_type && a.cell_address == b.cell_address &&
         a.pinned_cell_id == b.pinned_cell_id && a.cell_children == b.cell_children;
}
inline bool operator==(const VirtualCellSpec& a, const VirtualCellSpec& b) {
  return a.cell_type == b.cell_type && a.cell_number == b.cell_number;
}
inline bool operator==(const PinnedCellSpec& a, const PinnedCellSpec& b) {
  return a.pinned_cell_id == b.pinned_cell_id;
}
inline bool operator==(const VirtualClusterSpec& a, const VirtualClusterSpec& b) {
  return a.name == b.name && a.virtual_cells == b.virtual_cells && a.pinned_cells == b.pinned_cells;
}
inline bool operator==(const ClusterSpec& a, const ClusterSpec& b) {
  return a.cell_types == b.cell_types && a.physical_cells == b.physical_cells &&
         a.virtual_clusters == b.virtual_clusters;
}
inline bool operator!=(const ClusterSpec& a, const ClusterSpec& b) { return !(a == b); }

}  // namespace hived

#endif  // HIVED_TESTS_UNIT_CONFIG_SPEC_EQUAL_H_
