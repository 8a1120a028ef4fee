// sim/engine/stream_feed.h: a trace file fed to the replay as a stream (issue 28 item 3),
// and the pre-pass that gives the replay its `TraceFacts`.
//
// Rows come from the format's `JobStream` (`OpenJobStream`: the project's format sorted by
// submit time, or Philly's sorted by the stream; checked as `ReadTraceFile` checks them);
// `--load-scale K` and the pinned-cell check apply per row exactly as `ScaleLoad` and
// `CheckPinnedCells` apply them to a trace read whole: times are scaled from the first row's, a row
// whose pinned cell the config lacks (or another VC owns) is an error located at its pinned_cell
// column, or skipped and counted with `skip_bad_rows`. The pre-pass reads the file once, so its
// errors come before any replay starts; the replays then read it again (one feed each) and may
// leave the duplicate-id check to it (`check_duplicate_ids`), so that their memory does not grow
// with the ids. A format whose stream can start again without reading the file
// (`JobStream::Rewound`: Philly's, sorted once) hands the pre-pass's stream to the replays
// (`TraceScan::stream`), whose feeds read its rows again instead of the file.
//
// Thread safety: one feed per thread; the `SpecInfo` is only read.
#ifndef HIVED_SIM_ENGINE_STREAM_FEED_H_
#define HIVED_SIM_ENGINE_STREAM_FEED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/engine.h"
#include "sim/trace/philly_stream.h"

namespace hived::sim {

struct StreamFeedOptions {
  TraceFormat format = TraceFormat::kHived;
  bool skip_bad_rows = false;
  double load_scale = 1;  // REQUIRES: checked as `ScaleLoad` checks it
  // Duplicate job ids are errors (or skipped rows); false for a replay after a pre-pass
  // that checked them, when no row is skipped.
  bool check_duplicate_ids = true;
};

struct TraceScan;

class TraceFileFeed : public JobFeed {
 public:
  // Errors: `OpenJobStream`'s. With `rewind` (a stream of `path` whose `Rewound` is not
  // null; it must outlive the feed's use), reads its jobs from the first instead of the file.
  static absl::StatusOr<std::unique_ptr<TraceFileFeed>> Open(const std::string& path,
                                                             const SpecInfo& info,
                                                             StreamFeedOptions options,
                                                             const JobStream* rewind = nullptr);
  absl::StatusOr<const TraceJob*> Next() override;
  // Rows skipped so far (bad rows and bad pinned cells, with skip_bad_rows) and the warnings
  // about them (complete once `Next` returned the end).
  int64_t skipped_rows() const;
  std::vector<std::string> warnings() const;

 private:
  friend absl::StatusOr<TraceScan> ScanTraceFile(const std::string& path, const SpecInfo& info,
                                                 StreamFeedOptions options);
  TraceFileFeed(std::unique_ptr<JobStream> stream, const SpecInfo& info, StreamFeedOptions options)
      : stream_(std::move(stream)), info_(info), options_(options) {}

  std::unique_ptr<JobStream> stream_;
  const SpecInfo& info_;
  StreamFeedOptions options_;
  std::string path_;
  TraceJob job_;
  bool started_ = false;
  Time first_submit_ = 0;
  int64_t pinned_skipped_ = 0;
};

// What the pre-pass found: the facts, and the rows skipped with their warnings.
struct TraceScan {
  TraceFacts facts;
  int64_t skipped_rows = 0;
  std::vector<std::string> warnings;
  // The pre-pass's stream when it can start again (`JobStream::Rewound`), for the replays'
  // feeds; else null.
  std::unique_ptr<const JobStream> stream;
};
// Reads `path` once through a `TraceFileFeed` (duplicate ids checked). Errors: the feed's,
// and kInvalidArgument for a file left without jobs.
absl::StatusOr<TraceScan> ScanTraceFile(const std::string& path, const SpecInfo& info,
                                        StreamFeedOptions options);

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_STREAM_FEED_H_
