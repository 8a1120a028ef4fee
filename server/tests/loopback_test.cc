// hived-extender end to end over loopback: the HTTP server, the API-server client and a fake
// API server speaking Kubernetes' list, watch and binding. A driver plays kube-scheduler's
// loop (filter → bind; filter → preempt → delete victims → filter → bind); the watch is cut
// mid-object and its history expired (410) on the way; a restart recovers the same state;
// bad requests are refused with the server still serving; /metrics passes promtool.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "httplib.h"
#include "server/extender.h"
#include "server/http_server.h"
#include "server/kube_client.h"
#include "server/tests/fake_apiserver.h"
#include "server/tests/random_gang.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

using hived::server::testing::BindArgs;
using hived::server::testing::FakeApiServer;
using hived::server::testing::FilterArgs;
using hived::server::testing::GangSpec;
using hived::server::testing::GangToDelete;
using hived::server::testing::MakePod;
using hived::server::testing::MakeRandomGang;
using hived::server::testing::PreemptArgs;
using hived::server::testing::RandomGang;
using nlohmann::json;

// One running hived-extender: extender, HTTP server and cluster sync, as main.cc wires them.
class Running {
 public:
  Running(FakeApiServer& api, size_t max_body = size_t{4} << 20)
      : client_(hived::server::KubeConfig{api.Url(), "", "", "", "", false}) {
    auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
    REQUIRE(spec.ok());
    hived::server::ExtenderOptions options;
    options.max_body_bytes = max_body;
    extender_ = std::make_unique<hived::server::Extender>(*hived::Scheduler::Create(*spec), options,
                                                          &client_);
    http_ = std::make_unique<hived::server::HttpServer>(extender_.get());
    port_ = http_->BindToPort("127.0.0.1", 0);
    REQUIRE(port_ > 0);
    serving_ = std::thread([this] { http_->Listen(); });
    sync_ = std::make_unique<hived::server::ClusterSync>(&client_, extender_.get());
    std::atomic<bool> stop{false};
    report = sync_->Recover(stop);
    extender_->SetReady();
    sync_->StartWatching();
  }
  ~Running() {
    sync_->Stop();
    http_->Stop();
    serving_.join();
  }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    c.set_tcp_nodelay(true);
    return c;
  }
  hived::server::Extender& extender() { return *extender_; }
  hived::server::RecoveryReport report;

 private:
  hived::server::KubeClient client_;
  std::unique_ptr<hived::server::Extender> extender_;
  std::unique_ptr<hived::server::HttpServer> http_;
  std::unique_ptr<hived::server::ClusterSync> sync_;
  std::thread serving_;
  int port_ = 0;
};

json Post(httplib::Client& c, const char* path, const std::string& body, int want = 200) {
  auto res = c.Post(path, body, "application/json");
  REQUIRE(res);
  INFO(res->body);
  REQUIRE(res->status == want);
  json out = json::parse(res->body, nullptr, false);
  REQUIRE_FALSE(out.is_discarded());
  return out;
}

json Get(httplib::Client& c, const char* path) {
  auto res = c.Get(path);
  REQUIRE(res);
  REQUIRE(res->status == 200);
  return json::parse(res->body);
}

// Waits (at most 10 s) until `done` holds.
bool WaitFor(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

void AddNodes(FakeApiServer& api) {
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  for (const hived::NodeStatus& n : (*hived::Scheduler::Create(*spec))->Nodes()) {
    api.AddNode(n.name, /*ready=*/true);
  }
}

// kube-scheduler's filter then bind for a pod already in the API server; the node.
std::string Schedule(httplib::Client& c, const json& pod) {
  json f = Post(c, "/v1/extender/filter", FilterArgs(pod));
  REQUIRE(f["NodeNames"].size() == 1);
  std::string node = f["NodeNames"][0];
  Post(c, "/v1/extender/bind", BindArgs(pod, node));
  return node;
}

}  // namespace

