// The public faces of the hierarchy's analysis (hierarchy/spec_analysis.h).
#include <vector>

#include "config/mig_keys.h"
#include "config/sharing_keys.h"
#include "hierarchy/spec_analysis.h"
#include "hived/config.h"

namespace hived {

std::vector<ConfigError> ValidateClusterSpec(const ClusterSpec& spec) {
  std::vector<ConfigError> errors;
  hierarchy::AnalyzeClusterSpec(spec, &errors);
  config_internal::AppendSharingKeyErrors(spec, &errors);
  config_internal::AppendMigKeyErrors(spec, &errors);
  return errors;
}

CapacityReport ComputeCapacityReport(const ClusterSpec& spec) {
  return hierarchy::AnalyzeClusterSpec(spec, nullptr).capacity;
}

}  // namespace hived
