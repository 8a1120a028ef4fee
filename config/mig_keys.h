// config/mig_keys.h: the MIG keys of `physicalCluster.leafCellTypes` (docs/gpu-sharing.md,
// "MIG"): the built-in geometries, and the semantic checks of a declared geometry
// (mig_keys.cc; the parsing is Loader::ParseMigKey, in the same file).
#ifndef HIVED_CONFIG_MIG_KEYS_H_
#define HIVED_CONFIG_MIG_KEYS_H_

#include <vector>

#include "hived/cluster_spec.h"
#include "hived/config.h"

namespace hived::config_internal {

// The most slices of either kind a geometry may declare (a layout is a bit mask).
inline constexpr int32_t kMaxMigSlices = 32;

// Appends one located error (yaml_path set, no file position) per problem: an unknown
// built-in name, both a built-in and explicit profiles, a profile that does not fit the
// GPU (slices, starts past the end), a start twice or not ascending, a name twice, MIG on
// a type with `sharingMode: none`.
void AppendMigKeyErrors(const ClusterSpec& spec, std::vector<ConfigError>* errors);

}  // namespace hived::config_internal

#endif  // HIVED_CONFIG_MIG_KEYS_H_
