// hived/config.h: load, validate and write HiveD cluster configs.
//
// Loads HiveD's own YAML configs unchanged, but strictly: unknown or misplaced keys, wrong
// types, impossible cell hierarchies and VCs that do not fit are all reported at once, each
// with file:line:column, the YAML path, what is wrong and, where it helps, a fix.
//
// Accepted and ignored (HiveD's Kubernetes settings and OpenPAI's resource table; their
// types are still checked): top-level `kubeApiServerAddress`, `kubeConfigFilePath`,
// `webServerAddress` (strings), `forcePodBindThreshold`, `waitingPodSchedulingBlockMilliSec`
// (integers), `quotaExcludeVCs` (a list of strings), and `physicalCluster.skuTypes` (a
// mapping). Every other key must be one of HiveD's schema keys in its right place.
//
// Strictness beyond HiveD (which ignored these or panicked): integers and booleans must be
// unquoted; `cellChildren` must list all `childCellNumber` children or none (null, empty and
// absent all mean "generate them"); a child's explicit `cellType` must be its parent's
// `childCellType`; leaf addresses are device indices (0..2^31-1); addresses contain no `/`;
// type names contain no `.`; every VC cell path is checked level by level; pinned ids are
// unique and claimed once; a cluster holds at most 2^20 cells (all levels), a hierarchy at
// most 32 levels; integers have no leading zeros (HiveD's Go reader takes `010` as octal 8);
// the text is UTF-8, one YAML document, within `ConfigLimits`. Several parents may share one child
// type (HiveD's design config does), since each chain is a path down from its top type.
//
// Example:
//   absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecFile("cluster.yaml");
//   if (!spec.ok()) { std::cerr << spec.status().message(); return 1; }
//
// Thread safety: free functions without shared state.
#ifndef HIVED_CONFIG_H_
#define HIVED_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/export.h"

namespace hived {

// One problem in a config. `line` and `column` are 1-based, 0 when unknown (a spec built in
// code has no file). `yaml_path` names the place, e.g.
// "physicalCluster.physicalCells[2].cellChildren[0].cellAddress".
struct HIVED_EXPORT ConfigError {
  std::string file;
  int32_t line = 0;
  int32_t column = 0;
  std::string yaml_path;
  std::string message;  // what is wrong
  std::string hint;     // how to fix it, may be empty
  // "file:line:col: yaml_path: message (hint)".
  std::string ToString() const;
};

// Limits on one config, so that any input ends quickly with a located error. The defaults
// are generous for real clusters (HiveD's configs are a few KB); raise them for larger ones.
struct ConfigLimits {
  int64_t max_input_bytes = int64_t{64} << 20;  // file size, checked while reading
  int64_t max_yaml_nodes = int64_t{1} << 21;    // YAML nodes, counted before the tree is built
  int32_t max_errors = 100;  // located errors kept; the rest are counted in a last line
};

// The outcome of loading: a spec when there are no errors, and the errors found (at most
// `ConfigLimits::max_errors` of them, then one line counting the rest).
struct ConfigLoadResult {
  ClusterSpec spec;
  std::vector<ConfigError> errors;
  bool ok() const { return errors.empty(); }
};

// Loads and validates a config. Never throws, never aborts.
HIVED_EXPORT ConfigLoadResult LoadClusterSpecDetailed(std::string_view yaml,
                                                      std::string_view file_name);
HIVED_EXPORT ConfigLoadResult LoadClusterSpecDetailed(std::string_view yaml,
                                                      std::string_view file_name,
                                                      const ConfigLimits& limits);
// As above; kInvalidArgument with the errors, one per line, when the config is bad (also
// when the file is larger than `max_input_bytes`: reading stops there); kNotFound when the
// file cannot be read.
HIVED_EXPORT absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path);
HIVED_EXPORT absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path,
                                                             const ConfigLimits& limits);
HIVED_EXPORT absl::StatusOr<ClusterSpec> LoadClusterSpecString(
    std::string_view yaml, std::string_view file_name = "<string>");
HIVED_EXPORT absl::StatusOr<ClusterSpec> LoadClusterSpecString(std::string_view yaml,
                                                               std::string_view file_name,
                                                               const ConfigLimits& limits);

// Validates a spec built in code (or loaded): every rule the loader applies after parsing.
// Errors carry the YAML path but no file position.
HIVED_EXPORT std::vector<ConfigError> ValidateClusterSpec(const ClusterSpec& spec);

// The profiles of a built-in MIG geometry (`migGeometry`: "A100-40GB", "A100-80GB",
// "H100-80GB"; 7 compute and 8 memory slices each, NVIDIA's table in docs/gpu-sharing.md),
// nullptr for an unknown name. `BuiltinMigGeometries` lists the names.
HIVED_EXPORT const std::vector<MigProfileSpec>* BuiltinMigProfiles(std::string_view geometry);
HIVED_EXPORT std::vector<std::string> BuiltinMigGeometries();

// The MIG geometry a leaf type declares, resolved: its profiles (the built-in's or its own),
// and its compute and memory slices (defaults 7 and 8). Empty profiles: no MIG.
struct ResolvedMigGeometry {
  int32_t compute_slices = 7;
  int32_t memory_slices = 8;
  std::vector<MigProfileSpec> profiles;
};
HIVED_EXPORT ResolvedMigGeometry ResolveMigGeometry(const LeafCellTypeSpec& type);

// Writes `spec` as HiveD YAML that loads back to an equal spec.
HIVED_EXPORT std::string ClusterSpecToYaml(const ClusterSpec& spec);

// One level of one chain in the capacity table (HiveD's `initCellNums` rule, top-down).
struct CapacityLevel {
  int32_t level = 0;  // 1 = leaf
  std::string cell_type;
  bool is_node_level = false;
  int64_t physical_cells = 0;     // all cells of this level in the chain
  int64_t available_cells = 0;    // physical cells not inside a cell reserved at a higher level
  std::vector<int64_t> reserved;  // per VC, indexed like `CapacityReport::vc_names`;
                                  // virtual cells plus pinned cells of this level
  int64_t total_reserved = 0;
  int64_t slack = 0;  // available_cells - total_reserved; negative when the VCs do not fit
};

// One chain: the cells under the top-level physical cells of one type.
struct ChainCapacity {
  std::string chain;                  // the top-level cell type
  std::string leaf_cell_type;         // the device type at level 1
  int32_t top_cells = 0;              // top-level physical cells of this type
  std::vector<CapacityLevel> levels;  // top level first, leaf level last
};

struct CapacityReport {
  std::vector<std::string> vc_names;  // config order
  std::vector<ChainCapacity> chains;  // in order of first appearance in `physicalCells`
};

// The per-chain, per-level capacity table of `spec`. Counts are derived from the cell types
// (full hierarchies), so they are exact for a valid spec; for an invalid spec the parts that
// can be derived are reported and the rest is left out. Counts saturate at 2^60.
HIVED_EXPORT CapacityReport ComputeCapacityReport(const ClusterSpec& spec);

}  // namespace hived

#endif  // HIVED_CONFIG_H_
