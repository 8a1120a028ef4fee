// sim/trace/openb_config.h: a HiveD cluster config from an openb node list.
//
// One chain per GPU model and node size: a node-level cell type `<MODEL>-<k>GPU-NODE` with
// `k` leaf cells of type `<MODEL>` (so a pod's `gpu_spec` names leaf cell types), and every
// GPU node a top-level physical cell addressed by its node name. HiveD's chains need one
// child count per type, so a model whose nodes differ in GPU count (P100 with 1 and 2, for
// instance) gets one chain per size. One VC, `openb`, reserves every node, so the config
// runs as it is. Nodes without GPUs are left out and counted. Each node cell declares the
// node's CPU and host memory with the optional keys `cpuMilli` and `memoryMiB` (absent where
// the node list gives 0: no limit).
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_TRACE_OPENB_CONFIG_H_
#define HIVED_SIM_TRACE_OPENB_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

struct OpenbConfig {
  ClusterSpec spec;
  int64_t cpu_only_nodes = 0;  // left out
  std::string yaml;            // header comment + ClusterSpecToYaml(spec)
};

// Errors: kInvalidArgument, located at the node list row, for a model or node name HiveD's
// format cannot carry, or when no node has GPUs.
absl::StatusOr<OpenbConfig> BuildOpenbConfig(const OpenbNodeList& nodes);

// hived-sim openb-config --nodes NODES.csv --out CONFIG.yaml
int OpenbConfigCommand(int argc, char** argv);
// hived-sim fill (fill_command.cc)
int FillCommand(int argc, char** argv);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_OPENB_CONFIG_H_
