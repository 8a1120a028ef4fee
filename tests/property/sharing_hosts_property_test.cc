// Property test of host groups (sharing/sharing.h invariant (4)): random whole-GPU pods with CPU
// and memory, CPU-only gangs, fractional pods with CPU, and releases, against a reference
// model of every node's CPU and host memory: each placement fits the model's room, a
// CPU-only pod the model can place is placed, and CheckInvariants holds after every step.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/sharing/sharing_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testing::PropertyFirstSeed;
using testing::PropertySeedEnd;
using testing::PropertySeeds;
using testing::PropertySteps;

struct Room {
  int64_t cpu = 0, memory = 0;
};

TEST_CASE("host groups keep every node's CPU and memory within its declaration",
          "[sharing][hosts][property]") {
  const std::map<std::string, Room> declared = {
      {"a0", {8000, 64000}}, {"a1", {8000, 64000}}, {"b0", {4000, 32000}}};
  const uint64_t first = PropertyFirstSeed(1);
  for (uint64_t seed = first; seed < PropertySeedEnd(first, PropertySeeds(30)); ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
    auto s = testdata::Make();
    std::map<std::string, Room> used;
    struct Live {
      std::vector<std::pair<std::string, Room>> pods;
    };
    std::map<std::string, Live> live;
    int next = 0;
    for (int64_t step = 0; step < PropertySteps(300); ++step) {
      INFO("seed " << seed << " step " << step);
      if (!live.empty() && pick(3) == 0) {
        auto it = live.begin();
        std::advance(it, pick(static_cast<uint64_t>(live.size())));
        REQUIRE(s->Release(it->first).ok());
        for (const auto& [node, r] : it->second.pods) {
          used[node].cpu -= r.cpu;
          used[node].memory -= r.memory;
        }
        live.erase(it);
        REQUIRE(s->CheckInvariants().ok());
        continue;
      }
      GroupRequest req;
      req.name = "g" + std::to_string(next++);
      req.vc = pick(2) == 0 ? "VC1" : "VC2";
      req.priority = 0;
      const int64_t cpu = 500 * pick(10);
      const int64_t memory = 4000 * pick(10);
      const int64_t kind = pick(3);
      const int32_t pods = kind == 0 ? static_cast<int32_t>(1 + pick(3)) : 1;
      if (kind == 0) {
        req.members = {{pods, 0, 0, 0, cpu, memory}};
      } else if (kind == 1) {
        req.leaf_cell_type = "GA";
        req.members = {{1, static_cast<int32_t>(1 + pick(2)), 0, 0, cpu, memory}};
      } else {
        req.leaf_cell_types = {"GA"};
        req.members = {{1, 1, static_cast<int32_t>(100 * (1 + pick(9))), 0, cpu, memory}};
      }
      absl::StatusOr<ScheduleResult> res =
          s->Schedule(req, pick(2) == 0 ? Phase::kFiltering : Phase::kPreempting);
      REQUIRE(res.ok());
      // The reference: could the model place a CPU-only gang (greedily, one pod per room)?
      std::map<std::string, Room> room;
      for (const auto& [node, d] : declared) {
        room[node] = {d.cpu - used[node].cpu, d.memory - used[node].memory};
      }
      if (kind == 0) {
        int32_t fits = 0;
        std::map<std::string, Room> left = room;
        for (int32_t k = 0; k < pods; ++k) {
          for (auto& [node, l] : left) {
            if (l.cpu >= cpu && l.memory >= memory) {
              l.cpu -= cpu;
              l.memory -= memory;
              ++fits;
              break;
            }
          }
        }
        if (fits == pods) REQUIRE(res->outcome == Outcome::kPlaced);
      }
      if (res->outcome != Outcome::kPlaced) {
        if (res->outcome == Outcome::kPreempting) REQUIRE(s->CancelPreemption(req.name).ok());
        if (s->GetGroup(req.name).state == GroupState::kReserved) {
          REQUIRE(s->Unreserve(req.name).ok());
        }
        REQUIRE(s->CheckInvariants().ok());
        continue;
      }
      Live l;
      for (const PodPlacement& p : res->placement.pods) {
        room[p.node].cpu -= cpu;
        room[p.node].memory -= memory;
        REQUIRE(room[p.node].cpu >= 0);  // the placement fits the model
        REQUIRE(room[p.node].memory >= 0);
        l.pods.push_back({p.node, {cpu, memory}});
      }
      REQUIRE(s->Allocate(req, res->placement).ok());
      for (const auto& [node, r] : l.pods) {
        used[node].cpu += r.cpu;
        used[node].memory += r.memory;
      }
      live[req.name] = l;
      REQUIRE(s->CheckInvariants().ok());
    }
  }
}

}  // namespace
}  // namespace hived
