// Benchmarks of the public Scheduler API (issue 5, "Benchmarks").
//
//  - The reference workload on tests/testdata/bench-configs/gen-1000-nodes.yaml (1,000 nodes x
//    8 GPUs, 4 VCs): VCs take turns by job index, each job Schedule + Allocate, a VC that
//    first waits is skipped, until all four are full; then everything is released.
//    w1: 1-GPU guaranteed jobs; w2: a seeded size mix with gangs; w3: 1-GPU opportunistic.
//    Counters: fill_jobs_per_s, release_jobs_per_s, p50/p99 of one job's Schedule + Allocate
//    (fill_p50_us, fill_p99_us) and of one Release (release_p50_us, release_p99_us).
//  - Cycles on the reference cluster, half full: Schedule + Allocate + Release of a 1-GPU
//    job and of an 8 x 8-GPU gang.
//  - Create: building the scheduler from the parsed config.
//  - Scale: generated clusters of 10k and 100k GPUs with 10 and 100 VCs, half full; cycles
//    of a 1-GPU group, an 8-GPU group and a 64-GPU gang (8 x 8), guaranteed and
//    opportunistic; p50/p99 per cycle as counters.
// Google benchmark reports means; percentiles are computed from per-call timings here.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_cycles.h"
#include "bench_scale.h"
#include "benchmark/benchmark.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/fast_path.h"
#include "hived/scheduler.h"

