// Issue 28 items 3-4: the streamed Philly reader gives the jobs, errors, skipped rows and
// warnings `ReadTraceFile` gives the same file, whether its rows fit one run or are sorted
// through temporary files, and again from its sorted rows (`Rewound`) without the file.
#include "sim/trace/philly_stream.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived::sim {
namespace {

using ::hived::testing::TestdataPath;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("hived-philly-stream-", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

struct Streamed {
  absl::Status status;
  std::vector<TraceJob> jobs;
  std::unique_ptr<PhillyStream> stream;  // holds the names
};

Streamed StreamAll(const std::string& path, bool skip, size_t run_rows) {
  Streamed out;
  TraceReadOptions options;
  options.skip_bad_rows = skip;
  absl::StatusOr<std::unique_ptr<PhillyStream>> s = PhillyStream::Open(path, options, run_rows);
  if (!s.ok()) {
    out.status = s.status();
    return out;
  }
  out.stream = std::move(*s);
  TraceJob job;
  while (true) {
    absl::StatusOr<bool> more = out.stream->Next(&job);
    if (!more.ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    out.jobs.push_back(job);
  }
  return out;
}

// The stream of `path` against the file read whole, with runs of `run_rows`.
void CheckSame(const std::string& path, bool skip, size_t run_rows, size_t min_runs) {
  INFO(path << " skip " << skip << " run_rows " << run_rows);
  TraceReadOptions options;
  options.skip_bad_rows = skip;
  options.max_bytes = int64_t{1} << 30;
  absl::StatusOr<Trace> whole = ReadTraceFile(path, TraceFormat::kPhilly, options);
  Streamed s = StreamAll(path, skip, run_rows);
  REQUIRE(s.status.ok() == whole.ok());
  if (!whole.ok()) {
    CHECK(s.status.message() == whole.status().message());
    return;
  }
  CHECK(s.stream->spilled_runs() >= min_runs);
  REQUIRE(s.jobs.size() == whole->jobs.size());
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const TraceJob& a = whole->jobs[i];
    const TraceJob& b = s.jobs[i];
    INFO(i);
    CHECK(a.id.view() == b.id.view());
    CHECK(a.submit_time == b.submit_time);
    CHECK(a.vc.str() == b.vc.str());
    CHECK(a.total_gpus == b.total_gpus);
    CHECK(a.pods == b.pods);
    CHECK(a.priority == b.priority);
    CHECK(a.duration == b.duration);
  }
  CHECK(s.stream->trace().skipped_rows == whole->skipped_rows);
  CHECK(s.stream->trace().warnings == whole->warnings);

  // The rows are sorted once: two rewound streams, read in turn, each give the same jobs
  // again (their own places in the shared rows) with the same names and counts.
  std::unique_ptr<JobStream> again[2] = {s.stream->Rewound(), s.stream->Rewound()};
  REQUIRE(again[0] != nullptr);
  REQUIRE(again[1] != nullptr);
  for (size_t i = 0; i <= s.jobs.size(); ++i) {
    for (std::unique_ptr<JobStream>& r : again) {
      INFO("rewound, job " << i);
      TraceJob job;
      absl::StatusOr<bool> more = r->Next(&job);
      REQUIRE(more.ok());
      REQUIRE(*more == (i < s.jobs.size()));
      if (!*more) continue;
      CHECK(job.id.view() == s.jobs[i].id.view());
      CHECK(job.submit_time == s.jobs[i].submit_time);
      CHECK(job.vc.str() == s.jobs[i].vc.str());
      CHECK(job.total_gpus == s.jobs[i].total_gpus);
      CHECK(job.duration == s.jobs[i].duration);
    }
  }
  for (std::unique_ptr<JobStream>& r : again) {
    CHECK(r->trace().skipped_rows == whole->skipped_rows);
    CHECK(r->trace().warnings == whole->warnings);
  }
}

// Unsorted rows, ties in time, blank lines, VCs coming back, a fractional duration.
std::string UnsortedTrace() {
  std::string text = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  const char* vcs[] = {"a", "b", "c"};
  for (int i = 0; i < 40; ++i) {
    const int minute = (i * 37) % 23;  // unsorted, with repeats
    absl::StrAppend(&text, "2017-10-09 07:", minute < 10 ? "0" : "", minute, ":00,", 10 + i,
                    i % 7 == 0 ? ".5" : ".0", ",", 1 + i % 8, ",1.0,", vcs[(i / 3) % 3], "\n");
    if (i % 11 == 0) text += "\n";
  }
  return text;
}

TEST_CASE("PhillyStream gives the jobs ReadTraceFile gives", "[sim][unit]") {
  const std::string unsorted = WriteTemp("unsorted.csv", UnsortedTrace());
  for (size_t run_rows : {size_t{1}, size_t{3}, size_t{7}, PhillyStream::kDefaultRunRows}) {
    CheckSame(unsorted, false, run_rows, run_rows == 1 ? 39 : 0);
  }
  CheckSame(TestdataPath("traces/philly-good.csv"), false, 2, 1);
}

TEST_CASE("PhillyStream refuses or skips the bad rows ReadTraceFile does", "[sim][unit]") {
  const std::string bad = TestdataPath("traces/philly-bad.csv");
  for (bool skip : {false, true}) {
    CheckSame(bad, skip, 1, 0);
    CheckSame(bad, skip, PhillyStream::kDefaultRunRows, 0);
  }
  // Rows more than 100 years after the earliest, listed after the other bad rows.
  const std::string late = WriteTemp("late.csv",
                                     "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                     "2150-01-01 00:00:00,5.0,1,5.0,a\n"
                                     "2017-10-09 07:00:00,5.0,1,5.0,a\n"
                                     "2017-10-09 07:00:00,x,1,5.0,a\n"
                                     "2150-01-02 00:00:00,5.0,1,5.0,b\n"
                                     "2017-10-09 08:00:00,5.0,1,5.0,b\n");
  for (bool skip : {false, true}) {
    for (size_t run_rows : {size_t{1}, size_t{2}, PhillyStream::kDefaultRunRows}) {
      CheckSame(late, skip, run_rows, 0);
    }
  }
  Streamed s = StreamAll(late, false, 1);
  CHECK(s.status.message().find("late.csv:2:1: timestamp is more than 100 years") !=
        absl::string_view::npos);
  const std::string missing =
      (std::filesystem::temp_directory_path() / "no-such-philly.csv").string();
  CHECK(StreamAll(missing, false, 1).status.code() == absl::StatusCode::kNotFound);
}

TEST_CASE("OpenJobStream opens the format's stream", "[sim][unit]") {
  absl::StatusOr<std::unique_ptr<JobStream>> philly =
      OpenJobStream(TestdataPath("traces/philly-good.csv"), TraceFormat::kPhilly, {});
  REQUIRE(philly.ok());
  CHECK(dynamic_cast<PhillyStream*>(philly->get()) != nullptr);
  absl::StatusOr<std::unique_ptr<JobStream>> own =
      OpenJobStream(TestdataPath("traces/own-good.csv"), TraceFormat::kHived, {});
  REQUIRE(own.ok());
  CHECK(dynamic_cast<TraceStream*>(own->get()) != nullptr);
  CHECK((*philly)->Rewound() != nullptr);
  CHECK((*own)->Rewound() == nullptr);  // read again from the file
}

}  // namespace
}  // namespace hived::sim
