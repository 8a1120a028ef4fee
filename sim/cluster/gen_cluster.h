// sim/cluster/gen_cluster.h: a generated cluster config for scale tests.
//
// `racks` racks of `nodes_per_rack` nodes of 8 GPUs (2 sockets x 2 PCIe switches x 2 GPUs),
// and `vcs` VCs sharing `reserve` of the nodes: VC i gets a share proportional to
// 1/(i+1)^skew of the reserved nodes (skew 0 = equal), expressed as whole racks plus nodes;
// every VC gets at least one node.
//
// Thread safety: stateless.
#ifndef HIVED_SIM_CLUSTER_GEN_CLUSTER_H_
#define HIVED_SIM_CLUSTER_GEN_CLUSTER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace hived::sim {

// The most nodes one generated config may hold (8,000,000 GPUs; about 35 MB of YAML).
inline constexpr int64_t kMaxGeneratedNodes = 1'000'000;

struct GenClusterOptions {
  int32_t racks = 1563;  // 1563 x 8 x 8 = 100,032 GPUs
  int32_t nodes_per_rack = 8;
  int32_t vcs = 100;
  double reserve = 0.95;
  double skew = 1.0;
};

// The config as HiveD YAML. Errors: kInvalidArgument for impossible options, and for more
// than kMaxGeneratedNodes nodes (racks x nodes_per_rack).
absl::StatusOr<std::string> GenerateClusterYaml(const GenClusterOptions& options);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLUSTER_GEN_CLUSTER_H_
