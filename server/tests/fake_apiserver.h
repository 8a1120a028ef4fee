// server/tests/fake_apiserver.h: a small Kubernetes API server for tests: pods and nodes
// with resource versions, list, watch (newline-delimited JSON events, 410 Gone for a
// compacted history, cut streams on request), the pod `binding` subresource and delete.
// Kubernetes' JSON shapes; no authentication.
//
// Example:
//   FakeApiServer api;
//   int port = api.Start();
//   api.AddNode("1.0.0.0", /*ready=*/true);
//   api.AddPod(pod_json);
//
// Thread safety: every method locks the server's mutex.
#ifndef HIVED_SERVER_TESTS_FAKE_APISERVER_H_
#define HIVED_SERVER_TESTS_FAKE_APISERVER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace hived::server::testing {

class FakeApiServer {
 public:
  FakeApiServer() {
    server_.set_tcp_nodelay(true);
    Routes();
  }
  ~FakeApiServer() { Stop(); }

  // Listens on 127.0.0.1:`port` (0: any free port); the port, or -1.
  int Start(int port = 0) {
    if (port == 0) {
      port_ = server_.bind_to_any_port("127.0.0.1");
    } else {
      port_ = server_.bind_to_port("127.0.0.1", port) ? port : -1;
    }
    if (port_ < 0) return -1;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port_;
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void AddNode(const std::string& name, bool ready) {
    nlohmann::json node = {
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", {{"name", name}}},
        {"spec", nlohmann::json::object()},
        {"status", {{"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
    std::lock_guard<std::mutex> lock(mu_);
    bool existed = nodes_.count(name) > 0;
    Put(&nodes_, name, node, existed ? "MODIFIED" : "ADDED", "nodes");
  }
  void AddPod(nlohmann::json pod) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string uid = pod["metadata"]["uid"];
    Put(&pods_, uid, std::move(pod), "ADDED", "pods");
  }
  // Deletes by uid; false when unknown.
  bool DeletePod(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return false;
    nlohmann::json pod = it->second;
    pods_.erase(it);
    Event("DELETED", "pods", pod);
    return true;
  }
  nlohmann::json Pod(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pods_.find(uid);
    return it == pods_.end() ? nlohmann::json() : it->second;
  }
  std::vector<nlohmann::json> Pods() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<nlohmann::json> out;
    for (const auto& [uid, pod] : pods_) out.push_back(pod);
    return out;
  }
  // Bind calls per pod uid, successful or not.
  int BindCalls(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    return bind_calls_[uid];
  }
  // Bindings applied per pod uid.
  int BindsApplied(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    return binds_applied_[uid];
  }
  // Forgets the event history: every running watch, and a watch from any version seen so
  // far, gets 410 Gone (the client must list again).
  void Compact() {
    std::lock_guard<std::mutex> lock(mu_);
    compacted_ = version_ + 1;
    events_.clear();
    cv_.notify_all();
  }
  int gone_sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return gone_sent_;
  }
  // The next watch stream is cut in the middle of its next event.
  void CutNextWatch() {
    std::lock_guard<std::mutex> lock(mu_);
    cut_next_ = true;
  }
  int watches_started() {
    std::lock_guard<std::mutex> lock(mu_);
    return watches_started_;
  }
  // Called (under the server's lock, so it must not call back) on each binding request of a
  // known pod: before it is applied, with `applied` false (returning false refuses it with
  // 503, as if the request never reached the server), and after, with `applied` true. The
  // crash test kills the extender from here, in the middle of its bind.
  void SetBindHook(std::function<bool(const std::string& uid, bool applied)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    bind_hook_ = std::move(hook);
  }

 private:
  struct Ev {
    int64_t version;
    std::string kind;
    std::string line;
  };

  void Put(std::map<std::string, nlohmann::json>* map, const std::string& key,
           nlohmann::json object, const char* type, const std::string& kind) {
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    (*map)[key] = object;
    events_.push_back(
        Ev{version_, kind, nlohmann::json{{"type", type}, {"object", object}}.dump()});
    cv_.notify_all();
  }
  void Event(const char* type, const std::string& kind, nlohmann::json object) {
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    events_.push_back(
        Ev{version_, kind, nlohmann::json{{"type", type}, {"object", object}}.dump()});
    cv_.notify_all();
  }

  void Routes() {
    for (std::string kind : {"pods", "nodes"}) {
      server_.Get(
          "/api/v1/" + kind, [this, kind](const httplib::Request& req, httplib::Response& res) {
            if (req.get_param_value("watch") == "1" || req.get_param_value("watch") == "true") {
              Watch(kind,
                    std::stoll(req.get_param_value("resourceVersion").empty()
                                   ? "0"
                                   : req.get_param_value("resourceVersion")),
                    res);
              return;
            }
            std::lock_guard<std::mutex> lock(mu_);
            nlohmann::json items = nlohmann::json::array();
            for (const auto& [key, object] : kind == "pods" ? pods_ : nodes_)
              items.push_back(object);
            nlohmann::json list = {{"apiVersion", "v1"},
                                   {"kind", kind == "pods" ? "PodList" : "NodeList"},
                                   {"metadata", {{"resourceVersion", std::to_string(version_)}}},
                                   {"items", items}};
            res.set_content(list.dump(), "application/json");
          });
    }
    // Create and delete, as kubectl does them.
    server_.Post(R"(/api/v1/namespaces/([^/]+)/pods)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   nlohmann::json pod = nlohmann::json::parse(req.body, nullptr, false);
                   if (pod.is_discarded() || !pod.is_object() || !pod["metadata"].is_object() ||
                       !pod["metadata"]["name"].is_string()) {
                     res.status = 400;
                     res.set_content(R"({"kind":"Status","code":400})", "application/json");
                     return;
                   }
                   pod["metadata"]["namespace"] = req.matches[1];
                   if (!pod["metadata"]["uid"].is_string()) {
                     std::lock_guard<std::mutex> lock(mu_);
                     pod["metadata"]["uid"] = "uid-" + std::to_string(version_ + 1);
                   }
                   if (!pod["status"].is_object()) pod["status"] = {{"phase", "Pending"}};
                   AddPod(pod);
                   res.status = 201;
                   res.set_content(Pod(pod["metadata"]["uid"]).dump(), "application/json");
                 });
    server_.Delete(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
                   [this](const httplib::Request& req, httplib::Response& res) {
                     std::string uid;
                     {
                       std::lock_guard<std::mutex> lock(mu_);
                       for (const auto& [u, pod] : pods_) {
                         if (pod["metadata"]["namespace"] == req.matches[1].str() &&
                             pod["metadata"]["name"] == req.matches[2].str()) {
                           uid = u;
                         }
                       }
                     }
                     if (uid.empty() || !DeletePod(uid)) {
                       res.status = 404;
                       res.set_content(R"({"kind":"Status","code":404})", "application/json");
                       return;
                     }
                     res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
                   });
    server_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   Bind(req.matches[1], req.matches[2], req.body, res);
                 });
  }

  void Bind(const std::string& ns, const std::string& name, const std::string& body,
            httplib::Response& res) {
    nlohmann::json binding = nlohmann::json::parse(body, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [uid, pod] : pods_) {
      if (pod["metadata"]["namespace"] != ns || pod["metadata"]["name"] != name) continue;
      ++bind_calls_[uid];
      if (bind_hook_ && !bind_hook_(uid, /*applied=*/false)) {
        res.status = 503;
        res.set_content(R"({"kind":"Status","code":503,"reason":"ServiceUnavailable"})",
                        "application/json");
        return;
      }
      if (binding.is_discarded() || binding["metadata"].value("uid", "") != uid) {
        res.status = 409;
        res.set_content(R"({"kind":"Status","code":409,"reason":"Conflict"})", "application/json");
        return;
      }
      if (!pod["spec"].value("nodeName", "").empty()) {
        res.status = 409;
        res.set_content(R"({"kind":"Status","code":409,"message":"pod is already assigned"})",
                        "application/json");
        return;
      }
      nlohmann::json updated = pod;
      updated["spec"]["nodeName"] = binding["target"]["name"];
      for (auto& [k, v] : binding["metadata"]["annotations"].items()) {
        updated["metadata"]["annotations"][k] = v;
      }
      updated["status"]["phase"] = "Running";
      Put(&pods_, uid, updated, "MODIFIED", "pods");
      ++binds_applied_[uid];
      if (bind_hook_) (void)bind_hook_(uid, /*applied=*/true);
      res.status = 201;
      res.set_content(R"({"kind":"Status","status":"Success","code":201})", "application/json");
      return;
    }
    res.status = 404;
    res.set_content(R"({"kind":"Status","code":404,"reason":"NotFound"})", "application/json");
  }

  void Watch(const std::string& kind, int64_t since, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++watches_started_;
    }
    auto sent = std::make_shared<int64_t>(since);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    res.set_chunked_content_provider("application/json", [this, kind, sent, deadline](
                                                             size_t, httplib::DataSink& sink) {
      std::unique_lock<std::mutex> lock(mu_);
      if (*sent < compacted_) {
        std::string gone =
            nlohmann::json{{"type", "ERROR"},
                           {"object", {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}}}}
                .dump() +
            "\n";
        ++gone_sent_;
        sink.write(gone.data(), gone.size());
        sink.done();
        return true;
      }
      cv_.wait_until(lock, deadline, [&] {
        if (stopping_ || *sent < compacted_) return true;
        for (const Ev& e : events_) {
          if (e.version > *sent && e.kind == kind) return true;
        }
        return false;
      });
      if (*sent < compacted_) return true;  // the next call answers 410
      if (stopping_ || std::chrono::steady_clock::now() >= deadline) {
        sink.done();
        return true;
      }
      for (const Ev& e : events_) {
        if (e.version <= *sent || e.kind != kind) continue;
        *sent = e.version;
        std::string line = e.line + "\n";
        if (cut_next_) {
          cut_next_ = false;
          sink.write(line.data(), line.size() / 2);  // half an object, then the end
          return false;
        }
        if (!sink.write(line.data(), line.size())) return false;
      }
      return true;
    });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t version_ = 100;
  int64_t compacted_ = 0;
  bool cut_next_ = false;
  int watches_started_ = 0;
  int gone_sent_ = 0;
  std::map<std::string, nlohmann::json> pods_;  // by uid
  std::map<std::string, nlohmann::json> nodes_;
  std::map<std::string, int> bind_calls_;
  std::map<std::string, int> binds_applied_;
  std::function<bool(const std::string&, bool)> bind_hook_;
  std::vector<Ev> events_;
};

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_FAKE_APISERVER_H_
