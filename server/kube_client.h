// server/kube_client.h: the little of Kubernetes' API the extender needs, over cpp-httplib:
// list and watch pods and nodes (resource versions; re-list on 410 Gone; backoff), and the
// pod `binding` subresource carrying HiveD's annotations.
//
// Connection settings come, in this order, from: in-cluster (KUBERNETES_SERVICE_HOST/PORT
// with the service account's token and CA), HiveD's `kubeApiServerAddress`, or a
// kubeconfig (`kubeConfigFilePath`, env KUBECONFIG, ~/.kube/config: the current context's
// server, CA, token or client certificate).
//
// Example:
//   absl::StatusOr<KubeConfig> config = ResolveKubeConfig(api_address, kubeconfig_path);
//   KubeClient client(*config);
//   absl::StatusOr<KubeList> pods = client.List("pods");
//
// Thread safety: each call uses its own connection; calls may run on different threads.
#ifndef HIVED_SERVER_KUBE_CLIENT_H_
#define HIVED_SERVER_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/extender.h"

namespace hived::server {

struct KubeConfig {
  std::string server;  // "https://10.0.0.1:443" or "http://127.0.0.1:8080"
  std::string token;   // bearer token, may be empty
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
  bool insecure_skip_tls_verify = false;
};

// Errors: kNotFound when nothing is configured; kInvalidArgument for an unreadable kubeconfig.
absl::StatusOr<KubeConfig> ResolveKubeConfig(const std::string& api_server_address,
                                             const std::string& kubeconfig_path);

struct KubeList {
  std::vector<nlohmann::json> items;
  std::string resource_version;
};

class KubeClient : public Binder {
 public:
  explicit KubeClient(KubeConfig config);

  // GET /api/v1/<resource> (cluster-wide "pods" or "nodes").
  absl::StatusOr<KubeList> List(const std::string& resource) const;

  // Watches <resource> from `*resource_version` until the stream ends or `stop` is set,
  // calling `on_event(type, object)` for each event and advancing `*resource_version`.
  // Returns OK when the stream ended normally (watch again), kOutOfRange for 410 Gone (list
  // again), another error for a failed connection.
  absl::Status Watch(
      const std::string& resource, std::string* resource_version, const std::atomic<bool>& stop,
      const std::function<void(const std::string&, const nlohmann::json&)>& on_event) const;

  // POST /api/v1/namespaces/<ns>/pods/<name>/binding with `annotations` in its metadata
  // (the API server copies them onto the pod) and the pod's uid as precondition.
  absl::Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
                    const std::string& node,
                    const std::map<std::string, std::string>& annotations) override;

  // Closes the connections of running watches (they return at once); for shutdown.
  void CancelWatches();

 private:
  KubeConfig config_;
  mutable std::mutex watches_mu_;
  mutable std::set<void*> watches_;  // the httplib clients of running watches
};

// Node readiness as HiveD reads it: Ready=True and not spec.unschedulable.
bool NodeHealthy(const nlohmann::json& node);

// Keeps the extender in step with the cluster: at start `Start` lists nodes (configured
// nodes not listed are bad) and pods (recovery), then marks the extender ready and watches
// both in background threads until `Stop`.
class ClusterSync {
 public:
  ClusterSync(KubeClient* client, Extender* extender) : client_(client), extender_(extender) {}
  ~ClusterSync() { Stop(); }
  // Lists and recovers, retrying with backoff until it succeeds or `stop` is set.
  RecoveryReport Recover(const std::atomic<bool>& stop);
  // Starts the watch loops (after Recover).
  void StartWatching();
  void Stop();

 private:
  void Loop(const std::string& resource);
  void ApplyNodes(const std::vector<nlohmann::json>& nodes);

  KubeClient* client_;
  Extender* extender_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::string pods_version_;
  std::string nodes_version_;
};

}  // namespace hived::server

#endif  // HIVED_SERVER_KUBE_CLIENT_H_
