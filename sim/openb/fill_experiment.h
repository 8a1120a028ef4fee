// sim/openb/fill_experiment.h: the FGD fill experiment on the openb trace (`hived-sim fill`).
//
// A workload of pods is drawn from the pod list until its GPU request reaches `inflate` x
// the cluster's GPU capacity, then every pod arrives once, in order, and is placed by the
// policy or fails (counted by reason); nothing leaves. Two ways to draw:
//   - `kSample` (the definition): draw with replacement, then shuffle;
//   - `kArtifact` (the published simulator's): the whole pod list shuffled, then draws with
//     replacement appended.
// Randomness comes only from std::mt19937_64 seeded with the run's seed (UniformIndex).
//
// Invariants of a run: (1) placed + failed == arrived pods; (2) allocated milli == the sum
// of the placed pods' requests <= capacity; (3) the curve has one point per whole percent of
// arrived demand up to `inflate`, in order.
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_OPENB_FILL_EXPERIMENT_H_
#define HIVED_SIM_OPENB_FILL_EXPERIMENT_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/common/flags.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/fill_policy.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

enum class FillWorkload { kSample, kArtifact };

struct FillOptions {
  PolicyKind policy = PolicyKind::kHived;
  double inflate = 1.3;  // arrived GPU demand / capacity at the end; in (0, 10]
  FillWorkload workload = FillWorkload::kSample;
  double typical_coverage = 0.95;  // FGD's typical pods cover this share of the workload
};

struct FillCurvePoint {
  double arrived_demand = 0;  // arrived GPU request / capacity
  int64_t arrived_pods = 0;
  double allocation_ratio = 0;  // allocated GPU milli / capacity
  double fragmentation = 0;     // FGD fragmentation (milli) / capacity
  double frag_of_idle = 0;      // FGD fragmentation / unallocated milli (0 when none)
};

struct FillRun {
  uint64_t seed = 0;
  int64_t arrived_pods = 0;
  int64_t arrived_milli = 0;
  int64_t placed_pods = 0;
  int64_t failed_pods = 0;
  std::array<int64_t, kFillFailureKinds> failed_by_reason{};  // by FillFailure
  int64_t failed_milli = 0;
  int64_t allocated_milli = 0;
  int64_t capacity_milli = 0;
  double allocation_ratio = 0;
  double fragmentation = 0;  // at the end, / capacity
  int32_t typical_pods = 0;
  std::vector<FillCurvePoint> curve;
};

// A node list and a pod list read and checked together, with the pods in the fill model.
struct FillInputs {
  OpenbNodeList nodes;
  OpenbPodList pods;
  std::vector<FillPod> fill_pods;  // MakeFillPods(pods, nodes)
  // The located warnings of rows and pods dropped with `skip_bad_rows`.
  std::vector<std::string> Warnings() const;
};

// Reads both files, checks the pods' `gpu_spec` against the nodes (CheckPodSpecs, dropping
// with `skip_bad_rows`) and makes the fill pods. Errors: those of the readers (kNotFound for a
// file that cannot be opened, kInvalidArgument for bad content) and of CheckPodSpecs and
// MakeFillPods; kInvalidArgument when no node has GPUs.
absl::StatusOr<FillInputs> LoadFillInputs(const std::string& nodes_path,
                                          const std::string& pods_path, bool skip_bad_rows);

// The input flags every openb command takes (`fill`, `openb-replay`): --nodes, --pods,
// --skip-bad-rows and --out, with one wording and one "required" rule.
struct OpenbInputFlags {
  std::string nodes_path;
  std::string pods_path;
  std::string out_dir;
  bool skip_bad_rows = false;
};
// Registers the four flags on `parser`; `pods_help` describes the pod list the command reads.
void AddOpenbInputFlags(FlagParser* parser, OpenbInputFlags* flags, const char* pods_help);
// The usage error when a required flag is missing, else empty.
std::string MissingOpenbInput(const OpenbInputFlags& flags);
// LoadFillInputs of the flags' files; prints the warnings of skipped rows to stderr.
absl::StatusOr<FillInputs> LoadFillInputs(const OpenbInputFlags& flags);

// Numbers the distinct (CPU, memory, share, count) shapes of `workload` (FillPod::shape) in order
// of first appearance; returns how many there are.
int32_t AssignFillShapes(std::vector<FillPod>* workload);

// The workload for one seed. Errors: kInvalidArgument when the pods request no GPU, when
// `inflate` is outside (0, 10], or when the workload would exceed 50 million pods.
absl::StatusOr<std::vector<FillPod>> DrawFillWorkload(const std::vector<FillPod>& pods,
                                                      int64_t capacity_milli, double inflate,
                                                      FillWorkload how, uint64_t seed);

// One run. REQUIRES: `pods` made by MakeFillPods for `nodes`. Errors as DrawFillWorkload.
absl::StatusOr<FillRun> RunFill(const OpenbNodeList& nodes, const std::vector<FillPod>& pods,
                                const FillOptions& options, uint64_t seed);

}  // namespace hived::sim

#endif  // HIVED_SIM_OPENB_FILL_EXPERIMENT_H_
