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

const std::vector<std::string_view>& HivedRowParser::Wanted() {
  static const std::vector<std::string_view> kWanted = {
      "job_id", "submit_time", "vc", "priority", "pods", "gpus_per_pod", "gpu_type", "duration"};
  return kWanted;
}

absl::StatusOr<HeaderColumns> HivedRowParser::ReadHivedHeader(LineReader* reader,
                                                              std::string_view file_name,
                                                              Trace* trace, size_t* needed) {
  return ReadHeader(reader, file_name, Wanted(), {"pinned_cell"}, /*comments=*/true,
                    "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration", trace,
                    needed);
}

bool HivedRowParser::Row(std::string_view line, int32_t ln, TraceJob* out) {
  enum { kId, kSubmit, kVc, kPriority, kPods, kGpusPerPod, kGpuType, kDuration };
  const HeaderColumns& h = h_;
  RowErrors& errors = *errors_;
  std::vector<CsvField>& f = f_;
  if (!SplitRow(line, ln, needed_, &errors, &f)) return false;
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
  TraceJob& job = *out;
  auto bad = [&](const CsvField& field, std::string_view what) {
    errors.Add(ln, field.column, what);
  };
  if (!CheckNameField(id, "job_id", ln, &errors)) return false;
  auto t = ParseTime(submit.text);
  if (!t) {
    bad(submit, TimeError("submit_time", submit.text));
    return false;
  }
  submit_column_ = submit.column;
  if (!last_vc_ || vc.text != *last_vc_) {
    if (!CheckNameField(vc, "vc", ln, &errors)) return false;
    last_vc_.emplace(vc.text);
  }
  auto p = ParseInt(prio.text);
  if (!p || *p < kOpportunisticPriority || *p > kMaxGuaranteedPriority) {
    bad(prio, absl::StrCat("priority '", Av(prio.text), "' is not an integer in -1..1000",
                           BlankHint(prio.text)));
    return false;
  }
  auto np = ParseInt(pods.text);
  if (!np || *np < 1 || *np > 100000) {
    bad(pods, absl::StrCat("pods '", Av(pods.text), "' is not an integer in 1..100000",
                           BlankHint(pods.text)));
    return false;
  }
  auto g = ParseInt(gpp.text);
  if (!g || *g < 1 || *g > 100000) {
    bad(gpp, absl::StrCat("gpus_per_pod '", Av(gpp.text), "' is not an integer in 1..100000",
                          BlankHint(gpp.text)));
    return false;
  }
  if (!type.text.empty() && type.text != last_type_ &&
      !CheckNameField(type, "gpu_type", ln, &errors)) {
    return false;
  }
  if (type.text != last_type_) last_type_.assign(type.text);
  if (pin != nullptr && !pin->text.empty() && !CheckNameField(*pin, "pinned_cell", ln, &errors)) {
    return false;
  }
  auto d = ParseTime(dur.text, /*min=*/1);
  if (!d) {
    bad(dur, TimeError("duration", dur.text, /*min=*/1));
    return false;
  }
  if (*np * *g > 10000000) {
    bad(pods, "gang is larger than 10,000,000 GPUs");
    return false;
  }
  if (!InsertId(id.text)) {
    bad(id, absl::StrCat("duplicate job_id '", Av(id.text), "'"));
    return false;
  }
  job.id = id.text;
  job.submit_time = *t;
  // Rows repeat names in runs: the last interned name, not a lookup per row.
  if (vc.text != last_vc_name_.view()) last_vc_name_ = trace_->Intern(vc.text);
  job.vc = last_vc_name_;
  job.priority = static_cast<Priority>(*p);
  job.pods = static_cast<int32_t>(*np);
  job.gpus_per_pod = static_cast<int32_t>(*g);
  job.total_gpus = job.pods * job.gpus_per_pod;
  if (type.text != last_type_name_.view()) last_type_name_ = trace_->Intern(type.text);
  job.gpu_type = last_type_name_;
  job.duration = *d;
  job.line = ln;
  if (pin != nullptr) {
    job.pinned_cell = trace_->Intern(pin->text);
    job.pinned_column = pin->column;
  }
  return true;
}

bool HivedRowParser::InsertId(std::string_view id) {
  if (!check_ids_) return true;
  if (own_ids_) {
    if (ids_.contains(id)) return false;
    if (id_blocks_.empty() || id_block_size_ - id_block_used_ < id.size()) {
      id_block_size_ = std::max<size_t>(size_t{1} << 20, id.size());
      id_blocks_.push_back(std::make_unique<char[]>(id_block_size_));
      id_block_used_ = 0;
    }
    char* text = id_blocks_.back().get() + id_block_used_;
    std::copy(id.begin(), id.end(), text);
    id_block_used_ += id.size();
    ids_.insert(std::string_view(text, id.size()));
    return true;
  }
  return ids_.insert(id).second;
}

absl::StatusOr<Trace> HivedTraceSource::Parse(std::string_view text,
                                              std::string_view file_name) const {
  LineReader reader(text);
  Trace trace;
  trace.file = std::string(file_name);
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header =
      HivedRowParser::ReadHivedHeader(&reader, file_name, &trace, &needed);
  if (!header.ok()) return header.status();
  std::string_view line;
  RowErrors errors(file_name, options_.skip_bad_rows);
  // Ids are views into `text`, which outlives the parse.
  HivedRowParser parser(std::move(*header), needed, &errors, &trace, /*own_ids=*/false);
  const size_t rows = EstimatedRows(text);
  trace.jobs.reserve(rows);
  parser.ReserveIds(rows);
  while (reader.Next(&line)) {
    if (IsBlank(line) || line[0] == '#') continue;
    TraceJob job;
    if (parser.Row(line, reader.line_number(), &job)) trace.jobs.push_back(std::move(job));
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
  // A fixed limit: the commands reading through here (fill, openb-replay, sweep, plan, merge)
  // have no --max-input-mb.
  return ReadInputFile(path, {kDefaultMaxTraceBytes, "file", /*raisable=*/false}, out);
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
