#include "sim/trace/gen_trace.h"

#include <string>
#include <string_view>
#include <vector>

#include "hived/config.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

SpecInfo Config(const char* name) {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/" + name);
  REQUIRE(spec.ok());
  return SpecInfo(*spec);
}

TEST_CASE(
    "WriteGeneratedTrace: writes GenerateTrace's CSV byte for byte, in chunks, without holding "
    "the trace",
    "[sim][unit]") {
  struct Case {
    const char* config;
    GenTraceOptions options;
  };
  std::vector<Case> cases(6);
  cases[0].config = "two-racks.yaml";
  cases[1].config = "philly.yaml";
  cases[1].options.jobs = 5000;
  cases[1].options.seed = 9;
  cases[1].options.opportunistic_share = 0.3;
  cases[2].config = "philly.yaml";
  cases[2].options.jobs = 3000;
  cases[2].options.arrival_rate_per_hour = 120;
  cases[3].config = "philly.yaml";
  cases[3].options.jobs = 2500;
  cases[3].options.vc_weights = {{"6214e9", 1}, {"ee9e8c", 3}};
  cases[3].options.max_duration = 600;
  cases[4].config = "two-racks.yaml";  // more than one chunk of 1 MiB
  cases[4].options.jobs = 60000;
  cases[5].config = "two-racks.yaml";
  cases[5].options.jobs = 1;
  for (const Case& c : cases) {
    CAPTURE(c.config, c.options.jobs, c.options.seed);
    const SpecInfo info = Config(c.config);
    absl::StatusOr<Trace> trace = GenerateTrace(info, c.options);
    REQUIRE(trace.ok());
    std::string streamed;
    int chunks = 0;
    absl::Status s = WriteGeneratedTrace(info, c.options, [&](std::string_view chunk) {
      ++chunks;
      CHECK(chunk.size() <= (size_t{1} << 20) + 256);  // about 1 MiB: a row at most beyond
      streamed.append(chunk);
      return absl::OkStatus();
    });
    REQUIRE(s.ok());
    CHECK(streamed == TraceToCsv(*trace));
    if (c.options.jobs == 60000) CHECK(chunks >= 2);
  }
}

TEST_CASE("WriteGeneratedTrace: bad options write nothing, and a failed write stops it",
          "[sim][unit]") {
  const SpecInfo info = Config("two-racks.yaml");
  GenTraceOptions bad;
  bad.load = 0;
  int calls = 0;
  auto count = [&](std::string_view) {
    ++calls;
    return absl::OkStatus();
  };
  CHECK(WriteGeneratedTrace(info, bad, count).code() == absl::StatusCode::kInvalidArgument);
  bad = GenTraceOptions{};
  bad.jobs = kMaxGeneratedJobs + 1;
  CHECK(WriteGeneratedTrace(info, bad, count).code() == absl::StatusCode::kInvalidArgument);
  CHECK(calls == 0);
  GenTraceOptions many;
  many.jobs = 100000;  // several chunks
  absl::Status s = WriteGeneratedTrace(info, many, [&](std::string_view) {
    ++calls;
    return absl::InternalError("disk full");
  });
  CHECK(s.message() == "disk full");
  CHECK(calls == 1);
}

}  // namespace
}  // namespace hived::sim
