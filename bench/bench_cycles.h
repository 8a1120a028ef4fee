// bench/bench_cycles.h: per-call timing of the scheduler benchmarks (scheduler_bench.cc,
// sharing_bench.cc): percentiles of per-call nanoseconds, and the Schedule + Allocate +
// Release cycle of one group repeated, its p50/p99 reported as counters.
#ifndef HIVED_BENCH_BENCH_CYCLES_H_
#define HIVED_BENCH_BENCH_CYCLES_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "hived/fast_path.h"
#include "hived/scheduler.h"

namespace hived_bench {

using Clock = std::chrono::steady_clock;

// p-th percentile (0..100) of per-call nanoseconds, in microseconds.
inline double PercentileUs(std::vector<int64_t>* ns, double p) {
  if (ns->empty()) return 0;
  const std::size_t k = std::min(
      ns->size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(ns->size())));
  std::nth_element(ns->begin(), ns->begin() + static_cast<std::ptrdiff_t>(k), ns->end());
  return static_cast<double>((*ns)[k]) / 1000.0;
}

inline int64_t Ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Schedule + Allocate + Release of one group, repeated (named cycle0, cycle1, ...); per-cycle
// percentiles as counters. A cycle that does not place is the benchmark's error.
inline void RunCycles(benchmark::State& state, hived::Scheduler* scheduler,
                      hived::GroupRequest req) {
  std::vector<int64_t> ns;
  ns.reserve(1 << 20);
  int64_t i = 0;
  for (auto _ : state) {
    req.name = absl::StrCat("cycle", i++);
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<hived::ScheduleResult> r = scheduler->Schedule(req, hived::Phase::kPreempting);
    if (!r.ok() || r->outcome != hived::Outcome::kPlaced) {
      state.SkipWithError(
          absl::StrCat("cycle job not placed: ", r.ok() ? r->reason : r.status().ToString())
              .c_str());
      return;
    }
    if (!scheduler->Allocate(req, r->placement).ok() || !scheduler->Release(req.name).ok()) {
      state.SkipWithError("allocate or release failed");
      return;
    }
    if (ns.size() < ns.capacity()) ns.push_back(Ns(t0, Clock::now()));
  }
  state.counters["p50_us"] = PercentileUs(&ns, 50);
  state.counters["p99_us"] = PercentileUs(&ns, 99);
  state.SetItemsProcessed(state.iterations());
}

// The same cycle through the fast path (hived/fast_path.h): ScheduleAndAllocate into one
// reused FastResult, then Release by handle.
inline void RunFastCycles(benchmark::State& state, hived::Scheduler* scheduler,
                          hived::GroupRequest req) {
  std::vector<int64_t> ns;
  ns.reserve(1 << 20);
  hived::FastResult result;
  int64_t i = 0;
  for (auto _ : state) {
    req.name = absl::StrCat("cycle", i++);
    const Clock::time_point t0 = Clock::now();
    const absl::Status s = scheduler->ScheduleAndAllocate(req, &result);
    if (!s.ok() || result.outcome != hived::Outcome::kPlaced) {
      state.SkipWithError(
          absl::StrCat("cycle job not placed: ", s.ok() ? result.detail.reason : s.ToString())
              .c_str());
      return;
    }
    if (!scheduler->Release(result.handle).ok()) {
      state.SkipWithError("release failed");
      return;
    }
    if (ns.size() < ns.capacity()) ns.push_back(Ns(t0, Clock::now()));
  }
  state.counters["p50_us"] = PercentileUs(&ns, 50);
  state.counters["p99_us"] = PercentileUs(&ns, 99);
  state.SetItemsProcessed(state.iterations());
}

}  // namespace hived_bench

#endif  // HIVED_BENCH_BENCH_CYCLES_H_
