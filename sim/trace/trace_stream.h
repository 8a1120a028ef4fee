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

// A file's lines, read in chunks (one chunk and the line being read in memory), for the
// streams. Lines are at most `kMaxLineBytes`; a trailing '\r' is dropped.
class ChunkedLines {
 public:
  ChunkedLines() = default;
  ~ChunkedLines();
  ChunkedLines(const ChunkedLines&) = delete;
  ChunkedLines& operator=(const ChunkedLines&) = delete;
  // Opens the file and reads its first bytes: at least a chunk, up to a line end.
  // kNotFound when it cannot be opened.
  absl::Status Open(const std::string& path);
  // The bytes read and not yet consumed (after Open: the file's start, for its header).
  std::string_view buffered() const { return std::string_view(buffer_).substr(pos_); }
  // Consumes the first `n` lines of `buffered()` (a header read from it).
  void SkipLines(int32_t n);
  // The next line into `*line` (valid until the next call); false at the end. Errors:
  // kInvalidArgument for a line too long, kDataLoss for a read error.
  absl::StatusOr<bool> Next(std::string_view* line);
  int32_t line_number() const { return line_number_; }  // of the last line returned

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;  // unread bytes from `pos_`
  size_t pos_ = 0;
  bool eof_ = false;
  int32_t line_number_ = 0;
};

// What the trace streams give (`TraceStream`, `PhillyStream` in sim/trace/philly_stream.h,
// which opens either: `OpenJobStream`):
// jobs in non-decreasing submit time, with the names they hold.
class JobStream {
 public:
  virtual ~JobStream() = default;
  // The next job into `*job`; false at the end. Errors: kInvalidArgument for a bad row
  // (unless skipping).
  virtual absl::StatusOr<bool> Next(TraceJob* job) = 0;
  // The names the jobs hold (they live as long as this), warnings, rows skipped (complete
  // once `Next` returned false); `jobs` stays empty.
  virtual const Trace& trace() const = 0;
  // A stream of the same jobs from the first, sharing what this one read (`PhillyStream`:
  // its sorted rows, so the file is neither read nor sorted again); null when the format
  // reads the file again instead (`TraceStream`). May be called, and the stream it gives
  // read, on another thread while this one is read.
  virtual std::unique_ptr<JobStream> Rewound() const { return nullptr; }
};

class TraceStream : public JobStream {
 public:
  // Opens the file and reads its header. kNotFound when it cannot be opened; the header's
  // errors as `ReadTraceFile` gives them.
  static absl::StatusOr<std::unique_ptr<TraceStream>> Open(const std::string& path,
                                                           TraceReadOptions options);
  ~TraceStream() override;
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  // The next job in file order into `*job`; false at the end of the file. Errors:
  // kInvalidArgument for a bad row (unless skipping) or a row out of submit-time order.
  absl::StatusOr<bool> Next(TraceJob* job) override;

  const Trace& trace() const override { return trace_; }

 private:
  TraceStream() = default;

  std::string path_;
  TraceReadOptions options_;
  ChunkedLines lines_;
  Trace trace_;
  std::unique_ptr<RowErrors> errors_;
  std::unique_ptr<HivedRowParser> parser_;
  int64_t last_time_ = -1;
  int32_t last_line_ = 0;
  int32_t submit_field_ = 0;  // 1-based position of submit_time, for the sort line
  bool done_ = false;         // the end was reached (skip warnings added once)
};

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_STREAM_H_
