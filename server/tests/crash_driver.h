// server/tests/crash_driver.h: the driver of crash_test.cc (see there for what it checks):
// kube-scheduler's loop against a `hived-extender` process that it kills with SIGKILL at
// seeded points (`KillPoint`) and starts again, over a fake API server in this process.
#ifndef HIVED_SERVER_TESTS_CRASH_DRIVER_H_
#define HIVED_SERVER_TESTS_CRASH_DRIVER_H_

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
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
#include "server/tests/extender_process.h"
#include "server/tests/fake_apiserver.h"
#include "server/tests/random_gang.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"
#include "yaml-cpp/yaml.h"

namespace hived::server::testing {

using nlohmann::json;

// Where a kill lands. Bind kills wait for the next bind request.
enum class KillPoint { kBeforeRequest, kInFlight, kBindBeforeApply, kBindAfterApply };

struct Reply {
  int status = 0;
  json body;
};

inline std::string MakeWorkDir() {
  std::string pattern = "/tmp/hived-crash-XXXXXX";
  char* dir = mkdtemp(pattern.data());
  REQUIRE(dir != nullptr);
  return dir;
}

class ProcessDriver {
 public:
  // `kills`: request ordinal -> where the kill lands. `seed` drives the workload only.
  ProcessDriver(uint32_t seed, std::map<int, KillPoint> kills)
      : rng_(seed), kill_rng_(seed ^ 0x9e3779b9u), kills_(std::move(kills)) {
    api_.Start();
    nodes_ = hived::server::testing::DesignNodes();
    REQUIRE_FALSE(nodes_.empty());
    for (const std::string& n : nodes_) api_.AddNode(n, /*ready=*/true);
    api_.SetBindHook([this](const std::string&, bool applied) {
      int armed = armed_bind_kill_.load();
      if (armed == 1 && !applied) {
        armed_bind_kill_.store(0);
        ext_->KillNoWait();
        return false;
      }
      if (armed == 2 && applied) {
        armed_bind_kill_.store(0);
        ext_->KillNoWait();
      }
      return true;
    });
    work_ = MakeWorkDir();
    ext_ = std::make_unique<ExtenderProcess>(
        HIVED_EXTENDER_BINARY, hived::server::testing::DesignConfig(), api_.Url(), work_);
    Restart();
  }
  ~ProcessDriver() {
    api_.SetBindHook(nullptr);
    ext_.reset();
    std::string command = "rm -rf '" + work_ + "'";
    (void)std::system(command.c_str());
  }

  void Run(int pods) {
    int step = 0;
    while (submitted_ < pods) {
      ++step;
      if (std::optional<std::string> gone = GangToDelete(rng_, active_)) {
        DeleteGang(*gone);
        continue;
      }
      SubmitGang(step);
    }
  }

  std::string Inspect() {
    return Get("/v1/inspect/affinitygroups/").body.dump() +
           Get("/v1/inspect/clusterstatus").body.dump();
  }
  int kills() const { return kills_done_; }
  int kills_in_recovery() const { return kills_in_recovery_; }
  int recoveries_checked() const { return recoveries_checked_; }
  int divergence() const { return divergence_; }
  int requests() const { return requests_; }
  int preemptions() const { return preemptions_; }
  const std::map<KillPoint, int>& kills_by_point() const { return kills_by_point_; }
  // The decisions in order, per gang: its nodes (sorted), its preemption's victim groups, or
  // that it waited.
  const std::vector<std::string>& decisions() const { return decisions_; }
  // Each kill: where it landed, on which route, before which decision.
  const std::vector<std::string>& kill_log() const { return kill_log_; }