TEST_CASE("Loopback: kube-scheduler's loop against the API server, then a restart",
          "[server][scenario]") {
  FakeApiServer api;
  api.Start();
  AddNodes(api);
  std::string inspect_before;
  std::vector<json> low = {MakePod("low-0", "l0", GangSpec("VC2", 0, "low", 2, 8, "DGX1-P100")),
                           MakePod("low-1", "l1", GangSpec("VC2", 0, "low", 2, 8, "DGX1-P100"))};
  json high = MakePod("high-0", "h0", GangSpec("VC2", 100, "high", 1, 8, "DGX1-P100"));
  json opp = MakePod("opp-0", "o0", GangSpec("VC1", -1, "opp", 1, 2, "DGX2-V100"));
  {
    Running server(api);
    httplib::Client c = server.Client();
    REQUIRE(c.Get("/readyz")->status == 200);
    REQUIRE(c.Get("/healthz")->status == 200);
    CHECK(Get(c, "/")["paths"].size() >= 8);
    // filter → bind, through the API server's binding subresource.
    for (const json& pod : low) api.AddPod(pod);
    for (const json& pod : low) Schedule(c, pod);
    for (const json& pod : low) {
      std::string uid = pod["metadata"]["uid"];
      json stored = api.Pod(uid);
      CHECK_FALSE(stored["spec"].value("nodeName", "").empty());
      CHECK(
          stored["metadata"]["annotations"].contains("hivedscheduler.microsoft.com/pod-bind-info"));
      CHECK(api.BindCalls(uid) == 1);
    }
    api.AddPod(opp);
    Schedule(c, opp);
    // filter → preempt → delete victims → filter → bind.
    api.AddPod(high);
    json f = Post(c, "/v1/extender/filter", FilterArgs(high));
    CHECK(f["NodeNames"].empty());
    json victims = Post(c, "/v1/extender/preempt", PreemptArgs(high))["NodeNameToMetaVictims"];
    std::vector<std::string> uids;
    for (auto& [node, v] : victims.items()) {
      for (const json& p : v["Pods"]) uids.push_back(p["UID"]);
    }
    std::sort(uids.begin(), uids.end());
    REQUIRE(uids == std::vector<std::string>{"l0", "l1"});
    // The first deletion arrives on a watch cut mid-object, the second after the watch
    // history expired (410 Gone: re-list).
    int watches = api.watches_started();
    api.CutNextWatch();
    api.DeletePod("l0");
    REQUIRE(WaitFor([&] { return api.watches_started() > watches; }));
    api.Compact();
    api.DeletePod("l1");
    REQUIRE(WaitFor([&] {
      return server.extender().scheduler().GetGroup("low").state == hived::GroupState::kAbsent;
    }));
    INFO("watches " << api.watches_started() << " before " << watches);
    CHECK(api.gone_sent() >= 1);
    std::string node = Schedule(c, high);
    CHECK(api.Pod("h0")["spec"]["nodeName"] == node);
    inspect_before =
        Get(c, "/v1/inspect/clusterstatus").dump() + Get(c, "/v1/inspect/affinitygroups/").dump();
    CHECK(server.extender().scheduler().CheckInvariants().ok());
  }
  // A restart: recovery from the pods' bind info gives the same state.
  Running again(api);
  CHECK(again.report.pods_recovered == 2);
  CHECK(again.report.problems.empty());
  httplib::Client c = again.Client();
  CHECK(Get(c, "/v1/inspect/clusterstatus").dump() + Get(c, "/v1/inspect/affinitygroups/").dump() ==
        inspect_before);
  // No pod was bound twice: a filter of a bound pod insists on its node, and a second bind
  // of it is answered as done without a second Kubernetes bind.
  json f = Post(c, "/v1/extender/filter", FilterArgs(high));
  CHECK(f["NodeNames"][0] == api.Pod("h0")["spec"]["nodeName"]);
  Post(c, "/v1/extender/bind", BindArgs(high, f["NodeNames"][0]), 200);
  CHECK(api.BindCalls("h0") == 1);
  // Node readiness from the watch becomes node health.
  std::string bad = api.Pod("o0")["spec"]["nodeName"];
  api.AddNode(bad, /*ready=*/false);
  REQUIRE(WaitFor([&] {
    for (const hived::NodeStatus& n : again.extender().scheduler().Nodes()) {
      if (n.name == bad) return !n.healthy;
    }
    return false;
  }));
}

