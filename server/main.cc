// hived-extender: HiveD's Kubernetes scheduler extender on the hived library.
//
// Usage: hived-extender [--config <hivedscheduler.yaml>] [--listen <host:port>]
//                       [--tls-cert <file> --tls-key <file>]
//                       [--reservation-timeout <seconds>] [--threads <n>]
// The config is HiveD's file, unchanged (env CONFIG, default ./hivedscheduler.yaml);
// `webServerAddress` (default ":9096") is the listen address, `kubeApiServerAddress` and
// `kubeConfigFilePath` (or in-cluster settings) the API server. `--reservation-timeout`
// (default 600, kube-scheduler's volume-binding bind timeout; docs/kubernetes.md) is how
// long cells reserved by filter or preempt wait for the pod's bind. `--threads` (default 64)
// is the HTTP pool: each open keep-alive connection holds one of its threads, so it must be
// at least the number of connections kube-scheduler instances keep open.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "server/extender.h"
#include "server/http_server.h"
#include "server/kube_client.h"
#include "yaml-cpp/yaml.h"

namespace {

struct Args {
  std::string config;
  std::string listen;
  std::string tls_cert;
  std::string tls_key;
  int64_t reservation_timeout_s = 600;
  int threads = 64;
};

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    bool ok = true;
    if (a == "--config") {
      ok = value(&args->config);
    } else if (a == "--listen") {
      ok = value(&args->listen);
    } else if (a == "--tls-cert") {
      ok = value(&args->tls_cert);
    } else if (a == "--tls-key") {
      ok = value(&args->tls_key);
    } else if (a == "--threads") {
      std::string n;
      ok = value(&n);
      char* end = nullptr;
      long long parsed = ok ? std::strtoll(n.c_str(), &end, 10) : 0;
      if (ok && (end == n.c_str() || *end != '\0' || parsed < 1 || parsed > 4096)) {
        std::cerr << "hived-extender: --threads wants a whole number in [1, 4096], not '" << n
                  << "'\n";
        return false;
      }
      args->threads = static_cast<int>(parsed);
    } else if (a == "--reservation-timeout") {
      std::string seconds;
      ok = value(&seconds);
      char* end = nullptr;
      long long parsed = ok ? std::strtoll(seconds.c_str(), &end, 10) : 0;
      if (ok && (end == seconds.c_str() || *end != '\0' || parsed <= 0 || parsed > 86'400)) {
        std::cerr << "hived-extender: --reservation-timeout wants whole seconds in [1, 86400], "
                     "not '"
                  << seconds << "'\n";
        return false;
      }
      args->reservation_timeout_s = parsed;
    } else {
      std::cerr << "hived-extender: unknown argument " << a << "\n";
      return false;
    }
    if (!ok) {
      std::cerr << "hived-extender: " << a << " needs a value\n";
      return false;
    }
  }
  return true;
}

// HiveD's Kubernetes keys, which the library's loader accepts and ignores.
struct KubeKeys {
  int64_t waiting_block_ms = 0;
  int32_t force_pod_bind_threshold = 3;
  std::string web_server_address = ":9096";
  std::string kube_api_server_address;
  std::string kube_config_file_path;
};

KubeKeys ReadKubeKeys(const std::string& path) {
  KubeKeys keys;
  if (const char* env = std::getenv("KUBE_APISERVER_ADDRESS"); env != nullptr) {
    keys.kube_api_server_address = env;
  }
  try {
    YAML::Node root = YAML::LoadFile(path);
    keys.web_server_address = root["webServerAddress"].as<std::string>(keys.web_server_address);
    keys.kube_api_server_address =
        root["kubeApiServerAddress"].as<std::string>(keys.kube_api_server_address);
    keys.kube_config_file_path = root["kubeConfigFilePath"].as<std::string>("");
    keys.waiting_block_ms = root["waitingPodSchedulingBlockMilliSec"].as<int64_t>(0);
    keys.force_pod_bind_threshold = root["forcePodBindThreshold"].as<int32_t>(3);
  } catch (const YAML::Exception&) {
    // The library's loader has reported any problem with the file already.
  }
  return keys;
}

}  // namespace

int main(int argc, char** argv) {
  // SIGTERM/SIGINT are taken by one thread with sigwait (a handler may not stop a server).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Args args;
  if (!ParseArgs(argc, argv, &args)) return 2;
  if (args.config.empty()) {
    const char* env = std::getenv("CONFIG");
    args.config = env != nullptr ? env : "./hivedscheduler.yaml";
  }
  absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecFile(args.config);
  if (!spec.ok()) {
    std::cerr << "hived-extender: " << spec.status().message() << "\n";
    return 1;
  }
  auto scheduler = hived::Scheduler::Create(*spec);
  if (!scheduler.ok()) {
    std::cerr << "hived-extender: " << scheduler.status().message() << "\n";
    return 1;
  }
  KubeKeys keys = ReadKubeKeys(args.config);
  std::string listen = args.listen.empty() ? keys.web_server_address : args.listen;
  std::string host;
  int port = 0;
  if (!hived::server::ParseListenAddress(listen, &host, &port)) {
    std::cerr << "hived-extender: bad listen address '" << listen << "' (want host:port)\n";
    return 1;
  }
  absl::StatusOr<hived::server::KubeConfig> kube =
      hived::server::ResolveKubeConfig(keys.kube_api_server_address, keys.kube_config_file_path);
  if (!kube.ok()) {
    std::cerr << "hived-extender: " << kube.status().message() << "\n";
    return 1;
  }
  hived::server::KubeClient client(*kube);
  hived::server::ExtenderOptions options;
  options.waiting_block_ms = keys.waiting_block_ms;
  options.force_bind_threshold = keys.force_pod_bind_threshold;
  options.reservation_timeout_ms = args.reservation_timeout_s * 1'000;
  hived::server::Extender extender(*std::move(scheduler), options, &client);
  hived::server::HttpServer http(&extender, {args.tls_cert, args.tls_key}, args.threads);
  int bound = http.BindToPort(host, port);
  if (bound < 0) {
    std::cerr << "hived-extender: cannot listen on " << listen
              << (args.tls_cert.empty() ? "" : " (or load the TLS certificate and key)") << "\n";
    return 1;
  }
  std::atomic<bool> stop{false};
  std::thread serving([&http] { http.Listen(); });
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop.store(true);
    http.Stop();
  });
  std::cerr << "hived-extender: listening on " << host << ":" << bound << ", API server "
            << kube->server << "; recovering\n";
  hived::server::ClusterSync sync(&client, &extender);
  hived::server::RecoveryReport report = sync.Recover(stop);
  if (stop.load()) {  // stopped while the API server was unreachable
    serving.join();
    waiter.join();
    return 0;
  }
  for (const std::string& p : report.problems) {
    std::cerr << "hived-extender: recovery: " << p << "\n";
  }
  std::cerr << "hived-extender: recovered " << report.pods_recovered << " pods in "
            << report.groups_recovered << " groups (" << report.groups_downgraded
            << " downgraded); ready\n";
  extender.SetReady();
  sync.StartWatching();
  serving.join();
  waiter.join();
  sync.Stop();
  return 0;
}
