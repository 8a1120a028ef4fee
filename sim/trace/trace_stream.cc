#include "sim/trace/trace_stream.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_order.h"
#include "sim/trace/trace_rows.h"

namespace hived::sim {
namespace {

constexpr size_t kChunk = 1 << 20;

}  // namespace

ChunkedLines::~ChunkedLines() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status ChunkedLines::Open(const std::string& path) {
  path_ = path;
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  // The header (and any comment lines before it) from the first bytes: read until a line
  // ends (or the file does), at least one chunk.
  while (!eof_ && (buffer_.size() < kChunk || buffer_.find('\n') == std::string::npos)) {
    const size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    const size_t got = std::fread(buffer_.data() + old, 1, kChunk, file_);
    buffer_.resize(old + got);
    if (got == 0) eof_ = true;
    if (static_cast<int64_t>(buffer_.size()) > kMaxLineBytes + static_cast<int64_t>(kChunk)) {
      break;
    }
  }
  return absl::OkStatus();
}

void ChunkedLines::SkipLines(int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const size_t nl = buffer_.find('\n', pos_);
    pos_ = nl == std::string::npos ? buffer_.size() : nl + 1;
    ++line_number_;
  }
}

absl::StatusOr<bool> ChunkedLines::Next(std::string_view* line) {
  while (true) {
    const size_t nl = buffer_.find('\n', pos_);
    if (nl != std::string::npos) {
      *line = std::string_view(buffer_).substr(pos_, nl - pos_);
      pos_ = nl + 1;
      break;
    }
    if (eof_) {
      if (pos_ >= buffer_.size()) return false;
      *line = std::string_view(buffer_).substr(pos_);
      pos_ = buffer_.size();
      break;
    }
    if (static_cast<int64_t>(buffer_.size() - pos_) > kMaxLineBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ":", line_number_ + 1, ":1: line longer than ", kMaxLineBytes / kMiB, " MB"));
    }
    // Keep the unread tail, read the next chunk after it.
    buffer_.erase(0, pos_);
    pos_ = 0;
    const size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    const size_t got = std::fread(buffer_.data() + old, 1, kChunk, file_);
    buffer_.resize(old + got);
    if (got == 0) {
      if (std::ferror(file_) != 0) return absl::DataLossError(absl::StrCat(path_, ": read error"));
      eof_ = true;
    }
  }
  ++line_number_;
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  return true;
}

TraceStream::~TraceStream() = default;

absl::StatusOr<std::unique_ptr<TraceStream>> TraceStream::Open(const std::string& path,
                                                               TraceReadOptions options) {
  std::unique_ptr<TraceStream> s(new TraceStream());
  s->path_ = path;
  s->options_ = options;
  s->trace_.file = path;
  if (absl::Status st = s->lines_.Open(path); !st.ok()) return st;
  LineReader reader(s->lines_.buffered());
  size_t needed = 0;
  absl::StatusOr<HeaderColumns> header =
      HivedRowParser::ReadHivedHeader(&reader, path, &s->trace_, &needed);
  if (!header.ok()) return header.status();
  s->submit_field_ = static_cast<int32_t>(header->index[1]) + 1;
  s->lines_.SkipLines(reader.line_number());  // past the header's lines
  s->errors_ = std::make_unique<RowErrors>(path, options.skip_bad_rows);
  s->parser_ = std::make_unique<HivedRowParser>(std::move(*header), needed, s->errors_.get(),
                                                &s->trace_, /*own_ids=*/true);
  s->parser_->set_check_ids(options.check_duplicate_ids);
  return s;
}

absl::StatusOr<bool> TraceStream::Next(TraceJob* job) {
  std::string_view line;
  while (true) {
    absl::StatusOr<bool> more = lines_.Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) {
      if (!done_) {
        done_ = true;
        trace_.skipped_rows = errors_->count();
        for (std::string& w : errors_->SkipWarnings()) trace_.warnings.push_back(std::move(w));
      }
      return false;
    }
    if (IsBlank(line) || line[0] == '#') continue;
    *job = TraceJob();
    const int32_t line_number = lines_.line_number();
    if (!parser_->Row(line, line_number, job)) {
      if (absl::Status s = errors_->ToStatus(); !s.ok()) return s;
      continue;  // skipped
    }
    if (job->submit_time < last_time_) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ":", line_number, ":", parser_->submit_column(), ": submit time ",
                       job->submit_time, " is before ", last_time_, " (line ", last_line_,
                       "): a streamed trace must be sorted by submit_time; sort it with: ",
                       SortTraceCommand(path_, submit_field_)));
    }
    last_time_ = job->submit_time;
    last_line_ = line_number;
    return true;
  }
}

}  // namespace hived::sim
