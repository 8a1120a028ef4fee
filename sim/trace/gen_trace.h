// sim/trace/gen_trace.h: a seeded synthetic trace shaped like Philly's published statistics.
//
// Model (defaults from ../shared/traces/README.md, the Philly trace):
//   - gang size: 1 GPU 93.2%, 2: 2.2%, 4: 2.3%, 8: 2.0%, 16: 0.24%, 32: 0.08%, 12, 24,
//     64, 128: about 0.01% each (or `size_weights`); a size larger than half the GPUs of the VC's
//     virtual cells is replaced by the largest power of two within that half (a gang as large as
//     its whole VC would wait for the VC to drain; `max_gang_gpus` > 0 caps at that instead); gangs
//     larger than a node are whole-node pods;
//   - duration: log-normal with median 1,144 s and p90 11,266 s (Philly's), clamped to
//     [1 s, max_duration] (default 2 days);
//   - VC: drawn with weights = the VCs' reserved GPUs (or `vc_weights`);
//   - arrivals: Poisson. The rate is `arrival_rate_per_hour` when set, else chosen so the
//     offered load (GPU-seconds submitted / (GPUs of the drawn VCs' virtual cells x
//     submission span)) is `load`;
//   - priority: -1 (opportunistic) with probability `opportunistic_share`, else 0.
// Same options and seed -> the same bytes (own RNG maths, no std distributions).
//
// Thread safety: stateless.
#ifndef HIVED_SIM_TRACE_GEN_TRACE_H_
#define HIVED_SIM_TRACE_GEN_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/trace/job.h"

namespace hived::sim {

// The most jobs one generated trace may hold. GenerateTrace builds the trace in memory (about
// 150 bytes a job) and a replay holds every job of its trace (about 300 bytes a job), so
// 20,000,000 jobs need some 3 and 6 GB; larger counts are refused up front rather than
// failing on allocation. WriteGeneratedTrace needs no memory per job but keeps the limit.
inline constexpr int64_t kMaxGeneratedJobs = 20'000'000;

struct GenTraceOptions {
  int64_t jobs = 2000;
  uint64_t seed = 1;
  double load = 0.8;
  double arrival_rate_per_hour = 0;  // > 0 overrides `load`
  double median_duration = 1144;
  double p90_duration = 11266;
  int64_t max_duration = 2 * 86400;
  double opportunistic_share = 0;
  std::vector<std::pair<std::string, double>> vc_weights;  // empty: by reserved GPUs
  // Absolute tenants (`--add-tenant VC:per-day=N`) are independent of their VC's size:
  int64_t max_gang_gpus = 0;  // > 0: gangs capped at this many GPUs, not half the VC
  std::vector<std::pair<int32_t, double>> size_weights;  // gang GPUs -> weight; empty: Philly's
};

// Errors: kInvalidArgument for bad options (e.g. `jobs` outside 1..kMaxGeneratedJobs) or a
// config without usable VCs.
absl::StatusOr<Trace> GenerateTrace(const SpecInfo& info, const GenTraceOptions& options);

// The CSV of GenerateTrace's trace (TraceToCsv's bytes), handed to `write` in chunks of about
// 1 MiB as the rows are drawn: memory does not grow with `options.jobs`. The jobs are drawn
// twice: once for the offered load that sets the arrival rate, once to write them. Errors:
// GenerateTrace's, or the first non-OK status `write` returns (nothing more is written then).
absl::Status WriteGeneratedTrace(const SpecInfo& info, const GenTraceOptions& options,
                                 absl::FunctionRef<absl::Status(std::string_view)> write);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_GEN_TRACE_H_
