#include "sim/metrics/metrics.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "sim/common/csv.h"
#include "sim/common/json.h"
#include "sim/engine/engine.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

struct Outputs {
  std::string summary;
  std::string jobs;
  std::string timeline;
};

Outputs ReplayGenerated(PolicyKind policy, uint64_t seed) {
  const ClusterSpec spec = testing::LoadSpec("sim/small.yaml");
  SpecInfo info(spec);
  GenTraceOptions g;
  g.jobs = 400;
  g.seed = seed;
  g.opportunistic_share = 0.2;
  absl::StatusOr<Trace> trace = GenerateTrace(info, g);
  REQUIRE(trace.ok());
  auto backend = MakeSchedulerBackend(policy, spec, static_cast<int32_t>(trace->jobs.size()));
  REQUIRE(backend.ok());
  Engine engine(info, backend->get(), {});
  absl::StatusOr<EngineResult> r = engine.Run(*trace, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  RunInfo run;
  run.policy = std::string(PolicyKindName(policy));
  Summary s = Summarize(*r, info, run);
  REQUIRE(s.accounting_ok);
  return {SummaryToJson(s), JobsCsv(*r, *trace, (*backend)->nodes()), TimelineCsv(*r, info)};
}

TEST_CASE("Replay: the same inputs and seed give byte-identical outputs", "[sim][unit]") {
  for (PolicyKind policy : {PolicyKind::kHived, PolicyKind::kQuota, PolicyKind::kPrivate}) {
    CAPTURE(PolicyKindName(policy));
    const Outputs a = ReplayGenerated(policy, 7);
    const Outputs b = ReplayGenerated(policy, 7);
    CHECK(a.summary == b.summary);
    CHECK(a.jobs == b.jobs);
    CHECK(a.timeline == b.timeline);
    CHECK(a.jobs != ReplayGenerated(policy, 8).jobs);
  }
}

TEST_CASE("GenerateTrace: seeded, Philly-shaped, only the config's VCs", "[sim][unit]") {
  const ClusterSpec spec = testing::LoadSpec("sim/small.yaml");
  SpecInfo info(spec);
  GenTraceOptions g;
  g.jobs = 5000;
  absl::StatusOr<Trace> a = GenerateTrace(info, g);
  absl::StatusOr<Trace> b = GenerateTrace(info, g);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(TraceToCsv(*a) == TraceToCsv(*b));
  int64_t one_gpu = 0;
  Time last = 0;
  for (const TraceJob& j : a->jobs) {
    CHECK((j.vc == "A" || j.vc == "B"));
    CHECK(j.total_gpus <= info.VcVirtualGpus(info.VcIndex(j.vc)));
    CHECK(j.duration >= 1);
    CHECK(j.submit_time >= last);
    last = j.submit_time;
    if (j.total_gpus == 1) ++one_gpu;
  }
  CHECK(one_gpu > 4500);  // Philly: 93% of jobs use one GPU
  GenTraceOptions bad;
  bad.jobs = 0;
  CHECK_FALSE(GenerateTrace(info, bad).ok());
  bad = {};
  bad.vc_weights = {{"nope", 1.0}};
  CHECK_FALSE(GenerateTrace(info, bad).ok());
}

TEST_CASE("Summary: JSON reads back, the anomaly is the mean delay minus private's",
          "[sim][unit]") {
  Summary s;
  s.info.policy = "quota";
  s.all.name = "all";
  s.all.submitted = 3;
  s.all.completed = 3;
  s.all.queuing_delay.count = 3;
  s.all.queuing_delay.mean = 100;
  GroupSummary vc;
  vc.name = "A";
  vc.queuing_delay.count = 3;
  vc.queuing_delay.mean = 100;
  vc.queuing_delay.p95 = 250;
  s.vcs = {vc};
  Summary base = s;
  base.vcs[0].queuing_delay.mean = 40;
  base.all.queuing_delay.mean = 40;
  AddBaseline(base, &s);
  REQUIRE(s.vcs[0].sharing_anomaly.has_value());
  CHECK(*s.vcs[0].sharing_anomaly == Approx(60));
  const std::string text = SummaryToJson(s);
  absl::StatusOr<JsonValue> json = ParseJson(text, "summary.json");
  INFO(json.status().ToString());
  REQUIRE(json.ok());
  absl::StatusOr<Summary> back = SummaryFromJson(*json);
  REQUIRE(back.ok());
  CHECK(back->info.policy == "quota");
  REQUIRE(back->vcs.size() == 1);
  CHECK(back->vcs[0].name == "A");
  CHECK(back->vcs[0].queuing_delay.p95 == 250);
  CHECK(*back->vcs[0].sharing_anomaly == Approx(60));
  CHECK(*back->vcs[0].baseline_mean_queuing_delay == Approx(40));
  CHECK(SummaryToJson(*back).find("\"sharing_anomaly\": 60.000") != std::string::npos);
  CHECK_FALSE(ParseJson("{\"a\": }", "x.json").ok());
  CHECK(std::string(ParseJson("{\n\"a\": }", "x.json").status().message()).find("x.json:2:6") !=
        std::string::npos);
}

TEST_CASE("SummaryFromJson: a pod replay's summary is refused with what it is", "[sim][unit]") {
  absl::StatusOr<JsonValue> pods = ParseJson("{\"command\": \"openb-replay\"}", "s.json");
  REQUIRE(pods.ok());
  const std::string error(SummaryFromJson(*pods).status().message());
  CHECK(error.find("schema missing, expected hived-sim.summary/1") != std::string::npos);
  CHECK(error.find("it is `hived-sim openb-replay`'s summary") != std::string::npos);
  absl::StatusOr<JsonValue> other = ParseJson("{\"schema\": \"x/2\"}", "s.json");
  REQUIRE(other.ok());
  CHECK(std::string(SummaryFromJson(*other).status().message()) ==
        "not a hived-sim summary of a job replay (schema 'x/2', expected hived-sim.summary/1)");
}

TEST_CASE("ComputeStats: nearest-rank percentiles", "[sim][unit]") {
  std::vector<int64_t> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  Stats s = ComputeStats(&v);
  CHECK(s.count == 100);
  CHECK(s.mean == Approx(50.5));
  CHECK(s.p50 == 50);
  CHECK(s.p95 == 95);
  CHECK(s.p99 == 99);
  CHECK(s.max == 100);
  std::vector<int64_t> empty;
  CHECK(ComputeStats(&empty).count == 0);
}

TEST_CASE("ComputeStats: selection gives the sorted nearest ranks on any input", "[sim][unit]") {
  // Against the definition on a sorted copy: duplicates, tiny sizes, any order.
  std::mt19937_64 gen(7);
  for (size_t n : std::vector<size_t>{1, 2, 3, 19, 20, 21, 99, 100, 101, 1000, 4097}) {
    std::vector<int64_t> v(n);
    for (int64_t& x : v) x = static_cast<int64_t>(gen() % (n < 50 ? 5 : 100000));
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&](double p) {
      size_t r = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
      return sorted[std::clamp<size_t>(r, 1, n) - 1];
    };
    const Stats s = ComputeStats(&v);
    INFO("n = " << n);
    CHECK(s.count == static_cast<int64_t>(n));
    CHECK(s.p50 == rank(50));
    CHECK(s.p95 == rank(95));
    CHECK(s.p99 == rank(99));
    CHECK(s.max == sorted.back());
    long double sum = 0;
    for (int64_t x : sorted) sum += x;
    CHECK(s.mean == static_cast<double>(sum / static_cast<long double>(n)));
  }
}