TEST_CASE("Loopback: refused requests leave the server serving", "[server][scenario]") {
  FakeApiServer api;
  api.Start();
  AddNodes(api);
  Running server(api, /*max_body=*/64 * 1024);
  httplib::Client c = server.Client();
  json bound = MakePod("ok-0", "ok0", GangSpec("VC2", 0, "ok", 1, 4, "DGX1-P100"));
  api.AddPod(bound);
  std::string bound_node = Schedule(c, bound);
  auto state = [&] {
    return Get(c, "/v1/inspect/clusterstatus").dump() +
           Get(c, "/v1/inspect/affinitygroups/").dump();
  };
  const std::string before = state();
  // Each bad request: its status and a clear message, with HiveD's prefix for user errors.
  auto refused = [&](const char* path, const std::string& body, int status, const char* says) {
    auto res = c.Post(path, body, "application/json");
    REQUIRE(res);
    INFO(path << " " << body.substr(0, 80) << " -> " << res->status << " " << res->body);
    CHECK(res->status == status);
    CHECK(res->body.find(says) != std::string::npos);
    if (status == 400) CHECK(res->body.find("hivedscheduler: User Error: ") != std::string::npos);
  };
  std::string big(100 * 1024, 'x');
  for (const char* path : {"/v1/extender/filter", "/v1/extender/preempt", "/v1/extender/bind"}) {
    // A body over the limit; malformed JSON (cut mid-object); JSON that is not an object.
    refused(path, big, 413, "request body larger than 65536 bytes");
    refused(path, "{\"Pod\": {\"metadata\": ", 400, "not a JSON");
    refused(path, "[1, 2]", 400, "not a JSON");
  }
  // An unknown VC; a spec breaking HiveD's rules; a pod that does not opt in.
  json vc = MakePod("vc-0", "vc0", GangSpec("NOPE", 0, "vc", 1, 1));
  refused("/v1/extender/filter", FilterArgs(vc), 400, "NOPE");
  refused("/v1/extender/preempt", PreemptArgs(vc), 400, "NOPE");
  json rule = MakePod("r-0", "r0", "virtualCluster: VC2\npriority: 1001\nleafCellNumber: 1\n");
  refused("/v1/extender/filter", FilterArgs(rule), 400, "Priority is greater than 1000");
  json members = MakePod("m-0", "m0",
                         "virtualCluster: VC2\nleafCellNumber: 2\naffinityGroup:\n  name: m\n"
                         "  members:\n  - podNumber: 1\n    leafCellNumber: 1\n");
  refused("/v1/extender/filter", FilterArgs(members), 400, "does not contains current Pod");
  json off = MakePod("off-0", "off0", GangSpec("VC2", 0, "off", 1, 1), /*opt_in=*/false);
  refused("/v1/extender/filter", FilterArgs(off), 400, "pod-scheduling-enable");
  // A bind for a pod never filtered; a bind to another node than decided; missing fields.
  json never = MakePod("never-0", "never0", GangSpec("VC2", 0, "never", 1, 1));
  api.AddPod(never);
  refused("/v1/extender/bind", BindArgs(never, "1.0.0.0"), 400, "never filtered");
  std::string other = bound_node == "1.0.0.0" ? "1.0.0.1" : "1.0.0.0";
  refused("/v1/extender/bind", BindArgs(bound, other), 400, "is decided to node");
  refused("/v1/extender/bind", R"({"PodName": "x"})", 400, "needs PodName");
  auto res = c.Get("/v1/nothing");
  REQUIRE(res);
  CHECK(res->status == 404);
  CHECK(res->body.find("no such route") != std::string::npos);
  // Nothing changed, nothing was bound, and the server still serves.
  CHECK(state() == before);
  CHECK(api.BindCalls("never0") == 0);
  CHECK(api.Pod("ok0")["spec"]["nodeName"] == bound_node);
  REQUIRE(c.Get("/healthz")->status == 200);
  json pod = MakePod("a-0", "a0", GangSpec("VC2", 0, "a", 1, 1));
  api.AddPod(pod);
  Schedule(c, pod);
  CHECK(server.extender().scheduler().CheckInvariants().ok());
}

