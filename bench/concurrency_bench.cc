// Benchmarks of one Scheduler shared by threads (issue 29 item 3), on the scale of a large
// cluster: 100,032 GPUs (bench_scale.h's generated cluster, 100 VCs) and 25,000 groups
// (per VC 40 8-GPU and 210 1-GPU groups, about 55% used).
//  - BM_ScheduleWhileReading: the main thread times `Schedule` (Preempting phase, a 1-GPU
//    group that is then unreserved) while `readers` threads each read the whole group list
//    every millisecond: `Groups()` in one call (paged:0), or page by page with
//    `Groups(after, 256)` (paged:1). Counters: p50/p99/p99.9/max of one Schedule, view calls.
//  - BM_FilterThreads: threads each run Filtering decisions (1-GPU and 8-GPU groups, four
//    VCs in turn); items/s over all threads, real time, so 2 threads vs 1 is the speed-up.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_cycles.h"
#include "bench_scale.h"
#include "benchmark/benchmark.h"
#include "hived/scheduler.h"

namespace {

using hived_bench::Clock;
using hived_bench::Ns;
using hived_bench::PercentileUs;

constexpr int32_t kBigPerVc = 40;
constexpr int32_t kSmallPerVc = 210;

// The filled scheduler, built on first use (thread-safe static); nullptr on failure.
hived::Scheduler* Cluster() {
  static const std::unique_ptr<hived::Scheduler> scheduler = []() {
    std::unique_ptr<hived::Scheduler> out;
    const hived::ClusterSpec spec = hived::bench::GeneratedCluster(100032, 100);
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::Create(spec);
    if (!s.ok()) return out;
    int64_t id = 0;
    for (const auto& vc : spec.virtual_clusters) {
      hived::GroupRequest req;
      req.vc = vc.name;
      req.priority = 0;
      for (int32_t i = 0; i < kBigPerVc + kSmallPerVc; ++i) {
        req.name = absl::StrCat("fill", id++);
        req.members = {{1, i < kBigPerVc ? 8 : 1}};
        absl::StatusOr<hived::ScheduleResult> r = (*s)->Schedule(req, hived::Phase::kPreempting);
        if (!r.ok() || r->outcome != hived::Outcome::kPlaced) return out;
        if (!(*s)->Allocate(req, r->placement).ok()) return out;
      }
    }
    out = std::move(*s);
    return out;
  }();
  return scheduler.get();
}

// Reads every group, whole or page by page; the number of calls made.
int64_t ReadAllGroups(const hived::Scheduler& s, bool paged) {
  if (!paged) {
    benchmark::DoNotOptimize(s.Groups().size());
    return 1;
  }
  int64_t calls = 0;
  std::string after;
  while (true) {
    std::vector<hived::GroupStatus> page = s.Groups(after, 256);
    ++calls;
    if (page.size() < 256) break;
    after = page.back().name;
  }
  return calls;
}

void BM_ScheduleWhileReading(benchmark::State& state) {
  hived::Scheduler* s = Cluster();
  if (s == nullptr) {
    state.SkipWithError("building or filling the 100k-GPU cluster failed");
    return;
  }
  const int readers = static_cast<int>(state.range(0));
  const bool paged = state.range(1) != 0;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        reads.fetch_add(ReadAllGroups(*s, paged));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  hived::GroupRequest req;
  req.vc = "vc1";
  req.priority = 0;
  req.members = {{1, 1}};
  std::vector<int64_t> ns;
  ns.reserve(1 << 16);
  int64_t n = 0;
  for (auto _ : state) {
    req.name = absl::StrCat("cycle", n++);
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<hived::ScheduleResult> r = s->Schedule(req, hived::Phase::kPreempting);
    const Clock::time_point t1 = Clock::now();
    if (ns.size() < ns.capacity()) ns.push_back(Ns(t0, t1));
    if (!r.ok() || r->outcome != hived::Outcome::kPlaced || !s->Unreserve(req.name).ok()) {
      state.SkipWithError("the 1-GPU group did not place");
      break;
    }
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  state.counters["p50_us"] = PercentileUs(&ns, 50);
  state.counters["p99_us"] = PercentileUs(&ns, 99);
  state.counters["p999_us"] = PercentileUs(&ns, 99.9);
  state.counters["max_us"] = PercentileUs(&ns, 100);
  state.counters["view_calls"] = static_cast<double>(reads.load());
}
BENCHMARK(BM_ScheduleWhileReading)
    ->Args({0, 0})
    ->Args({4, 0})
    ->Args({4, 1})
    ->ArgNames({"readers", "paged"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_FilterThreads(benchmark::State& state) {
  hived::Scheduler* s = Cluster();
  if (s == nullptr) {
    state.SkipWithError("building or filling the 100k-GPU cluster failed");
    return;
  }
  hived::GroupRequest req;
  req.priority = 0;
  int64_t n = 0;
  for (auto _ : state) {
    req.name = absl::StrCat("t", state.thread_index(), "-", n);
    req.vc = absl::StrCat("vc", n % 4);
    req.members = {{1, n % 2 == 0 ? 1 : 8}};
    ++n;
    absl::StatusOr<hived::ScheduleResult> r = s->Schedule(req, hived::Phase::kFiltering);
    if (!r.ok() || r->outcome != hived::Outcome::kPlaced) {
      state.SkipWithError("a Filtering decision did not place");
      break;
    }
    benchmark::DoNotOptimize(r->placement.pods.size());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FilterThreads)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
