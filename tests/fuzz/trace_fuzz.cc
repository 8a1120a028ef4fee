// libFuzzer target for both trace readers (HIVED_TRACE_FORMAT_PHILLY picks the Philly one at
// compile time; CMake builds trace_hived_fuzz and trace_philly_fuzz from this file). Any bytes
// must give a located error or a trace whose jobs respect the readers' limits (sim/common/csv.h);
// with --skip-bad-rows the good rows of a failing file survive; an own-format trace survives
// a write/read round trip unchanged.
//
// Build and run: see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/trace/trace_reader.h"
#include "tests/fuzz/sim_fuzz_check.h"

namespace hived::sim::fuzz {
namespace {

#ifdef HIVED_TRACE_FORMAT_PHILLY
constexpr TraceFormat kFormat = TraceFormat::kPhilly;
#else
constexpr TraceFormat kFormat = TraceFormat::kHived;
#endif

void CheckTrace(const Trace& trace) {
  Time previous = 0;
  for (const TraceJob& job : trace.jobs) {
    RequireTime(job.submit_time);
    RequireTime(job.duration, 1);
    Require(job.submit_time >= previous);  // sorted
    previous = job.submit_time;
    RequireName(job.vc);
    Require(job.total_gpus > 0);
    if (kFormat == TraceFormat::kHived) {
      RequireName(job.id);
      Require(job.pods > 0 && job.gpus_per_pod > 0);
      Require(job.total_gpus == job.pods * job.gpus_per_pod);
      if (!job.gpu_type.empty()) RequireName(job.gpu_type);
    } else {
      Require(job.pods == 0);
    }
  }
}

bool SameJobs(const Trace& a, const Trace& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const TraceJob& x = a.jobs[i];
    const TraceJob& y = b.jobs[i];
    if (x.id != y.id || x.submit_time != y.submit_time || x.vc != y.vc ||
        x.priority != y.priority || x.pods != y.pods || x.gpus_per_pod != y.gpus_per_pod ||
        x.gpu_type != y.gpu_type || x.duration != y.duration) {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace hived::sim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hived::sim;        // NOLINT(google-build-using-namespace): a test driver
  using namespace hived::sim::fuzz;  // NOLINT(google-build-using-namespace)
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Trace> strict = MakeTraceSource(kFormat, {})->Parse(text, "fuzz.csv");
  TraceReadOptions skip_options;
  skip_options.skip_bad_rows = true;
  absl::StatusOr<Trace> skipping = MakeTraceSource(kFormat, skip_options)->Parse(text, "fuzz.csv");
  if (!strict.ok()) RequireLocatedError(strict.status(), "fuzz.csv");
  if (!skipping.ok()) {
    RequireLocatedError(skipping.status(), "fuzz.csv");
    Require(!strict.ok());  // what fails when skipping fails without skipping too
    return 0;
  }
  CheckTrace(*skipping);
  if (strict.ok()) {
    CheckTrace(*strict);
    Require(SameJobs(*strict, *skipping) && skipping->skipped_rows == 0);
    if (kFormat == TraceFormat::kHived) {
      absl::StatusOr<Trace> again = HivedTraceSource({}).Parse(TraceToCsv(*strict), "again.csv");
      Require(again.ok() && SameJobs(*strict, *again));
    }
  }
  return 0;
}
