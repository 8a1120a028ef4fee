// sim/trace/openb_reader.h: readers for Alibaba's openb trace (cluster-trace-gpu-v2023): the node
// list (`sn,cpu_milli,memory_mib,gpu,model`) and the pod lists (11 columns, or the first 5
// in the `multigpu*` files).
//
// Every quirk of the published files is handled and counted (`OpenbPodStats`): the 5-column
// files have no qos, phase or times; Pending pods have no `scheduled_time`; Running pods that
// end exactly at the trace end are censored; `memory_mib = 0` occurs; `gpu_spec` may repeat
// a model (`V100M32|V100M32`). Everything else that is wrong is a located error
// ("file:line:column: message"), all rows reported at once (the first 20 listed):
//   - a header that is neither layout; a row with the wrong number of columns;
//   - a number that is not a non-negative integer; an empty or duplicate name;
//   - `gpu_milli` outside 1..1000 for a one-GPU pod, not 1000 for a multi-GPU pod, not 0 for
//     a CPU-only pod; `num_gpu` or `gpu` above `kMaxGpusPerNode`;
//   - an unknown qos or phase; a deletion before the creation;
//   - a GPU node without a model, a model on a node without GPUs.
// `CheckPodSpecs` rejects, again located, a pod whose `gpu_spec` names no GPU model of the
// node list (the pod could never run); a spec naming some unknown models besides known ones
// is accepted and counted.
//
// Invariants of a successful read: (1) node names are unique and non-empty; (2) every GPU
// node has a model and 1..kMaxGpusPerNode GPUs; (3) a pod's `gpu_milli` is 0 iff `num_gpu`
// is 0, in 1..1000 when `num_gpu` is 1, and 1000 when `num_gpu` > 1; (4) `gpu_spec` models
// are distinct and non-empty, in file order; (5) with times, creation <= deletion.
//
// Example:
//   absl::StatusOr<OpenbNodeList> nodes = ReadOpenbNodesFile("openb_node_list_gpu_node.csv");
//   absl::StatusOr<OpenbPodList> pods = ReadOpenbPodsFile("openb_pod_list_default.csv");
//   if (nodes.ok() && pods.ok()) absl::Status s = CheckPodSpecs(*pods, *nodes);
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_TRACE_OPENB_READER_H_
#define HIVED_SIM_TRACE_OPENB_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hived::sim {

inline constexpr int32_t kMaxGpusPerNode = 64;
inline constexpr int32_t kMilliPerGpu = 1000;

struct OpenbNode {
  std::string name;  // `sn`
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty iff gpus == 0
  int32_t line = 0;   // 1-based line in the file
};

struct OpenbNodeList {
  std::string file;
  std::vector<OpenbNode> nodes;  // file order
  int64_t gpu_nodes = 0;
  int64_t total_gpus = 0;
  // The GPU models in order of first appearance, with their GPU counts.
  std::vector<std::string> models;
  std::vector<int64_t> model_gpus;
  int64_t skipped_rows = 0;           // bad rows dropped with skip_bad_rows
  std::vector<std::string> warnings;  // the first skipped rows, located
};

enum class OpenbQos { kUnknown, kLS, kBE, kBurstable, kGuaranteed };
enum class OpenbPhase { kUnknown, kSucceeded, kRunning, kPending, kFailed };

struct OpenbPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;              // per GPU; see invariant (3)
  std::vector<std::string> gpu_spec;  // allowed models; empty = any
  OpenbQos qos = OpenbQos::kUnknown;  // kUnknown in 5-column files
  OpenbPhase phase = OpenbPhase::kUnknown;
  std::optional<int64_t> creation_time;  // seconds from the trace start; none in 5-column files
  std::optional<int64_t> deletion_time;
  std::optional<int64_t> scheduled_time;  // none for Pending pods
  int32_t line = 0;
  int32_t spec_column = 0;      // column of `gpu_spec`, for located errors
  bool duplicate_spec = false;  // `gpu_spec` repeated a model (kept once)

  bool IsSharing() const { return num_gpu == 1 && gpu_milli < kMilliPerGpu; }
  int64_t TotalGpuMilli() const { return static_cast<int64_t>(num_gpu) * gpu_milli; }
};

// What the reader met, for reports.
struct OpenbPodStats {
  int64_t pods = 0;
  int64_t cpu_only = 0;
  int64_t sharing = 0;
  int64_t whole_gpu = 0;        // num_gpu >= 1 with 1000 milli each
  int64_t total_gpu_milli = 0;  // the sum of every pod's GPU request
  int64_t with_gpu_spec = 0;
  int64_t zero_memory = 0;           // memory_mib == 0
  int64_t duplicate_spec = 0;        // pods whose gpu_spec repeated a model (deduplicated)
  int64_t pending = 0;               // phase Pending (no scheduled_time)
  int64_t censored = 0;              // Running and deleted exactly at the trace end
  int64_t unknown_spec_model = 0;    // set by CheckPodSpecs: specs naming some unknown model
  bool has_times = false;            // false for the 5-column layout
  int64_t trace_end = 0;             // the largest deletion_time, 0 without times
  int64_t skipped_rows = 0;          // bad rows dropped with skip_bad_rows
  int64_t dropped_unknown_spec = 0;  // pods CheckPodSpecs dropped: no model of the cluster
};

struct OpenbPodList {
  std::string file;
  std::vector<OpenbPod> pods;  // file order
  OpenbPodStats stats;
  std::vector<std::string> warnings;  // the first skipped rows, located
};

// Parses a node list. Errors: kInvalidArgument listing every bad row, located; with
// `skip_bad_rows`, bad rows are dropped and counted instead (`skipped_rows`, `warnings`), but
// a bad header, an unreadable file or a list left empty are still errors. kNotFound when the
// file cannot be opened.
absl::StatusOr<OpenbNodeList> ParseOpenbNodes(std::string_view text, std::string_view file_name,
                                              bool skip_bad_rows = false);
absl::StatusOr<OpenbNodeList> ReadOpenbNodesFile(const std::string& path,
                                                 bool skip_bad_rows = false);

// Parses a pod list (either layout); errors as for the node list.
absl::StatusOr<OpenbPodList> ParseOpenbPods(std::string_view text, std::string_view file_name,
                                            bool skip_bad_rows = false);
absl::StatusOr<OpenbPodList> ReadOpenbPodsFile(const std::string& path, bool skip_bad_rows = false);

// Checks every pod's `gpu_spec` against the node list's models: kInvalidArgument, located at
// the `gpu_spec` field, for pods naming only models the cluster lacks (they could never run);
// with `drop_unrunnable` they are dropped instead, counted in `stats.dropped_unknown_spec`
// (and taken out of the other counts) with located `warnings`, and only an empty list left is
// an error. Counts specs naming some unknown models besides known ones in
// `stats.unknown_spec_model`. On error `pods` is left unchanged.
absl::Status CheckPodSpecs(OpenbPodList* pods, const OpenbNodeList& nodes,
                           bool drop_unrunnable = false);

std::string_view OpenbQosName(OpenbQos qos);
std::string_view OpenbPhaseName(OpenbPhase phase);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_OPENB_READER_H_
