// config/sharing_keys.h: the semantic checks of the GPU-sharing config keys (sharing_keys.cc).
#ifndef HIVED_CONFIG_SHARING_KEYS_H_
#define HIVED_CONFIG_SHARING_KEYS_H_

#include <vector>

#include "hived/cluster_spec.h"
#include "hived/config.h"

namespace hived::config_internal {

// Appends one located error (yaml_path set, no file position) per problem.
void AppendSharingKeyErrors(const ClusterSpec& spec, std::vector<ConfigError>* errors);

}  // namespace hived::config_internal

#endif  // HIVED_CONFIG_SHARING_KEYS_H_
