// sim/trace/philly_stream.h: a Philly-format trace read as a stream (issue 28 items 3-4), so
// a Philly trace over the memory budget replays too.
//
// Philly's rows are unsorted and its times count from the earliest row, so `Open` reads the
// file once in chunks (`ChunkedLines`), checks every row as `PhillyTraceSource` does (the
// same `PhillyRowParser`) and keeps 32 bytes of each good row (time, line, duration, GPUs,
// VC), sorted by (time, line): in memory when they fit one run of `run_rows` rows; else in
// sorted runs written to anonymous temporary files (`std::tmpfile`, gone when closed), then
// merged into one sorted temporary file and the runs closed. The file is read and sorted
// once: `Rewound` gives another stream over the same sorted rows (one per replay), each
// reading the shared file at its own offset (`pread`), so streams of one `Open` may be read
// on different threads. Memory: while sorting one run, the names and a read buffer per
// spilled run; after, the names and a read buffer per stream; not the jobs.
//
// Jobs come in the order and with the fields `ReadTraceFile` gives (ids "L<line>", times from
// the earliest row, ties in file order), and the errors are the same: every bad row is
// listed (the first 20) before any job comes, rows more than 100 years after the earliest
// after the others; with `skip_bad_rows` they are skipped and counted alike.
//
// Invariants: each run, and the sorted rows, hold their rows sorted by (time, line); `runs_`
// and `heads_` are parallel while merging; a run's head is its smallest row not yet merged;
// after `Open`, the sorted rows never change.
//
// Thread safety: one thread at a time per stream; streams of one `Open` are independent.
#ifndef HIVED_SIM_TRACE_PHILLY_STREAM_H_
#define HIVED_SIM_TRACE_PHILLY_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/trace/job.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_stream.h"

namespace hived::sim {

class PhillyStream : public JobStream {
 public:
  static constexpr size_t kDefaultRunRows = size_t{1} << 19;  // 16 MB of rows
  // Reads and sorts the file. kNotFound when it cannot be opened; its rows' errors as
  // `ReadTraceFile` gives them; kInternal when a temporary file cannot be written.
  static absl::StatusOr<std::unique_ptr<PhillyStream>> Open(const std::string& path,
                                                            TraceReadOptions options,
                                                            size_t run_rows = kDefaultRunRows);
  ~PhillyStream() override;
  PhillyStream(const PhillyStream&) = delete;
  PhillyStream& operator=(const PhillyStream&) = delete;

  absl::StatusOr<bool> Next(TraceJob* job) override;
  const Trace& trace() const override { return trace_; }
  std::unique_ptr<JobStream> Rewound() const override;
  // Runs written to temporary files while sorting (for tests).
  size_t spilled_runs() const { return spilled_runs_; }

  // A good row as kept: 32 bytes.
  struct Row {
    int64_t time;      // seconds since the epoch
    int64_t duration;  // seconds
    int32_t gpus;
    int32_t line;
    int32_t column;  // of the timestamp
    int32_t vc;      // index into `vcs_`
  };

 private:
  // A spilled run being merged: its file and a buffer of its next rows.
  struct Run {
    std::FILE* file = nullptr;
    std::vector<Row> buffer;
    size_t pos = 0;
  };
  // The sorted rows, shared by the streams of one `Open`: in memory, or in a file.
  struct Sorted {
    std::vector<Row> rows;
    std::FILE* file = nullptr;  // when not null, every row is here, and `rows` is empty
    size_t file_rows = 0;
    ~Sorted();
  };
  PhillyStream() = default;
  absl::Status Spill();
  // Sorts what is left in `rows_` and makes `sorted_` (merging the runs into one file when
  // there are), closing the runs. With `find_late`, the (line, column) of the rows more than
  // 100 years after the earliest, in file order.
  absl::StatusOr<std::vector<std::pair<int32_t, int32_t>>> Finish(bool find_late);
  // The next row of run `r` into `heads_[r]`; false when the run is done.
  absl::StatusOr<bool> Advance(size_t r);
  // Loads the runs' first rows.
  absl::Status StartMerge();
  // The smallest head, removed; false when every run is done.
  absl::StatusOr<bool> Pop(Row* row);
  // The next sorted row; false at the end.
  absl::StatusOr<bool> NextRow(Row* row);

  std::string path_;
  Trace trace_;
  std::vector<Name> vcs_;   // the VCs by index, interned in trace_
  int64_t first_time_ = 0;  // the earliest good row's
  size_t spilled_runs_ = 0;
  // While sorting (Open).
  std::vector<Row> rows_;  // the run being filled; when merging, the last run (not spilled)
  size_t rows_pos_ = 0;    // next row of `rows_` to merge
  size_t run_rows_ = kDefaultRunRows;
  std::vector<Run> runs_;
  std::vector<Row> heads_;      // per run, then `rows_`
  std::vector<bool> has_head_;  // parallel to heads_
  // After: the sorted rows and this stream's place in them.
  std::shared_ptr<const Sorted> sorted_;
  size_t next_ = 0;          // index of the next row
  std::vector<Row> buffer_;  // rows read ahead from `sorted_->file`, from `buffer_pos_`
  size_t buffer_pos_ = 0;
};

// The stream of a trace file in `format`: `TraceStream` or `PhillyStream`.
absl::StatusOr<std::unique_ptr<JobStream>> OpenJobStream(const std::string& path,
                                                         TraceFormat format,
                                                         TraceReadOptions options);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_PHILLY_STREAM_H_
