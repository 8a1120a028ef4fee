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
#include "sim/trace/trace_rows.h"

namespace hived::sim {

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
