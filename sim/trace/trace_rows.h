// sim/trace/trace_rows.h: what the trace readers of sim/trace/ share (internal to the
// module): the header line mapped to columns, rows split and checked, names checked, and the
// stable sort of jobs by submit time that every reader ends with.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_ROWS_H_
#define HIVED_SIM_TRACE_TRACE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// Sorts the jobs stably by submit time (ties keep row order): an LSD radix sort of the
// times, then each job moved once, in place.
void SortBySubmitTime(std::vector<TraceJob>* jobs);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_ROWS_H_
