// Issue 28 item 3: the streamed trace reader gives the jobs `ReadTraceFile` gives a sorted
// trace, and refuses a row out of submit-time order with a located error and the sort line.
#include "sim/trace/trace_stream.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "sim/cluster/spec_info.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/trace_order.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived::sim {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("hived-trace-stream-", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<TraceJob> StreamAll(const std::string& path, TraceReadOptions options,
                                absl::Status* status, std::unique_ptr<TraceStream>* keep) {
  std::vector<TraceJob> jobs;
  absl::StatusOr<std::unique_ptr<TraceStream>> s = TraceStream::Open(path, options);
  if (!s.ok()) {
    *status = s.status();
    return jobs;
  }
  TraceJob job;
  while (true) {
    absl::StatusOr<bool> more = (*s)->Next(&job);
    if (!more.ok()) {
      *status = more.status();
      break;
    }
    if (!*more) break;
    jobs.push_back(job);
  }
  *keep = std::move(*s);
  return jobs;
}

void CheckSameJobs(const std::string& path) {
  INFO(path);
  absl::StatusOr<Trace> whole = ReadTraceFile(path, TraceFormat::kHived, {false, int64_t{1} << 30});
  REQUIRE(whole.ok());
  absl::Status status;
  std::unique_ptr<TraceStream> stream;
  std::vector<TraceJob> jobs = StreamAll(path, {}, &status, &stream);
  REQUIRE(status.ok());
  REQUIRE(jobs.size() == whole->jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& a = whole->jobs[i];
    const TraceJob& b = jobs[i];
    INFO(i);
    CHECK(a.id.view() == b.id.view());
    CHECK(a.submit_time == b.submit_time);
    CHECK(a.vc.str() == b.vc.str());
    CHECK(a.priority == b.priority);
    CHECK(a.pods == b.pods);
    CHECK(a.gpus_per_pod == b.gpus_per_pod);
    CHECK(a.total_gpus == b.total_gpus);
    CHECK(a.gpu_type.str() == b.gpu_type.str());
    CHECK(a.duration == b.duration);
    CHECK(a.pinned_cell.str() == b.pinned_cell.str());
    CHECK(a.line == b.line);
  }
  // The written trace, from either, is the same text.
  Trace streamed;
  streamed.jobs = jobs;
  CHECK(TraceToCsv(streamed) == TraceToCsv(*whole));
}

TEST_CASE("TraceStream gives the jobs ReadTraceFile gives a sorted trace", "[sim][unit]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  const SpecInfo info(*spec);
  GenTraceOptions options;
  options.jobs = 60000;  // about 2 MB: rows cross the 1 MB chunks
  options.opportunistic_share = 0.2;
  absl::StatusOr<Trace> generated = GenerateTrace(info, options);
  REQUIRE(generated.ok());
  CheckSameJobs(WriteTemp("generated.csv", TraceToCsv(*generated)));
  CheckSameJobs(hived::testing::TestdataPath("traces/two-racks-default.csv"));
  // Comments, blank lines, an extra column, CRLF and no final newline, sorted.
  CheckSameJobs(WriteTemp("comments.csv",
                          "\xEF\xBB\xBF# comment\r\n\njob_id,submit_time,vc,priority,pods,"
                          "gpus_per_pod,gpu_type,duration,user\r\n# another\r\nj1,10,B,-1,2,8,G,30,"
                          "bob\r\n\r\nj3,10,A,5,1,1,,1,carol\r\nj2,20,A,0,1,4,,60,alice"));
}

TEST_CASE("TraceStream refuses a row out of order with the sort line", "[sim][unit]") {
  const std::string path = hived::testing::TestdataPath("traces/unsorted-small.csv");
  absl::Status status;
  std::unique_ptr<TraceStream> stream;
  std::vector<TraceJob> jobs = StreamAll(path, {}, &status, &stream);
  CHECK(jobs.size() == 2);
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  CHECK(message.find(path + ":6:7: submit time 10 is before 20 (line 5)") == 0);
  CHECK(message.find(SortTraceCommand(path, 3)) != std::string::npos);
}

TEST_CASE("TraceStream stops at a bad row, or skips it", "[sim][unit]") {
  const std::string path = WriteTemp("bad.csv",
                                     "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,"
                                     "duration\r\na,0,prod,0,1,1,,10\r\nb,5,prod,0,x,1,,10\r\n"
                                     "a,6,prod,0,1,1,,10\r\nc,7,prod,0,1,1,,10");
  absl::Status status;
  std::unique_ptr<TraceStream> stream;
  std::vector<TraceJob> jobs = StreamAll(path, {}, &status, &stream);
  CHECK(jobs.size() == 1);
  CHECK(std::string(status.message()).find(":3:") != std::string::npos);
  TraceReadOptions skip;
  skip.skip_bad_rows = true;
  status = absl::OkStatus();
  jobs = StreamAll(path, skip, &status, &stream);
  CHECK(status.ok());
  REQUIRE(jobs.size() == 2);  // the bad row and the duplicate id skipped
  CHECK(jobs[1].id.view() == "c");
  CHECK(stream->trace().skipped_rows == 2);
}

}  // namespace
}  // namespace hived::sim
