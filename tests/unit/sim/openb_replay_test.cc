// The time-based replay of an openb pod list (sim/openb/openb_replay.h).
#include "sim/openb/openb_replay.h"

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/cluster_backend.h"
#include "sim/policies/fill_cluster.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

PodSummary Replay(const std::string& pod_rows, PolicyKind policy = PolicyKind::kFgd) {
  OpenbReplayOptions options;
  options.policy = policy;
  options.sample_seconds = 50;
  return testing::ReplayOnOneGpu(pod_rows, options);
}

TEST_CASE(
    "ReplayOpenb: pods wait for room, Pending pods give up at their deletion, the "
    "censored tail is counted",
    "[sim][openb][unit]") {
  // One GPU. a holds it 0..100; b (ran 40 s in the trace) waits from 10 to 100, runs to 140;
  // c (Pending, deleted at 60) gives up; d is CPU-only and censored at the trace end (200).
  const std::string rows =
      "a,1000,10,1,1000,,LS,Succeeded,0,100,0\n"
      "b,1000,10,1,1000,,LS,Succeeded,10,50,10\n"
      "c,1000,10,1,500,,BE,Pending,20,60,\n"
      "d,1000,10,0,0,,LS,Running,30,200,30\n";
  for (PolicyKind policy : testing::kEveryPodPolicy) {
    INFO(PolicyKindName(policy));
    const PodSummary r = Replay(rows, policy);
    CHECK(r.pods == 4);
    CHECK(r.placed == 3);
    CHECK(r.placed_at_arrival == 2);
    CHECK(r.never_placed == 1);
    CHECK(r.never_placed_by_end == 0);
    CHECK(r.pending_in_trace == 1);
    CHECK(r.pending_placed == 0);
    CHECK(r.censored == 1);
    CHECK(r.max_wait == 90);
    CHECK(r.mean_wait == Approx(30));
    CHECK(r.start_time == 0);
    CHECK(r.end_time == 200);
    CHECK(r.mean_allocation_ratio == Approx(140.0 / 200));  // a 0..100, b 100..140
    CHECK(r.peak_allocation_ratio == 1.0);
    REQUIRE(r.timeline.size() == 5);  // 0, 50, 100, 150, 200
    CHECK(r.timeline[1].allocation_ratio == 1.0);
    CHECK(r.timeline[1].waiting == 2);  // b and c
    CHECK(r.timeline[3].allocation_ratio == 0.0);
    CHECK(r.timeline[3].running == 1);  // d
  }
}

TEST_CASE("ReplayOpenb: a Pending pod placed before its deletion runs until then",
          "[sim][openb][unit]") {
  const PodSummary r = Replay(
      "a,1000,10,1,1000,,LS,Succeeded,0,100,0\n"
      "b,1000,10,1,1000,,LS,Succeeded,10,50,10\n"
      "c,1000,10,1,500,,BE,Pending,20,150,\n"
      "d,1000,10,0,0,,LS,Running,30,200,30\n");
  CHECK(r.placed == 4);
  CHECK(r.pending_placed == 1);  // at 140, when b leaves; runs to 150
  CHECK(r.never_placed == 0);
  CHECK(r.mean_allocation_ratio == Approx((100.0 + 40 + 0.5 * 10) / 200));
}

TEST_CASE("ReplayOpenb: a pod list without times is rejected", "[sim][openb][unit]") {
  absl::StatusOr<OpenbNodeList> nodes =
      ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn,8000,1000,1,T4\n", "nodes.csv");
  absl::StatusOr<OpenbPodList> list =
      ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,500\n", "m.csv");
  REQUIRE(nodes.ok());
  REQUIRE(list.ok());
  absl::StatusOr<std::vector<FillPod>> pods = MakeFillPods(*list, *nodes);
  REQUIRE(pods.ok());
  absl::StatusOr<PodSummary> r = testing::ReplayOpenbSummary(*nodes, *list, *pods, {});
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("m.csv: this pod list has no creation") !=
        std::string::npos);
}

