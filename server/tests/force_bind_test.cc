// HiveD's force bind (extender.h 3a, force_bind.h): a Binding pod filtered
// `forcePodBindThreshold` times, or decided to a node outside kube-scheduler's candidates, is
// bound by the extender itself through the API server's binding subresource; the queue is
// bounded; failures are logged and counted; a pod is never bound twice.
#include "server/force_bind.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "server/extender.h"
#include "server/kube_client.h"
#include "server/tests/fake_apiserver.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

using hived::server::Extender;
using hived::server::ForceBindJob;
using hived::server::ForceBindQueue;
using hived::server::testing::BindArgs;
using hived::server::testing::FakeApiServer;
using hived::server::testing::FilterArgs;
using hived::server::testing::GangSpec;
using hived::server::testing::MakePod;
using nlohmann::json;

std::string StartedUrl(FakeApiServer& api) {
  REQUIRE(api.Start() > 0);
  return api.Url();
}

// An extender binding through the fake API server's binding subresource.
struct Fixture {
  explicit Fixture(int32_t threshold = 3)
      : client(hived::server::KubeConfig{StartedUrl(api), "", "", "", "", false}) {
    auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
    REQUIRE(spec.ok());
    hived::server::ExtenderOptions options;
    options.force_bind_threshold = threshold;
    ext = std::make_unique<Extender>(*hived::Scheduler::Create(*spec), options, &client);
    ext->SetReady();
  }
  std::string Node(const json& pod) {
    return api.Pod(pod["metadata"]["uid"])["spec"].value("nodeName", "");
  }
  // The node a filter with `candidates` chose.
  std::string Filter(const json& pod, const std::vector<std::string>& candidates) {
    hived::server::HttpReply r = ext->Filter(FilterArgs(pod, candidates));
    REQUIRE(r.status == 200);
    json body = json::parse(r.body);
    REQUIRE(body["NodeNames"].size() == 1);
    return body["NodeNames"][0];
  }
  bool MetricHas(const std::string& line) { return ext->Metrics().find(line) != std::string::npos; }

  FakeApiServer api;
  hived::server::KubeClient client;
  std::unique_ptr<Extender> ext;
};

std::vector<std::string> AllBut(const std::string& node) {
  std::vector<std::string> out;
  for (const std::string& n : hived::server::testing::DesignNodes()) {
    if (n != node) out.push_back(n);
  }
  return out;
}

}  // namespace

TEST_CASE("Force bind: a decided node outside the candidates is bound at once", "[server][unit]") {
  Fixture f;
  json pod = MakePod("a-0", "a0", GangSpec("VC2", 0, "a", 1, 8, "DGX1-P100"));
  f.api.AddPod(pod);
  // Where the pod goes with every node a candidate: learnt on a second extender.
  Fixture probe;
  probe.api.AddPod(pod);
  std::string decided = probe.Filter(pod, hived::server::testing::DesignNodes());
  probe.ext->WaitForceBinds();
  CHECK(probe.api.BindCalls("a0") == 0);

  // kube-scheduler's candidates lack that node: HiveD binds the pod itself.
  CHECK(f.Filter(pod, AllBut(decided)) == decided);
  f.ext->WaitForceBinds();
  CHECK(f.Node(pod) == decided);
  CHECK(f.api.BindCalls("a0") == 1);
  json stored = f.api.Pod("a0");
  CHECK(stored["metadata"]["annotations"].contains("hivedscheduler.microsoft.com/pod-bind-info"));
  CHECK(f.MetricHas("hived_extender_force_binds_total{outcome=\"bound\"} 1"));
  // kube-scheduler's own bind afterwards is answered as done, with no second bind.
  CHECK(f.ext->Bind(BindArgs(pod, decided)).status == 200);
  CHECK(f.api.BindCalls("a0") == 1);
}

TEST_CASE("Force bind: after forcePodBindThreshold filters of a Binding pod", "[server][unit]") {
  Fixture f(/*threshold=*/3);
  json pod = MakePod("b-0", "b0", GangSpec("VC2", 0, "b", 1, 4, "DGX1-P100"));
  f.api.AddPod(pod);
  const std::vector<std::string>& all = hived::server::testing::DesignNodes();
  std::string node = f.Filter(pod, all);  // decided: Binding, 0 attempts
  for (int attempt = 1; attempt <= 2; ++attempt) {
    CHECK(f.Filter(pod, all) == node);  // kube-scheduler retrying: attempts 1, 2
    f.ext->WaitForceBinds();
    CHECK(f.api.BindCalls("b0") == 0);
  }
  CHECK(f.Filter(pod, all) == node);  // attempt 3 reaches the threshold
  f.ext->WaitForceBinds();
  CHECK(f.api.BindCalls("b0") == 1);
  CHECK(f.Node(pod) == node);
  // A bound pod filtered again is not bound again.
  CHECK(f.Filter(pod, all) == node);
  f.ext->WaitForceBinds();
  CHECK(f.api.BindCalls("b0") == 1);
}

