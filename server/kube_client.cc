// The extender's Kubernetes API client: list, watch, bind.
#include "server/kube_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "yaml-cpp/yaml.h"

namespace hived::server {
namespace {

using nlohmann::json;

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// A kubeconfig's "*-data" field (base64) written to a private file, since the HTTP client
// reads certificates from files.
absl::StatusOr<std::string> DataToFile(const std::string& base64, const std::string& what) {
  std::string bytes;
  if (!absl::Base64Unescape(base64, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", what, " is not base64"));
  }
  std::string path = absl::StrCat("/tmp/hived-extender-", what, "-", getpid(), ".pem");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return path;
}

absl::StatusOr<KubeConfig> FromKubeconfig(const std::string& path) {
  KubeConfig config;
  try {
    YAML::Node root = YAML::LoadFile(path);
    std::string current = root["current-context"].as<std::string>("");
    std::string cluster_name;
    std::string user_name;
    for (const YAML::Node& c : root["contexts"]) {
      if (c["name"].as<std::string>("") == current || current.empty()) {
        cluster_name = c["context"]["cluster"].as<std::string>("");
        user_name = c["context"]["user"].as<std::string>("");
        break;
      }
    }
    for (const YAML::Node& c : root["clusters"]) {
      if (c["name"].as<std::string>("") != cluster_name) continue;
      YAML::Node cluster = c["cluster"];
      config.server = cluster["server"].as<std::string>("");
      config.ca_file = cluster["certificate-authority"].as<std::string>("");
      config.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>(false);
      if (std::string data = cluster["certificate-authority-data"].as<std::string>("");
          !data.empty()) {
        absl::StatusOr<std::string> file = DataToFile(data, "ca");
        if (!file.ok()) return file.status();
        config.ca_file = *file;
      }
    }
    for (const YAML::Node& u : root["users"]) {
      if (u["name"].as<std::string>("") != user_name) continue;
      YAML::Node user = u["user"];
      config.token = user["token"].as<std::string>("");
      if (std::string file = user["tokenFile"].as<std::string>(""); !file.empty()) {
        if (!ReadFile(file, &config.token)) {
          return absl::InvalidArgumentError(absl::StrCat("kubeconfig: cannot read ", file));
        }
      }
      config.client_cert_file = user["client-certificate"].as<std::string>("");
      config.client_key_file = user["client-key"].as<std::string>("");
      if (std::string data = user["client-certificate-data"].as<std::string>(""); !data.empty()) {
        absl::StatusOr<std::string> file = DataToFile(data, "cert");
        if (!file.ok()) return file.status();
        config.client_cert_file = *file;
      }
      if (std::string data = user["client-key-data"].as<std::string>(""); !data.empty()) {
        absl::StatusOr<std::string> file = DataToFile(data, "key");
        if (!file.ok()) return file.status();
        config.client_key_file = *file;
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", path, ": ", e.what()));
  }
  if (config.server.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", path, ": the current context names no cluster server"));
  }
  while (!config.token.empty() && (config.token.back() == '\n' || config.token.back() == ' ')) {
    config.token.pop_back();
  }
  return config;
}

std::unique_ptr<httplib::Client> MakeClient(const KubeConfig& c) {
  std::unique_ptr<httplib::Client> client;
  if (!c.client_cert_file.empty()) {
    client = std::make_unique<httplib::Client>(c.server, c.client_cert_file, c.client_key_file);
  } else {
    client = std::make_unique<httplib::Client>(c.server);
  }
  if (!c.token.empty()) client->set_bearer_token_auth(c.token.c_str());
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  if (!c.ca_file.empty()) client->set_ca_cert_path(c.ca_file.c_str());
  client->enable_server_certificate_verification(!c.insecure_skip_tls_verify);
#endif
  client->set_tcp_nodelay(true);
  client->set_connection_timeout(5, 0);
  client->set_read_timeout(60, 0);
  client->set_write_timeout(10, 0);
  return client;
}

// Typed reads that never throw: a value of another type reads as the fallback (the API
// server's JSON is not trusted to be well-formed).
std::string Str(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string NameOf(const json& object) {
  auto meta = object.is_object() ? object.find("metadata") : object.end();
  return object.is_object() && meta != object.end() ? Str(*meta, "name") : "";
}

std::string ResourceVersionOf(const json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<KubeConfig> ResolveKubeConfig(const std::string& api_server_address,
                                             const std::string& kubeconfig_path) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (api_server_address.empty() && host != nullptr && port != nullptr) {
    KubeConfig config;
    std::string h = host;
    if (h.find(':') != std::string::npos) h = absl::StrCat("[", h, "]");
    config.server = absl::StrCat("https://", h, ":", port);
    if (!ReadFile(absl::StrCat(kServiceAccountDir, "/token"), &config.token)) {
      return absl::InvalidArgumentError("in-cluster: cannot read the service account token");
    }
    config.ca_file = absl::StrCat(kServiceAccountDir, "/ca.crt");
    return config;
  }
  if (!api_server_address.empty()) {
    KubeConfig config;
    config.server = api_server_address;
    if (!kubeconfig_path.empty()) {
      // The address wins; credentials may still come from the kubeconfig.
      absl::StatusOr<KubeConfig> file = FromKubeconfig(kubeconfig_path);
      if (file.ok()) {
        file->server = api_server_address;
        return file;
      }
    }
    return config;
  }
  std::string path = kubeconfig_path;
  if (path.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) path = env;
  }
  if (path.empty()) {
    if (const char* home = std::getenv("HOME"); home != nullptr) {
      std::string candidate = absl::StrCat(home, "/.kube/config");
      if (std::ifstream(candidate).good()) path = candidate;
    }
  }
  if (path.empty()) {
    return absl::NotFoundError(
        "no Kubernetes API server: not in a cluster, no kubeApiServerAddress, no kubeconfig");
  }
  return FromKubeconfig(path);
}

KubeClient::KubeClient(KubeConfig config) : config_(std::move(config)) {}

absl::StatusOr<KubeList> KubeClient::List(const std::string& resource) const {
  auto client = MakeClient(config_);
  httplib::Result res = client->Get(absl::StrCat("/api/v1/", resource).c_str());
  if (!res) {
    return absl::UnavailableError(
        absl::StrCat("list ", resource, ": ", httplib::to_string(res.error())));
  }
  if (res->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("list ", resource, ": HTTP ", res->status, ": ", res->body.substr(0, 200)));
  }
  json body = json::parse(res->body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return absl::UnavailableError(absl::StrCat("list ", resource, ": malformed JSON"));
  }
  KubeList list;
  list.resource_version = ResourceVersionOf(body);
  if (auto items = body.find("items"); items != body.end() && items->is_array()) {
    list.items.assign(items->begin(), items->end());
  }
  return list;
}

absl::Status KubeClient::Watch(
    const std::string& resource, std::string* resource_version, const std::atomic<bool>& stop,
    const std::function<void(const std::string&, const json&)>& on_event) const {
  auto client = MakeClient(config_);
  client->set_read_timeout(45, 0);
  {
    std::lock_guard<std::mutex> lock(watches_mu_);
    if (stop.load()) return absl::OkStatus();
    watches_.insert(client.get());
  }
  struct Unregister {
    const KubeClient* self;
    void* client;
    ~Unregister() {
      std::lock_guard<std::mutex> lock(self->watches_mu_);
      self->watches_.erase(client);
    }
  } unregister{this, client.get()};
  std::string path = absl::StrCat("/api/v1/", resource,
                                  "?watch=1&allowWatchBookmarks=true&timeoutSeconds=30"
                                  "&resourceVersion=",
                                  *resource_version);
  std::string buffer;
  absl::Status status = absl::OkStatus();
  int http_status = 0;
  auto handle_line = [&](const std::string& line) -> bool {
    if (line.empty()) return true;
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      status = absl::DataLossError(absl::StrCat("watch ", resource, ": malformed event"));
      return false;
    }
    std::string type = Str(event, "type");
    const json& object = event["object"];
    if (type == "ERROR") {
      int code = 0;
      if (object.is_object() && object.contains("code") && object["code"].is_number_integer()) {
        code = object["code"].get<int>();
      }
      status = code == 410 ? absl::OutOfRangeError("resource version expired (410 Gone)")
                           : absl::UnavailableError(absl::StrCat("watch error ", code));
      return false;
    }
    std::string rv = ResourceVersionOf(object);
    if (!rv.empty()) *resource_version = rv;
    if (type != "BOOKMARK") on_event(type, object);
    return true;
  };
  httplib::Result res = client->Get(
      path.c_str(), httplib::Headers{},
      [&](const httplib::Response& r) {
        http_status = r.status;
        return r.status == 200;
      },
      [&](const char* data, size_t n) {
        if (stop.load()) return false;
        buffer.append(data, n);
        size_t start = 0;
        for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
          if (!handle_line(buffer.substr(start, nl - start))) return false;
        }
        buffer.erase(0, start);
        return true;
      });
  if (!status.ok()) return status;
  if (http_status == 410) return absl::OutOfRangeError("resource version expired (410 Gone)");
  if (http_status != 0 && http_status != 200) {
    return absl::UnavailableError(absl::StrCat("watch ", resource, ": HTTP ", http_status));
  }
  if (!res && !stop.load()) {
    // A stream cut mid-object leaves a partial line: dropped, the watch resumes from the
    // last whole event's resource version.
    return absl::UnavailableError(
        absl::StrCat("watch ", resource, ": ", httplib::to_string(res.error())));
  }
  return absl::OkStatus();
}

absl::Status KubeClient::Bind(const std::string& ns, const std::string& name,
                              const std::string& uid, const std::string& node,
                              const std::map<std::string, std::string>& annotations) {
  json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}, {"annotations", annotations}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  auto client = MakeClient(config_);
  httplib::Result res =
      client->Post(absl::StrCat("/api/v1/namespaces/", ns, "/pods/", name, "/binding").c_str(),
                   binding.dump(), "application/json");
  if (!res) return absl::UnavailableError(httplib::to_string(res.error()));
  if (res->status != 200 && res->status != 201) {
    return absl::UnavailableError(
        absl::StrCat("HTTP ", res->status, ": ", res->body.substr(0, 300)));
  }
  return absl::OkStatus();
}

void KubeClient::CancelWatches() {
  std::lock_guard<std::mutex> lock(watches_mu_);
  for (void* client : watches_) static_cast<httplib::Client*>(client)->stop();
}

bool NodeHealthy(const json& node) {
  if (!node.is_object()) return false;
  if (auto spec = node.find("spec"); spec != node.end() && spec->is_object()) {
    auto unschedulable = spec->find("unschedulable");
    if (unschedulable != spec->end() && unschedulable->is_boolean() && unschedulable->get<bool>()) {
      return false;
    }
  }
  auto status = node.find("status");
  if (status == node.end() || !status->is_object()) return false;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return false;
  for (const json& c : *conditions) {
    if (Str(c, "type") == "Ready") return Str(c, "status") == "True";
  }
  return false;
}

void ClusterSync::ApplyNodes(const std::vector<json>& nodes) {
  std::set<std::string> seen;
  for (const json& node : nodes) {
    std::string name = NameOf(node);
    if (name.empty()) continue;
    seen.insert(name);
    extender_->OnNodeHealth(name, NodeHealthy(node));
  }
  // A configured node the cluster does not list is bad (HiveD: bad until reported healthy).
  for (const NodeStatus& n : extender_->scheduler().Nodes()) {
    if (seen.count(n.name) == 0) extender_->OnNodeHealth(n.name, false);
  }
}

RecoveryReport ClusterSync::Recover(const std::atomic<bool>& stop) {
  auto backoff = std::chrono::milliseconds(250);
  while (!stop.load()) {
    absl::StatusOr<KubeList> nodes = client_->List("nodes");
    absl::StatusOr<KubeList> pods = nodes.ok() ? client_->List("pods") : nodes.status();
    if (nodes.ok() && pods.ok()) {
      ApplyNodes(nodes->items);
      nodes_version_ = nodes->resource_version;
      pods_version_ = pods->resource_version;
      return extender_->Recover(pods->items);
    }
    extender_->CountApiError("list");
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  }
  return RecoveryReport{};
}

void ClusterSync::StartWatching() {
  threads_.emplace_back([this] { Loop("pods"); });
  threads_.emplace_back([this] { Loop("nodes"); });
}

void ClusterSync::Stop() {
  stop_.store(true);
  client_->CancelWatches();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void ClusterSync::Loop(const std::string& resource) {
  std::string& version = resource == "pods" ? pods_version_ : nodes_version_;
  auto backoff = std::chrono::milliseconds(100);
  auto sleep = [&] {
    for (auto slept = std::chrono::milliseconds(0); slept < backoff && !stop_.load();
         slept += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  };
  while (!stop_.load()) {
    if (version.empty()) {  // (re-)list: the watch's history expired
      absl::StatusOr<KubeList> list = client_->List(resource);
      if (!list.ok()) {
        extender_->CountApiError("list");
        sleep();
        continue;
      }
      if (resource == "nodes") {
        ApplyNodes(list->items);
      } else {
        extender_->ReconcilePods(list->items);
      }
      version = list->resource_version;
    }
    absl::Status s =
        client_->Watch(resource, &version, stop_, [&](const std::string& type, const json& object) {
          if (resource == "nodes") {
            std::string name = NameOf(object);
            if (!name.empty())
              extender_->OnNodeHealth(name, type != "DELETED" && NodeHealthy(object));
          } else if (type == "DELETED") {
            extender_->OnPodDeleted(object);
          } else {
            extender_->OnPodUpdated(object);
          }
        });
    if (s.ok()) {
      backoff = std::chrono::milliseconds(100);
      continue;
    }
    if (absl::IsOutOfRange(s)) {
      version.clear();
      continue;
    }
    extender_->CountApiError(absl::StrCat("watch-", resource));
    sleep();
  }
}

}  // namespace hived::server
