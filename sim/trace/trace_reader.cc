#include "sim/trace/trace_reader.h"

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

namespace hived::sim {
namespace {

constexpr size_t kMissing = static_cast<size_t>(-1);

// Column positions found in a header line; kMissing when absent.
struct HeaderColumns {
  std::vector<size_t> index;         // per wanted name
  std::vector<size_t> optional;      // per optional (known, not required) name
  std::vector<std::string> unknown;  // extra columns
  std::vector<std::string> missing;  // wanted names not found
};

HeaderColumns MapHeader(const std::vector<CsvField>& header,
                        const std::vector<std::string_view>& wanted,
                        const std::vector<std::string_view>& known_ignored) {
  HeaderColumns h;
  h.index.assign(wanted.size(), kMissing);
  h.optional.assign(known_ignored.size(), kMissing);
  for (size_t c = 0; c < header.size(); ++c) {
    std::string_view name = header[c].text;
    bool found = false;
    for (size_t w = 0; w < wanted.size(); ++w) {
      if (name == wanted[w] && h.index[w] == kMissing) {
        h.index[w] = c;
        found = true;
      }
    }
    if (found) continue;
    auto known = std::find(known_ignored.begin(), known_ignored.end(), name);
    if (known == known_ignored.end()) {
      h.unknown.emplace_back(name);
    } else if (size_t k = static_cast<size_t>(known - known_ignored.begin());
               h.optional[k] == kMissing) {
      h.optional[k] = c;
    }
  }
  for (size_t w = 0; w < wanted.size(); ++w) {
    if (h.index[w] == kMissing) h.missing.emplace_back(wanted[w]);
  }
  return h;
}

// "a, b, c"; past the first 20 names only a count.
std::string JoinNames(const std::vector<std::string>& names) {
  constexpr size_t kListed = 20;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kListed; ++i) {
    absl::StrAppend(&out, i ? ", " : "", names[i]);
  }
  if (names.size() > kListed) absl::StrAppend(&out, " and ", names.size() - kListed, " more");
  return out;
}

// Finds the header: the first line that is not blank (nor a '#' comment when
// `comments`). False at end of text.
bool NextNonBlank(LineReader* reader, std::string_view* line, bool comments) {
  while (reader->Next(line)) {
    if (!IsBlank(*line) && !(comments && (*line)[0] == '#')) return true;
  }
  return false;
}

// Checks a name field (job id, VC, GPU type); records a located error when it is unusable.
bool CheckNameField(const CsvField& field, std::string_view what, int32_t line, RowErrors* errors) {
  size_t offset = 0;
  std::optional<std::string> problem = CheckName(field.text, what, &offset);
  if (!problem) return true;
  errors->Add(line, field.column + static_cast<int32_t>(offset), *problem);
  return false;
}

// The order that sorts `times` stably (ties keep their positions): an LSD radix sort of
// the times less the earliest, 11 bits a pass, as many passes as the span of the times needs
// (three for any trace within the 100-year limit). O(n) where a comparison sort of the
// (time, row) pairs was O(n log n): half of Philly's rows come before the row above them.
std::vector<uint32_t> StableTimeOrder(const std::vector<TraceJob>& jobs) {
  const size_t n = jobs.size();
  Time lowest = jobs[0].submit_time;
  Time highest = lowest;
  for (const TraceJob& j : jobs) {
    lowest = std::min(lowest, j.submit_time);
    highest = std::max(highest, j.submit_time);
  }
  const uint64_t span = static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest);
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<uint64_t> keys(n);
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<uint64_t>(jobs[i].submit_time) - static_cast<uint64_t>(lowest);
    order[i] = static_cast<uint32_t>(i);
  }
  std::vector<uint64_t> next_keys(n);
  std::vector<uint32_t> next_order(n);
  std::vector<size_t> start(kBuckets);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kBits) {
    std::fill(start.begin(), start.end(), 0);
    for (uint64_t k : keys) ++start[(k >> shift) & (kBuckets - 1)];
    size_t at = 0;
    for (size_t& s : start) at += std::exchange(s, at);
    for (size_t i = 0; i < n; ++i) {
      const size_t to = start[(keys[i] >> shift) & (kBuckets - 1)]++;
      next_keys[to] = keys[i];
      next_order[to] = order[i];
    }
    keys.swap(next_keys);
    order.swap(next_order);
  }
  return order;
}

