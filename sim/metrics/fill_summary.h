// sim/metrics/fill_summary.h: the summary.json of `hived-sim fill` (FGD's fill experiment,
// sim/openb/fill_experiment.h), written by the one `JsonWriter` (sim/common/json.h) as the
// job and pod replays' summaries are (metrics.h, pod_summary.h).
//
// Invariants: equal inputs give byte-equal files; the figures are exact (`JsonWriter::Real`:
// the shortest digits that read back as the double); the spreads are over the seeds.
//
// Example:
//   FillSummary s;  // the run's facts, one FillSeedFigures per seed
//   std::string json = FillSummaryJson(s);
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_METRICS_FILL_SUMMARY_H_
#define HIVED_SIM_METRICS_FILL_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/trace/openb_reader.h"

namespace hived::sim {

// Mean, sample standard deviation (0 for one value), min and max; all 0 for none.
struct FillSpread {
  double mean = 0;
  double stddev = 0;
  double min = 0;
  double max = 0;
};
FillSpread SpreadOf(const std::vector<double>& values);

// Failed pods by reason, in the fill model's reason order (name, count).
using FillReasonCounts = std::vector<std::pair<std::string, int64_t>>;

// One seed's run.
struct FillSeedFigures {
  uint64_t seed = 0;
  double allocation_ratio = 0;
  double unallocated_gpus = 0;
  double fragmentation = 0;
  int64_t arrived_pods = 0;
  double arrived_demand = 0;  // of the capacity
  int64_t placed_pods = 0;
  int64_t failed_pods = 0;
  int64_t failed_gpu_milli = 0;
  FillReasonCounts failed_by_reason;
  int64_t typical_pods = 0;
};

struct FillSummary {
  std::string nodes_file;
  std::string pods_file;
  std::string policy;
  std::string note;  // what the policy is
  double inflate = 0;
  std::string workload;
  double typical_coverage = 0;
  std::vector<uint64_t> seeds;
  std::vector<FillSeedFigures> per_seed;  // by seed, as `seeds`
  FillReasonCounts failed_all_seeds;
  double capacity_milli = 0;             // the cluster's GPU capacity, milli-GPUs
  const OpenbNodeList* nodes = nullptr;  // REQUIRES: not null
  const OpenbPodStats* pods = nullptr;   // REQUIRES: not null
};

// summary.json, ending with a newline.
std::string FillSummaryJson(const FillSummary& s);

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_FILL_SUMMARY_H_
