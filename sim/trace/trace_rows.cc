#include "sim/trace/trace_rows.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hived::sim {
namespace {

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

// When `header` has every column of a trace format (so not of the one being read, whose
// columns are missing), the flags that read it; "" otherwise.
std::string OtherFormatHint(const std::vector<CsvField>& header) {
  struct Format {
    const std::vector<std::string_view>& columns;
    std::string_view hint;
  };
  // The job formats' columns are their readers' own; openb's lists are read by position,
  // so their header names are spelled here.
  static const std::vector<std::string_view> kPodColumns = {"name", "cpu_milli", "num_gpu",
                                                            "gpu_milli"};
  static const std::vector<std::string_view> kNodeColumns = {"sn", "cpu_milli", "gpu", "model"};
  const Format formats[] = {
      {PhillyRowParser::Wanted(), "; this is a Philly trace: pass --format philly"},
      {HivedRowParser::Wanted(), "; this is hived-sim's own trace format: pass --format hived"},
      {kPodColumns,
       "; this is an openb pod list: pass --format openb --nodes NODES.csv --pods PODS.csv"},
      {kNodeColumns,
       "; this is an openb node list: pass --format openb --nodes NODES.csv --pods PODS.csv"},
  };
  for (const Format& f : formats) {
    const bool all = std::all_of(f.columns.begin(), f.columns.end(), [&](std::string_view c) {
      return std::any_of(header.begin(), header.end(),
                         [&](const CsvField& h) { return h.text == c; });
    });
    if (all) return std::string(f.hint);
  }
  return "";
}

}  // namespace

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
  const std::vector<CsvField> columns = SplitCsvLine(line);
  HeaderColumns h = MapHeader(columns, wanted, known_ignored);
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
    return absl::InvalidArgumentError(absl::StrCat(
        Av(file_name), ":", header_line, ":1: header lacks column(s) ", JoinNames(h.missing),
        " (expected ", Av(expected), ")", hints, OtherFormatHint(columns)));
  }
  if (!h.unknown.empty()) {
    trace->warnings.push_back(absl::StrCat(Av(file_name), ":", header_line,
                                           ": ignoring unknown column(s) ", JoinNames(h.unknown)));
  }
  *needed = 0;
  for (size_t i : h.index) *needed = std::max(*needed, i + 1);
  return h;
}

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

bool CheckNameField(const CsvField& field, std::string_view what, int32_t line, RowErrors* errors) {
  size_t offset = 0;
  std::optional<std::string> problem = CheckName(field.text, what, &offset);
  if (!problem) return true;
  errors->Add(line, field.column + static_cast<int32_t>(offset), *problem);
  return false;
}

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

}  // namespace hived::sim
