// sim/trace/trace_reader.h: reading job traces behind one interface.
//
// Two formats:
//   - `kHived`, the project's own CSV: header
//       job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration
//     (any column order; unknown extra columns are ignored with one warning; `gpu_type` may be
//     empty; times are integer seconds, used as they are).
//   - `kPhilly`, the Philly-derived CSV of ../shared/traces/philly (timestamp, duration,
//     num_gpus, gpu_time, cluster): unsorted rows, blank lines skipped, `cluster` is the VC,
//     priority 0, gangs given as a GPU count (split into pods later by `SplitIntoPods`),
//     timestamps converted to seconds since the earliest submission.
// Both return jobs sorted stably by submit time. Every bad row is an error
// "file:line:column: message"; with `skip_bad_rows` bad rows are skipped and counted.
// Input checks (sim/common/csv.h): a UTF-8 byte-order mark is skipped, UTF-16/32 is refused; names
// (job_id, vc, gpu_type, cluster) are valid UTF-8 without control characters or surrounding
// blanks ("did you mean 'prod'?"); submit times and durations lie in 0..`kMaxTimeSeconds`
// (100 years), so submit + duration never overflows; Philly timestamps are real dates.
//
// Example:
//   absl::StatusOr<Trace> trace = ReadTraceFile("t.csv", TraceFormat::kHived, {});
//
// Thread safety: stateless functions and classes.
#ifndef HIVED_SIM_TRACE_TRACE_READER_H_
#define HIVED_SIM_TRACE_TRACE_READER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sim/common/csv.h"
#include "sim/trace/job.h"

namespace hived::sim {

enum class TraceFormat { kHived, kPhilly };

// "hived" or "philly"; kInvalidArgument otherwise.
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceReadOptions {
  bool skip_bad_rows = false;
  int64_t max_bytes = kDefaultMaxTraceBytes;  // ReadTraceFile refuses larger files
  // A job id seen before is a bad row. `TraceStream` only: false leaves the check to an
  // earlier pass over the same file (the streamed replay's pre-pass), so memory does not
  // grow with the ids.
  bool check_duplicate_ids = true;
};

// A trace format reader.
class TraceSource {
 public:
  virtual ~TraceSource() = default;
  // Parses `text` (the whole file); `file_name` is used in error messages.
  // Errors: kInvalidArgument listing every bad row (the first 20, then a count) unless
  // `skip_bad_rows`; a missing or malformed header is always an error.
  virtual absl::StatusOr<Trace> Parse(std::string_view text, std::string_view file_name) const = 0;
};

class HivedTraceSource : public TraceSource {
 public:
  explicit HivedTraceSource(TraceReadOptions options) : options_(options) {}
  absl::StatusOr<Trace> Parse(std::string_view text, std::string_view file_name) const override;

 private:
  TraceReadOptions options_;
};

class PhillyTraceSource : public TraceSource {
 public:
  explicit PhillyTraceSource(TraceReadOptions options) : options_(options) {}
  absl::StatusOr<Trace> Parse(std::string_view text, std::string_view file_name) const override;

 private:
  TraceReadOptions options_;
};

std::unique_ptr<TraceSource> MakeTraceSource(TraceFormat format, TraceReadOptions options);

// Reads (bounded by `options.max_bytes`, see `ReadInputFile`) and parses a file. kNotFound
// when it cannot be opened.
absl::StatusOr<Trace> ReadTraceFile(const std::string& path, TraceFormat format,
                                    TraceReadOptions options);

// Writes jobs in the project's own CSV format (header included). Jobs with `pods == 0` are
// written as one pod of `total_gpus`.
std::string TraceToCsv(const Trace& trace);

// Reads a whole file into `out`, at most `kDefaultMaxTraceBytes` (see `ReadInputFile`).
// kNotFound when it cannot be opened.
absl::Status ReadFileToString(const std::string& path, std::string* out);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_READER_H_