TEST_CASE("Loopback: a watch stream cut mid-object is retried and loses no event",
          "[server][scenario]") {
  FakeApiServer api;
  api.Start();
  AddNodes(api);
  Running server(api);
  httplib::Client c = server.Client();
  std::vector<json> pods;
  for (int i = 0; i < 3; ++i) {
    pods.push_back(MakePod("w-" + std::to_string(i), "w" + std::to_string(i),
                           GangSpec("VC2", 0, "w" + std::to_string(i), 1, 1)));
    api.AddPod(pods.back());
    Schedule(c, pods.back());
  }
  // Each deletion's event is cut in the middle of its object: the watch is retried from the
  // last whole event and the deletion still arrives.
  for (const json& pod : pods) {
    int watches = api.watches_started();
    api.CutNextWatch();
    api.DeletePod(pod["metadata"]["uid"]);
    REQUIRE(WaitFor([&] { return api.watches_started() > watches; }));
  }
  REQUIRE(WaitFor([&] { return server.extender().scheduler().Groups().empty(); }));
  CHECK(server.extender().Metrics().find("hived_extender_api_errors_total{kind=\"watch-pods\"}") !=
        std::string::npos);
  CHECK(server.extender().scheduler().CheckInvariants().ok());
}

TEST_CASE("Loopback: /metrics passes promtool check metrics", "[server][scenario]") {
  const char* promtool = "/usr/bin/promtool";
  if (!std::ifstream(promtool).good()) {
    HIVED_SKIP_TEST("promtool not installed (Debian package prometheus)");
  }
  FakeApiServer api;
  api.Start();
  AddNodes(api);
  Running server(api);
  httplib::Client c = server.Client();
  json pod = MakePod("a-0", "a0", GangSpec("VC2", 0, "a", 1, 1));
  api.AddPod(pod);
  Schedule(c, pod);
  (void)c.Post("/v1/extender/filter", "nope", "application/json");
  auto res = c.Get("/metrics");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const std::string& text = res->body;
  CHECK(text.find("hived_extender_decisions_total{route=\"filter\",outcome=\"bind\"} 1") !=
        std::string::npos);
  CHECK(text.find("hived_extender_decision_seconds_bucket{route=\"bind\",le=\"+Inf\"} 1") !=
        std::string::npos);
  CHECK(text.find("hived_vc_leaf_cells{vc=\"VC2\"") != std::string::npos);
  std::string path = "/tmp/hived-extender-metrics-" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << text;
  std::string command = std::string(promtool) + " check metrics < " + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  int rc = pclose(pipe);
  std::remove(path.c_str());
  INFO(output);
  CHECK(rc == 0);
  CHECK(output.empty());
}

namespace {

// kube-scheduler's loop for many gangs with restarts of the extender at chosen steps. The
// driver's next action depends only on the answers, so two runs with the same seed take the
// same actions exactly when the extender's decisions are the same.
class Driver {
 public:
  Driver(FakeApiServer& api, uint32_t seed) : api_(api), rng_(seed) {
    server_ = std::make_unique<Running>(api_);
  }

  // Runs until `pods` pods were submitted; restarts the extender before the steps listed.
  void Run(int pods, const std::set<int>& restart_at) {
    int step = 0;
    while (submitted_ < pods) {
      if (restart_at.count(step) > 0) Restart();
      ++step;
      if (std::optional<std::string> gone = GangToDelete(rng_, active_)) {
        DeleteGang(*gone);
        continue;
      }
      SubmitGang(step);
    }
  }

  std::string Inspect() {
    httplib::Client c = server_->Client();
    return Get(c, "/v1/inspect/affinitygroups/").dump() +
           Get(c, "/v1/inspect/clusterstatus").dump();
  }
  int restarts() const { return restarts_; }
  int recovered() const { return recovered_; }
  int preemptions() const { return preemptions_; }
  // Every answer of filter and preempt, and the restarts, in order.
  const std::vector<std::string>& trace() const { return trace_; }
  const std::map<std::string, std::vector<std::string>>& active() const { return active_; }

 private:
  void Restart() {
    trace_.push_back("restart");
    server_.reset();  // like kill -9: the extender keeps nothing but what the API server has
    server_ = std::make_unique<Running>(api_);
    CHECK(server_->report.problems.empty());
    recovered_ += server_->report.pods_recovered;
    ++restarts_;
  }

