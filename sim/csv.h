// sim/csv.h: the small CSV toolkit the trace readers share: line iteration with line
// numbers, field splitting with columns, located row errors, strict number parsing.
//
// No quoting: traces are plain comma-separated values.
//
// Thread safety: plain values.
#ifndef HIVED_SIM_CSV_H_
#define HIVED_SIM_CSV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hived::sim {

// `std::string_view` -> `absl::string_view` (distinct types in Debian's Abseil), for StrCat.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

struct CsvField {
  std::string_view text;
  int32_t column = 1;  // 1-based byte column of the field's first character
};

// Splits `line` at commas (no quoting). A trailing '\r' must already be stripped.
std::vector<CsvField> SplitCsvLine(std::string_view line);

// Iterates over the lines of a text, 1-based numbering, '\r\n' tolerated.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  // The next line (without terminator); false at the end.
  bool Next(std::string_view* line);
  int32_t line_number() const { return line_number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int32_t line_number_ = 0;
};

// True when the line is empty or only blanks.
bool IsBlank(std::string_view line);

// Strict parsing: the whole field, no blanks. nullopt on any error.
std::optional<int64_t> ParseInt(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

// Collects located row errors; with `skip` it counts skipped rows instead of failing.
class RowErrors {
 public:
  RowErrors(std::string_view file_name, bool skip) : file_name_(file_name), skip_(skip) {}
  // Records an error at (line, column).
  void Add(int32_t line, int32_t column, std::string_view message);
  bool empty() const { return count_ == 0; }
  int64_t count() const { return count_; }
  // kInvalidArgument listing the errors when not skipping and any was added; OK otherwise.
  absl::Status ToStatus() const;
  // Warnings for skipped rows (the first few and a total), for Trace::warnings.
  std::vector<std::string> SkipWarnings() const;
  std::string Locate(int32_t line, int32_t column) const;

 private:
  std::string file_name_;
  bool skip_;
  int64_t count_ = 0;
  std::vector<std::string> first_;  // the first kMaxListed messages
};

}  // namespace hived::sim

#endif  // HIVED_SIM_CSV_H_