namespace {

using hived_bench::Clock;
using hived_bench::Ns;
using hived_bench::PercentileUs;
using hived_bench::RunCycles;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const std::string& ReferenceConfigPath() {
  static const std::string path =
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/bench-configs/gen-1000-nodes.yaml";
  return path;
}

// The reference cluster (vendored from ../shared), parsed once; nullptr when the file is bad.
const hived::ClusterSpec* ReferenceSpec() {
  static const std::unique_ptr<hived::ClusterSpec> spec = [] {
    std::unique_ptr<hived::ClusterSpec> out;
    if (!std::filesystem::exists(ReferenceConfigPath())) return out;
    absl::StatusOr<hived::ClusterSpec> loaded = hived::LoadClusterSpecFile(ReferenceConfigPath());
    if (loaded.ok()) out = std::make_unique<hived::ClusterSpec>(std::move(*loaded));
    return out;
  }();
  return spec.get();
}

std::unique_ptr<hived::Scheduler> MakeScheduler(const hived::ClusterSpec& spec) {
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::Create(spec);
  if (!s.ok()) return nullptr;
  return std::move(*s);
}

// ---- The reference workload -------------------------------------------------------------

enum class Workload { kW1 = 1, kW2 = 2, kW3 = 3 };

// The members of job `index` of a workload. w2 draws from a seeded generator.
std::vector<hived::GroupMember> JobMembers(Workload w, std::mt19937_64* rng) {
  if (w != Workload::kW2) return {{1, 1}};
  const int r = std::uniform_int_distribution<int>(0, 99)(*rng);
  if (r < 40) return {{1, 1}};
  if (r < 55) return {{1, 2}};
  if (r < 70) return {{1, 4}};
  if (r < 85) return {{1, 8}};
  if (r < 95) return {{2, 8}};
  return {{4, 8}};
}

struct FillStats {
  int64_t jobs = 0;
  double fill_seconds = 0;
  double release_seconds = 0;
  std::vector<int64_t> fill_ns;
  std::vector<int64_t> release_ns;
  bool error = false;
};

// Fills the cluster by VC turns, then releases every job. Returns per-call timings. `fast`:
// through the fast path (ScheduleAndAllocate, Release by handle; hived/fast_path.h).
void FillAndRelease(hived::Scheduler* scheduler, const hived::ClusterSpec& spec, Workload w,
                    int64_t max_jobs, FillStats* stats, bool fast = false) {
  std::vector<std::string> vcs;
  for (const auto& vc : spec.virtual_clusters) vcs.push_back(vc.name);
  std::vector<bool> full(vcs.size(), false);
  std::size_t open = vcs.size();
  std::mt19937_64 rng(42);
  std::vector<std::string> placed;
  placed.reserve(static_cast<std::size_t>(max_jobs));
  std::vector<hived::GroupHandle> handles;
  handles.reserve(fast ? static_cast<std::size_t>(max_jobs) : 0);
  hived::FastResult fr;
  hived::GroupRequest req;
  req.priority = w == Workload::kW3 ? hived::kOpportunisticPriority : 1;
  const Clock::time_point fill_start = Clock::now();
  for (int64_t job = 0; open > 0 && job < max_jobs * 4; ++job) {
    if (static_cast<int64_t>(placed.size()) >= max_jobs) break;
    const std::size_t v = static_cast<std::size_t>(job) % vcs.size();
    if (full[v]) continue;
    req.name = absl::StrCat("j", job);
    req.vc = vcs[v];
    req.members = JobMembers(w, &rng);
    bool ok = false;
    const Clock::time_point t0 = Clock::now();
    if (fast) {
      const absl::Status st = scheduler->ScheduleAndAllocate(req, &fr);
      stats->fill_ns.push_back(Ns(t0, Clock::now()));
      if (!st.ok()) {
        stats->error = true;
        return;
      }
      ok = fr.outcome == hived::Outcome::kPlaced;
      if (ok) handles.push_back(fr.handle);
    } else {
      absl::StatusOr<hived::ScheduleResult> r = scheduler->Schedule(req, hived::Phase::kPreempting);
      ok = r.ok() && r->outcome == hived::Outcome::kPlaced;
      if (ok) ok = scheduler->Allocate(req, r->placement).ok();
      stats->fill_ns.push_back(Ns(t0, Clock::now()));
      if (!r.ok()) {
        stats->error = true;
        return;
      }
      if (ok) placed.push_back(req.name);
    }
    if (!ok) {
      full[v] = true;  // the VC waits: skip it from now on
      --open;
    }
  }
  const Clock::time_point fill_end = Clock::now();
  for (const std::string& name : placed) {
    const Clock::time_point t0 = Clock::now();
    const bool ok = scheduler->Release(name).ok();
    stats->release_ns.push_back(Ns(t0, Clock::now()));
    stats->error = stats->error || !ok;
  }
  for (hived::GroupHandle h : handles) {
    const Clock::time_point t0 = Clock::now();
    const bool ok = scheduler->Release(h).ok();
    stats->release_ns.push_back(Ns(t0, Clock::now()));
    stats->error = stats->error || !ok;
  }
  stats->release_seconds += Seconds(Clock::now() - fill_end);
  stats->fill_seconds += Seconds(fill_end - fill_start);
  stats->jobs += static_cast<int64_t>(placed.size() + handles.size());
}

void BM_SchedulerReferenceWorkload(benchmark::State& state) {
  const hived::ClusterSpec* spec = ReferenceSpec();
  if (spec == nullptr) {
    state.SkipWithError(
        ("reference config not found or invalid: " + ReferenceConfigPath()).c_str());
    return;
  }
  const Workload w = static_cast<Workload>(state.range(0));
  const bool fast = state.range(1) != 0;
  FillStats stats;
  int64_t rounds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<hived::Scheduler> scheduler = MakeScheduler(*spec);
    state.ResumeTiming();
    if (!scheduler) {
      state.SkipWithError("Scheduler::Create failed");
      return;
    }
    FillAndRelease(scheduler.get(), *spec, w, 1000000, &stats, fast);
    if (stats.error) {
      state.SkipWithError("a Schedule or Release call failed");
      return;
    }
    state.PauseTiming();
    scheduler.reset();
    state.ResumeTiming();
    ++rounds;
  }
  state.counters["jobs_per_fill"] = static_cast<double>(stats.jobs) / static_cast<double>(rounds);
  state.counters["fill_jobs_per_s"] = static_cast<double>(stats.jobs) / stats.fill_seconds;
  state.counters["release_jobs_per_s"] = static_cast<double>(stats.jobs) / stats.release_seconds;
  state.counters["fill_p50_us"] = PercentileUs(&stats.fill_ns, 50);
  state.counters["fill_p99_us"] = PercentileUs(&stats.fill_ns, 99);
  state.counters["release_p50_us"] = PercentileUs(&stats.release_ns, 50);
  state.counters["release_p99_us"] = PercentileUs(&stats.release_ns, 99);
  state.SetItemsProcessed(stats.jobs);
}
// fast:0 the classic calls (Schedule + Allocate, Release by name); fast:1 the fast path.
BENCHMARK(BM_SchedulerReferenceWorkload)
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Args({3, 0})
    ->Args({3, 1})
    ->ArgNames({"w", "fast"})
    ->Unit(benchmark::kMillisecond);

// The reference cluster half full: 4,000 1-GPU guaranteed jobs by VC turns.
std::unique_ptr<hived::Scheduler> HalfFullReference(const hived::ClusterSpec& spec) {
  std::unique_ptr<hived::Scheduler> scheduler = MakeScheduler(spec);
  if (!scheduler) return nullptr;
  FillStats stats;
  std::vector<std::string> vcs;
  hived::GroupRequest req;
  req.priority = 1;
  req.members = {{1, 1}};
  for (int64_t job = 0; job < 4000; ++job) {
    req.name = absl::StrCat("fill", job);
    req.vc =
        spec.virtual_clusters[static_cast<std::size_t>(job) % spec.virtual_clusters.size()].name;
    absl::StatusOr<hived::ScheduleResult> r = scheduler->Schedule(req, hived::Phase::kPreempting);
    if (r.ok() && r->outcome == hived::Outcome::kPlaced)
      (void)scheduler->Allocate(req, r->placement);
  }
  return scheduler;
}

