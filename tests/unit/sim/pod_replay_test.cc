// The engine's pod replay (sim/engine/pod_replay.h) over a backend of whole GPUs, and the
// event queue's caller-ordered events it uses.
#include "sim/engine/pod_replay.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

TEST_CASE("EventQueue::PushOrdered: pops by time then by the caller's key, not push order",
          "[sim][unit]") {
  EventQueue q;
  const std::vector<std::pair<Time, uint64_t>> pushed = {{5, 9}, {1, 7}, {5, 2}, {3, 1}, {1, 3}};
  JobIndex job = 0;
  for (const auto& [t, key] : pushed) {
    Event e;
    e.time = t;
    e.job = job++;
    e.sequence = key;
    q.PushOrdered(e);
  }
  std::vector<JobIndex> order;
  while (!q.empty()) order.push_back(q.Pop().job);
  CHECK(order == std::vector<JobIndex>{4, 1, 3, 2, 0});
}

// `gpus` nodes of one whole GPU each; every pod asks for one whole GPU (or none).
class WholeGpuBackend : public PodBackend {
 public:
  WholeGpuBackend(int32_t gpus, std::vector<int32_t> pod_gpus)
      : used_(static_cast<size_t>(gpus), -1), pod_gpus_(std::move(pod_gpus)) {}
  int32_t gpu_count() const override { return static_cast<int32_t>(used_.size()); }
  int32_t pod_gpus(int32_t pod) const override { return pod_gpus_[static_cast<size_t>(pod)]; }
  bool TryPlace(int32_t pod, int32_t only_node, PodPlacement* placement) override {
    for (int32_t n = 0; n < gpu_count(); ++n) {
      if ((only_node >= 0 && n != only_node) || used_[static_cast<size_t>(n)] >= 0) continue;
      if (pod_gpus(pod) > 0) used_[static_cast<size_t>(n)] = pod;
      *placement = {n, pod_gpus(pod) > 0 ? 1U : 0U, n};
      order.push_back(pod);
      return true;
    }
    return false;
  }
  void Remove(int32_t pod) override {
    for (int32_t& u : used_) {
      if (u == pod) u = -1;
    }
  }
  double allocation_ratio() const override {
    double used = 0;
    for (int32_t u : used_) used += u >= 0 ? 1 : 0;
    return used / static_cast<double>(used_.size());
  }
  double fragmentation() const override { return 0; }
  absl::Status Finish() const override {
    for (int32_t u : used_) {
      if (u >= 0) return absl::InternalError("still allocated");
    }
    return absl::OkStatus();
  }
  std::vector<int32_t> order;  // pods in placement order

 private:
  std::vector<int32_t> used_;  // per GPU: the pod on it, -1 free
  std::vector<int32_t> pod_gpus_;
};

OpenbPod Pod(int64_t created, int64_t deleted, OpenbPhase phase = OpenbPhase::kRunning) {
  OpenbPod p;
  p.num_gpu = 1;
  p.gpu_milli = kMilliPerGpu;
  p.phase = phase;
  p.creation_time = created;
  p.deletion_time = deleted;
  if (phase != OpenbPhase::kPending) p.scheduled_time = created;
  return p;
}

OpenbPodList List(std::vector<OpenbPod> pods, int64_t end) {
  OpenbPodList list;
  list.file = "pods.csv";
  list.pods = std::move(pods);
  list.stats.has_times = true;
  list.stats.trace_end = end;
  return list;
}

TEST_CASE("ReplayPods: a departure frees its GPU before an arrival at the same time",
          "[sim][unit]") {
  // One GPU. Pod 0 runs [0, 10); pod 2 arrives at 5 and waits. At 10 the departure comes
  // first and retries the waiting pods, so pod 2 takes the GPU and pod 1, arriving at 10,
  // waits for it.
  const OpenbPodList list = List({Pod(0, 10), Pod(10, 20), Pod(5, 15)}, 100);
  WholeGpuBackend backend(1, {1, 1, 1});
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, &backend, {});
  REQUIRE(r.ok());
  CHECK(backend.order == std::vector<int32_t>{0, 2, 1});
  CHECK(r->placed == 3);
  CHECK(r->placed_at_arrival == 1);
  CHECK(r->runs[2].start == 10);
  CHECK(r->runs[2].end == 20);  // its trace runtime (15 - 5) from its placement
  CHECK(r->runs[1].start == 20);
  CHECK(r->max_wait == 10);
  CHECK(r->peak_allocation_ratio == 1.0);
}

TEST_CASE("ReplayPods: a departure pushed by an arrival at t goes before the next arrival at t",
          "[sim][unit]") {
  // One GPU. Pod 0 runs 0 seconds from 5: its departure, pushed while it arrives, comes
  // before pod 1's arrival at 5, which then finds the GPU free (placed at arrival, not by
  // the departure's retry).
  const OpenbPodList list = List({Pod(5, 5), Pod(5, 30)}, 100);
  WholeGpuBackend backend(1, {1, 1});
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, &backend, {});
  REQUIRE(r.ok());
  CHECK(backend.order == std::vector<int32_t>{0, 1});
  CHECK(r->placed_at_arrival == 2);
  CHECK(r->runs[0].end == 5);
  CHECK(r->runs[1].start == 5);
}

TEST_CASE("ReplayPods: pods arrive by creation time then by list order", "[sim][unit]") {
  // Listed out of time order: pod 1 (at 3) first; pods 0 and 2 both at 7, pod 0 first.
  const OpenbPodList list = List({Pod(7, 20), Pod(3, 6), Pod(7, 9)}, 100);
  WholeGpuBackend backend(1, {1, 1, 1});
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, &backend, {});
  REQUIRE(r.ok());
  CHECK(backend.order == std::vector<int32_t>{1, 0, 2});
  CHECK(r->start_time == 3);
  CHECK(r->runs[2].start == 20);
}

TEST_CASE("ReplayPods: a Pending pod gives up at its deletion and the backend's error is kept",
          "[sim][unit]") {
  const OpenbPodList list = List({Pod(0, 50), Pod(1, 20, OpenbPhase::kPending), Pod(2, 60)}, 100);
  WholeGpuBackend backend(1, {1, 1, 1});
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, &backend, {});
  REQUIRE(r.ok());
  CHECK(r->placed + r->never_placed == r->pods);
  CHECK(r->never_placed == 1);  // the Pending pod, deleted at 20 while pod 0 ran
  CHECK(r->pending_in_trace == 1);
  CHECK(r->never_placed_by_end == 0);
  CHECK(r->runs[2].start == 50);

  OpenbPodList untimed = list;
  untimed.stats.has_times = false;
  absl::StatusOr<PodReplayResult> bad = ReplayPods(untimed, &backend, {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("pods.csv") != std::string::npos);
}

}  // namespace
}  // namespace hived::sim