  // No pod bound twice, none lost: the API server's bound pods are exactly the running
  // gangs' pods, each bound once, its bind info naming its node, its group in the extender
  // holding it on that node.
  void CheckBindings() {
    std::set<std::string> running;
    for (const auto& [group, uids] : active_) running.insert(uids.begin(), uids.end());
    json groups = Get("/v1/inspect/affinitygroups/").body["items"];
    std::map<std::string, json> by_name;
    for (const json& g : groups) by_name[g["metadata"]["name"]] = g["status"];
    CHECK(by_name.size() == active_.size());
    for (const json& pod : api_.Pods()) {
      std::string uid = pod["metadata"]["uid"];
      std::string node = pod["spec"].value("nodeName", "");
      INFO("pod " << uid << " on " << node);
      CHECK(running.count(uid) == (node.empty() ? 0u : 1u));
      if (node.empty()) continue;
      CHECK(api_.BindsApplied(uid) == 1);
      std::string info =
          pod["metadata"]["annotations"].value("hivedscheduler.microsoft.com/pod-bind-info", "");
      YAML::Node root = YAML::Load(info);
      CHECK(root["node"].as<std::string>("") == node);
      std::string group = uid.substr(4, uid.rfind('-') - 4);  // "uid-<group>-<i>"
      REQUIRE(by_name.count(group) == 1);
      const json& status = by_name[group];
      CHECK(status["physicalPlacement"].contains(node));
      const json& allocated = status["allocatedPods"];
      CHECK(std::find(allocated.begin(), allocated.end(), json(uid)) != allocated.end());
    }
    for (const std::string& uid : running) CHECK_FALSE(api_.Pod(uid).is_null());
  }

 private:
  void Restart() {
    // Every fourth restart is killed once more while it recovers (before /readyz).
    if (kills_done_ % 4 == 3) {
      std::string error = ext_->Start(/*kill_when_listening=*/true);
      INFO(error);
      REQUIRE(error.empty());
      ++kills_in_recovery_;
    }
    std::string error = ext_->Start();
    INFO(error);
    REQUIRE(error.empty());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", ext_->port());
    client_->set_read_timeout(10, 0);
    client_->set_tcp_nodelay(true);
    if (ext_->starts() > 1) CheckRecovered();
  }

  // Nothing lost at the kill: the restarted process holds exactly what the API server
  // holds, as an extender recovering from the same pods in this process does.
  void CheckRecovered() {
    auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
    REQUIRE(spec.ok());
    hived::server::Extender reference(*hived::Scheduler::Create(*spec),
                                      hived::server::ExtenderOptions{}, nullptr);
    hived::server::RecoveryReport report = reference.Recover(api_.Pods());
    CHECK(report.problems.empty());
    reference.SetReady();
    std::string expected = reference.Inspect("/v1/inspect/affinitygroups/").body +
                           reference.Inspect("/v1/inspect/clusterstatus").body;
    CHECK(Inspect() == expected);
    ++recoveries_checked_;
  }

  Reply Get(const std::string& path) {
    auto res = client_->Get(path.c_str());
    REQUIRE(res);
    Reply r{res->status, json::parse(res->body, nullptr, false)};
    REQUIRE_FALSE(r.body.is_discarded());
    return r;
  }

