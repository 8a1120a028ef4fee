// sim/trace/trace_stream.h: a job trace of the project's format read as a stream (issue 28
// item 3): the file is read in chunks and parsed row by row as the caller pulls jobs, so
// memory holds one chunk, the names and the job ids seen (for duplicates), not the jobs.
//
// The rows must come in non-decreasing submit_time order: the first row earlier than the one
// before it is an error "t.csv:L:C: submit time X is before Y (line L'): ...; sort it with:
// <SortTraceCommand>". Rows are checked as `ReadTraceFile` checks them (the same
// `HivedRowParser`), but a stream stops at the first bad row (`ReadTraceFile` lists up to 20)
// unless `skip_bad_rows`. Jobs come in file order with the same fields `ReadTraceFile` gives
// a sorted file (its stable sort keeps a sorted file's order).
//
// Example:
//   absl::StatusOr<std::unique_ptr<TraceStream>> s = TraceStream::Open("t.csv", {});
//   TraceJob job;
//   while (true) {
//     absl::StatusOr<bool> more = (*s)->Next(&job);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     ...
//   }
//
// Thread safety: one thread at a time.
#ifndef HIVED_SIM_TRACE_TRACE_STREAM_H_
#define HIVED_SIM_TRACE_TRACE_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sim/trace/job.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {

class HivedRowParser;
class RowErrors;

class TraceStream {
 public:
  // Opens the file and reads its header. kNotFound when it cannot be opened; the header's
  // errors as `ReadTraceFile` gives them.
  static absl::StatusOr<std::unique_ptr<TraceStream>> Open(const std::string& path,
                                                           TraceReadOptions options);
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  // The next job in file order into `*job`; false at the end of the file. Errors:
  // kInvalidArgument for a bad row (unless skipping) or a row out of submit-time order.
  absl::StatusOr<bool> Next(TraceJob* job);

  // The names the jobs hold (they live as long as this), warnings, rows skipped so far;
  // `jobs` stays empty.
  const Trace& trace() const { return trace_; }

 private:
  TraceStream() = default;
  // The next line into `*line` (valid until the next call); false at the end.
  absl::StatusOr<bool> NextLine(std::string_view* line);

  std::string path_;
  TraceReadOptions options_;
  std::FILE* file_ = nullptr;
  std::string buffer_;  // unread bytes from `pos_`
  size_t pos_ = 0;
  bool eof_ = false;
  int32_t line_number_ = 0;
  Trace trace_;
  std::unique_ptr<RowErrors> errors_;
  std::unique_ptr<HivedRowParser> parser_;
  int64_t last_time_ = -1;
  int32_t last_line_ = 0;
  int32_t submit_field_ = 0;
  bool done_ = false;  // the end was reached (skip warnings added once)  // 1-based position of
                       // submit_time, for the sort line
};

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_STREAM_H_
