// sim/cli/run_stream.h: the replays of `hived-sim run` and their outputs (issue 28 items
// 3-4). Each replay (the policy's and the private baseline's, in parallel) hands each job
// over once final to a `SummaryBuilder`, with --out to a `JobsCsvWriter` in the output
// folder's staging area and with --plot to the delay chart's `PlotDelays`: no replay keeps
// its jobs' records. A trace read whole (`ReplayRun::trace`) feeds the replays from memory;
// one too large to read whole is scanned once (`ScanTraceFile`: its errors, the facts the
// replay needs), then each replay reads it again as a stream, so memory follows the jobs in
// flight. The outputs are byte for byte the same either way.
// Also `run`'s progress bar.
//
// Thread safety: one call at a time.
#ifndef HIVED_SIM_CLI_RUN_STREAM_H_
#define HIVED_SIM_CLI_RUN_STREAM_H_

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hived/cluster_spec.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/output_dir.h"
#include "sim/engine/engine.h"
#include "sim/metrics/metrics.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/node_events.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {

// A progress bar on stderr: only when stderr is a terminal, and only once the run has taken
// more than a second.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label)
      : label_(std::move(label)),
        enabled_(isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() { Clear(); }
  void Update(double fraction) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1)) return;
    if (shown_ && now - last_ < std::chrono::milliseconds(100) && fraction < 1.0) return;
    last_ = now;
    shown_ = true;
    const int width = 40;
    const int filled = static_cast<int>(fraction * width);
    std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(),
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), ' ').c_str(),
                 static_cast<int>(fraction * 100));
    std::fflush(stderr);
  }
  void Clear() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 50, "");
    shown_ = false;
  }

 private:
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

struct ReplayRun {
  PolicyKind policy = PolicyKind::kHived;
  const ClusterSpec* spec = nullptr;
  const SpecInfo* info = nullptr;
  // The trace read whole (checked, transformed; outlives the call), or null: streamed
  // from `trace_path` (sorted by submit time).
  const Trace* trace = nullptr;
  std::string trace_path;
  TraceFormat format = TraceFormat::kHived;
  bool skip_bad_rows = false;
  double load_scale = 1;
  const std::vector<NodeEvent>* node_events = nullptr;
  EngineOptions options;
  RunInfo run_info;
  PolicyOptions policy_options;
  bool with_baseline = false;
  OutputDir* outputs = nullptr;  // null: no --out
  std::string out_dir;
  bool plot = false;  // REQUIRES: outputs
  bool quiet = false;
  std::chrono::steady_clock::time_point wall_start;
};

// Runs it and prints what `run` prints; returns the exit code.
int RunReplays(ReplayRun run);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLI_RUN_STREAM_H_
