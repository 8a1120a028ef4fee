// Benchmarks of the Scheduler's views (issue 12 item 5): what a status page, a metrics
// scrape or a Kubernetes node cache pays per call, on the generated cluster of the scale
// benchmarks: 100,032 GPUs (1,563 racks of 8 8-GPU nodes), 100 VCs, every VC half used
// (bench_scale.h). The scheduler is built and filled once; each benchmark is one view call.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_scale.h"
#include "benchmark/benchmark.h"
#include "hived/scheduler.h"

namespace {

struct Fixture {
  hived::ClusterSpec spec;
  std::unique_ptr<hived::Scheduler> scheduler;
};

// The filled 100k-GPU scheduler, built on first use; nullptr (with the reason in `error`)
// when building or filling failed.
const Fixture* Cluster(std::string* error) {
  static const std::unique_ptr<Fixture> fixture = [] {
    auto f = std::make_unique<Fixture>();
    f->spec = hived::bench::GeneratedCluster(100032, 100);
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::Create(f->spec);
    if (!s.ok() || !hived::bench::FillHalf(s->get(), f->spec)) return std::unique_ptr<Fixture>();
    f->scheduler = std::move(*s);
    return f;
  }();
  if (!fixture) *error = "building or filling the 100k-GPU cluster failed";
  return fixture.get();
}

// Runs `view` once per iteration on the filled cluster; `items` per call as a counter.
template <typename View>
void RunView(benchmark::State& state, View view) {
  std::string error;
  const Fixture* f = Cluster(&error);
  if (f == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  int64_t items = 0;
  for (auto _ : state) {
    items = view(*f->scheduler);
    benchmark::DoNotOptimize(items);
  }
  state.counters["items"] = static_cast<double>(items);
}

// Cells in a status tree, so the counter says how much a call copies.
template <typename Cell>
int64_t CountCells(const std::vector<Cell>& cells) {
  int64_t n = 0;
  for (const Cell& c : cells) n += 1 + CountCells(c.children);
  return n;
}

void BM_ViewPhysicalCluster(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) { return CountCells(s.PhysicalCluster()); });
}
BENCHMARK(BM_ViewPhysicalCluster)->Unit(benchmark::kMillisecond);

void BM_ViewVirtualCluster(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) { return CountCells(*s.VirtualCluster("vc0")); });
}
BENCHMARK(BM_ViewVirtualCluster)->Unit(benchmark::kMicrosecond);

void BM_ViewNodes(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) { return static_cast<int64_t>(s.Nodes().size()); });
}
BENCHMARK(BM_ViewNodes)->Unit(benchmark::kMillisecond);

void BM_ViewGroups(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) { return static_cast<int64_t>(s.Groups().size()); });
}
BENCHMARK(BM_ViewGroups)->Unit(benchmark::kMillisecond);

void BM_ViewGetGroup(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    return static_cast<int64_t>(s.GetGroup("fill1000").placement.pods.size());
  });
}
BENCHMARK(BM_ViewGetGroup)->Unit(benchmark::kMicrosecond);

void BM_ViewVcUsages(benchmark::State& state) {
  RunView(state,
          [](const hived::Scheduler& s) { return static_cast<int64_t>(s.VcUsages().size()); });
}
BENCHMARK(BM_ViewVcUsages)->Unit(benchmark::kMicrosecond);

void BM_ViewCapacity(benchmark::State& state) {
  RunView(state,
          [](const hived::Scheduler& s) { return static_cast<int64_t>(s.Capacity().size()); });
}
BENCHMARK(BM_ViewCapacity)->Unit(benchmark::kMicrosecond);

}  // namespace

// ---- Filtered views and summaries --------------------------------------------------------

namespace {

void BM_ViewGetNode(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    return static_cast<int64_t>(s.GetNode("r700n3")->size());
  });
}
BENCHMARK(BM_ViewGetNode)->Unit(benchmark::kMicrosecond);

void BM_ViewPhysicalNode(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) { return CountCells(*s.PhysicalNode("r700n3")); });
}
BENCHMARK(BM_ViewPhysicalNode)->Unit(benchmark::kMicrosecond);

void BM_ViewChainSummaries(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    return static_cast<int64_t>(s.ChainSummaries()[0].leaves.used);
  });
}
BENCHMARK(BM_ViewChainSummaries)->Unit(benchmark::kMicrosecond);

void BM_ViewVcSummaries(benchmark::State& state) {
  RunView(state,
          [](const hived::Scheduler& s) { return static_cast<int64_t>(s.VcSummaries().size()); });
}
BENCHMARK(BM_ViewVcSummaries)->Unit(benchmark::kMicrosecond);

void BM_ViewGetVcSummary(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    return static_cast<int64_t>((*s.GetVcSummary("vc7"))[0].leaves.used);
  });
}
BENCHMARK(BM_ViewGetVcSummary)->Unit(benchmark::kMicrosecond);

}  // namespace

namespace {

void BM_ViewPhysicalClusterAsTable(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    return static_cast<int64_t>(s.PhysicalClusterAsTable().rows.size());
  });
}
BENCHMARK(BM_ViewPhysicalClusterAsTable)->Unit(benchmark::kMillisecond);

}  // namespace

// ---- Paged groups and the change feed (issue 29 item 3) ---------------------------------

namespace {

// One page of the group list in the middle of it: what a reader holds the lock for.
void BM_ViewGroupsPage(benchmark::State& state) {
  const int32_t limit = static_cast<int32_t>(state.range(0));
  RunView(state, [limit](const hived::Scheduler& s) {
    return static_cast<int64_t>(s.Groups("fill5", limit).size());
  });
}
BENCHMARK(BM_ViewGroupsPage)->Arg(64)->Arg(256)->ArgName("limit")->Unit(benchmark::kMicrosecond);

// The changes since the version before the last one (the fill's last few groups).
void BM_ViewChanges(benchmark::State& state) {
  RunView(state, [](const hived::Scheduler& s) {
    const uint64_t v = s.version();
    return static_cast<int64_t>(s.Changes(v > 2 ? v - 2 : 0)->groups.size());
  });
}
BENCHMARK(BM_ViewChanges)->Unit(benchmark::kMicrosecond);

}  // namespace
