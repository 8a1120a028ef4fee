// metrics/'s summary of a pod replay (sim/metrics/pod_summary.h): PodSummaryBuilder, fed by
// hand-made final pods.
#include "sim/metrics/pod_summary.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "support/catch.h"

namespace hived::sim {
namespace {

PodRun Placed(int64_t start, int64_t work, double slowdown) {
  PodRun run;
  run.placed = true;
  run.node = 0;
  run.start = start;
  run.end = start + static_cast<int64_t>(static_cast<double>(work) * slowdown);
  run.work = work;
  run.slowdown = slowdown;
  return run;
}

TEST_CASE("PodSummaryBuilder: p50 is sorted[n/2] and p99 sorted[min(n-1 n*99/100)]",
          "[sim][openb][unit]") {
  // 200 placed GPU pods: pod k waits k seconds and has slowdown 1 + k/100, handed in reverse
  // order. Of the 200 slowdowns, sorted[n/2] is pod 100's (the nearest rank would be pod
  // 99's) and sorted[n*99/100] pod 198's (nearest rank: pod 197's).
  const size_t n = 200;
  PodSummaryBuilder builder(n + 2);
  std::vector<PodRun> runs;
  for (size_t k = 0; k < n; ++k) runs.push_back(Placed(0, 100, 1.0 + static_cast<double>(k) / 100));
  for (size_t k = n; k-- > 0;) {
    REQUIRE(builder.Add({static_cast<int32_t>(k), 1, static_cast<int64_t>(k), &runs[k]}).ok());
  }
  // A CPU-only pod (waits 7, no slowdown sample) and one never placed (no sample at all).
  const PodRun cpu = Placed(0, 50, 3.0);
  const PodRun never;
  REQUIRE(builder.Add({static_cast<int32_t>(n), 0, 7, &cpu}).ok());
  REQUIRE(builder.Add({static_cast<int32_t>(n + 1), 1, 0, &never}).ok());
  PodReplayResult replay;
  replay.pods = static_cast<int64_t>(n + 2);
  replay.gpu_seconds_by_degree = {0, 30, 0, 10};  // degree 1 for 30 s, 3 for 10 s
  absl::StatusOr<PodSummary> s = builder.Finish(std::move(replay));
  REQUIRE(s.ok());
  CHECK(s->pods == static_cast<int64_t>(n + 2));
  REQUIRE(s->runs.size() == n + 2);
  CHECK(s->runs[5].slowdown == runs[5].slowdown);  // list order, whatever the hand-over order
  CHECK_FALSE(s->runs[n + 1].placed);
  // Waits: 0..199 and 7 (201 values): sorted[100] = 99 (7 counted twice), sorted[198] = 197.
  CHECK(s->p50_wait == 99);
  CHECK(s->p99_wait == 197);
  CHECK(s->max_wait == 199);
  CHECK(s->mean_wait == (199.0 * 200 / 2 + 7) / 201);
  CHECK(s->slowdown_pods == 200);
  CHECK(s->slowed_pods == 199);  // all but pod 0's 1.0
  CHECK(s->p50_slowdown == runs[100].slowdown);
  CHECK(s->p99_slowdown == runs[198].slowdown);
  CHECK(s->max_slowdown == runs[199].slowdown);
  double sum = 0;
  for (const PodRun& run : runs) sum += run.slowdown;  // ascending already
  CHECK(s->mean_slowdown == sum / 200);
  CHECK(s->max_degree == 3);
  CHECK(s->mean_degree == (30.0 + 3 * 10) / 40);
}

TEST_CASE("PodSummaryBuilder: a pod handed twice or outside the list or one missing is an error",
          "[sim][openb][unit]") {
  PodSummaryBuilder builder(2);
  const PodRun never;
  REQUIRE(builder.Add({0, 1, 0, &never}).ok());
  absl::Status twice = builder.Add({0, 1, 0, &never});
  CHECK(twice.code() == absl::StatusCode::kInternal);
  CHECK(twice.message() == "pod summary: pod 0 handed over twice");
  CHECK(builder.Add({2, 1, 0, &never}).message() == "pod summary: pod 2 is not in the pod list");
  CHECK(builder.Add({-1, 1, 0, &never}).code() == absl::StatusCode::kInternal);
  absl::StatusOr<PodSummary> missing = builder.Finish({});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "pod summary: 1 of 2 pods handed over");
}

}  // namespace
}  // namespace hived::sim
