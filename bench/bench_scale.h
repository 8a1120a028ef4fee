// bench/bench_scale.h: the generated clusters of the scale benchmarks (scheduler_bench.cc,
// views_bench.cc) and how they are filled before measuring.
#ifndef HIVED_BENCH_BENCH_SCALE_H_
#define HIVED_BENCH_BENCH_SCALE_H_

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hived/cluster_spec.h"
#include "hived/scheduler.h"

namespace hived::bench {

// 8-GPU nodes (node -> 2 sockets -> 2 switches -> 2 GPUs) in racks of 8 nodes; every VC
// gets the same number of whole racks; the racks left over belong to no VC.
inline ClusterSpec GeneratedCluster(int32_t gpus, int32_t vcs) {
  ClusterSpec spec;
  spec.cell_types = {{"SW", "GPU", 2, false},
                     {"SOCKET", "SW", 2, false},
                     {"NODE", "SOCKET", 2, true},
                     {"RACK", "NODE", 8, false}};
  const int32_t racks = gpus / 64;
  for (int32_t r = 0; r < racks; ++r) {
    PhysicalCellSpec rack;
    rack.cell_type = "RACK";
    for (int32_t n = 0; n < 8; ++n) {
      PhysicalCellSpec node;
      node.cell_address = absl::StrCat("r", r, "n", n);
      rack.cell_children.push_back(std::move(node));
    }
    spec.physical_cells.push_back(std::move(rack));
  }
  const int32_t per_vc = racks / vcs;
  for (int32_t v = 0; v < vcs; ++v) {
    VirtualClusterSpec vc;
    vc.name = absl::StrCat("vc", v);
    vc.virtual_cells = {{"RACK", per_vc}};
    spec.virtual_clusters.push_back(std::move(vc));
  }
  return spec;
}

// Half of every VC's GPUs used: three quarters of that by 8-GPU jobs, the rest by 1-GPU jobs.
inline bool FillHalf(Scheduler* scheduler, const ClusterSpec& spec) {
  int64_t id = 0;
  for (const auto& vc : spec.virtual_clusters) {
    const int64_t vc_gpus = static_cast<int64_t>(vc.virtual_cells[0].cell_number) * 64;
    int64_t used = 0;
    GroupRequest req;
    req.vc = vc.name;
    req.priority = 0;
    while (used < vc_gpus / 2) {
      const bool big = used < vc_gpus * 3 / 8;
      req.name = absl::StrCat("fill", id++);
      req.members = {{1, big ? 8 : 1}};
      absl::StatusOr<ScheduleResult> r = scheduler->Schedule(req, Phase::kPreempting);
      if (!r.ok() || r->outcome != Outcome::kPlaced) return false;
      if (!scheduler->Allocate(req, r->placement).ok()) return false;
      used += big ? 8 : 1;
    }
  }
  return true;
}

}  // namespace hived::bench

#endif  // HIVED_BENCH_BENCH_SCALE_H_
