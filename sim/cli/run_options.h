// sim/cli/run_options.h: the measurement and load knobs of `hived-sim run`, parsed and applied
// apart from the command so they can be tested and reused.
//
//   --load-scale K         divides inter-arrival times by K (K > 1 = heavier load): submit
//                          times become first + round((submit - first) / K); durations stay.
//   --window START,END     the measurement window, seconds (either may be empty: default).
//   --warmup D             jobs submitted in the first D seconds of the window shape the
//                          state but are not measured.
//   --slo T,...            queuing-delay targets for the SLO shares, seconds (suffix m or h).
//   --max-capacity SPEC    the elastic policies' per-VC maximum: a fraction of the cluster
//                          for every VC (`0.5`), or `VC=GPUS,...` (others: the whole cluster).
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_CLI_RUN_OPTIONS_H_
#define HIVED_SIM_CLI_RUN_OPTIONS_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/trace/job.h"

namespace hived::sim {

// Compresses (K > 1) or stretches (K < 1) the trace's arrivals; keeps the order.
// Errors: kInvalidArgument unless 0.001 <= K <= 1000.
absl::Status ScaleLoad(double k, Trace* trace);

// "START,END" -> {start, end}; an empty side is -1 (the default). Errors: kInvalidArgument
// for anything else or END <= START.
absl::StatusOr<std::pair<Time, Time>> ParseWindow(std::string_view text);

// "600,1h,30m" -> {600, 3600, 1800}. Errors: kInvalidArgument.
absl::StatusOr<std::vector<Time>> ParseSloList(std::string_view text);

// See above; the result is indexed by VC (-1 = the whole cluster). Errors: kInvalidArgument
// for an unknown VC, a bad number or a fraction outside (0, 1].
absl::StatusOr<std::vector<int64_t>> ParseMaxCapacity(std::string_view text, const SpecInfo& info);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLI_RUN_OPTIONS_H_