  // One extender call, with the kill planned for it; nullopt when it failed (the extender
  // is running again when this returns).
  std::optional<Reply> Call(const std::string& route, const std::string& body) {
    int n = requests_++;
    const bool bind = route == "bind";
    std::optional<KillPoint> kill;
    if (auto it = kills_.find(n); it != kills_.end()) kill = it->second;
    if (kill && (*kill == KillPoint::kBindBeforeApply || *kill == KillPoint::kBindAfterApply)) {
      pending_bind_kill_ = kill;
      kill.reset();
    }
    // An in-flight kill lands on filter or preempt, whose effects are in memory only, so
    // whether the extender handled the request before dying changes nothing: the run stays
    // reproducible. (Mid-bind is the two bind points, on either side of the binding.)
    if (kill == KillPoint::kInFlight && bind) {
      pending_in_flight_kill_ = true;
      kill.reset();
    }
    if (!bind && !kill && pending_in_flight_kill_) kill = KillPoint::kInFlight;
    if (kill == KillPoint::kInFlight) pending_in_flight_kill_ = false;
    if (bind && pending_bind_kill_) {
      kill = pending_bind_kill_;
      pending_bind_kill_.reset();
      armed_bind_kill_.store(*kill == KillPoint::kBindBeforeApply ? 1 : 2);
    }
    if (kill && preemption_window_ && !reservation_lost_) {
      // The reservation about to be lost, unless this kill does not fire.
      lost_reservation_ = SortedPlacement(window_group_);
    }
    std::string path = "/v1/extender/" + route;
    httplib::Result res{nullptr, httplib::Error::Unknown};
    if (kill == KillPoint::kBeforeRequest) {
      ext_->Kill();
      res = client_->Post(path.c_str(), body, "application/json");
    } else if (kill == KillPoint::kInFlight) {
      auto delay = std::chrono::microseconds(kill_rng_() % 1500);
      std::thread post([&] { res = client_->Post(path.c_str(), body, "application/json"); });
      std::this_thread::sleep_for(delay);
      ext_->KillNoWait();
      post.join();
      // Whether the answer got out before the kill is timing: taken as lost, as when the
      // connection breaks first, so the run does not depend on it.
      res = httplib::Result{nullptr, httplib::Error::Connection};
    } else {
      res = client_->Post(path.c_str(), body, "application/json");
    }
    if (kill && armed_bind_kill_.exchange(0) != 0) {
      // The extender answered without calling the API server: the kill waits for the next
      // bind.
      pending_bind_kill_ = kill;
      kill.reset();
    }
    if (kill && preemption_window_) reservation_lost_ = true;
    if (kill) {
      kill_log_.push_back("kill " + std::to_string(static_cast<int>(*kill)) + " at " + route +
                          " (request " + std::to_string(n) + ", before decision " +
                          std::to_string(decisions_.size()) + ")");
      ++kills_by_point_[*kill];
      ++kills_done_;
      Restart();
    }
    if (!res) {
      REQUIRE(kill.has_value());  // only a kill makes a request fail
      return std::nullopt;
    }
    Reply r{res->status, json::parse(res->body, nullptr, false)};
    INFO(route << " answered " << res->status << ": " << res->body);
    REQUIRE_FALSE(r.body.is_discarded());
    return r;
  }

  std::string NodeOf(const std::string& uid) {
    json pod = api_.Pod(uid);
    return pod.is_null() ? "" : pod["spec"].value("nodeName", "");
  }

  void WaitAbsent(const std::string& group) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Get("/v1/inspect/affinitygroups/" + group).status == 200) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void DeleteGang(std::string group) {  // by value: `group` may be a key of active_
    for (const std::string& uid : active_.at(group)) api_.DeletePod(uid);
    active_.erase(group);
    WaitAbsent(group);
  }

