// sim/metrics/jobs_csv_writer.h: jobs.csv written from jobs handed over in any order (a
// streamed replay's, issue 28 item 3), in trace order, with bounded memory.
//
// Each job's row is rendered when it is added (`AppendJobRow`, so byte for byte what
// `JobsCsv` writes) into a buffer; when the buffer passes its budget its rows are sorted by
// job index and written as a run beside the output (`<path>.run<N>`). `Finish` writes the
// header and the rows in job order: straight from the buffer when nothing spilled, else by
// merging the runs (each read sequentially), and removes the runs.
// Invariants: `rows_` indexes `text_` (offset and size of each row); every run file holds
// rows in ascending job index; each job index is added once.
//
// Example:
//   JobsCsvWriter csv(staged / "jobs.csv", &backend->nodes());
//   ... csv.Add(finished) for every job ...
//   absl::Status s = csv.Finish();
//
// Thread safety: one thread at a time.
#ifndef HIVED_SIM_METRICS_JOBS_CSV_WRITER_H_
#define HIVED_SIM_METRICS_JOBS_CSV_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/engine/engine.h"

namespace hived::sim {

class JobsCsvWriter {
 public:
  static constexpr size_t kDefaultBufferBytes = size_t{32} << 20;
  // Room beyond the budget for the row that passes it (a longer row grows the buffer).
  static constexpr size_t kRowSlack = size_t{64} << 10;
  // `nodes` names the backend's node ids and must outlive the writer's `Add` calls.
  JobsCsvWriter(std::filesystem::path path, const std::vector<std::string>* nodes,
                size_t buffer_bytes = kDefaultBufferBytes);
  ~JobsCsvWriter();  // removes any run left (a failed replay)
  JobsCsvWriter(const JobsCsvWriter&) = delete;
  JobsCsvWriter& operator=(const JobsCsvWriter&) = delete;

  // Errors: kInternal when a run cannot be written.
  absl::Status Add(const FinishedJob& job);
  // Writes the file. Errors: kInternal naming the file that cannot be written or read.
  absl::Status Finish();
  // Runs written so far (for tests).
  size_t runs() const { return runs_.size(); }

 private:
  struct Row {
    JobIndex index;
    uint32_t size;
    size_t offset;
  };
  absl::Status Spill();
  void SortRows();
  void RemoveRuns();

  std::filesystem::path path_;
  const std::vector<std::string>* nodes_;
  size_t buffer_bytes_;
  std::string text_;
  std::vector<Row> rows_;
  std::vector<std::filesystem::path> runs_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_JOBS_CSV_WRITER_H_
