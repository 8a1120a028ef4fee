// Benchmarks of the cell forest and the buddy allocator on clusters of 1k, 10k and 100k
// GPUs: racks of 8 nodes of 8 GPUs (2 CPU sockets x 2 PCIe switches x 2 GPUs; levels
// GPU 1 .. rack 5), 7/8 of the GPUs, plus a chain of racks of 4 16-GPU nodes (binary levels
// 2-4-8-16 below the node; levels GPU 1 .. rack 6), 1/8 of the GPUs.
//
// Run (Release): cellalloc_bench --benchmark_repetitions=5
//                --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench_topology.h"
#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "hived/cluster_spec.h"

namespace hived::cellalloc {
namespace {

ClusterSpec SpecForGpus(int64_t gpus) {
  const int racks = static_cast<int>(gpus / 64);
  const int dgx2_racks = racks / 8;
  return bench::RackSpec(racks - dgx2_racks, 8, dgx2_racks);
}

CellForest BuildOrDie(const ClusterSpec& spec) {
  absl::StatusOr<CellForest> forest = CellForest::Build(spec);
  if (!forest.ok()) std::abort();
  return *std::move(forest);
}

// Leaves exactly one top-level cell of `ch` free (all others used), so that a leaf
// allocation must split the top cell through every level and its release merge it back.
void UseAllButOneTopCell(BuddyAllocator& alloc, ChainId ch) {
  const CellLevel top = alloc.forest().chain_info(ch).top_level;
  while (alloc.free_count(ch, top) > 1) {
    if (alloc.Allocate(ch, top).IsNil()) std::abort();
  }
}

void AddMemoryCounters(benchmark::State& state, const CellForest& forest,
                       const BuddyAllocator& alloc) {
  const double cells = forest.num_cells();
  state.counters["cells"] = cells;
  state.counters["forest_B_per_cell"] = static_cast<double>(forest.MemoryBytes()) / cells;
  state.counters["alloc_B_per_cell"] = static_cast<double>(alloc.MemoryBytes()) / cells;
  state.counters["total_B_per_cell"] =
      static_cast<double>(forest.MemoryBytes() + alloc.MemoryBytes()) / cells;
}

// A leaf allocation that splits a rack, a node, a socket and a switch, and the release
// that merges them all back.
void BM_BuddyLeafSplitMerge(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  UseAllButOneTopCell(alloc, ch);
  for (auto _ : state) {
    const CellId leaf = alloc.Allocate(ch, 1);
    benchmark::DoNotOptimize(leaf);
    alloc.Release(leaf);
  }
  if (alloc.free_count(ch, 5) != 1 || alloc.free_count(ch, 1) != 0) std::abort();
  state.SetItemsProcessed(state.iterations());
  AddMemoryCounters(state, forest, alloc);
}
BENCHMARK(BM_BuddyLeafSplitMerge)->ArgName("gpus")->Arg(1024)->Arg(10240)->Arg(102400);

// The same with every rack free: each release appends the merged rack to the end of the
// free list, so successive iterations walk through every rack (cold caches at 100k).
void BM_BuddyLeafSplitMergeRotating(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  for (auto _ : state) {
    const CellId leaf = alloc.Allocate(ch, 1);
    benchmark::DoNotOptimize(leaf);
    alloc.Release(leaf);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuddyLeafSplitMergeRotating)->ArgName("gpus")->Arg(1024)->Arg(10240)->Arg(102400);

// A whole node cell (8-GPU chain: splits a rack of 8 nodes; 16-GPU chain: a rack of 4).
void BM_BuddyNodeAllocRelease(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  BuddyAllocator alloc(&forest);
  const ChainId ch(static_cast<uint32_t>(state.range(1)));
  UseAllButOneTopCell(alloc, ch);
  const CellLevel node_level = forest.chain_info(ch).node_level;
  for (auto _ : state) {
    const CellId node = alloc.Allocate(ch, node_level);
    benchmark::DoNotOptimize(node);
    alloc.Release(node);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuddyNodeAllocRelease)
    ->ArgNames({"gpus", "chain"})
    ->Args({1024, 0})
    ->Args({102400, 0})
    ->Args({1024, 1})
    ->Args({102400, 1});

// Binding's path: allocate one specific leaf (the last one of the only free rack) and
// release it.
void BM_BuddyAllocateCell(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  UseAllButOneTopCell(alloc, ch);
  const CellId rack = alloc.FirstFree(ch, 5);
  const CellId leaf(forest.first_leaf(rack).value() +
                    static_cast<uint32_t>(forest.leaf_count(rack) - 1));
  for (auto _ : state) {
    const bool ok = alloc.AllocateCell(leaf);
    benchmark::DoNotOptimize(ok);
    alloc.Release(leaf);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuddyAllocateCell)->ArgName("gpus")->Arg(1024)->Arg(102400);

// A node going bad and coming back, in a rack that is split (some of its leaves used).
void BM_BuddySetNodeHealthy(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  BuddyAllocator alloc(&forest);
  const ChainId ch(0);
  for (int32_t i = 0; i < 20; ++i) {
    benchmark::DoNotOptimize(alloc.Allocate(ch, 1));
  }
  const NodeId node = forest.node(forest.child(CellId(0), 3));
  for (auto _ : state) {
    benchmark::DoNotOptimize(alloc.SetNodeHealthy(node, false));
    benchmark::DoNotOptimize(alloc.SetNodeHealthy(node, true));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuddySetNodeHealthy)->ArgName("gpus")->Arg(1024)->Arg(102400);

// Deriving the whole forest (types, chains, cells, nodes, checks) from a spec.
void BM_CellForestBuild(benchmark::State& state) {
  const ClusterSpec spec = SpecForGpus(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<CellForest> forest = CellForest::Build(spec);
    benchmark::DoNotOptimize(forest);
  }
  const CellForest forest = BuildOrDie(spec);
  const BuddyAllocator alloc(&forest);
  AddMemoryCounters(state, forest, alloc);
  state.counters["sizeof_CellForest"] = sizeof(CellForest);
  state.counters["sizeof_BuddyAllocator"] = sizeof(BuddyAllocator);
}
BENCHMARK(BM_CellForestBuild)
    ->ArgName("gpus")
    ->Arg(1024)
    ->Arg(10240)
    ->Arg(102400)
    ->Unit(benchmark::kMillisecond);

// A leaf's priority set and cleared (a node's free-leaves-for-priority answer stays O(1)).
void BM_PriorityUsageSetLeaf(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  PriorityUsage usage = PriorityUsage::ForForest(forest);
  const CellId leaf = forest.first_leaf(CellId(0));
  usage.SetLeafPriority(CellId(leaf.value() + 1), 10);
  for (auto _ : state) {
    usage.SetLeafPriority(leaf, 5);
    benchmark::DoNotOptimize(usage.FreeLeavesFor(forest.child(CellId(0), 0), 6));
    usage.SetLeafPriority(leaf, kFreePriority);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PriorityUsageSetLeaf)->ArgName("gpus")->Arg(1024)->Arg(102400);

// Leaves set and cleared in a fixed pseudo-random order over the whole cluster, as a replay
// touches them: what the cache sees on a large cluster, which one hot leaf hides.
void BM_PriorityUsageSetLeafScattered(benchmark::State& state) {
  const CellForest forest = BuildOrDie(SpecForGpus(state.range(0)));
  PriorityUsage usage = PriorityUsage::ForForest(forest);
  std::vector<CellId> leaves;
  for (CellId top : forest.chain_info(ChainId(0)).top_cells) {
    for (int32_t i = 0; i < forest.leaf_count(top); ++i) {
      leaves.push_back(CellId(forest.first_leaf(top).value() + static_cast<uint32_t>(i)));
    }
  }
  uint64_t x = 88172645463325252ull;  // xorshift: the same order on every run
  for (size_t i = leaves.size(); i > 1; --i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::swap(leaves[i - 1], leaves[x % i]);
  }
  size_t next = 0;
  for (auto _ : state) {
    const CellId leaf = leaves[next];
    next = next + 1 == leaves.size() ? 0 : next + 1;
    usage.SetLeafPriority(leaf, 5);
    usage.SetLeafPriority(leaf, kFreePriority);
  }
  benchmark::DoNotOptimize(usage.UsedTotal(leaves.front()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PriorityUsageSetLeafScattered)->ArgName("gpus")->Arg(1024)->Arg(102400);

}  // namespace
}  // namespace hived::cellalloc
