// The C interface's cost (issue 29, goal: at most 10% over C++ on the 1-GPU cycle): the same
// Schedule + Allocate + Release of a 1-GPU guaranteed group on the reference cluster
// (tests/testdata/bench-configs/gen-1000-nodes.yaml, half full with 4,000 1-GPU jobs, as in
// scheduler_bench.cc), through `hived::Scheduler` and through hived_c.h. Both reuse one
// request (the group's name is free again after its release) and, in C, one result.
// BM_CapiFast*: the same cycle on the fast path (hived/fast_path.h): ScheduleAndAllocate +
// Release(handle) in C++, hived_schedule_and_allocate + hived_release_handle in C, each
// into one reused result.
// Compare medians of repetitions on a Release build:
//   build/release/bench/capi_bench --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true  (one command line)
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/fast_path.h"
#include "hived/hived_c.h"
#include "hived/scheduler.h"

namespace {

const std::string& ReferenceConfigPath() {
  static const std::string path =
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/bench-configs/gen-1000-nodes.yaml";
  return path;
}

// Fills a scheduler as scheduler_bench.cc's HalfFullReference does: 4,000 1-GPU jobs, VCs
// by turns.
template <typename Place>
void Fill(const hived::ClusterSpec& spec, Place&& place) {
  for (int64_t job = 0; job < 4000; ++job) {
    place(absl::StrCat("fill", job),
          spec.virtual_clusters[static_cast<std::size_t>(job) % spec.virtual_clusters.size()].name);
  }
}

// Runs `cycle` (true when it succeeded) once per benchmark iteration; a failed cycle stops
// the benchmark with an error.
template <typename Cycle>
void RunCycles(benchmark::State& state, Cycle&& cycle) {
  for (auto _ : state) {
    if (!cycle()) {
      state.SkipWithError("cycle failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// A 1-GPU guaranteed request (priority 1) to name and place in a VC.
hived::GroupRequest OneGpuRequest() {
  hived::GroupRequest req;
  req.priority = 1;
  req.members = {{1, 1}};
  return req;
}

// The reference spec (into `*spec`) and a C++ scheduler of it; nullptr after
// SkipWithError when either fails.
std::unique_ptr<hived::Scheduler> CppSchedulerOrSkip(benchmark::State& state,
                                                     hived::ClusterSpec* spec) {
  absl::StatusOr<hived::ClusterSpec> loaded = hived::LoadClusterSpecFile(ReferenceConfigPath());
  if (!loaded.ok()) {
    state.SkipWithError(loaded.status().ToString().c_str());
    return nullptr;
  }
  *spec = *std::move(loaded);
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> scheduler = hived::Scheduler::Create(*spec);
  if (!scheduler.ok()) {
    state.SkipWithError(scheduler.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(scheduler);
}

// The reference spec (into `*spec`) and a C scheduler of it (the caller destroys it); NULL
// after SkipWithError when either fails.
hived_scheduler* CSchedulerOrSkip(benchmark::State& state, hived::ClusterSpec* spec) {
  absl::StatusOr<hived::ClusterSpec> loaded = hived::LoadClusterSpecFile(ReferenceConfigPath());
  if (!loaded.ok()) {
    state.SkipWithError(loaded.status().ToString().c_str());
    return nullptr;
  }
  *spec = *std::move(loaded);
  hived_scheduler* s = nullptr;
  char* error = nullptr;
  if (hived_scheduler_create_from_file(ReferenceConfigPath().c_str(), &s, &error) != HIVED_OK) {
    state.SkipWithError(error);
    hived_free(error);
    return nullptr;
  }
  return s;
}

void BM_CapiCycleCpp(benchmark::State& state) {
  hived::ClusterSpec spec;
  std::unique_ptr<hived::Scheduler> scheduler = CppSchedulerOrSkip(state, &spec);
  if (scheduler == nullptr) return;
  hived::Scheduler& s = *scheduler;
  hived::GroupRequest req = OneGpuRequest();
  Fill(spec, [&](const std::string& name, const std::string& vc) {
    req.name = name;
    req.vc = vc;
    absl::StatusOr<hived::ScheduleResult> r = s.Schedule(req, hived::Phase::kPreempting);
    if (r.ok() && r->outcome == hived::Outcome::kPlaced) (void)s.Allocate(req, r->placement);
  });
  req.name = "cycle";
  req.vc = "VC1";
  RunCycles(state, [&] {
    absl::StatusOr<hived::ScheduleResult> r = s.Schedule(req, hived::Phase::kPreempting);
    const bool ok = r.ok() && r->outcome == hived::Outcome::kPlaced &&
                    s.Allocate(req, r->placement).ok() && s.Release(req.name).ok();
    benchmark::DoNotOptimize(r);
    return ok;
  });
}
BENCHMARK(BM_CapiCycleCpp)->Unit(benchmark::kMicrosecond);

hived_request* MakeRequest(const char* name, const char* vc) {
  hived_member member{};
  member.pod_number = 1;
  member.leaf_cell_number = 1;
  hived_request_desc desc{};
  desc.name = name;
  desc.vc = vc;
  desc.priority = 1;
  desc.members = &member;
  desc.member_count = 1;
  hived_request* request = nullptr;
  if (hived_request_create(&desc, &request, nullptr) != HIVED_OK) return nullptr;
  return request;
}

void BM_CapiCycleC(benchmark::State& state) {
  hived::ClusterSpec spec;
  hived_scheduler* s = CSchedulerOrSkip(state, &spec);
  if (s == nullptr) return;
  hived_result* result = hived_result_create();
  Fill(spec, [&](const std::string& name, const std::string& vc) {
    hived_request* req = MakeRequest(name.c_str(), vc.c_str());
    if (hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, nullptr) == HIVED_OK &&
        hived_result_outcome(result) == HIVED_OUTCOME_PLACED) {
      (void)hived_allocate(s, req, result, nullptr, nullptr);
    }
    hived_request_destroy(req);
  });
  hived_request* req = MakeRequest("cycle", "VC1");
  RunCycles(state, [&] {
    const bool ok = hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, nullptr) == HIVED_OK &&
                    hived_result_outcome(result) == HIVED_OUTCOME_PLACED &&
                    hived_allocate(s, req, result, nullptr, nullptr) == HIVED_OK &&
                    hived_release(s, "cycle", nullptr) == HIVED_OK;
    benchmark::DoNotOptimize(result);
    return ok;
  });
  hived_request_destroy(req);
  hived_result_destroy(result);
  hived_scheduler_destroy(s);
}
BENCHMARK(BM_CapiCycleC)->Unit(benchmark::kMicrosecond);

void BM_CapiFastCpp(benchmark::State& state) {
  hived::ClusterSpec spec;
  std::unique_ptr<hived::Scheduler> scheduler = CppSchedulerOrSkip(state, &spec);
  if (scheduler == nullptr) return;
  hived::Scheduler& s = *scheduler;
  hived::GroupRequest req = OneGpuRequest();
  hived::FastResult r;
  Fill(spec, [&](const std::string& name, const std::string& vc) {
    req.name = name;
    req.vc = vc;
    (void)s.ScheduleAndAllocate(req, &r);
  });
  req.name = "cycle";
  req.vc = "VC1";
  RunCycles(state, [&] {
    const bool ok = s.ScheduleAndAllocate(req, &r).ok() && r.outcome == hived::Outcome::kPlaced &&
                    s.Release(r.handle).ok();
    benchmark::DoNotOptimize(r);
    return ok;
  });
}
BENCHMARK(BM_CapiFastCpp)->Unit(benchmark::kMicrosecond);

void BM_CapiFastC(benchmark::State& state) {
  hived::ClusterSpec spec;
  hived_scheduler* s = CSchedulerOrSkip(state, &spec);
  if (s == nullptr) return;
  hived_fast_result* result = hived_fast_result_create();
  Fill(spec, [&](const std::string& name, const std::string& vc) {
    hived_request* req = MakeRequest(name.c_str(), vc.c_str());
    (void)hived_schedule_and_allocate(s, req, result, nullptr);
    hived_request_destroy(req);
  });
  hived_request* req = MakeRequest("cycle", "VC1");
  RunCycles(state, [&] {
    const bool ok = hived_schedule_and_allocate(s, req, result, nullptr) == HIVED_OK &&
                    hived_fast_result_outcome(result) == HIVED_OUTCOME_PLACED &&
                    hived_release_handle(s, hived_fast_result_handle(result), nullptr) == HIVED_OK;
    benchmark::DoNotOptimize(result);
    return ok;
  });
  hived_request_destroy(req);
  hived_fast_result_destroy(result);
  hived_scheduler_destroy(s);
}
BENCHMARK(BM_CapiFastC)->Unit(benchmark::kMicrosecond);

}  // namespace