// Sorts the jobs stably by submit time (ties keep row order).
void SortBySubmitTime(std::vector<TraceJob>* jobs) {
  auto earlier = [](const TraceJob& a, const TraceJob& b) { return a.submit_time < b.submit_time; };
  if (std::is_sorted(jobs->begin(), jobs->end(), earlier)) return;
  // Finds the order on the times alone, then moves each job once along the permutation's
  // cycles, in place: no second array of jobs (three names and an id each) to fill.
  std::vector<uint32_t> order = StableTimeOrder(*jobs);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    TraceJob held = std::move((*jobs)[i]);
    size_t to = i;
    // Position `to` takes the job at order[to]; a taken position is marked order[p] = p.
    while (order[to] != i) {
      const size_t from = order[to];
      (*jobs)[to] = std::move((*jobs)[from]);
      order[to] = static_cast<uint32_t>(to);
      to = from;
    }
    (*jobs)[to] = std::move(held);
    order[to] = static_cast<uint32_t>(to);
  }
}

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

// Reads the header line: maps the `wanted` columns (others in `known_ignored` are silently
// accepted, their positions in `optional`), fails naming the missing ones, and warns once about
// unknown extra columns. Sets `*needed` to the number of fields a row must have.
absl::StatusOr<HeaderColumns> ReadHeader(LineReader* reader, std::string_view file_name,
                                         const std::vector<std::string_view>& wanted,
                                         const std::vector<std::string_view>& known_ignored,
                                         bool comments, std::string_view expected, Trace* trace,
                                         size_t* needed) {
  std::string_view line;
  if (absl::Status s = CheckUtf8Start(reader->text(), file_name); !s.ok()) return s;
  if (!NextNonBlank(reader, &line, comments)) {
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ":1:1: empty trace: no header"));
  }
  const int32_t header_line = reader->line_number();
  HeaderColumns h = MapHeader(SplitCsvLine(line), wanted, known_ignored);
  if (!h.missing.empty()) {
    std::string hints;
    for (const std::string& name : h.unknown) {
      // Only columns that would be a missing one without their blanks.
      const std::string hint = BlankHint(name);
      for (const std::string& missing : h.missing) {
        if (hint.find(absl::StrCat("'", missing, "'")) != std::string::npos) {
          absl::StrAppend(&hints, hint);
        }
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(Av(file_name), ":", header_line, ":1: header lacks column(s) ",
                     JoinNames(h.missing), " (expected ", Av(expected), ")", hints));
  }
  if (!h.unknown.empty()) {
    trace->warnings.push_back(absl::StrCat(Av(file_name), ":", header_line,
                                           ": ignoring unknown column(s) ", JoinNames(h.unknown)));
  }
  *needed = 0;
  for (size_t i : h.index) *needed = std::max(*needed, i + 1);
  return h;
}

// Splits a data row; records an error and returns false when it has fewer than `needed`
// fields.
// About the number of rows of `text`, to reserve the jobs once: its lines, but no more than
// rows of at least 16 bytes allow (a file of blank lines reserves little), and at most 2^20
// (beyond that, the vector grows as rows come).
size_t EstimatedRows(std::string_view text) {
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  return std::min({lines, text.size() / 16 + 1, size_t{1} << 20});
}

bool SplitRow(std::string_view line, int32_t line_number, size_t needed, RowErrors* errors,
              std::vector<CsvField>* fields) {
  SplitCsvLine(line, fields);
  if (fields->size() >= needed) return true;
  errors->Add(line_number, static_cast<int32_t>(line.size()) + 1,
              absl::StrCat("expected at least ", needed, " columns, found ", fields->size()));
  return false;
}

}  // namespace

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "hived") return TraceFormat::kHived;
  if (name == "philly") return TraceFormat::kPhilly;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown trace format '", Av(name), "' (expected hived or philly)"));
}

