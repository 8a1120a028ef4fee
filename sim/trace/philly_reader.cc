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

// Reads Philly's timestamps, row after row: "YYYY-MM-DD HH:MM:SS" -> seconds since the
// epoch; nullopt when malformed or not a real date (2017-02-31 is refused, not read as
// March 3). Rows of one day (most rows follow one of the same day) share its day count.
class TimestampReader {
 public:
  std::optional<int64_t> Read(std::string_view s);

 private:
  char date_[10] = {};          // "YYYY-MM-DD" of the last date read on the fast path
  std::optional<int64_t> day_;  // its day count; nullopt when none is held
};

std::optional<int64_t> TimestampReader::Read(std::string_view s) {
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

}  // namespace

absl::StatusOr<Trace> PhillyTraceSource::Parse(std::string_view text,
                                               std::string_view file_name) const {
  static const std::vector<std::string_view> kWanted = {"timestamp", "duration", "num_gpus",
                                                        "cluster"};
  enum { kTimestamp, kDuration, kGpus, kCluster };
  LineReader reader(text);
  Trace trace;
  trace.file = std::string(file_name);
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header =
      ReadHeader(&reader, file_name, kWanted, {"gpu_time"}, /*comments=*/false,
                 "timestamp,duration,num_gpus,gpu_time,cluster", &trace, &needed);
  if (!header.ok()) return header.status();
  const HeaderColumns& h = *header;
  std::string_view line;
  RowErrors errors(file_name, options_.skip_bad_rows);
  std::optional<int64_t> first_time;              // the earliest timestamp: time 0
  std::vector<std::pair<int32_t, int32_t>> rows;  // per job: line and timestamp column
  std::vector<CsvField> f;                        // one row's fields; reused
  std::optional<std::string_view> last_cluster;   // the last that passed CheckName
  Name last_cluster_name;                         // the last row's, interned
  TimestampReader timestamps;
  trace.jobs.reserve(EstimatedRows(text));
  rows.reserve(trace.jobs.capacity());
  while (reader.Next(&line)) {
    if (IsBlank(line)) continue;
    const int32_t ln = reader.line_number();
    if (!SplitRow(line, ln, needed, &errors, &f)) continue;
    const CsvField& ts = f[h.index[kTimestamp]];
    const CsvField& dur = f[h.index[kDuration]];
    const CsvField& gpus = f[h.index[kGpus]];
    const CsvField& cluster = f[h.index[kCluster]];
    auto t = timestamps.Read(ts.text);
    if (!t) {
      errors.Add(ln, ts.column,
                 absl::StrCat("timestamp '", Av(ts.text),
                              "' is not a real date and time YYYY-MM-DD HH:MM:SS in years ",
                              kMinYear, "..", kMaxYear, BlankHint(ts.text)));
      continue;
    }
    const std::optional<double> d = ParseWholeSeconds(dur.text);
    if (!d || *d <= 0 || *d > static_cast<double>(kMaxTimeSeconds)) {
      errors.Add(ln, dur.column,
                 absl::StrCat("duration '", Av(dur.text), "' is not a number of seconds in (0, ",
                              kMaxTimeSeconds, "] (at most 100 years)", BlankHint(dur.text)));
      continue;
    }
    auto g = ParseInt(gpus.text);
    if (!g || *g < 1 || *g > 1000000) {
      errors.Add(ln, gpus.column,
                 absl::StrCat("num_gpus '", Av(gpus.text), "' is not an integer in 1..1000000",
                              BlankHint(gpus.text)));
      continue;
    }
    if (cluster.text != last_cluster.value_or("\n") &&
        !CheckNameField(cluster, "cluster (the VC)", ln, &errors)) {
      continue;
    }
    last_cluster = cluster.text;
    if (!first_time || *t < *first_time) first_time = *t;
    rows.push_back({ln, ts.column});
    TraceJob job;
    char id[16] = {'L'};
    job.id.assign(id, std::to_chars(id + 1, id + sizeof(id), ln).ptr);
    job.submit_time = *t;
    if (cluster.text != last_cluster_name.view()) last_cluster_name = trace.Intern(cluster.text);
    job.vc = last_cluster_name;
    job.priority = 0;
    job.pods = 0;
    job.total_gpus = static_cast<int32_t>(*g);
    // Durations are integral in the real file; anything fractional is rounded up.
    job.duration = static_cast<Time>(std::ceil(*d));
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
        errors.Add(rows[i].first, rows[i].second,
                   absl::StrCat("timestamp is more than 100 years (", kMaxTimeSeconds,
                                " s) after the earliest one"));
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

}  // namespace hived::sim
