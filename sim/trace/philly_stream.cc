#include "sim/trace/philly_stream.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_rows.h"

namespace hived::sim {
namespace {

constexpr size_t kRunBufferRows = 4096;  // rows read at a time from a spilled run

bool Before(const PhillyStream::Row& a, const PhillyStream::Row& b) {
  return a.time != b.time ? a.time < b.time : a.line < b.line;
}

}  // namespace

PhillyStream::~PhillyStream() {
  for (Run& run : runs_) std::fclose(run.file);
}

absl::StatusOr<std::unique_ptr<PhillyStream>> PhillyStream::Open(const std::string& path,
                                                                 TraceReadOptions options,
                                                                 size_t run_rows) {
  std::unique_ptr<PhillyStream> s(new PhillyStream());
  s->path_ = path;
  s->trace_.file = path;
  s->run_rows_ = std::max<size_t>(1, run_rows);
  ChunkedLines lines;
  if (absl::Status st = lines.Open(path); !st.ok()) return st;
  LineReader reader(lines.buffered());
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header =
      PhillyRowParser::ReadPhillyHeader(&reader, path, &s->trace_, &needed);
  if (!header.ok()) return header.status();
  lines.SkipLines(reader.line_number());
  RowErrors errors(path, options.skip_bad_rows);
  PhillyRowParser parser(std::move(*header), needed, &errors);
  PhillyRow parsed;
  bool any = false;
  int64_t last_time = 0;
  int32_t last_vc = -1;                                     // the last row's VC index
  absl::flat_hash_map<std::string_view, int32_t> vc_index;  // interned text -> index
  std::string_view line;
  while (true) {
    absl::StatusOr<bool> more = lines.Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (IsBlank(line)) continue;
    const int32_t ln = lines.line_number();
    if (!parser.Row(line, ln, &parsed)) continue;
    if (!any || parsed.timestamp < s->first_time_) s->first_time_ = parsed.timestamp;
    last_time = any ? std::max(last_time, parsed.timestamp) : parsed.timestamp;
    any = true;
    if (last_vc < 0 || parsed.cluster != s->vcs_[static_cast<size_t>(last_vc)].view()) {
      const Name vc = s->trace_.Intern(parsed.cluster);
      auto [it, inserted] = vc_index.try_emplace(vc.view(), static_cast<int32_t>(s->vcs_.size()));
      if (inserted) s->vcs_.push_back(vc);
      last_vc = it->second;
    }
    if (s->rows_.size() == s->run_rows_) {
      if (absl::Status st = s->Spill(); !st.ok()) return st;
    }
    s->rows_.push_back(
        {parsed.timestamp, parsed.duration, parsed.gpus, ln, parsed.timestamp_column, last_vc});
  }
  // Rows more than 100 years after the earliest are bad rows too, listed after the others
  // in file order (as `PhillyTraceSource` lists them), found as the rows are sorted.
  absl::StatusOr<std::vector<std::pair<int32_t, int32_t>>> late =
      s->Finish(any && last_time - s->first_time_ > kMaxTimeSeconds);
  if (!late.ok()) return late.status();
  for (const auto& [ln, column] : *late) errors.Add(ln, column, PhillyTooLateMessage());
  if (absl::Status st = errors.ToStatus(); !st.ok()) return st;
  s->trace_.skipped_rows = errors.count();
  for (std::string& w : errors.SkipWarnings()) s->trace_.warnings.push_back(std::move(w));
  return s;
}

PhillyStream::Sorted::~Sorted() {
  if (file != nullptr) std::fclose(file);
}

absl::StatusOr<std::vector<std::pair<int32_t, int32_t>>> PhillyStream::Finish(bool find_late) {
  std::vector<std::pair<int32_t, int32_t>> late;  // line, column
  auto note = [&](const Row& row) {
    if (find_late && row.time - first_time_ > kMaxTimeSeconds)
      late.push_back({row.line, row.column});
  };
  std::sort(rows_.begin(), rows_.end(), Before);
  auto sorted = std::make_shared<Sorted>();
  if (runs_.empty()) {
    for (const Row& row : rows_) note(row);
    sorted->rows = std::move(rows_);
  } else {
    // One pass merging the runs into one file, which every replay then reads.
    sorted->file = std::tmpfile();
    if (sorted->file == nullptr) {
      return absl::InternalError(
          absl::StrCat(path_, ": cannot create a temporary file to sort the trace's rows"));
    }
    if (absl::Status st = StartMerge(); !st.ok()) return st;
    std::vector<Row> out;
    out.reserve(kRunBufferRows);
    Row row;
    while (true) {
      absl::StatusOr<bool> more = Pop(&row);
      if (!more.ok()) return more.status();
      if (*more) {
        note(row);
        out.push_back(row);
      }
      if (out.size() == kRunBufferRows || (!*more && !out.empty())) {
        if (std::fwrite(out.data(), sizeof(Row), out.size(), sorted->file) != out.size()) {
          return absl::InternalError(
              absl::StrCat(path_, ": cannot write a temporary file to sort the trace's rows"));
        }
        sorted->file_rows += out.size();
        out.clear();
      }
      if (!*more) break;
    }
    if (std::fflush(sorted->file) != 0) {
      return absl::InternalError(
          absl::StrCat(path_, ": cannot write a temporary file to sort the trace's rows"));
    }
    for (Run& run : runs_) std::fclose(run.file);
    runs_.clear();
    rows_ = {};
    heads_ = {};
    has_head_ = {};
  }
  sorted_ = std::move(sorted);
  std::sort(late.begin(), late.end());
  return late;
}

std::unique_ptr<JobStream> PhillyStream::Rewound() const {
  std::unique_ptr<PhillyStream> s(new PhillyStream());
  s->path_ = path_;
  s->trace_ = trace_;  // shares the names
  s->vcs_ = vcs_;
  s->first_time_ = first_time_;
  s->spilled_runs_ = spilled_runs_;
  s->sorted_ = sorted_;
  return s;
}

absl::Status PhillyStream::Spill() {
  std::sort(rows_.begin(), rows_.end(), Before);
  Run run;
  run.file = std::tmpfile();
  if (run.file == nullptr) {
    return absl::InternalError(
        absl::StrCat(path_, ": cannot create a temporary file to sort the trace's rows"));
  }
  runs_.push_back(std::move(run));
  ++spilled_runs_;
  if (std::fwrite(rows_.data(), sizeof(Row), rows_.size(), runs_.back().file) != rows_.size() ||
      std::fflush(runs_.back().file) != 0) {
    return absl::InternalError(
        absl::StrCat(path_, ": cannot write a temporary file to sort the trace's rows"));
  }
  rows_.clear();
  return absl::OkStatus();
}

absl::StatusOr<bool> PhillyStream::Advance(size_t r) {
  if (r == runs_.size()) {  // the rows in memory
    if (rows_pos_ == rows_.size()) return false;
    heads_[r] = rows_[rows_pos_++];
    return true;
  }
  Run& run = runs_[r];
  if (run.pos == run.buffer.size()) {
    run.buffer.resize(kRunBufferRows);
    const size_t got = std::fread(run.buffer.data(), sizeof(Row), kRunBufferRows, run.file);
    if (got == 0 && std::ferror(run.file) != 0) {
      return absl::InternalError(
          absl::StrCat(path_, ": cannot read back a temporary file of the trace's rows"));
    }
    run.buffer.resize(got);
    run.pos = 0;
    if (got == 0) return false;
  }
  heads_[r] = run.buffer[run.pos++];
  return true;
}

absl::Status PhillyStream::StartMerge() {
  heads_.assign(runs_.size() + 1, Row{});
  has_head_.assign(runs_.size() + 1, false);
  rows_pos_ = 0;
  for (size_t r = 0; r < heads_.size(); ++r) {
    if (r < runs_.size()) std::rewind(runs_[r].file);
    absl::StatusOr<bool> more = Advance(r);
    if (!more.ok()) return more.status();
    has_head_[r] = *more;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PhillyStream::Pop(Row* row) {
  size_t best = heads_.size();
  for (size_t r = 0; r < heads_.size(); ++r) {
    if (has_head_[r] && (best == heads_.size() || Before(heads_[r], heads_[best]))) best = r;
  }
  if (best == heads_.size()) return false;
  *row = heads_[best];
  absl::StatusOr<bool> more = Advance(best);
  if (!more.ok()) return more.status();
  has_head_[best] = *more;
  return true;
}

absl::StatusOr<bool> PhillyStream::NextRow(Row* row) {
  const Sorted& sorted = *sorted_;
  if (sorted.file == nullptr) {
    if (next_ == sorted.rows.size()) return false;
    *row = sorted.rows[next_++];
    return true;
  }
  if (buffer_pos_ == buffer_.size()) {
    if (next_ == sorted.file_rows) return false;
    // `pread` at this stream's own offset: streams of one `Open` share the file.
    const size_t want = std::min(kRunBufferRows, sorted.file_rows - next_);
    buffer_.resize(want);
    char* dst = reinterpret_cast<char*>(buffer_.data());
    size_t done = 0;
    while (done < want * sizeof(Row)) {
      const ssize_t got = ::pread(fileno(sorted.file), dst + done, want * sizeof(Row) - done,
                                  static_cast<off_t>(next_ * sizeof(Row) + done));
      if (got <= 0) {
        return absl::InternalError(
            absl::StrCat(path_, ": cannot read back a temporary file of the trace's rows"));
      }
      done += static_cast<size_t>(got);
    }
    buffer_pos_ = 0;
  }
  *row = buffer_[buffer_pos_++];
  ++next_;
  return true;
}

absl::StatusOr<bool> PhillyStream::Next(TraceJob* job) {
  Row row;
  while (true) {
    absl::StatusOr<bool> more = NextRow(&row);
    if (!more.ok()) return more.status();
    if (!*more) return false;
    if (row.time - first_time_ <= kMaxTimeSeconds) break;  // else skipped (counted in Open)
  }
  *job = TraceJob();
  job->id = PhillyJobId(row.line);
  job->submit_time = row.time - first_time_;
  job->vc = vcs_[static_cast<size_t>(row.vc)];
  job->priority = 0;
  job->pods = 0;
  job->total_gpus = row.gpus;
  job->duration = row.duration;
  return true;
}

absl::StatusOr<std::unique_ptr<JobStream>> OpenJobStream(const std::string& path,
                                                         TraceFormat format,
                                                         TraceReadOptions options) {
  if (format == TraceFormat::kPhilly) {
    absl::StatusOr<std::unique_ptr<PhillyStream>> s = PhillyStream::Open(path, options);
    if (!s.ok()) return s.status();
    return std::unique_ptr<JobStream>(std::move(*s));
  }
  absl::StatusOr<std::unique_ptr<TraceStream>> s = TraceStream::Open(path, options);
  if (!s.ok()) return s.status();
  return std::unique_ptr<JobStream>(std::move(*s));
}

}  // namespace hived::sim
