// Benchmarks of GPU sharing through the public Scheduler API (issue 27, "Benchmarks"):
// Schedule + Allocate + Release of one shared pod, repeated, on the reference cluster
// (tests/testdata/bench-configs/gen-1000-nodes.yaml: 1,000 nodes x 8 GPUs, 4 VCs) half full
// (4,000 1-GPU guaranteed jobs by VC turns, as bench/scheduler_bench.cc's cycles).
//  - BM_SharingFractionalCycle: a 500-milli guaranteed pod of VC1. resident=1: a 300-milli
//    pod of VC1 keeps one GPU open, so the cycle's pod shares it (the common case);
//    resident=0: every cycle opens a GPU (a holder scheduled, allocated and released).
//  - BM_SharingMigCycle: the same with a 1g.5gb MIG pod; the cluster's leaf type is given
//    the A100-40GB geometry (a benchmark's stand-in: the reference cluster has no MIG type).
// Counters: p50/p99 of one cycle in microseconds (Google benchmark reports the mean).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_cycles.h"
#include "benchmark/benchmark.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/scheduler.h"

namespace {

// The reference cluster, half full; `mig`: its leaf type has the A100-40GB geometry.
std::unique_ptr<hived::Scheduler> HalfFull(bool mig, std::string* error) {
  const std::string path =
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/bench-configs/gen-1000-nodes.yaml";
  if (!std::filesystem::exists(path)) {
    *error = "reference config not found: " + path;
    return nullptr;
  }
  absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecFile(path);
  if (!spec.ok()) {
    *error = spec.status().ToString();
    return nullptr;
  }
  if (mig) {
    hived::LeafCellTypeSpec type;
    type.name = "V100";
    type.mig_geometry = "A100-40GB";
    spec->leaf_cell_types = {type};
  }
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::Create(*spec);
  if (!s.ok()) {
    *error = s.status().ToString();
    return nullptr;
  }
  hived::GroupRequest req;
  req.priority = 1;
  req.members = {{1, 1}};
  for (int64_t job = 0; job < 4000; ++job) {
    req.name = absl::StrCat("fill", job);
    req.vc =
        spec->virtual_clusters[static_cast<std::size_t>(job) % spec->virtual_clusters.size()].name;
    absl::StatusOr<hived::ScheduleResult> r = (*s)->Schedule(req, hived::Phase::kPreempting);
    if (r.ok() && r->outcome == hived::Outcome::kPlaced) {
      (void)(*s)->Allocate(req, r->placement);
    }
  }
  return std::move(*s);
}

hived::GroupRequest SharedPod(const std::string& name, int32_t milli, const std::string& mig) {
  hived::GroupRequest r;
  r.name = name;
  r.vc = "VC1";
  r.priority = 1;
  r.leaf_cell_types = {"V100"};
  hived::GroupMember m;
  m.pod_number = 1;
  m.leaf_cell_number = 1;
  m.gpu_milli = mig.empty() ? milli : 0;
  m.mig_profile = mig;
  r.members = {m};
  return r;
}

void RunSharedCycles(benchmark::State& state, const std::string& mig) {
  std::string error;
  std::unique_ptr<hived::Scheduler> s = HalfFull(!mig.empty(), &error);
  if (!s) {
    state.SkipWithError(error.c_str());
    return;
  }
  if (state.range(0) == 1) {  // a resident pod keeps one GPU open
    const hived::GroupRequest resident = SharedPod("resident", 300, mig);
    absl::StatusOr<hived::ScheduleResult> r = s->Schedule(resident, hived::Phase::kPreempting);
    if (!r.ok() || r->outcome != hived::Outcome::kPlaced ||
        !s->Allocate(resident, r->placement).ok()) {
      state.SkipWithError("resident pod not placed");
      return;
    }
  }
  hived_bench::RunCycles(state, s.get(), SharedPod("", 500, mig));
}

void BM_SharingFractionalCycle(benchmark::State& state) { RunSharedCycles(state, ""); }
BENCHMARK(BM_SharingFractionalCycle)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("resident")
    ->Unit(benchmark::kMicrosecond);

void BM_SharingMigCycle(benchmark::State& state) { RunSharedCycles(state, "1g.5gb"); }
BENCHMARK(BM_SharingMigCycle)->Arg(1)->Arg(0)->ArgName("resident")->Unit(benchmark::kMicrosecond);

}  // namespace