absl::StatusOr<Trace> HivedTraceSource::Parse(std::string_view text,
                                              std::string_view file_name) const {
  static const std::vector<std::string_view> kWanted = {
      "job_id", "submit_time", "vc", "priority", "pods", "gpus_per_pod", "gpu_type", "duration"};
  enum { kId, kSubmit, kVc, kPriority, kPods, kGpusPerPod, kGpuType, kDuration };
  LineReader reader(text);
  Trace trace;
  trace.file = std::string(file_name);
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header = ReadHeader(
      &reader, file_name, kWanted, {"pinned_cell"}, /*comments=*/true,
      "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration", &trace, &needed);
  if (!header.ok()) return header.status();
  const HeaderColumns& h = *header;
  std::string_view line;
  RowErrors errors(file_name, options_.skip_bad_rows);
  absl::flat_hash_set<std::string_view> ids;  // into `text`, which outlives the parse
  std::vector<CsvField> f;                    // one row's fields; reused
  // The last VC and GPU type that passed CheckName: rows repeat them, so each distinct run of
  // equal names is checked once (the check depends on the text alone).
  // (A field never holds a newline: "\n" stands for none yet.)
  std::optional<std::string_view> last_vc;
  std::string_view last_type;
  Name last_vc_name;  // the name of the last row's VC and GPU type, interned
  Name last_type_name;
  const size_t rows = EstimatedRows(text);
  trace.jobs.reserve(rows);
  ids.reserve(rows);
  while (reader.Next(&line)) {
    if (IsBlank(line) || line[0] == '#') continue;
    const int32_t ln = reader.line_number();
    if (!SplitRow(line, ln, needed, &errors, &f)) continue;
    const CsvField& id = f[h.index[kId]];
    const CsvField& submit = f[h.index[kSubmit]];
    const CsvField& vc = f[h.index[kVc]];
    const CsvField& prio = f[h.index[kPriority]];
    const CsvField& pods = f[h.index[kPods]];
    const CsvField& gpp = f[h.index[kGpusPerPod]];
    const CsvField& type = f[h.index[kGpuType]];
    const CsvField& dur = f[h.index[kDuration]];
    // The optional pinned_cell column; a short row simply has none.
    const size_t pin_at = h.optional[0];
    const CsvField* pin = pin_at < f.size() ? &f[pin_at] : nullptr;
    TraceJob job;
    auto bad = [&](const CsvField& field, std::string_view what) {
      errors.Add(ln, field.column, what);
    };
    if (!CheckNameField(id, "job_id", ln, &errors)) continue;
    auto t = ParseTime(submit.text);
    if (!t) {
      bad(submit, TimeError("submit_time", submit.text));
      continue;
    }
    if (vc.text != last_vc.value_or("\n") && !CheckNameField(vc, "vc", ln, &errors)) continue;
    last_vc = vc.text;
    auto p = ParseInt(prio.text);
    if (!p || *p < kOpportunisticPriority || *p > kMaxGuaranteedPriority) {
      bad(prio, absl::StrCat("priority '", Av(prio.text), "' is not an integer in -1..1000",
                             BlankHint(prio.text)));
      continue;
    }
    auto np = ParseInt(pods.text);
    if (!np || *np < 1 || *np > 100000) {
      bad(pods, absl::StrCat("pods '", Av(pods.text), "' is not an integer in 1..100000",
                             BlankHint(pods.text)));
      continue;
    }
    auto g = ParseInt(gpp.text);
    if (!g || *g < 1 || *g > 100000) {
      bad(gpp, absl::StrCat("gpus_per_pod '", Av(gpp.text), "' is not an integer in 1..100000",
                            BlankHint(gpp.text)));
      continue;
    }
    if (!type.text.empty() && type.text != last_type &&
        !CheckNameField(type, "gpu_type", ln, &errors)) {
      continue;
    }
    last_type = type.text;
    if (pin != nullptr && !pin->text.empty() && !CheckNameField(*pin, "pinned_cell", ln, &errors)) {
      continue;
    }
    auto d = ParseTime(dur.text, /*min=*/1);
    if (!d) {
      bad(dur, TimeError("duration", dur.text, /*min=*/1));
      continue;
    }
    if (*np * *g > 10000000) {
      bad(pods, "gang is larger than 10,000,000 GPUs");
      continue;
    }
    if (!ids.insert(id.text).second) {
      bad(id, absl::StrCat("duplicate job_id '", Av(id.text), "'"));
      continue;
    }
    job.id = id.text;
    job.submit_time = *t;
    // Rows repeat names in runs: the last interned name, not a lookup per row.
    if (vc.text != last_vc_name.view()) last_vc_name = trace.Intern(vc.text);
    job.vc = last_vc_name;
    job.priority = static_cast<Priority>(*p);
    job.pods = static_cast<int32_t>(*np);
    job.gpus_per_pod = static_cast<int32_t>(*g);
    job.total_gpus = job.pods * job.gpus_per_pod;
    if (type.text != last_type_name.view()) last_type_name = trace.Intern(type.text);
    job.gpu_type = last_type_name;
    job.duration = *d;
    job.line = ln;
    if (pin != nullptr) {
      job.pinned_cell = trace.Intern(pin->text);
      job.pinned_column = pin->column;
    }
    trace.jobs.push_back(std::move(job));
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  trace.skipped_rows = errors.count();
  for (std::string& w : errors.SkipWarnings()) trace.warnings.push_back(std::move(w));
  SortBySubmitTime(&trace.jobs);
  return trace;
}

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

std::unique_ptr<TraceSource> MakeTraceSource(TraceFormat format, TraceReadOptions options) {
  if (format == TraceFormat::kPhilly) return std::make_unique<PhillyTraceSource>(options);
  return std::make_unique<HivedTraceSource>(options);
}

absl::Status ReadFileToString(const std::string& path, std::string* out) {
  return ReadInputFile(path, {kDefaultMaxTraceBytes, "file"}, out);
}

absl::StatusOr<Trace> ReadTraceFile(const std::string& path, TraceFormat format,
                                    TraceReadOptions options) {
  std::string text;
  if (absl::Status s = ReadInputFile(path, {options.max_bytes, "trace"}, &text); !s.ok()) {
    return s;
  }
  return MakeTraceSource(format, options)->Parse(text, path);
}

std::string TraceToCsv(const Trace& trace) {
  // The pinned_cell column only when a job names a pinned cell, so pin-free traces keep the
  // eight-column format.
  const bool pins = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                                [](const TraceJob& j) { return !j.pinned_cell.empty(); });
  std::string out = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration";
  out += pins ? ",pinned_cell\n" : "\n";
  for (const TraceJob& j : trace.jobs) {
    const int32_t pods = j.pods == 0 ? 1 : j.pods;
    const int32_t gpp = j.pods == 0 ? j.total_gpus : j.gpus_per_pod;
    absl::StrAppend(&out, Av(j.id.view()), ",", j.submit_time, ",", j.vc.str(), ",", j.priority,
                    ",", pods, ",", gpp, ",", j.gpu_type.str(), ",", j.duration);
    if (pins) absl::StrAppend(&out, ",", j.pinned_cell.str());
    out += "\n";
  }
  return out;
}

std::vector<std::string> NamedPinnedCells(const Trace& trace) {
  std::vector<std::string> out;
  for (const TraceJob& j : trace.jobs) {
    if (!j.pinned_cell.empty()) out.push_back(j.pinned_cell.str());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Name NameTable::Intern(std::string_view text) {
  if (text.empty()) return Name();
  auto it = index_.find(text);
  if (it != index_.end()) return Name(it->second);
  const std::string* stored = &texts_.emplace_back(text);
  index_.emplace(*stored, stored);
  return Name(stored);
}

GangMembers SplitIntoPods(int32_t total_gpus, int32_t node_gpus) {
  GangMembers members;
  const int32_t full = total_gpus / node_gpus;
  const int32_t rest = total_gpus % node_gpus;
  if (rest > 0) members.push_back({1, rest});
  if (full > 0) members.push_back({full, node_gpus});
  return members;
}

}  // namespace hived::sim
