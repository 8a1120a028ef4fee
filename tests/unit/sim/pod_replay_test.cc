// The engine's pod replay (sim/engine/pod_replay.h) over a `ClusterBackend` of whole GPUs,
// and the event queue's caller-ordered events it uses.
#include "sim/engine/pod_replay.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/metrics/pod_summary.h"
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

// `gpus` nodes of one whole GPU each; every pod asks for one whole GPU (or none): a
// hand-checkable `ClusterBackend` whose job i is pod i.
class WholeGpuBackend : public ClusterBackend {
 public:
  explicit WholeGpuBackend(int32_t gpus)
      : used_(static_cast<size_t>(gpus), -1), names_(static_cast<size_t>(gpus), "n") {}
  std::string_view policy_name() const override { return "whole-gpu"; }
  const std::vector<std::string>& nodes() const override { return names_; }
  absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions& options) override {
    StartAttempt a;
    if (answer_preempting) {
      a.kind = StartAttempt::Kind::kPreempting;
      return a;
    }
    for (int32_t n = 0; n < static_cast<int32_t>(used_.size()); ++n) {
      if ((options.only_node >= 0 && n != options.only_node) ||
          used_[static_cast<size_t>(n)] >= 0) {
        continue;
      }
      if (job.gpus > 0) used_[static_cast<size_t>(n)] = job.index;
      on_[job.index] = n;
      order.push_back(job.index);
      a.kind = StartAttempt::Kind::kStarted;
      return a;
    }
    return a;
  }
  absl::Status FinishPreemption(const SimJob& /*job*/) override {
    return absl::FailedPreconditionError("never preempts");
  }
  absl::Status Release(const SimJob& job) override {
    for (int32_t& u : used_) {
      if (u == job.index && !leak) u = -1;
    }
    on_.erase(job.index);
    return release_error;
  }
  absl::Status SetNodeHealthy(int32_t /*node*/, bool /*healthy*/) override {
    return absl::UnimplementedError("no node events");
  }
  NodeList JobNodes(JobIndex job) const override {
    auto it = on_.find(job);
    return it == on_.end() ? NodeList{} : NodeList{it->second};
  }
  JobGpus RunGpus(JobIndex job) const override {
    auto it = on_.find(job);
    if (it == on_.end()) return {};
    const bool holds = used_[static_cast<size_t>(it->second)] == job;
    return {it->second, it->second, holds ? 1U : 0U};
  }
  bool ReleaseHelpsAllVcs() const override { return true; }
  bool SharesIdleCells() const override { return true; }
  absl::Status CheckInvariants() const override { return absl::OkStatus(); }
  int64_t total_gpus() const override { return static_cast<int64_t>(used_.size()); }
  int64_t used_gpus() const override {
    int64_t used = 0;
    for (int32_t u : used_) used += u >= 0 ? 1 : 0;
    return used;
  }
  int64_t fragmented_free_gpus() const override { return 0; }
  int64_t schedule_calls() const override { return static_cast<int64_t>(order.size()); }
  std::vector<int32_t> order;      // pods in placement order
  absl::Status release_error;      // what `Release` answers
  bool leak = false;               // `Release` keeps the GPU
  bool answer_preempting = false;  // `TryStart` answers kPreempting

 private:
  std::vector<int32_t> used_;  // per GPU: the pod on it, -1 free
  std::vector<std::string> names_;
  std::map<JobIndex, int32_t> on_;  // running pod -> its node
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

// ReplayPods into metrics/'s builder, and the summary it makes.
absl::StatusOr<PodSummary> Replay(const OpenbPodList& list, ClusterBackend* backend) {
  PodSummaryBuilder builder(list.pods.size());
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, backend, {}, &builder);
  if (!r.ok()) return r.status();
  return builder.Finish(*std::move(r));
}

TEST_CASE("ReplayPods: a departure frees its GPU before an arrival at the same time",
          "[sim][unit]") {
  // One GPU. Pod 0 runs [0, 10); pod 2 arrives at 5 and waits. At 10 the departure comes
  // first and retries the waiting pods, so pod 2 takes the GPU and pod 1, arriving at 10,
  // waits for it.
  const OpenbPodList list = List({Pod(0, 10), Pod(10, 20), Pod(5, 15)}, 100);
  WholeGpuBackend backend(1);
  absl::StatusOr<PodSummary> r = Replay(list, &backend);
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
  WholeGpuBackend backend(1);
  absl::StatusOr<PodSummary> r = Replay(list, &backend);
  REQUIRE(r.ok());
  CHECK(backend.order == std::vector<int32_t>{0, 1});
  CHECK(r->placed_at_arrival == 2);
  CHECK(r->runs[0].end == 5);
  CHECK(r->runs[1].start == 5);
}

