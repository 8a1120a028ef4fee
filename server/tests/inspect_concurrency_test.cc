// The inspect routes served while filters, binds and deletions run on other threads: each
// answer is of one state (extender.h: the views are taken without the extender's mutex and
// kept only when no change came in between).
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/tests/extender_fixture.h"

namespace hived::server::testing {
namespace {

// Binds as the API server would, from any thread.
class ConcurrentBinder : public Binder {
 public:
  absl::Status Bind(const std::string&, const std::string&, const std::string&, const std::string&,
                    const std::map<std::string, std::string>&) override {
    binds.fetch_add(1);
    return absl::OkStatus();
  }
  std::atomic<int64_t> binds{0};
};

using Pairs = std::set<std::pair<std::string, std::string>>;  // (physical, virtual) address

void PhysicalPairs(const json& cell, Pairs* out) {
  if (cell.contains("virtualCell")) {
    out->emplace(cell["cellAddress"].get<std::string>(),
                 cell["virtualCell"]["cellAddress"].get<std::string>());
  }
  if (cell.contains("cellChildren")) {
    for (const json& child : cell["cellChildren"]) PhysicalPairs(child, out);
  }
}

void VirtualPairs(const json& cell, Pairs* out) {
  if (cell.contains("physicalCell")) {
    out->emplace(cell["physicalCell"]["cellAddress"].get<std::string>(),
                 cell["cellAddress"].get<std::string>());
  }
  if (cell.contains("cellChildren")) {
    for (const json& child : cell["cellChildren"]) VirtualPairs(child, out);
  }
}

// What is wrong with a cluster status answer ("" when nothing): the physical cells bound to
// virtual cells and the virtual cells bound to physical ones must be the same pairs.
std::string ClusterStatusProblem(const HttpReply& r) {
  if (r.status != 200) return "status " + std::to_string(r.status);
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded()) return "not JSON";
  Pairs physical;
  Pairs virtual_side;
  for (const json& cell : body["physicalCluster"]) PhysicalPairs(cell, &physical);
  for (const auto& [vc, cells] : body["virtualClusters"].items()) {
    for (const json& cell : cells) VirtualPairs(cell, &virtual_side);
  }
  if (physical != virtual_side) {
    return "physical cells bound to virtual cells: " + std::to_string(physical.size()) +
           ", virtual cells bound to physical cells: " + std::to_string(virtual_side.size());
  }
  return "";
}

// What is wrong with an affinity group listing: the gangs here are single pods, so an
// Allocated group lists exactly its pod, a Preempting (reserved) one none, and no pod is
// listed twice.
std::string GroupsProblem(const HttpReply& r) {
  if (r.status != 200) return "status " + std::to_string(r.status);
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded()) return "not JSON";
  std::set<std::string> pods;
  for (const json& g : body["items"]) {
    const std::string name = g["metadata"]["name"];
    const std::string state = g["status"]["state"];
    const json& allocated = g["status"]["allocatedPods"];
    const size_t want = state == "Allocated" ? 1 : 0;
    if (allocated.size() != want) {
      return "group " + name + " is " + state + " with " + std::to_string(allocated.size()) +
             " allocated pods";
    }
    for (const json& uid : allocated) {
      if (!pods.insert(uid.get<std::string>()).second) return "pod listed twice: " + uid.dump();
    }
  }
  return "";
}

TEST_CASE("Extender: inspect answers are of one state while filters and binds run",
          "[server][unit]") {
  ConcurrentBinder binder;
  auto spec = hived::LoadClusterSpecFile(DesignConfig());
  REQUIRE(spec.ok());
  auto scheduler = hived::Scheduler::Create(*spec);
  REQUIRE(scheduler.ok());
  ExtenderOptions options;
  options.force_bind = false;
  options.expiry_period_ms = 0;
  Extender ext(*std::move(scheduler), options, &binder);
  ext.SetReady();

  // Two workers, each filtering, binding and (every third pod) deleting single-pod gangs;
  // every answer must be 200.
  constexpr int kPodsPerWorker = 150;
  std::atomic<int> workers_done{0};
  std::atomic<int64_t> bad_answers{0};
  std::atomic<int64_t> placed{0};
  auto worker = [&](int w) {
    std::mt19937 rng(static_cast<unsigned>(7 + w));
    const int kGpus[] = {1, 2, 4, 8};
    std::vector<json> bound;
    for (int i = 0; i < kPodsPerWorker; ++i) {
      std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
      json pod = MakePod(name, "uid-" + name,
                         GangSpec(rng() % 2 == 0 ? "VC1" : "VC2", 0, name, 1, kGpus[rng() % 4]));
      HttpReply f = ext.Filter(FilterArgs(pod));
      if (f.status != 200) ++bad_answers;
      json answer = json::parse(f.body, nullptr, false);
      if (answer.is_object() && answer["NodeNames"].is_array() && !answer["NodeNames"].empty()) {
        ++placed;
        if (ext.Bind(BindArgs(pod, answer["NodeNames"][0])).status != 200) ++bad_answers;
        bound.push_back(pod);
      }
      if (i % 3 == 2 && !bound.empty()) {
        ext.OnPodDeleted(bound.front());
        bound.erase(bound.begin());
      }
    }
    ++workers_done;
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) threads.emplace_back(worker, w);

  // Inspect until the workers are done (and once more after).
  std::vector<std::string> problems;
  int64_t inspections = 0;
  auto inspect = [&] {
    std::string p = ClusterStatusProblem(ext.Inspect("/v1/inspect/clusterstatus"));
    if (!p.empty()) problems.push_back("clusterstatus: " + p);
    p = GroupsProblem(ext.Inspect("/v1/inspect/affinitygroups/"));
    if (!p.empty()) problems.push_back("affinitygroups: " + p);
    ++inspections;
  };
  while (workers_done.load() < 2) inspect();
  for (std::thread& t : threads) t.join();
  inspect();

  CAPTURE(inspections);
  CHECK(bad_answers.load() == 0);
  CHECK(placed.load() > 0);
  CHECK(binder.binds.load() == placed.load());
  if (!problems.empty()) FAIL(problems.front() << " (" << problems.size() << " problems)");
  REQUIRE(ext.scheduler().CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::server::testing
