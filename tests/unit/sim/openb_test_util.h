// Helpers shared by the openb tests: the published trace, skipped visibly when absent; small
// node lists, pods and one-GPU replays written inline.
#ifndef HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/pod_summary.h"
#include "sim/openb/fill_experiment.h"
#include "sim/openb/openb_replay.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/policy_kind.h"
#include "sim/trace/openb_reader.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived::sim::testing {

// Every policy of the fill model, spelled out here rather than taken from the registry.
inline constexpr PolicyKind kEveryPodPolicy[] = {
    PolicyKind::kHived,         PolicyKind::kRandom,     PolicyKind::kDotProduct,
    PolicyKind::kGpuClustering, PolicyKind::kGpuPacking, PolicyKind::kBestFit,
    PolicyKind::kFgd,           PolicyKind::kFgdExact,   PolicyKind::kHivedModel};

// The folder of the published openb trace (../shared/traces/openb beside the checkout).
inline std::string OpenbDir() { return ::hived::testing::SharedTracesDir() + "/openb/"; }

// The GPU-node list with the pod list `variant` ("default", "cpu050", ...); nullopt when the
// trace is not there, having marked the test case skipped: the caller must return at once.
inline std::optional<FillInputs> LoadPublishedOpenb(const std::string& variant) {
  absl::StatusOr<FillInputs> in =
      LoadFillInputs(OpenbDir() + "openb_node_list_gpu_node.csv",
                     OpenbDir() + "openb_pod_list_" + variant + ".csv", /*skip_bad_rows=*/false);
  if (in.status().code() == absl::StatusCode::kNotFound) {
    WARN(HIVED_SKIP_MARKER "the openb trace is not at " << OpenbDir());
    return std::nullopt;
  }
  INFO(in.status().ToString());
  REQUIRE(in.ok());
  return std::move(*in);
}

// A node list from `rows` (`sn,cpu_milli,memory_mib,gpu,model` lines).
inline OpenbNodeList MakeOpenbNodes(const std::string& rows) {
  absl::StatusOr<OpenbNodeList> nodes =
      ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\n" + rows, "nodes.csv");
  INFO(nodes.status().ToString());
  REQUIRE(nodes.ok());
  return *nodes;
}

// A pod of any model.
inline FillPod MakeFillPod(int64_t cpu, int32_t num_gpu, int32_t milli, int64_t memory = 0) {
  FillPod p;
  p.cpu_milli = cpu;
  p.memory_mib = memory;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.model_mask = ~uint64_t{0};
  return p;
}

inline constexpr char kOpenbPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

// ReplayOpenb into a PodSummaryBuilder, and its summary.
inline absl::StatusOr<PodSummary> ReplayOpenbSummary(const OpenbNodeList& nodes,
                                                     const OpenbPodList& list,
                                                     const std::vector<FillPod>& pods,
                                                     const OpenbReplayOptions& options) {
  PodSummaryBuilder builder(list.pods.size());
  absl::StatusOr<PodReplayResult> r = ReplayOpenb(nodes, list, pods, options, &builder);
  if (!r.ok()) return r.status();
  return builder.Finish(*std::move(r));
}

// Replays the pod rows `pod_rows` (11 columns, no header) on one node with one T4 GPU, 8 CPUs
// and 1000 MiB.
inline PodSummary ReplayOnOneGpu(const std::string& pod_rows, const OpenbReplayOptions& options) {
  const OpenbNodeList nodes = MakeOpenbNodes("n,8000,1000,1,T4\n");
  absl::StatusOr<OpenbPodList> list = ParseOpenbPods(kOpenbPodHeader + pod_rows, "pods.csv");
  INFO(list.status().ToString());
  REQUIRE(list.ok());
  absl::StatusOr<std::vector<FillPod>> pods = MakeFillPods(*list, nodes);
  REQUIRE(pods.ok());
  absl::StatusOr<PodSummary> r = ReplayOpenbSummary(nodes, *list, *pods, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

}  // namespace hived::sim::testing

#endif  // HIVED_TESTS_UNIT_SIM_OPENB_TEST_UTIL_H_