TEST_CASE("Force bind: a failed force bind is logged, counted and retried by a later filter",
          "[server][unit]") {
  Fixture f(/*threshold=*/1);
  json pod = MakePod("c-0", "c0", GangSpec("VC2", 0, "c", 1, 1, "DGX1-P100"));
  // The pod is not in the API server: the binding subresource answers 404.
  const std::vector<std::string>& all = hived::server::testing::DesignNodes();
  std::string node = f.Filter(pod, all);
  CHECK(f.Filter(pod, all) == node);  // attempt 1: force bind, which fails
  f.ext->WaitForceBinds();
  CHECK(f.MetricHas("hived_extender_force_binds_total{outcome=\"failed\"} 1"));
  CHECK(f.MetricHas("hived_extender_api_errors_total{kind=\"force-bind\"} 1"));
  // The pod appears; the next filter force binds it again, successfully.
  f.api.AddPod(pod);
  CHECK(f.Filter(pod, all) == node);
  f.ext->WaitForceBinds();
  CHECK(f.Node(pod) == node);
  CHECK(f.MetricHas("hived_extender_force_binds_total{outcome=\"bound\"} 1"));
  CHECK(f.ext->scheduler().CheckInvariants().ok());
}

namespace {

// A binder that blocks until released, counting calls.
class GateBinder : public hived::server::Binder {
 public:
  absl::Status Bind(const std::string&, const std::string&, const std::string& uid,
                    const std::string&, const std::map<std::string, std::string>&) override {
    std::unique_lock<std::mutex> lock(mu_);
    started_.push_back(uid);
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
    return absl::OkStatus();
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitStarted(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_.size() >= n; });
  }
  std::vector<std::string> started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> started_;
};

}  // namespace

TEST_CASE("Force bind: the queue is bounded and runs its jobs in order", "[server][unit]") {
  GateBinder binder;
  std::mutex mu;
  std::vector<std::string> done;
  ForceBindQueue queue(&binder, /*capacity=*/2,
                       [&](const ForceBindJob& job, const absl::Status& s) {
                         CHECK(s.ok());
                         std::lock_guard<std::mutex> lock(mu);
                         done.push_back(job.uid);
                       });
  CHECK(queue.Push(ForceBindJob{"default", "p1", "u1", "n", {}}));
  binder.WaitStarted(1);  // u1 runs (blocked); two more may wait
  CHECK(queue.Push(ForceBindJob{"default", "p2", "u2", "n", {}}));
  CHECK(queue.Push(ForceBindJob{"default", "p3", "u3", "n", {}}));
  CHECK_FALSE(queue.Push(ForceBindJob{"default", "p4", "u4", "n", {}}));
  binder.Open();
  queue.WaitIdle();
  CHECK(binder.started() == std::vector<std::string>{"u1", "u2", "u3"});
  std::lock_guard<std::mutex> lock(mu);
  CHECK(done == std::vector<std::string>{"u1", "u2", "u3"});
}

TEST_CASE("Force bind: kube-scheduler's bind waits for a force bind under way", "[server][unit]") {
  GateBinder binder;
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  Extender ext(*hived::Scheduler::Create(*spec), hived::server::ExtenderOptions{}, &binder);
  ext.SetReady();
  json pod = MakePod("d-0", "d0", GangSpec("VC2", 0, "d", 1, 1, "DGX1-P100"));
  hived::server::HttpReply r = ext.Filter(FilterArgs(pod, {}));  // no candidates: force bind
  REQUIRE(r.status == 200);
  std::string node = json::parse(r.body)["NodeNames"][0];
  binder.WaitStarted(1);
  std::atomic<int> status{0};
  std::thread bind([&] { status.store(ext.Bind(BindArgs(pod, node)).status); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(status.load() == 0);  // still waiting for the force bind
  binder.Open();
  bind.join();
  CHECK(status.load() == 200);
  CHECK(binder.started() == std::vector<std::string>{"d0"});  // one Kubernetes bind
}
