// hived-extender-load: a bounded loopback load test of the filter route. Starts the
// extender's HTTP server in-process on a config (default: the 1,000-node benchmark config)
// and runs `clients` concurrent keep-alive clients, each sending `requests` filter calls
// for new single-pod gangs (1, 2, 4 or 8 GPUs; VC by weight of its cells; fixed seed), then
// prints the latency percentiles, the throughput and the outcomes.
//
// Usage: hived-extender-load [--config <yaml>] [--clients 64] [--requests 100] [--seed 1]
//                            [--threads <clients + 4>] [--spec-cache 4096]
//                            [--inspect-every <ms>] [--client-nice <0..19>] [--rate <filters/s>]
//        hived-extender-load --recovery <racks>   (recovery time of a full cluster)
// --threads: the server's pool (a keep-alive connection holds a pool thread while open);
// --spec-cache: `ExtenderOptions::spec_cache_entries` (0: every filter parses its spec);
// --inspect-every: one more client polls /v1/inspect/clusterstatus every <ms> during the run;
// --client-nice: the client threads' nice value (the server's threads keep 0), to tell the
// load generator's share of the 2 cores from the server's;
// --rate: open loop. Without it each client sends its next filter as soon as the last is
// answered (closed loop: with N clients the mean latency is N / throughput, Little's law, so
// 64 clients at 8,000 filters/s wait 8 ms on average whatever the server does). With it the
// clients together offer <filters/s>, request k of the run due at start + k / rate (client
// k mod N sends it), and a latency is measured from when the request was due, not when it
// was sent, so a server that falls behind is charged for the backlog (no coordinated omission).
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "httplib.h"
#include "server/extender.h"
#include "server/http_server.h"
#include "server/tests/test_pods.h"