void BM_SchedulerReferenceCycle(benchmark::State& state) {
  const hived::ClusterSpec* spec = ReferenceSpec();
  if (spec == nullptr) {
    state.SkipWithError(
        ("reference config not found or invalid: " + ReferenceConfigPath()).c_str());
    return;
  }
  std::unique_ptr<hived::Scheduler> scheduler = HalfFullReference(*spec);
  if (!scheduler) {
    state.SkipWithError("Scheduler::Create failed");
    return;
  }
  hived::GroupRequest req;
  req.vc = "VC1";
  req.priority = 1;  // as the fill: takes free cells, never preempts
  const int32_t pods = static_cast<int32_t>(state.range(0));
  const int32_t gpus = static_cast<int32_t>(state.range(1));
  req.members = {{pods, gpus}};
  if (state.range(2) != 0) {
    hived_bench::RunFastCycles(state, scheduler.get(), req);
  } else {
    RunCycles(state, scheduler.get(), req);
  }
}
// fast:0 Schedule + Allocate + Release(name); fast:1 ScheduleAndAllocate + Release(handle).
BENCHMARK(BM_SchedulerReferenceCycle)
    ->Args({1, 1, 0})
    ->Args({1, 1, 1})
    ->Args({8, 8, 0})
    ->Args({8, 8, 1})
    ->ArgNames({"pods", "gpus", "fast"})
    ->Unit(benchmark::kMicrosecond);

void BM_SchedulerCreate(benchmark::State& state) {
  const hived::ClusterSpec* spec = ReferenceSpec();
  if (spec == nullptr) {
    state.SkipWithError(
        ("reference config not found or invalid: " + ReferenceConfigPath()).c_str());
    return;
  }
  for (auto _ : state) {
    std::unique_ptr<hived::Scheduler> scheduler = MakeScheduler(*spec);
    if (!scheduler) {
      state.SkipWithError("Scheduler::Create failed");
      return;
    }
    benchmark::DoNotOptimize(scheduler.get());
    state.PauseTiming();
    scheduler.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_SchedulerCreate)->Unit(benchmark::kMillisecond);

// ---- Scale ------------------------------------------------------------------------------

void BM_SchedulerScaleCycle(benchmark::State& state) {
  const int32_t gpus = static_cast<int32_t>(state.range(0));
  const int32_t vcs = static_cast<int32_t>(state.range(1));
  const int32_t pods = static_cast<int32_t>(state.range(2));
  const int32_t per_pod = static_cast<int32_t>(state.range(3));
  const bool opportunistic = state.range(4) != 0;
  const hived::ClusterSpec spec = hived::bench::GeneratedCluster(gpus, vcs);
  std::unique_ptr<hived::Scheduler> scheduler = MakeScheduler(spec);
  if (!scheduler) {
    state.SkipWithError("Scheduler::Create failed on the generated cluster");
    return;
  }
  if (!hived::bench::FillHalf(scheduler.get(), spec)) {
    state.SkipWithError("could not fill the generated cluster to half");
    return;
  }
  const int64_t vc_gpus =
      static_cast<int64_t>(spec.virtual_clusters[0].virtual_cells[0].cell_number) * 64;
  if (!opportunistic && vc_gpus / 2 < static_cast<int64_t>(pods) * per_pod) {
    state.SkipWithError("the group is larger than the free half of a VC of this cluster");
    return;
  }
  hived::GroupRequest req;
  req.vc = spec.virtual_clusters[0].name;
  // Priority 0, as the fill: the cycle takes free cells and never preempts.
  req.priority = opportunistic ? hived::kOpportunisticPriority : 0;
  req.members = {{pods, per_pod}};
  RunCycles(state, scheduler.get(), req);
}

void ScaleArgs(benchmark::internal::Benchmark* b) {
  for (int64_t gpus : {10000, 100000}) {
    for (int64_t vcs : {10, 100}) {
      for (const auto& [pods, per_pod] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 8}, {8, 8}}) {
        for (int64_t opp : {0, 1}) b->Args({gpus, vcs, pods, per_pod, opp});
      }
    }
  }
  b->ArgNames({"gpus", "vcs", "pods", "gpus_per_pod", "opp"});
}
BENCHMARK(BM_SchedulerScaleCycle)->Apply(ScaleArgs)->Unit(benchmark::kMicrosecond);

}  // namespace
