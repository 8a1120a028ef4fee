// Issue 28: `gen-trace --jobs 1000000000` aborted with std::bad_alloc (exit 134), and
// `gen-cluster` accepted racks x nodes-per-rack products (up to 10^9 nodes) it could not
// write. The generators refuse counts beyond what they can produce, with the limit named,
// before allocating anything.
#include <string>

#include "hived/config.h"
#include "sim/cluster/gen_cluster.h"
#include "sim/cluster/spec_info.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/trace_transform.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

SpecInfo TwoRacks() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  return SpecInfo(*spec);
}

TEST_CASE("Issue 28: GenerateTrace refuses more jobs than kMaxGeneratedJobs, naming the limit",
          "[sim][regression]") {
  const SpecInfo info = TwoRacks();
  for (int64_t jobs : {kMaxGeneratedJobs + 1, int64_t{1'000'000'000}, int64_t{-5}, int64_t{0}}) {
    CAPTURE(jobs);
    GenTraceOptions o;
    o.jobs = jobs;
    absl::StatusOr<Trace> trace = GenerateTrace(info, o);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(trace.status().message()).find("--jobs must be in 1..20000000") == 0);
  }
  GenTraceOptions small;
  small.jobs = 3;
  absl::StatusOr<Trace> trace = GenerateTrace(info, small);
  REQUIRE(trace.ok());
  CHECK(trace->jobs.size() == 3);
}

TEST_CASE("Issue 28: --add-tenant jobs= is bounded by the generator's limit", "[sim][regression]") {
  TraceTransformFlags flags;
  flags.add_tenant = "newteam:jobs=20000001";
  absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(flags);
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("jobs=1..20000000") != std::string::npos);
  flags.add_tenant = "newteam:jobs=20000000";
  CHECK(ParseTraceTransforms(flags).ok());
}

TEST_CASE("Issue 28: GenerateClusterYaml refuses more than kMaxGeneratedNodes nodes",
          "[sim][regression]") {
  GenClusterOptions o;
  o.racks = 1'000'000;
  o.nodes_per_rack = 1000;
  absl::StatusOr<std::string> yaml = GenerateClusterYaml(o);
  REQUIRE_FALSE(yaml.ok());
  CHECK(yaml.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(yaml.status().message() ==
        "--racks 1000000 x --nodes-per-rack 1000 = 1000000000 nodes: at most 1000000 nodes "
        "(8000000 GPUs) can be generated");
  // One node over the limit is refused; the limit itself is produced.
  o.racks = 1'000'001;
  o.nodes_per_rack = 1;
  CHECK_FALSE(GenerateClusterYaml(o).ok());
  o.racks = 1'000'000;
  o.vcs = 10;
  absl::StatusOr<std::string> largest = GenerateClusterYaml(o);
  REQUIRE(largest.ok());
  CHECK(largest->find("r999999-n00") != std::string::npos);
}

}  // namespace
}  // namespace hived::sim