TEST_CASE("The fill model as a ClusterBackend: one node only, its GPUs, and the misuse it refuses",
          "[sim][openb][unit]") {
  // Two nodes of two T4s. Pod 0 takes half a GPU, pod 1 a whole one, pod 2 is CPU-only.
  const OpenbNodeList nodes = testing::MakeOpenbNodes("n0,8000,1000,2,T4\nn1,8000,1000,2,T4\n");
  std::vector<FillPod> pods = {testing::MakeFillPod(1000, 1, 500),
                               testing::MakeFillPod(1000, 1, 1000),
                               testing::MakeFillPod(1000, 0, 0)};
  for (size_t i = 0; i < pods.size(); ++i) pods[i].source = static_cast<int32_t>(i);
  OpenbReplayOptions options;
  options.policy = PolicyKind::kBestFit;
  std::unique_ptr<ClusterBackend> backend = MakeFillBackend(nodes, pods, options);
  CHECK(backend->policy_name() == "best-fit");
  CHECK(backend->nodes() == std::vector<std::string>{"n0", "n1"});
  CHECK(backend->total_gpus() == 4);
  auto job = [](JobIndex index, int32_t gpus) {
    SimJob j;
    j.index = index;
    j.gpus = gpus;
    j.members = {GangMember{1, gpus}};
    return j;
  };
  TryOptions on_n1;
  on_n1.only_node = 1;
  absl::StatusOr<StartAttempt> a = backend->TryStart(job(0, 1), on_n1);
  REQUIRE(a.ok());
  CHECK(a->kind == StartAttempt::Kind::kStarted);
  CHECK(backend->JobNodes(0) == NodeList{1});
  const JobGpus at = backend->RunGpus(0);
  CHECK(at.node == 1);
  CHECK(at.first_gpu == 2);  // n0's two GPUs come first
  CHECK(at.mask == 1U);
  CHECK(backend->used_gpus() == 1);
  CHECK(backend->fragmented_free_gpus() == 1);  // n1's other GPU
  CHECK(backend->allocation_ratio() == 500.0 / 4000);

  absl::StatusOr<StartAttempt> b = backend->TryStart(job(1, 1), TryOptions{});
  REQUIRE(b.ok());
  CHECK(b->kind == StartAttempt::Kind::kStarted);
  absl::StatusOr<StartAttempt> c = backend->TryStart(job(2, 0), on_n1);
  REQUIRE(c.ok());
  CHECK(backend->JobNodes(2) == NodeList{1});
  CHECK(backend->RunGpus(2).node == 1);
  CHECK(backend->RunGpus(2).mask == 0U);

  SECTION("a pod that does not fit on the node named waits") {
    // Pod 0 takes half of one of n1's GPUs: a pod of two whole GPUs no longer fits on n1.
    std::vector<FillPod> two = pods;
    two[1] = testing::MakeFillPod(1000, 2, 1000);
    std::unique_ptr<ClusterBackend> other = MakeFillBackend(nodes, two, options);
    REQUIRE(other->TryStart(job(0, 1), on_n1).ok());
    absl::StatusOr<StartAttempt> waits = other->TryStart(job(1, 2), on_n1);
    REQUIRE(waits.ok());
    CHECK(waits->kind == StartAttempt::Kind::kWaiting);
    CHECK(other->used_gpus() == 1);
    absl::StatusOr<StartAttempt> anywhere = other->TryStart(job(1, 2), TryOptions{});
    REQUIRE(anywhere.ok());
    CHECK(anywhere->kind == StartAttempt::Kind::kStarted);
    CHECK(other->RunGpus(1).node == 0);
    CHECK(other->RunGpus(1).mask == 3U);
    TryOptions nowhere;
    nowhere.only_node = 2;
    CHECK(other->TryStart(job(2, 0), nowhere).status().code() ==
          absl::StatusCode::kInvalidArgument);  // not a node
  }
  SECTION("misuse is an error status and changes nothing") {
    absl::Status health = backend->SetNodeHealthy(0, false);
    CHECK(health.code() == absl::StatusCode::kUnimplemented);
    CHECK(health.message().find("no node failures") != absl::string_view::npos);
    absl::Status preempt = backend->FinishPreemption(job(1, 1));
    CHECK(preempt.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(preempt.message().find("never preempts") != absl::string_view::npos);
    CHECK(backend->TryStart(job(0, 1), TryOptions{}).status().code() ==
          absl::StatusCode::kFailedPrecondition);  // already running
    CHECK(backend->TryStart(job(7, 1), TryOptions{}).status().code() ==
          absl::StatusCode::kInvalidArgument);  // not a pod
    CHECK(backend->used_gpus() == 2);
  }
  SECTION("release gives everything back, once") {
    for (JobIndex i = 0; i < 3; ++i)
      REQUIRE(backend->Release(job(i, pods[static_cast<size_t>(i)].num_gpu)).ok());
    CHECK(backend->Release(job(0, 1)).code() == absl::StatusCode::kFailedPrecondition);
    CHECK(backend->used_gpus() == 0);
    CHECK(backend->allocation_ratio() == 0.0);
    CHECK(backend->JobNodes(0).empty());
    CHECK(backend->RunGpus(1).node == -1);
    CHECK(backend->CheckInvariants().ok());
    CHECK(backend->schedule_calls() == 3);
  }
}

TEST_CASE("ReplayOpenb: the default openb pod list replays with every pod accounted for",
          "[sim][openb][unit]") {
  const std::optional<FillInputs> in = testing::LoadPublishedOpenb("default");
  if (!in) return;
  absl::StatusOr<PodSummary> r =
      testing::ReplayOpenbSummary(in->nodes, in->pods, in->fill_pods, {});
  REQUIRE(r.ok());
  CHECK(r->pods == 8152);
  CHECK(r->placed + r->never_placed == 8152);
  CHECK(r->pending_in_trace == 897);
  CHECK(r->censored == 34);
  // The pod list is a sample: at most about 1% of the GPUs are busy at once.
  CHECK(r->peak_allocation_ratio < 0.05);
}

}  // namespace
}  // namespace hived::sim