  // kube-scheduler's cycle for one pod until it is bound (its node) or waits ("").
  std::string SchedulePod(const std::string& group, const json& pod, bool may_preempt) {
    const std::string uid = pod["metadata"]["uid"];
    const std::string args = json{{"Pod", pod}, {"NodeNames", nodes_}}.dump();
    bool preempted = false;
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::optional<Reply> f = Call("filter", args);
      if (!f) continue;
      REQUIRE(f->status == 200);
      if (!f->body["NodeNames"].empty()) {
        std::string node = f->body["NodeNames"][0];
        std::optional<Reply> b = Call("bind", BindArgs(pod, node));
        if (b && b->status == 200) {
          preemption_window_ = false;
          return node;
        }
        // A failed bind: kube-scheduler forgets the pod's assumption and schedules it again,
        // unless the pod is bound (the API server applied it before the extender died).
        if (std::string bound = NodeOf(uid); !bound.empty()) {
          preemption_window_ = false;
          return bound;
        }
        continue;
      }
      if (preempted || !may_preempt || f->body["FailedNodes"].contains("hivedscheduler")) {
        preemption_window_ = false;
        return "";
      }
      std::optional<Reply> p =
          Call("preempt", json{{"Pod", pod}, {"NodeNameToMetaVictims", json::object()}}.dump());
      if (!p) continue;
      REQUIRE(p->status == 200);
      json victims = p->body["NodeNameToMetaVictims"];
      std::set<std::string> groups;
      for (auto& [node, v] : victims.items()) {
        for (const json& victim : v["Pods"]) {
          for (const auto& [g, uids] : active_) {
            if (std::find(uids.begin(), uids.end(), victim["UID"]) != uids.end()) groups.insert(g);
          }
        }
      }
      ++preemptions_;
      preemption_window_ = true;
      window_group_ = group;
      std::string victim_groups;
      for (const std::string& g : groups) victim_groups += " " + g;
      decisions_.push_back(window_group_ + " preempts" + victim_groups);
      for (const std::string& g : groups) DeleteGang(g);
      preempted = true;
    }
    FAIL("pod " << uid << " was neither bound nor told to wait in 20 cycles");
    return "";
  }

  void SubmitGang(int step) {
    RandomGang gang = MakeRandomGang(rng_, step);
    const std::string group = gang.group;
    const std::vector<json>& pods = gang.pods;
    for (const json& pod : pods) api_.AddPod(pod);
    submitted_ += static_cast<int>(pods.size());
    for (size_t i = 0; i < pods.size(); ++i) {
      std::string node = SchedulePod(group, pods[i], /*may_preempt=*/i == 0);
      if (node.empty()) {  // the job gives up
        REQUIRE(i == 0);
        Decided(group, group + " waits");
        for (const json& p : pods) api_.DeletePod(p["metadata"]["uid"]);
        WaitAbsent(group);
        return;
      }
    }
    std::vector<std::string> nodes;
    for (const json& p : pods) {
      active_[group].push_back(p["metadata"]["uid"]);
      nodes.push_back(NodeOf(p["metadata"]["uid"]));
    }
    std::sort(nodes.begin(), nodes.end());
    std::string on;
    for (const std::string& node : nodes) on += " " + node;
    Decided(group, group + " on" + on);
  }

  // A group's cells as inspect shows them (node -> sorted leaf indices); "" when absent.
  std::string SortedPlacement(const std::string& group) {
    Reply r = Get("/v1/inspect/affinitygroups/" + group);
    if (r.status != 200) return "";
    json placement = r.body["status"]["physicalPlacement"];
    for (auto& [node, leaves] : placement.items()) std::sort(leaves.begin(), leaves.end());
    return placement.dump();
  }

  // Records a gang's decision. A preemptor decided again after a kill lost its reservation
  // marks the first divergence when it did not land on the reserved cells.
  void Decided(const std::string& group, const std::string& decision) {
    if (reservation_lost_ && group == window_group_ && divergence_ < 0 &&
        SortedPlacement(group) != lost_reservation_) {
      divergence_ = static_cast<int>(decisions_.size());
    }
    if (group == window_group_) reservation_lost_ = false;
    decisions_.push_back(decision);
  }

  FakeApiServer api_;
  std::mt19937 rng_;
  std::mt19937 kill_rng_;
  std::map<int, KillPoint> kills_;
  std::vector<std::string> nodes_;
  std::string work_;
  std::unique_ptr<ExtenderProcess> ext_;
  std::unique_ptr<httplib::Client> client_;
  std::optional<KillPoint> pending_bind_kill_;
  bool pending_in_flight_kill_ = false;
  std::atomic<int> armed_bind_kill_{0};  // 1: kill before the binding applies, 2: after
  std::map<std::string, std::vector<std::string>> active_;  // running gangs -> pod uids
  int submitted_ = 0;
  int requests_ = 0;
  int kills_done_ = 0;
  int kills_in_recovery_ = 0;
  int recoveries_checked_ = 0;
  // A preemptor's reservation is held (in memory only) from its preempt answer until its
  // first pod is bound; a kill in that window makes the restarted extender decide the
  // preemptor afresh. The first decision after the first such kill, or -1.
  bool preemption_window_ = false;
  std::string window_group_;       // the preemptor of the window
  bool reservation_lost_ = false;  // a kill in the window fired
  std::string lost_reservation_;   // the preemptor's cells before that kill
  int divergence_ = -1;
  int preemptions_ = 0;
  std::map<KillPoint, int> kills_by_point_;
  std::vector<std::string> decisions_;
  std::vector<std::string> kill_log_;
};

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_CRASH_DRIVER_H_
