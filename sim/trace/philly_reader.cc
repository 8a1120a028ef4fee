// The Philly reader (PhillyTraceSource): real dates, whole-second durations written as
// floats, the cluster column as the VC. Declared in sim/trace/trace_reader.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_rows.h"

namespace hived::sim {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Philly timestamps are read for years 1900..2199 only (the real trace is from 2017).
constexpr int64_t kMinYear = 1900;
constexpr int64_t kMaxYear = 2199;

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// ParseDouble, with a fast path for what the real file holds: whole seconds as digits,
// maybe followed by ".0" ("2951.0"). At most 15 digits, such a text is exactly the integer
// ParseDouble would return.
std::optional<double> ParseWholeSeconds(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (whole.empty() || whole.size() > 15 || !std::all_of(whole.begin(), whole.end(), digit) ||
      !std::all_of(fraction.begin(), fraction.end(), [](char c) { return c == '0'; })) {
    return ParseDouble(text);
  }
  return static_cast<double>(*ParseInt(whole));
}

// Days since the epoch of a checked date; nullopt when a field is missing or out of range.
std::optional<int64_t> CheckedDays(std::optional<int64_t> y, std::optional<int64_t> mo,
                                   std::optional<int64_t> d) {
  if (!y || !mo || !d || *y < kMinYear || *y > kMaxYear || *mo < 1 || *mo > 12 || *d < 1 ||
      *d > DaysInMonth(*y, *mo)) {
    return std::nullopt;
  }
  return DaysFromCivil(*y, *mo, *d);
}

// Seconds since the epoch of a checked day and time of day.
std::optional<int64_t> CheckedTimestamp(std::optional<int64_t> days, std::optional<int64_t> h,
                                        std::optional<int64_t> mi, std::optional<int64_t> se) {
  if (!days || !h || !mi || !se || *h < 0 || *h > 23 || *mi < 0 || *mi > 59 || *se < 0 ||
      *se > 60) {
    return std::nullopt;
  }
  return *days * 86400 + *h * 3600 + *mi * 60 + *se;
}

}  // namespace

std::optional<int64_t> PhillyTimestampReader::Read(std::string_view s) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  // Fast path: every field plain digits (the real file), read in one pass; a row of the
  // same day as the last one read this way reuses its day count.
  static constexpr size_t kDigitAt[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18};
  if (std::all_of(std::begin(kDigitAt), std::end(kDigitAt),
                  [s](size_t i) { return s[i] >= '0' && s[i] <= '9'; })) {
    auto num = [s](size_t at, size_t len) {
      int64_t v = 0;
      for (size_t i = at; i < at + len; ++i) v = v * 10 + (s[i] - '0');
      return v;
    };
    if (!day_ || std::memcmp(s.data(), date_, sizeof(date_)) != 0) {
      day_ = CheckedDays(num(0, 4), num(5, 2), num(8, 2));
      if (!day_) return std::nullopt;
      std::memcpy(date_, s.data(), sizeof(date_));
    }
    return CheckedTimestamp(day_, num(11, 2), num(14, 2), num(17, 2));
  }
  return CheckedTimestamp(
      CheckedDays(ParseInt(s.substr(0, 4)), ParseInt(s.substr(5, 2)), ParseInt(s.substr(8, 2))),
      ParseInt(s.substr(11, 2)), ParseInt(s.substr(14, 2)), ParseInt(s.substr(17, 2)));
}

const std::vector<std::string_view>& PhillyRowParser::Wanted() {
  static const std::vector<std::string_view> kWanted = {"timestamp", "duration", "num_gpus",
                                                        "cluster"};
  return kWanted;
}

absl::StatusOr<HeaderColumns> PhillyRowParser::ReadPhillyHeader(LineReader* reader,
                                                                std::string_view file_name,
                                                                Trace* trace, size_t* needed) {
  return ReadHeader(reader, file_name, Wanted(), {"gpu_time"}, /*comments=*/false,
                    "timestamp,duration,num_gpus,gpu_time,cluster", trace, needed);
}