// ParseDouble as it was before its from_chars fast path: the reference.
std::optional<double> StrtodReference(const std::string& text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  if (text.find_first_not_of("0123456789.-+eE") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

TEST_CASE("ParseDouble: the from_chars fast path agrees with strtod", "[sim][unit]") {
  for (const char* text : {"0",
                           "7",
                           "66.0",
                           "2951.0",
                           "000123",
                           "999999999999999",
                           "0.1",
                           "1e3",
                           "-2.5e-3",
                           "1234567890123456789",
                           "0.30000000000000004",
                           "+5",
                           "0e999",
                           "0.0",
                           "-0",
                           "2.2250738585072014e-308",
                           "1e-310",
                           "1e-400",
                           "1e999",
                           "",
                           "12a",
                           "1.2.3",
                           "1.",
                           ".5",
                           "-",
                           "e5",
                           "1e",
                           "--1",
                           "1e+5",
                           "9007199254740993"}) {
    INFO(text);
    const std::optional<double> want = StrtodReference(text);
    const std::optional<double> got = ParseDouble(text);
    REQUIRE(got.has_value() == want.has_value());
    if (want) CHECK(*got == *want);
  }
  CHECK(*ParseDouble("66.0") == 66.0);
  CHECK_FALSE(ParseDouble("1e999").has_value());
  CHECK_FALSE(ParseDouble(std::string(65, '1')).has_value());
}

}  // namespace
}  // namespace hived::sim

namespace hived::sim {
namespace {

TEST_CASE("GenerateTrace: the bundled default trace is gen-trace's default output for two-racks",
          "[sim][unit]") {
  // README's first run replays tests/testdata/traces/two-racks-default.csv, written by
  // `hived-sim gen-trace --config config/examples/two-racks.yaml`; it must stay reproducible.
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<Trace> trace = GenerateTrace(SpecInfo(*spec), GenTraceOptions{});
  REQUIRE(trace.ok());
  std::string bundled;
  REQUIRE(ReadFileToString(testing::TestPath("traces/two-racks-default.csv"), &bundled).ok());
  CHECK(TraceToCsv(*trace) == bundled);
}

}  // namespace
}  // namespace hived::sim