namespace {

// Records binds and applies them to the pod objects, as the API server would.
class ApplyingBinder : public hived::server::Binder {
 public:
  absl::Status Bind(const std::string&, const std::string&, const std::string& uid,
                    const std::string& node,
                    const std::map<std::string, std::string>& annotations) override {
    nlohmann::json& pod = pods.at(uid);
    pod["spec"]["nodeName"] = node;
    pod["status"]["phase"] = "Running";
    for (const auto& [k, v] : annotations) pod["metadata"]["annotations"][k] = v;
    return absl::OkStatus();
  }
  std::map<std::string, nlohmann::json> pods;
};

// `--recovery <racks>`: a cluster of <racks> racks of 8 nodes of 8 GPUs (the benchmark
// config's cell types), one VC owning it all, filled with 8-GPU gangs of 1 to 4 pods
// through filter and bind; then a fresh extender recovers from the bound pods, timed.
int RecoveryBench(const hived::ClusterSpec& base, int racks) {
  hived::ClusterSpec spec;
  spec.cell_types = base.cell_types;
  for (int r = 0; r < racks; ++r) {
    hived::PhysicalCellSpec rack;
    rack.cell_type = "V100-RACK";
    for (int n = 0; n < 8; ++n) {
      hived::PhysicalCellSpec node;
      node.cell_address = "node-" + std::to_string(r * 8 + n);
      rack.cell_children.push_back(node);
    }
    spec.physical_cells.push_back(rack);
  }
  spec.virtual_clusters = {{"VC1", {{"V100-RACK", racks}}, {}}};
  ApplyingBinder binder;
  auto created = hived::Scheduler::Create(spec);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", std::string(created.status().message()).c_str());
    return 1;
  }
  // Filters send no candidate nodes, so HiveD's rule would force bind every pod at once;
  // this tool binds each pod itself.
  hived::server::ExtenderOptions options;
  options.force_bind = false;
  hived::server::Extender first(*std::move(created), options, &binder);
  first.SetReady();
  int64_t gpus = 0;
  auto fill_start = std::chrono::steady_clock::now();
  for (int g = 0;; ++g) {
    int n = 1 + g % 4;
    std::string group = "job-" + std::to_string(g);
    std::string spec_yaml = hived::server::testing::GangSpec("VC1", 0, group, n, 8);
    bool placed = true;
    for (int i = 0; i < n && placed; ++i) {
      std::string name = group + "-" + std::to_string(i);
      nlohmann::json pod = hived::server::testing::MakePod(name, "uid-" + name, spec_yaml);
      std::string uid = pod["metadata"]["uid"];
      binder.pods[uid] = pod;
      hived::server::HttpReply r =
          first.Filter(nlohmann::json{{"Pod", pod}, {"NodeNames", nlohmann::json::array()}}.dump());
      nlohmann::json body = nlohmann::json::parse(r.body);
      if (!body["NodeNames"].is_array() || body["NodeNames"].empty()) {
        binder.pods.erase(uid);
        placed = false;
        break;
      }
      (void)first.Bind(hived::server::testing::BindArgs(pod, body["NodeNames"][0]));
      gpus += 8;
    }
    if (!placed) break;
  }
  double fill =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - fill_start).count();
  std::vector<nlohmann::json> pods;
  for (auto& [uid, pod] : binder.pods) {
    if (pod["spec"].contains("nodeName")) pods.push_back(pod);
  }
  hived::server::Extender second(*hived::Scheduler::Create(spec), {}, nullptr);
  auto start = std::chrono::steady_clock::now();
  hived::server::RecoveryReport report = second.Recover(pods);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool same = second.Inspect("/v1/inspect/clusterstatus").body ==
              first.Inspect("/v1/inspect/clusterstatus").body;
  std::printf(
      "hived-extender-load --recovery %d: %d nodes, %lld GPUs in use by %zu pods "
      "(filled through filter and bind in %.2f s)\n"
      "  recovery of %d pods in %d groups: %.3f s (%zu problems); inspect equal: %s\n",
      racks, racks * 8, static_cast<long long>(gpus), pods.size(), fill, report.pods_recovered,
      report.groups_recovered, took, report.problems.size(), same ? "yes" : "NO");
  return report.problems.empty() && same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config =
      std::string(HIVED_SOURCE_DIR) + "/tests/testdata/bench-configs/gen-1000-nodes.yaml";
  int clients = 64;
  int requests = 100;
  unsigned seed = 1;
  int recovery_racks = 0;
  int threads_arg = 0;
  int spec_cache = 4096;
  int inspect_every_ms = 0;
  int client_nice = 0;
  double rate = 0;  // offered filters/s for the whole run; 0: closed loop
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--config") {
      config = argv[i + 1];
    } else if (a == "--clients") {
      clients = std::atoi(argv[i + 1]);
    } else if (a == "--requests") {
      requests = std::atoi(argv[i + 1]);
    } else if (a == "--seed") {
      seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else if (a == "--recovery") {
      recovery_racks = std::atoi(argv[i + 1]);
    } else if (a == "--threads") {
      threads_arg = std::atoi(argv[i + 1]);
    } else if (a == "--spec-cache") {
      spec_cache = std::atoi(argv[i + 1]);
    } else if (a == "--inspect-every") {
      inspect_every_ms = std::atoi(argv[i + 1]);
    } else if (a == "--client-nice") {
      client_nice = std::atoi(argv[i + 1]);
    } else if (a == "--rate") {
      rate = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (clients <= 0 || requests <= 0 || clients > 1024 || requests > 100000 || recovery_racks < 0 ||
      recovery_racks > 100000 || threads_arg < 0 || threads_arg > 4096 || spec_cache < 0 ||
      inspect_every_ms < 0 || client_nice < 0 || client_nice > 19 || !(rate >= 0) || rate > 1e7) {
    std::fprintf(stderr,
                 "want 1..1024 clients, 1..100000 requests each, 0..100000 racks, 0..4096 "
                 "threads, a spec cache >= 0, --inspect-every >= 0, --client-nice 0..19, "
                 "--rate 0..10000000 filters/s\n");
    return 2;
  }
  auto spec = hived::LoadClusterSpecFile(config);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
    return 1;
  }
  if (recovery_racks > 0) return RecoveryBench(*spec, recovery_racks);
  std::vector<std::string> vcs;
  std::vector<double> weights;
  for (const hived::VirtualClusterSpec& vc : spec->virtual_clusters) {
    vcs.push_back(vc.name);
    double cells = 0;
    for (const hived::VirtualCellSpec& c : vc.virtual_cells) cells += c.cell_number;
    weights.push_back(std::max(cells, 1.0));
  }
  hived::server::ExtenderOptions options;
  options.spec_cache_entries = static_cast<size_t>(spec_cache);
  hived::server::Extender extender(*hived::Scheduler::Create(*spec), options, nullptr);
  extender.SetReady();
  // One pool thread per keep-alive connection (the clients and the inspect poller), and a few.
  const int pool = threads_arg > 0 ? threads_arg : clients + 4;
  hived::server::HttpServer http(&extender, {}, pool);
  int port = http.BindToPort("127.0.0.1", 0);
  if (port < 0) return 1;
  std::thread serving([&http] { http.Listen(); });

  // Every request body, made before the clock starts.
  std::mt19937 rng(seed);
  std::discrete_distribution<size_t> pick_vc(weights.begin(), weights.end());
  const int kGpus[] = {1, 2, 4, 8};
  std::vector<std::vector<std::string>> bodies(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    for (int r = 0; r < requests; ++r) {
      std::string name = "load-" + std::to_string(c) + "-" + std::to_string(r);
      int gpus = kGpus[rng() % 4];
      nlohmann::json pod = hived::server::testing::MakePod(
          name, "uid-" + name,
          hived::server::testing::GangSpec(vcs[pick_vc(rng)], 0, name, 1, gpus));
      bodies[static_cast<size_t>(c)].push_back(
          nlohmann::json{{"Pod", pod}, {"NodeNames", nlohmann::json::array()}}.dump());
    }
  }
  std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
  std::atomic<int64_t> placed{0}, waiting{0}, errors{0};
  std::string first_error;  // written by the client whose error is the first counted
  // Each client opens its keep-alive connection first (as kube-scheduler keeps one); the
  // clock starts when all are connected.
  std::atomic<int> connected{0};
  std::atomic<bool> go{false};
  std::chrono::steady_clock::time_point start;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      if (client_nice > 0) {
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), client_nice);
      }
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(30, 0);
      if (!client.Get("/healthz")) ++errors;
      ++connected;
      while (!go.load()) std::this_thread::yield();
      const std::vector<std::string>& mine = bodies[static_cast<size_t>(c)];
      for (size_t r = 0; r < mine.size(); ++r) {
        const std::string& body = mine[r];
        auto t0 = std::chrono::steady_clock::now();
        if (rate > 0) {
          // Open loop: due at start + k / rate for this client's k-th share of the run.
          const double k = static_cast<double>(r) * clients + c;
          t0 = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(k / rate));
          std::this_thread::sleep_until(t0);
        }
        auto res = client.Post("/v1/extender/filter", body, "application/json");
        auto t1 = std::chrono::steady_clock::now();
        latencies[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (!res || res->status != 200) {
          if (errors.fetch_add(1) == 0) {
            first_error =
                res ? "HTTP " + std::to_string(res->status) + ": " + res->body.substr(0, 200)
                    : "no response: " + httplib::to_string(res.error());
          }
        } else if (res->body.find("\"NodeNames\":[\"") != std::string::npos) {
          ++placed;
        } else {
          ++waiting;
        }
      }
    });
  }
  // The inspect poller: GET /v1/inspect/clusterstatus every `inspect_every_ms` until the
  // clients are done.
  std::atomic<bool> clients_done{false};
  std::vector<double> inspect_ms;
  std::thread poller;
  if (inspect_every_ms > 0) {
    poller = std::thread([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_read_timeout(30, 0);
      while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      while (!clients_done.load()) {
        auto t0 = std::chrono::steady_clock::now();
        auto res = client.Get("/v1/inspect/clusterstatus");
        inspect_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        if (!res || res->status != 200) ++errors;
        std::this_thread::sleep_for(std::chrono::milliseconds(inspect_every_ms));
      }
    });
  }
  while (connected.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = std::chrono::steady_clock::now();
  go.store(true);
  for (std::thread& t : threads) t.join();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  clients_done.store(true);
  if (poller.joinable()) poller.join();
  http.Stop();
  serving.join();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all[std::min(all.size() - 1, static_cast<size_t>(p * static_cast<double>(all.size())))];
  };
  std::printf(
      "hived-extender-load: %d clients x %d filters on %s, %s\n"
      "  %zu filters in %.3f s: %.0f filters/s\n"
      "  latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n"
      "  outcomes: %lld placed, %lld waiting, %lld errors\n",
      clients, requests, config.c_str(),
      rate > 0 ? ("open loop, offered " + std::to_string(static_cast<long long>(rate)) +
                  " filters/s (latency from each request's due time)")
                     .c_str()
               : "closed loop (each client sends when answered)",
      all.size(), wall, static_cast<double>(all.size()) / wall, pct(0.50), pct(0.90), pct(0.99),
      all.back(), static_cast<long long>(placed.load()), static_cast<long long>(waiting.load()),
      static_cast<long long>(errors.load()));
  if (!first_error.empty()) std::printf("  first error: %s\n", first_error.c_str());
  std::printf("  server pool %d threads, spec cache %d entries, client nice %d\n", pool, spec_cache,
              client_nice);
  if (!inspect_ms.empty()) {
    std::sort(inspect_ms.begin(), inspect_ms.end());
    std::printf("  inspect (clusterstatus every %d ms): %zu answers, ms p50 %.3f  max %.3f\n",
                inspect_every_ms, inspect_ms.size(), inspect_ms[inspect_ms.size() / 2],
                inspect_ms.back());
  }
  if (inspect_every_ms > 0) {
    // Where an inspect's time goes, on the final state with nothing else running: the
    // library's views (what `mu_` may be held for) against the whole answer.
    auto ms_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count();
    };
    auto t0 = std::chrono::steady_clock::now();
    size_t cells = extender.scheduler().PhysicalCluster().size();
    for (const hived::VirtualClusterSpec& vc : extender.scheduler().spec().virtual_clusters) {
      cells += extender.scheduler().VirtualCluster(vc.name)->size();
    }
    const double views = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    const size_t bytes = extender.Inspect("/v1/inspect/clusterstatus").body.size();
    std::printf(
        "  clusterstatus alone: library views %.1f ms (%zu top cells), whole answer %.1f ms "
        "(%zu bytes)\n",
        views, cells, ms_since(t0), bytes);
  }
  // The server's own decision time (its histogram): the part of the latency that is the
  // decision, not queueing for a core or the lock.
  std::string metrics = extender.Metrics();
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  const std::string key = "hived_extender_decision_seconds_bucket{route=\"filter\",le=\"";
  for (size_t at = metrics.find(key); at != std::string::npos; at = metrics.find(key, at + 1)) {
    size_t le_end = metrics.find('"', at + key.size());
    std::string le = metrics.substr(at + key.size(), le_end - at - key.size());
    double count = std::atof(metrics.c_str() + metrics.find("} ", le_end) + 2);
    buckets.emplace_back(le == "+Inf" ? 1e9 : std::atof(le.c_str()), count);
  }
  auto bound = [&](double q) {
    double total = buckets.empty() ? 0 : buckets.back().second;
    for (const auto& [le, count] : buckets) {
      if (count >= q * total) return le * 1000;
    }
    return 0.0;
  };
  std::printf("  server decision time ms (histogram bucket bound): p50 <= %g  p99 <= %g\n",
              bound(0.50), bound(0.99));
  bool invariants = extender.scheduler().CheckInvariants().ok();
  if (!invariants) std::printf("  scheduler invariants BROKEN\n");
  return errors.load() == 0 && invariants ? 0 : 1;
}
