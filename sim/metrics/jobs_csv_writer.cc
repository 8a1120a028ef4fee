#include "sim/metrics/jobs_csv_writer.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <queue>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/metrics/metrics.h"

namespace hived::sim {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File OpenFile(const std::filesystem::path& path, const char* mode) {
  File f(std::fopen(path.c_str(), mode));
  if (f) std::setvbuf(f.get(), nullptr, _IOFBF, size_t{1} << 20);
  return f;
}

absl::Status WriteError(const std::filesystem::path& path) {
  return absl::InternalError(absl::StrCat("cannot write ", path.string()));
}

// One run being merged: its file and its head row.
struct RunReader {
  File file;
  JobIndex index = 0;
  std::string row;
  // Reads the next row; false at the end (or on a short read: `bad`).
  bool Next(bool* bad) {
    uint32_t size = 0;
    if (std::fread(&index, sizeof(index), 1, file.get()) != 1) return false;
    if (std::fread(&size, sizeof(size), 1, file.get()) != 1) {
      *bad = true;
      return false;
    }
    row.resize(size);
    if (size > 0 && std::fread(row.data(), 1, size, file.get()) != size) {
      *bad = true;
      return false;
    }
    return true;
  }
};

}  // namespace

JobsCsvWriter::JobsCsvWriter(std::filesystem::path path, const std::vector<std::string>* nodes,
                             size_t buffer_bytes)
    : path_(std::move(path)), nodes_(nodes), buffer_bytes_(std::max<size_t>(1, buffer_bytes)) {}

JobsCsvWriter::~JobsCsvWriter() { RemoveRuns(); }

void JobsCsvWriter::RemoveRuns() {
  for (const std::filesystem::path& run : runs_) {
    std::error_code ec;
    std::filesystem::remove(run, ec);
  }
  runs_.clear();
}

absl::Status JobsCsvWriter::Add(const FinishedJob& job) {
  // The buffer's whole budget at once: grown by doubling, a 32 MB budget held 64 MB (and
  // 96 MB while it moved). Pages not yet written cost no memory.
  if (text_.capacity() < buffer_bytes_) text_.reserve(buffer_bytes_ + kRowSlack);
  const size_t offset = text_.size();
  AppendJobRow(&text_, job.id, job.vc, *job.job, *job.record, *nodes_);
  rows_.push_back({job.index, static_cast<uint32_t>(text_.size() - offset), offset});
  if (text_.size() >= buffer_bytes_) return Spill();
  return absl::OkStatus();
}

void JobsCsvWriter::SortRows() {
  std::sort(rows_.begin(), rows_.end(),
            [](const Row& a, const Row& b) { return a.index < b.index; });
}

absl::Status JobsCsvWriter::Spill() {
  SortRows();
  std::filesystem::path run = path_;
  run += absl::StrCat(".run", runs_.size());
  runs_.push_back(run);
  File f = OpenFile(run, "wb");
  if (!f) return WriteError(run);
  for (const Row& r : rows_) {
    if (std::fwrite(&r.index, sizeof(r.index), 1, f.get()) != 1 ||
        std::fwrite(&r.size, sizeof(r.size), 1, f.get()) != 1 ||
        std::fwrite(text_.data() + r.offset, 1, r.size, f.get()) != r.size) {
      return WriteError(run);
    }
  }
  if (std::fflush(f.get()) != 0) return WriteError(run);
  // The storage stays for the next run's rows (growing it again would copy it each time).
  text_.clear();
  rows_.clear();
  return absl::OkStatus();
}

absl::Status JobsCsvWriter::Finish() {
  File out = OpenFile(path_, "wb");
  if (!out) return WriteError(path_);
  auto put = [&](const char* data, size_t size) {
    return std::fwrite(data, 1, size, out.get()) == size;
  };
  if (!put(kJobsCsvHeader.data(), kJobsCsvHeader.size())) return WriteError(path_);
  if (runs_.empty()) {
    SortRows();
    for (const Row& r : rows_) {
      if (!put(text_.data() + r.offset, r.size)) return WriteError(path_);
    }
  } else {
    if (!rows_.empty()) {
      if (absl::Status s = Spill(); !s.ok()) return s;
    }
    std::vector<RunReader> readers(runs_.size());
    auto later = [&](size_t a, size_t b) { return readers[a].index > readers[b].index; };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heads(later);
    bool bad = false;
    for (size_t i = 0; i < runs_.size(); ++i) {
      readers[i].file = OpenFile(runs_[i], "rb");
      if (!readers[i].file)
        return absl::InternalError(absl::StrCat("cannot read ", runs_[i].string()));
      if (readers[i].Next(&bad)) heads.push(i);
    }
    while (!heads.empty()) {
      const size_t i = heads.top();
      heads.pop();
      if (!put(readers[i].row.data(), readers[i].row.size())) return WriteError(path_);
      if (readers[i].Next(&bad)) heads.push(i);
    }
    if (bad) return absl::InternalError("a jobs.csv run was cut short");
  }
  if (std::fflush(out.get()) != 0) return WriteError(path_);
  std::string().swap(text_);
  std::vector<Row>().swap(rows_);
  RemoveRuns();
  return absl::OkStatus();
}

}  // namespace hived::sim