  hived::GroupState State(const std::string& group) {
    return server_->extender().scheduler().GetGroup(group).state;
  }

  void DeleteGang(std::string group) {  // by value: `group` may be a key of active_
    for (const std::string& uid : active_.at(group)) api_.DeletePod(uid);
    active_.erase(group);
    REQUIRE(WaitFor([&] { return State(group) == hived::GroupState::kAbsent; }));
  }

  void SubmitGang(int step) {
    RandomGang gang = MakeRandomGang(rng_, step);
    const std::string group = gang.group;
    const std::vector<json>& pods = gang.pods;
    for (const json& pod : pods) api_.AddPod(pod);
    submitted_ += static_cast<int>(pods.size());
    httplib::Client c = server_->Client();
    json f = Post(c, "/v1/extender/filter", FilterArgs(pods[0]));
    trace_.push_back(group + " filter " + f.dump());
    if (f["NodeNames"].empty() && !f["FailedNodes"].contains("hivedscheduler")) {
      // Victims: preempt, delete them, then filter again.
      json victims = Post(c, "/v1/extender/preempt", PreemptArgs(pods[0]))["NodeNameToMetaVictims"];
      std::set<std::string> groups;
      for (auto& [node, v] : victims.items()) {
        for (const json& p : v["Pods"]) {
          for (const auto& [g, uids] : active_) {
            if (std::find(uids.begin(), uids.end(), p["UID"]) != uids.end()) groups.insert(g);
          }
        }
      }
      ++preemptions_;
      trace_.push_back(group + " preempt " + victims.dump());
      for (const std::string& g : groups) DeleteGang(g);
      f = Post(c, "/v1/extender/filter", FilterArgs(pods[0]));
    }
    if (f["NodeNames"].empty()) {  // waits: the job gives up
      for (const json& p : pods) api_.DeletePod(p["metadata"]["uid"]);
      if (State(group) == hived::GroupState::kPreempting) {
        REQUIRE(WaitFor([&] { return State(group) == hived::GroupState::kAbsent; }));
      }
      return;
    }
    Post(c, "/v1/extender/bind", BindArgs(pods[0], f["NodeNames"][0]));
    for (size_t i = 1; i < pods.size(); ++i) Schedule(c, pods[i]);
    for (const json& p : pods) active_[group].push_back(p["metadata"]["uid"]);
  }

  FakeApiServer& api_;
  std::mt19937 rng_;
  std::unique_ptr<Running> server_;
  std::map<std::string, std::vector<std::string>> active_;  // running gangs -> pod uids
  int submitted_ = 0;
  int restarts_ = 0;
  int recovered_ = 0;
  int preemptions_ = 0;
  std::vector<std::string> trace_;
};

}  // namespace

TEST_CASE("Loopback: 1,000 pods of mixed gangs with restarts end as without restarts",
          "[server][scenario]") {
  const uint32_t seed = 7;
  FakeApiServer crashed_api;
  crashed_api.Start();
  AddNodes(crashed_api);
  Driver crashed(crashed_api, seed);
  std::mt19937 pick(seed);
  std::set<int> restarts;
  while (restarts.size() < 8) restarts.insert(1 + static_cast<int>(pick() % 600));
  crashed.Run(1000, restarts);

  FakeApiServer whole_api;
  whole_api.Start();
  AddNodes(whole_api);
  Driver whole(whole_api, seed);
  whole.Run(1000, {});

  CHECK(crashed.restarts() >= 1);
  CHECK(crashed.recovered() > 0);
  CHECK(crashed.preemptions() > 0);
  // The same answers in the same order (restarts aside), and the same state at the end.
  std::vector<std::string> answers;
  for (const std::string& t : crashed.trace()) {
    if (t != "restart") answers.push_back(t);
  }
  CHECK(answers == whole.trace());
  CHECK(crashed.Inspect() == whole.Inspect());
  // No pod bound twice, none lost: every pod of a running gang is bound once.
  for (const auto& [group, uids] : crashed.active()) {
    for (const std::string& uid : uids) {
      CHECK(crashed_api.BindCalls(uid) == 1);
      CHECK_FALSE(crashed_api.Pod(uid)["spec"].value("nodeName", "").empty());
    }
  }
}
