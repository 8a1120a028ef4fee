// sim/cluster/spec_edit.h: what-if edits of a `ClusterSpec` for capacity planning (sweep, plan):
// resize one VC or every VC, move a VC to another cell type, add or remove top-level physical
// cells (racks), add a VC, and grow the physical cluster until HiveD's capacity rule holds
// again.
//
// A VC's size is counted in *units*: cells of one type of its chain (by default the lowest
// type the VC reserves, e.g. nodes for a VC of "1 rack + 3 nodes"). Setting a VC to N units
// rewrites that chain's virtual cells greedily from the VC's largest reserved type down to
// the unit type, so "1 rack + 1 node" scaled to 17 nodes becomes "2 racks + 1 node": the
// reservation keeps the affinity shape it had. Other chains of the VC are left alone.
//
// Physical cells added for a larger reservation are copies of the chain's last top-level
// cell (same hierarchy and child addresses pattern), with fresh node names
// "<prefix><n>-<original name>" and no pinned ids, so node names stay unique per chain.
//
// Invariants (checked in tests): after `FitPhysicalCluster` the spec passes
// `ValidateClusterSpec` when the reservations alone were valid; edits never change other VCs;
// edits never reorder existing cells or VCs (decisions break ties by config order).
//
// Example:
//   ClusterSpec spec = *LoadClusterSpecFile("philly.yaml");
//   if (absl::Status s = SetVcUnits(&spec, "6214e9", "", 12); !s.ok()) ...
//   if (absl::Status s = FitPhysicalCluster(&spec); !s.ok()) ...
//
// Thread safety: free functions over caller-owned values.
#ifndef HIVED_SIM_CLUSTER_SPEC_EDIT_H_
#define HIVED_SIM_CLUSTER_SPEC_EDIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"

namespace hived::sim {

// A VC's size in units of one cell type of one chain.
struct VcUnits {
  std::string unit_type;  // dotted path from the chain, e.g. "P100-RACK.P100-NODE"
  int64_t units = 0;      // the VC's virtual cells of this chain, counted in `unit_type` cells
};

// The VC's size in units of `unit_type` (a dotted path); empty `unit_type` picks the lowest
// type the VC reserves in its first chain. Errors: kNotFound for an unknown VC;
// kInvalidArgument when `unit_type` is not a path of the config, or a reserved cell of that
// chain is not a whole number of units.
absl::StatusOr<VcUnits> GetVcUnits(const ClusterSpec& spec, const std::string& vc,
                                   const std::string& unit_type);

// Sets the VC's cells of the unit type's chain to `units` cells of `unit_type` (see the file
// comment for the greedy shape). A VC absent from the config is added (then `unit_type` is
// required). `units` == 0 removes the chain's cells (the VC must keep some cell: an empty VC
// is kInvalidArgument). Errors as `GetVcUnits`, and kInvalidArgument for units < 0.
absl::Status SetVcUnits(ClusterSpec* spec, const std::string& vc, const std::string& unit_type,
                        int64_t units);

// Multiplies the size of `vc` (every VC when empty) by `factor`, rounding to the nearest
// unit and keeping at least one unit. Errors: kInvalidArgument for factor <= 0, as above.
absl::Status ScaleVcs(ClusterSpec* spec, const std::string& vc, double factor);

// Moves VC `vc` to another cell type ("move a VC to A100s"): its virtual cells, in every
// chain, are replaced by the same number of GPUs (rounded up to whole cells) of `target`,
// laid out greedily from the target chain's top type down to `target` (40 GPUs of 8-GPU
// nodes in racks of 4 nodes: 1 rack + 1 node), and top-level cells of the target chain are
// added (`FitPhysicalCluster`) until the config is valid. `target` is a cell type path
// ("A100-RACK.A100-NODE") or a leaf type ("A100": the node-level type of the first chain of
// that leaf type). Pinned cells stay where they are (they are hardware); the cells the VC
// leaves stay in the cluster, unreserved. A VC already entirely on the target chain is left
// as is, so applying a move twice equals applying it once. Returns the target's leaf type
// (for the trace's jobs). Errors: kNotFound for an unknown VC; kInvalidArgument for a type
// that is not in the config (naming the leaf types it has), as `FitPhysicalCluster`.
absl::StatusOr<std::string> MoveVc(ClusterSpec* spec, const std::string& vc,
                                   const std::string& target);

// Adds `count` top-level cells to the chain `chain` (the first chain when empty) as copies of
// its last one; a negative count removes that many unpinned top-level cells from its end.
// Errors: kNotFound for an unknown chain; kFailedPrecondition when too few unpinned cells
// are left to remove.
absl::Status AddTopCells(ClusterSpec* spec, const std::string& chain, int64_t count);

// Adds top-level cells (copies, as `AddTopCells`) to every chain whose VCs do not fit, until
// HiveD's capacity rule holds at every level. Errors: kInvalidArgument when the spec has
// other errors (listed), or a chain cannot grow (no top-level cell to copy).
absl::Status FitPhysicalCluster(ClusterSpec* spec);

// Removes unpinned top-level cells from the end of each chain while the capacity rule still
// holds (the smallest physical cluster hosting the reservations).
void TrimPhysicalCluster(ClusterSpec* spec);

// Top-level cells per chain, in order of first appearance.
std::vector<std::pair<std::string, int64_t>> TopCellsPerChain(const ClusterSpec& spec);

// Nodes (node-level cells) under one top-level cell of `chain`; 0 when unknown.
int64_t NodesPerTopCell(const ClusterSpec& spec, const std::string& chain);

// kInvalidArgument with every validation error of `spec`, one per line; OK when valid.
absl::Status CheckSpec(const ClusterSpec& spec);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLUSTER_SPEC_EDIT_H_