bool PhillyRowParser::Row(std::string_view line, int32_t ln, PhillyRow* row) {
  enum { kTimestamp, kDuration, kGpus, kCluster };
  if (!SplitRow(line, ln, needed_, errors_, &f_)) return false;
  const CsvField& ts = f_[h_.index[kTimestamp]];
  const CsvField& dur = f_[h_.index[kDuration]];
  const CsvField& gpus = f_[h_.index[kGpus]];
  const CsvField& cluster = f_[h_.index[kCluster]];
  auto t = timestamps_.Read(ts.text);
  if (!t) {
    errors_->Add(ln, ts.column,
                 absl::StrCat("timestamp '", Av(ts.text),
                              "' is not a real date and time YYYY-MM-DD HH:MM:SS in years ",
                              kMinYear, "..", kMaxYear, BlankHint(ts.text)));
    return false;
  }
  const std::optional<double> d = ParseWholeSeconds(dur.text);
  if (!d || *d <= 0 || *d > static_cast<double>(kMaxTimeSeconds)) {
    errors_->Add(ln, dur.column,
                 absl::StrCat("duration '", Av(dur.text), "' is not a number of seconds in (0, ",
                              kMaxTimeSeconds, "] (at most 100 years)", BlankHint(dur.text)));
    return false;
  }
  auto g = ParseInt(gpus.text);
  if (!g || *g < 1 || *g > 1000000) {
    errors_->Add(ln, gpus.column,
                 absl::StrCat("num_gpus '", Av(gpus.text), "' is not an integer in 1..1000000",
                              BlankHint(gpus.text)));
    return false;
  }
  if ((!last_cluster_ || cluster.text != *last_cluster_) &&
      !CheckNameField(cluster, "cluster (the VC)", ln, errors_)) {
    return false;
  }
  if (!last_cluster_ || cluster.text != *last_cluster_) last_cluster_ = std::string(cluster.text);
  row->timestamp = *t;
  // Durations are integral in the real file; anything fractional is rounded up.
  row->duration = static_cast<Time>(std::ceil(*d));
  row->gpus = static_cast<int32_t>(*g);
  row->timestamp_column = ts.column;
  row->cluster = cluster.text;
  return true;
}

absl::StatusOr<Trace> PhillyTraceSource::Parse(std::string_view text,
                                               std::string_view file_name) const {
  LineReader reader(text);
  Trace trace;
  trace.file = std::string(file_name);
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header =
      PhillyRowParser::ReadPhillyHeader(&reader, file_name, &trace, &needed);
  if (!header.ok()) return header.status();
  std::string_view line;
  RowErrors errors(file_name, options_.skip_bad_rows);
  PhillyRowParser parser(std::move(*header), needed, &errors);
  std::optional<int64_t> first_time;              // the earliest timestamp: time 0
  std::vector<std::pair<int32_t, int32_t>> rows;  // per job: line and timestamp column
  Name last_cluster_name;                         // the last row's, interned
  PhillyRow row;
  trace.jobs.reserve(EstimatedRows(text));
  rows.reserve(trace.jobs.capacity());
  while (reader.Next(&line)) {
    if (IsBlank(line)) continue;
    const int32_t ln = reader.line_number();
    if (!parser.Row(line, ln, &row)) continue;
    if (!first_time || row.timestamp < *first_time) first_time = row.timestamp;
    rows.push_back({ln, row.timestamp_column});
    TraceJob job;
    job.id = PhillyJobId(ln);
    job.submit_time = row.timestamp;
    if (row.cluster != last_cluster_name.view()) last_cluster_name = trace.Intern(row.cluster);
    job.vc = last_cluster_name;
    job.priority = 0;
    job.pods = 0;
    job.total_gpus = row.gpus;
    job.duration = row.duration;
    trace.jobs.push_back(std::move(job));
  }
  // Times count from the earliest submission; none may then lie beyond the time limit.
  // Rows failing this are bad rows like any other (skipped with --skip-bad-rows).
  if (first_time) {
    size_t kept = 0;  // compacted in place
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
      TraceJob& job = trace.jobs[i];
      job.submit_time -= *first_time;
      if (job.submit_time > kMaxTimeSeconds) {
        errors.Add(rows[i].first, rows[i].second, PhillyTooLateMessage());
        continue;
      }
      if (kept != i) trace.jobs[kept] = std::move(job);
      ++kept;
    }
    trace.jobs.resize(kept);
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  trace.skipped_rows = errors.count();
  for (std::string& w : errors.SkipWarnings()) trace.warnings.push_back(std::move(w));
  SortBySubmitTime(&trace.jobs);
  return trace;
}

std::string PhillyTooLateMessage() {
  return absl::StrCat("timestamp is more than 100 years (", kMaxTimeSeconds,
                      " s) after the earliest one");
}

JobId PhillyJobId(int32_t line) {
  char id[16] = {'L'};
  JobId out;
  out.assign(id, std::to_chars(id + 1, id + sizeof(id), line).ptr);
  return out;
}

}  // namespace hived::sim