TEST_CASE("ReplayPods: pods arrive by creation time then by list order", "[sim][unit]") {
  // Listed out of time order: pod 1 (at 3) first; pods 0 and 2 both at 7, pod 0 first.
  const OpenbPodList list = List({Pod(7, 20), Pod(3, 6), Pod(7, 9)}, 100);
  WholeGpuBackend backend(1);
  absl::StatusOr<PodSummary> r = Replay(list, &backend);
  REQUIRE(r.ok());
  CHECK(backend.order == std::vector<int32_t>{1, 0, 2});
  CHECK(r->start_time == 3);
  CHECK(r->runs[2].start == 20);
}

TEST_CASE("ReplayPods: a Pending pod gives up at its deletion and the backend's error is kept",
          "[sim][unit]") {
  const OpenbPodList list = List({Pod(0, 50), Pod(1, 20, OpenbPhase::kPending), Pod(2, 60)}, 100);
  WholeGpuBackend backend(1);
  absl::StatusOr<PodSummary> r = Replay(list, &backend);
  REQUIRE(r.ok());
  CHECK(r->placed + r->never_placed == r->pods);
  CHECK(r->never_placed == 1);  // the Pending pod, deleted at 20 while pod 0 ran
  CHECK(r->pending_in_trace == 1);
  CHECK(r->never_placed_by_end == 0);
  CHECK(r->runs[2].start == 50);

  OpenbPodList untimed = list;
  untimed.stats.has_times = false;
  absl::StatusOr<PodSummary> bad = Replay(untimed, &backend);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("pods.csv") != std::string::npos);
}

TEST_CASE("ReplayPods: the backend's errors and wrong answers stop the replay", "[sim][unit]") {
  const OpenbPodList list = List({Pod(0, 10), Pod(5, 20)}, 100);
  WholeGpuBackend backend(1);
  absl::StatusCode code = absl::StatusCode::kInternal;
  std::string message;
  SECTION("an error of Release, as is") {
    backend.release_error = absl::DataLossError("release failed");
    code = absl::StatusCode::kDataLoss;
    message = "release failed";
  }
  SECTION("a GPU still held after the last departure") {
    backend.leak = true;
    message = "replay: GPU milli still allocated after the last departure";
  }
  SECTION("an answer other than started or waiting") {
    backend.answer_preempting = true;
    message =
        "pod replay: the backend (whole-gpu) answered pod 0 neither started nor waiting; a pod "
        "does not preempt and is never infeasible";
  }
  absl::StatusOr<PodSummary> r = Replay(list, &backend);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == code);
  CHECK(r.status().message() == message);
}

// A sink that refuses the pod it is told to.
class RefusingSink : public PodSink {
 public:
  explicit RefusingSink(int32_t refuse) : refuse_(refuse) {}
  absl::Status Add(const FinishedPod& pod) override {
    handed.push_back(pod.pod);
    if (pod.pod == refuse_) return absl::DataLossError("sink full");
    return absl::OkStatus();
  }
  std::vector<int32_t> handed;

 private:
  int32_t refuse_;
};

TEST_CASE(
    "ReplayPods: each pod goes to the sink once when final and a sink's error stops the replay",
    "[sim][unit]") {
  // One GPU: pod 0 runs [0, 10); pod 1 (Pending, deleted at 5) waits and gives up when pod
  // 0's departure retries it at 10; pod 2 then runs [10, 30).
  const OpenbPodList list = List({Pod(0, 10), Pod(1, 5, OpenbPhase::kPending), Pod(2, 22)}, 100);
  WholeGpuBackend backend(1);
  RefusingSink all(-1);
  absl::StatusOr<PodReplayResult> r = ReplayPods(list, &backend, {}, &all);
  REQUIRE(r.ok());
  CHECK(all.handed == std::vector<int32_t>{0, 1, 2});  // as each became final

  WholeGpuBackend again(1);
  RefusingSink refusing(1);
  absl::StatusOr<PodReplayResult> stopped = ReplayPods(list, &again, {}, &refusing);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().code() == absl::StatusCode::kDataLoss);
  CHECK(refusing.handed == std::vector<int32_t>{0, 1});  // pod 2 never placed
}

}  // namespace
}  // namespace hived::sim
