// sim/common/csv.h: the small toolkit the simulator's readers share: bounded file reading, line
// iteration with line numbers, field splitting with columns, located row errors, strict
// number parsing, and the checks every name and time field goes through.
//
// No quoting: traces are plain comma-separated values.
//
// Limits (README "Limits"); every reader enforces them and names the row and column:
//   1. A time (submit time, duration, node-event time, flag) is at most `kMaxTimeSeconds`
//      (100 years), so a submit time plus a duration can never overflow `int64_t`.
//   2. An input file is read in chunks and refused once it passes its byte limit or holds a
//      line longer than `kMaxLineBytes`: memory stays bounded whatever the file is
//      (`/dev/zero` fails after `kMaxLineBytes`).
//   3. A name is non-empty valid UTF-8 without control characters or surrounding blanks.
//   4. `RowErrors` keeps the first `kMaxListedErrors` messages and a count.
//
// Example:
//   std::string text;
//   absl::Status s = ReadInputFile("t.csv", {kDefaultMaxTraceBytes, "trace"}, &text);
//
// Thread safety: plain values and stateless functions.
#ifndef HIVED_SIM_COMMON_CSV_H_
#define HIVED_SIM_COMMON_CSV_H_

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

// The largest time any input or flag may give: 100 years of 365.25 days, in seconds.
inline constexpr int64_t kMaxTimeSeconds = 3'155'760'000;
// Default byte limits per reader (overridable with --max-input-mb).
inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kDefaultMaxTraceBytes = 16 * kMiB;  // ~630k minimal rows, ~0.5 GB in run
inline constexpr int64_t kDefaultMaxNodeEventsBytes = 16 * kMiB;
inline constexpr int64_t kDefaultMaxSummaryBytes = 16 * kMiB;
// The longest line any reader accepts (CSV rows and JSON lines alike).
inline constexpr int64_t kMaxLineBytes = 1 * kMiB;
// How many located errors a reader lists before it only counts.
inline constexpr size_t kMaxListedErrors = 20;

struct InputLimit {
  int64_t max_bytes = kDefaultMaxTraceBytes;
  std::string_view what = "input";  // "trace", "node-events file", ... for the message
  bool raisable = true;             // the command takes --max-input-mb (the message names it)
};

// Reads a file in chunks into `out`, checking the limits while reading.
// Errors: kNotFound when it cannot be opened; kInvalidArgument "path: ..." when it is larger
// than `limit.max_bytes` (naming --max-input-mb when `limit.raisable`) or "path:line:1: ..." when a
// line is longer than `kMaxLineBytes`; kDataLoss when reading fails (e.g. a directory).
absl::Status ReadInputFile(const std::string& path, InputLimit limit, std::string* out);

struct CsvField {
  std::string_view text;
  int32_t column = 1;  // 1-based byte column of the field's first character
};

// Splits `line` at commas (no quoting). A trailing '\r' must already be stripped.
std::vector<CsvField> SplitCsvLine(std::string_view line);
// The same into `fields` (cleared first; its capacity is reused: no allocation per row).
void SplitCsvLine(std::string_view line, std::vector<CsvField>* fields);

// Iterates over the lines of a text, 1-based numbering, '\r\n' tolerated. A UTF-8 byte-order
// mark at the start of the text is skipped.
class LineReader {
 public:
  explicit LineReader(std::string_view text);
  // The next line (without terminator); false at the end.
  bool Next(std::string_view* line);
  int32_t line_number() const { return line_number_; }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int32_t line_number_ = 0;
};

// kInvalidArgument "file:1:1: ..." when the text starts with a UTF-16 or UTF-32 byte-order
// mark (the readers take UTF-8 only); OK otherwise.
absl::Status CheckUtf8Start(std::string_view text, std::string_view file_name);

// True when the line is empty or only blanks.
bool IsBlank(std::string_view line);

// Strict parsing: the whole field, no blanks; an optional sign. nullopt on any error,
// including values outside int64_t (never undefined behaviour).
std::optional<int64_t> ParseInt(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

// The byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and code
// points above U+10FFFF are invalid); nullopt when `text` is valid.
std::optional<size_t> FindInvalidUtf8(std::string_view text);

// Why `text` is not a usable name for `what` ("vc", "node", ...), or nullopt when it is:
// empty, invalid UTF-8, control characters, surrounding blanks or double quotes (with "did
// you mean ...?").
// `*offset` is set to the byte offset the problem is at.
std::optional<std::string> CheckName(std::string_view text, std::string_view what, size_t* offset);

// For number fields: " (it has surrounding blanks: did you mean 'X'?)" when trimming
// blanks (or "quotes" for one pair of double quotes) would leave something else; empty
// otherwise.
std::string BlankHint(std::string_view text);

// Parses a time in 0..kMaxTimeSeconds (`min` lets durations require >= 1); nullopt otherwise.
std::optional<int64_t> ParseTime(std::string_view text, int64_t min = 0);
// "'<text>' is not an integer in <min>..3155760000 (seconds, at most 100 years)" plus a blank hint.
std::string TimeError(std::string_view what, std::string_view text, int64_t min = 0);

// Collects located row errors; with `skip` it counts skipped rows instead of failing.
class RowErrors {
 public:
  // `skippable`: whether --skip-bad-rows applies (the error text suggests it only then).
  RowErrors(std::string_view file_name, bool skip, bool skippable = true)
      : file_name_(file_name), skip_(skip), skippable_(skippable) {}
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
  bool skippable_;
  int64_t count_ = 0;
  std::vector<std::string> first_;  // the first kMaxListedErrors messages
};

}  // namespace hived::sim

#endif  // HIVED_SIM_COMMON_CSV_H_
