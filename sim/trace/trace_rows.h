// sim/trace/trace_rows.h: what the trace readers of sim/trace/ share (internal to the
// module): the header line mapped to columns, rows split and checked, names checked, and the
// stable sort of jobs by submit time that every reader ends with.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_ROWS_H_
#define HIVED_SIM_TRACE_TRACE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {

constexpr size_t kMissing = static_cast<size_t>(-1);

// Column positions found in a header line; kMissing when absent.
struct HeaderColumns {
  std::vector<size_t> index;         // per wanted name
  std::vector<size_t> optional;      // per optional (known, not required) name
  std::vector<std::string> unknown;  // extra columns
  std::vector<std::string> missing;  // wanted names not found
};

// Reads the header line: maps the `wanted` columns (others in `known_ignored` are silently
// accepted, their positions in `optional`), fails naming the missing ones, and warns once about
// unknown extra columns. Sets `*needed` to the number of fields a row must have.
absl::StatusOr<HeaderColumns> ReadHeader(LineReader* reader, std::string_view file_name,
                                         const std::vector<std::string_view>& wanted,
                                         const std::vector<std::string_view>& known_ignored,
                                         bool comments, std::string_view expected, Trace* trace,
                                         size_t* needed);

// About the number of rows of `text`, to reserve the jobs once: its lines, but no more than
// rows of at least 16 bytes allow (a file of blank lines reserves little), and at most 2^20
// (beyond that, the vector grows as rows come).
size_t EstimatedRows(std::string_view text);

// Splits a data row into `*fields`; records an error and returns false when it has fewer
// than `needed` fields.
bool SplitRow(std::string_view line, int32_t line_number, size_t needed, RowErrors* errors,
              std::vector<CsvField>* fields);

// Checks a name field (job id, VC, GPU type); records a located error when it is unusable.
bool CheckNameField(const CsvField& field, std::string_view what, int32_t line, RowErrors* errors);

// Parses the rows of the project's own trace format one at a time (the in-memory reader
// and the streamed one share it): checks every field, interns the names into `trace`, and
// records a located error for a bad row. Rows repeat names in runs, so each distinct run of
// equal VC and GPU type names is checked once.
class HivedRowParser {
 public:
  // `own_ids`: copy each job id to check duplicates (a stream's lines do not outlive the
  // row); otherwise the ids are views into text that outlives the parser.
  HivedRowParser(HeaderColumns header, size_t needed, RowErrors* errors, Trace* trace, bool own_ids)
      : h_(std::move(header)), needed_(needed), errors_(errors), trace_(trace), own_ids_(own_ids) {}
  static const std::vector<std::string_view>& Wanted();
  // The header of the format, through `ReadHeader`.
  static absl::StatusOr<HeaderColumns> ReadHivedHeader(LineReader* reader,
                                                       std::string_view file_name, Trace* trace,
                                                       size_t* needed);
  void ReserveIds(size_t n) { ids_.reserve(n); }
  // Whether a repeated job id is a bad row (default true).
  void set_check_ids(bool check) { check_ids_ = check; }
  // Parses a data row (neither blank nor a comment) into `*job`; false when it recorded an
  // error for the row.
  bool Row(std::string_view line, int32_t line_number, TraceJob* job);
  // The byte column of the last parsed row's submit_time.
  int32_t submit_column() const { return submit_column_; }

 private:
  bool InsertId(std::string_view id);

  HeaderColumns h_;
  size_t needed_;
  RowErrors* errors_;
  Trace* trace_;
  bool own_ids_;
  absl::flat_hash_set<std::string_view> ids_;
  bool check_ids_ = true;
  // With own_ids_: the ids' text, packed in blocks that never move (10 bytes an id of the
  // generated traces, not a 32-byte string each).
  std::vector<std::unique_ptr<char[]>> id_blocks_;
  size_t id_block_used_ = 0;
  size_t id_block_size_ = 0;
  std::vector<CsvField> f_;  // one row's fields; reused
  // The last VC and GPU type that passed CheckName (copies: a stream's rows do not last).
  std::optional<std::string> last_vc_;
  std::string last_type_;
  Name last_vc_name_;  // the name of the last row's VC and GPU type, interned
  Name last_type_name_;
  int32_t submit_column_ = 1;
};

// Reads Philly's timestamps, row after row: "YYYY-MM-DD HH:MM:SS" -> seconds since the
// epoch; nullopt when malformed or not a real date (2017-02-31 is refused, not read as
// March 3). Rows of one day (most rows follow one of the same day) share its day count.
class PhillyTimestampReader {
 public:
  std::optional<int64_t> Read(std::string_view s);

 private:
  char date_[10] = {};          // "YYYY-MM-DD" of the last date read on the fast path
  std::optional<int64_t> day_;  // its day count; nullopt when none is held
};

// One good row of a Philly trace.
struct PhillyRow {
  int64_t timestamp = 0;         // seconds since the epoch
  Time duration = 0;             // whole seconds (a fraction rounds up)
  int32_t gpus = 0;              // 1..1000000
  int32_t timestamp_column = 0;  // for errors found later
  std::string_view cluster;      // the VC; valid until the next row
};

// Parses the rows of a Philly trace one at a time (the in-memory reader and the stream
// share it): checks every field and records a located error for a bad row. The check
// against the earliest timestamp (100 years) is the caller's: it needs every row.
class PhillyRowParser {
 public:
  PhillyRowParser(HeaderColumns header, size_t needed, RowErrors* errors)
      : h_(std::move(header)), needed_(needed), errors_(errors) {}
  static const std::vector<std::string_view>& Wanted();
  // The header of the format, through `ReadHeader`.
  static absl::StatusOr<HeaderColumns> ReadPhillyHeader(LineReader* reader,
                                                        std::string_view file_name, Trace* trace,
                                                        size_t* needed);
  // Parses a data row (not blank) into `*row`; false when it recorded an error for the row.
  bool Row(std::string_view line, int32_t line_number, PhillyRow* row);

 private:
  HeaderColumns h_;
  size_t needed_;
  RowErrors* errors_;
  PhillyTimestampReader timestamps_;
  std::vector<CsvField> f_;                  // one row's fields; reused
  std::optional<std::string> last_cluster_;  // the last that passed CheckName (a copy)
};

// The error of a row more than 100 years after the earliest one; a Philly job's id ("L"
// and its line).
std::string PhillyTooLateMessage();
JobId PhillyJobId(int32_t line);

// Sorts the jobs stably by submit time (ties keep row order): an LSD radix sort of the
// times, then each job moved once, in place.
void SortBySubmitTime(std::vector<TraceJob>* jobs);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_ROWS_H_
