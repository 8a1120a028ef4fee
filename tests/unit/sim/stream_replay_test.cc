// Issue 28 item 3: a trace streamed into the replay (TraceFileFeed, a JobSink of
// SummaryBuilder and JobsCsvWriter) gives the outputs of the same trace read whole, byte for
// byte, with jobs.csv merged from several sorted runs; out-of-order jobs and bad pinned
// cells are refused with a located error.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/engine.h"
#include "sim/engine/stream_feed.h"
#include "sim/metrics/jobs_csv_writer.h"
#include "sim/metrics/metrics.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived::sim {
namespace {

std::filesystem::path TempDir() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("hived-stream-replay-", getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = (TempDir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ClusterSpec TwoRacks() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

struct Outputs {
  std::string summary, jobs, timeline;
  size_t runs = 0;
};

RunInfo Info() {
  RunInfo info;
  info.policy = "hived";
  info.queue = "fifo";
  return info;
}

Outputs Whole(const ClusterSpec& spec, const std::string& path, EngineOptions options,
              TraceFormat format = TraceFormat::kHived) {
  const SpecInfo info(spec);
  absl::StatusOr<Trace> trace = ReadTraceFile(path, format, {false, int64_t{1} << 30});
  REQUIRE(trace.ok());
  absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
      MakeSchedulerBackend(PolicyKind::kHived, spec, static_cast<int32_t>(trace->jobs.size()), {});
  REQUIRE(backend.ok());
  Engine engine(info, backend->get(), options);
  absl::StatusOr<EngineResult> result = engine.Run(*trace, {});
  REQUIRE(result.ok());
  Outputs out;
  out.summary = SummaryToJson(Summarize(*result, info, Info()));
  out.jobs = JobsCsv(*result, *trace, (*backend)->nodes());
  out.timeline = TimelineCsv(*result, info);
  return out;
}

class BothSink : public JobSink {
 public:
  BothSink(SummaryBuilder* s, JobsCsvWriter* c) : s_(s), c_(c) {}
  absl::Status Add(const FinishedJob& job) override {
    s_->Add(job);
    return c_->Add(job);
  }

 private:
  SummaryBuilder* s_;
  JobsCsvWriter* c_;
};

Outputs Streamed(const ClusterSpec& spec, const std::string& path, EngineOptions options,
                 TraceFormat format = TraceFormat::kHived) {
  const SpecInfo info(spec);
  StreamFeedOptions scan_options;
  scan_options.format = format;
  absl::StatusOr<TraceScan> scan = ScanTraceFile(path, info, scan_options);
  REQUIRE(scan.ok());
  absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
      MakeSchedulerBackend(PolicyKind::kHived, spec, static_cast<int32_t>(scan->facts.jobs), {});
  REQUIRE(backend.ok());
  StreamFeedOptions feed_options;
  feed_options.format = format;
  feed_options.check_duplicate_ids = false;
  absl::StatusOr<std::unique_ptr<TraceFileFeed>> feed =
      TraceFileFeed::Open(path, info, feed_options);
  REQUIRE(feed.ok());
  SummaryBuilder summary(info, Info());
  const std::filesystem::path csv_path = TempDir() / "jobs.csv";
  JobsCsvWriter csv(csv_path, &(*backend)->nodes(), /*buffer_bytes=*/64 << 10);
  BothSink sink(&summary, &csv);
  Engine engine(info, backend->get(), options);
  absl::StatusOr<EngineResult> result = engine.Run(feed->get(), scan->facts, {}, &sink);
  REQUIRE(result.ok());
  CHECK(result->jobs.empty());
  CHECK(result->records.empty());
  Outputs out;
  out.runs = csv.runs();
  REQUIRE(csv.Finish().ok());
  out.summary = SummaryToJson(summary.Finish(*result, scan->facts.jobs));
  out.jobs = ReadAll(csv_path);
  out.timeline = TimelineCsv(*result, info);
  // The runs are gone once merged.
  CHECK_FALSE(std::filesystem::exists(csv_path.string() + ".run0"));
  return out;
}

TEST_CASE("A streamed replay gives the outputs of the trace read whole", "[sim][unit]") {
  const ClusterSpec spec = TwoRacks();
  GenTraceOptions gen;
  gen.jobs = 20000;               // about 1.5 MB of jobs.csv: many 64 KB runs
  gen.load = 1.3;                 // queues build up: jobs finish far from trace order
  gen.opportunistic_share = 0.3;  // preemptions
  absl::StatusOr<Trace> generated = GenerateTrace(SpecInfo(spec), gen);
  REQUIRE(generated.ok());
  const std::string path = WriteTemp("generated.csv", TraceToCsv(*generated));
  std::vector<std::pair<std::string, EngineOptions>> cases;
  cases.emplace_back("default", EngineOptions{});
  EngineOptions horizon;  // stops with jobs queued, running and not yet submitted
  horizon.horizon = generated->jobs[generated->jobs.size() / 2].submit_time;
  cases.emplace_back("horizon", horizon);
  EngineOptions failures;
  failures.mtbf_hours = 200;
  failures.mttr_hours = 2;
  failures.resume = true;
  cases.emplace_back("mtbf", failures);
  EngineOptions easy;
  easy.queue = QueueKind::kEasy;
  easy.window_start = 3600;
  cases.emplace_back("easy", easy);
  for (const auto& [name, options] : cases) {
    INFO(name);
    const Outputs whole = Whole(spec, path, options);
    const Outputs streamed = Streamed(spec, path, options);
    CHECK(streamed.runs > 4);
    CHECK(streamed.summary == whole.summary);
    CHECK(streamed.jobs == whole.jobs);
    CHECK(streamed.timeline == whole.timeline);
  }
}

// `trace` in Philly's format, its rows in a scrambled order (Philly's are unsorted).
std::string PhillyText(const Trace& trace) {
  std::string text = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  const size_t n = trace.jobs.size();
  for (size_t k = 0; k < n; ++k) {
    const TraceJob& j = trace.jobs[(k * 7919) % n];    // 7919 is prime: every row once
    const std::time_t t = 1506816000 + j.submit_time;  // from 2017-10-01 00:00:00 UTC
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
    absl::StrAppend(&text, stamp, ",", j.duration, ".0,", j.total_gpus, ",0.0,", j.vc.str(), "\n");
  }
  return text;
}

TEST_CASE("A streamed Philly trace gives the outputs of the trace read whole", "[sim][unit]") {
  const ClusterSpec spec = TwoRacks();
  GenTraceOptions gen;
  gen.jobs = 3000;
  gen.load = 1.3;
  absl::StatusOr<Trace> generated = GenerateTrace(SpecInfo(spec), gen);
  REQUIRE(generated.ok());
  REQUIRE(generated->jobs.size() % 7919 != 0);
  const std::string path = WriteTemp("philly.csv", PhillyText(*generated));
  const Outputs whole = Whole(spec, path, {}, TraceFormat::kPhilly);
  const Outputs streamed = Streamed(spec, path, {}, TraceFormat::kPhilly);
  CHECK(streamed.summary == whole.summary);
  CHECK(streamed.jobs == whole.jobs);
  CHECK(streamed.timeline == whole.timeline);
}

TEST_CASE("A replay refuses jobs out of submit-time order", "[sim][unit]") {
  const ClusterSpec spec = TwoRacks();
  const SpecInfo info(spec);
  Trace trace;
  trace.jobs.resize(2);
  for (TraceJob& j : trace.jobs) {
    j.vc = trace.Intern("prod");
    j.total_gpus = 1;
    j.duration = 10;
  }
  trace.jobs[0].id = "late";
  trace.jobs[0].submit_time = 100;
  trace.jobs[1].id = "early";
  trace.jobs[1].submit_time = 50;
  trace.jobs[1].line = 3;
  absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
      MakeSchedulerBackend(PolicyKind::kHived, spec, 2, {});
  REQUIRE(backend.ok());
  Engine engine(info, backend->get(), {});
  absl::StatusOr<EngineResult> result = engine.Run(trace, {});
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(result.status().message()).find("job early (line 3)") != std::string::npos);
}

TEST_CASE("A streamed trace's bad pinned cell is located, or skipped and counted", "[sim][unit]") {
  const ClusterSpec spec = TwoRacks();
  const SpecInfo info(spec);
  const std::string path = hived::testing::TestdataPath("traces/bad-pinned.csv");
  absl::StatusOr<TraceScan> scan = ScanTraceFile(path, info, {});
  REQUIRE_FALSE(scan.ok());
  CHECK(std::string(scan.status().message())
            .find("bad-pinned.csv:4:21: pinned cell "
                  "'research-node' belongs to VC research") != std::string::npos);
  const std::string good =
      WriteTemp("one-good.csv",
                "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
                "a,0,prod,0,1,8,,100,\nb,0,prod,0,1,8,,100,research-node\n"
                "c,5,research,0,1,8,,100,nope\n");
  StreamFeedOptions skip;
  skip.skip_bad_rows = true;
  scan = ScanTraceFile(good, info, skip);
  REQUIRE(scan.ok());
  CHECK(scan->facts.jobs == 1);
  CHECK(scan->skipped_rows == 2);
  CHECK(scan->facts.first_submit == 0);
  CHECK(scan->facts.last_submit == 0);
}

}  // namespace
}  // namespace hived::sim
