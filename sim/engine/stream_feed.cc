#include "sim/engine/stream_feed.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {

absl::StatusOr<std::unique_ptr<TraceFileFeed>> TraceFileFeed::Open(const std::string& path,
                                                                   const SpecInfo& info,
                                                                   StreamFeedOptions options,
                                                                   const JobStream* rewind) {
  std::unique_ptr<JobStream> rewound = rewind != nullptr ? rewind->Rewound() : nullptr;
  if (rewound == nullptr) {
    TraceReadOptions read;
    read.skip_bad_rows = options.skip_bad_rows;
    read.check_duplicate_ids = options.check_duplicate_ids;
    absl::StatusOr<std::unique_ptr<JobStream>> stream = OpenJobStream(path, options.format, read);
    if (!stream.ok()) return stream.status();
    rewound = std::move(*stream);
  }
  std::unique_ptr<TraceFileFeed> feed(new TraceFileFeed(std::move(rewound), info, options));
  feed->path_ = path;
  return feed;
}

absl::StatusOr<const TraceJob*> TraceFileFeed::Next() {
  while (true) {
    absl::StatusOr<bool> more = stream_->Next(&job_);
    if (!more.ok()) return more.status();
    if (!*more) return nullptr;
    // As ScaleLoad: offsets from the first row, divided by K and rounded.
    if (!started_) {
      started_ = true;
      first_submit_ = job_.submit_time;
    }
    if (options_.load_scale != 1) {
      const double offset =
          static_cast<double>(job_.submit_time - first_submit_) / options_.load_scale;
      job_.submit_time = first_submit_ + static_cast<Time>(std::llround(offset));
    }
    const std::string why = PinnedCellProblem(info_, job_);
    if (why.empty()) return &job_;
    if (!options_.skip_bad_rows) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ":", job_.line, ":", job_.pinned_column, ": ", why));
    }
    ++pinned_skipped_;
  }
}

int64_t TraceFileFeed::skipped_rows() const {
  return stream_->trace().skipped_rows + pinned_skipped_;
}

std::vector<std::string> TraceFileFeed::warnings() const {
  std::vector<std::string> out = stream_->trace().warnings;
  if (pinned_skipped_ > 0) {
    out.push_back(absl::StrCat(path_, ": skipped ", pinned_skipped_,
                               " rows naming a pinned cell of another VC or none"));
  }
  return out;
}

absl::StatusOr<TraceScan> ScanTraceFile(const std::string& path, const SpecInfo& info,
                                        StreamFeedOptions options) {
  options.check_duplicate_ids = true;
  absl::StatusOr<std::unique_ptr<TraceFileFeed>> feed = TraceFileFeed::Open(path, info, options);
  if (!feed.ok()) return feed.status();
  TraceScan scan;
  while (true) {
    absl::StatusOr<const TraceJob*> job = (*feed)->Next();
    if (!job.ok()) return job.status();
    if (*job == nullptr) break;
    AddToFacts(**job, &scan.facts);
  }
  if (scan.facts.jobs == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no jobs in the trace"));
  }
  scan.skipped_rows = (*feed)->skipped_rows();
  scan.warnings = (*feed)->warnings();
  if ((*feed)->stream_->Rewound() != nullptr) scan.stream = std::move((*feed)->stream_);
  return scan;
}

}  // namespace hived::sim
