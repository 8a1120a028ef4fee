// Random operation sequences on the scheduler internals: invariants after every step, the
// indexed node choice against HiveD's full sort (written here, from the rules), and
// release-everything restores the start.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hived/config.h"
#include "src/scheduler_impl.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"
#include "unit/scheduler_oracle/placement_oracle.h"

namespace hived {
namespace {

std::unique_ptr<SchedulerImpl> MakeImpl(const char* yaml) {
  auto spec = LoadClusterSpecString(yaml, "test.yaml");
  REQUIRE(spec.ok());
  auto s = SchedulerImpl::Create(*spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

// HiveD's node choice, written here from scheduler.h rules 3 and 4 (no suggested nodes): a
// stable sort of every node (healthy first, key1 descending, key2 ascending), then the
// cursor greedy; a pod that reaches a bad node fails the request.
std::vector<int32_t> ReferenceNodes(const std::vector<SchedulerImpl::NodeForTesting>& nodes,
                                    const std::vector<int32_t>& needs) {
  std::vector<int32_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    const auto& a = nodes[static_cast<size_t>(x)];
    const auto& b = nodes[static_cast<size_t>(y)];
    if (a.healthy != b.healthy) return a.healthy;
    if (a.key1 != b.key1) return a.key1 > b.key1;
    return a.key2 < b.key2;
  });
  std::vector<int32_t> out(needs.size(), -1);
  size_t cursor = 0;
  int32_t picked = 0;
  for (size_t k = 0; k < needs.size(); ++k) {
    while (true) {
      if (cursor >= order.size()) return {};
      const int32_t n = order[cursor];
      if (nodes[static_cast<size_t>(n)].usable - picked >= needs[k]) {
        if (!nodes[static_cast<size_t>(n)].healthy) return {};
        out[k] = n;
        picked += needs[k];
        break;
      }
      ++cursor;
      picked = 0;
    }
  }
  return out;
}

struct Fixture {
  const char* yaml;
  std::vector<std::string> vcs;
  std::vector<std::string> leaf_types;  // "" = any
  std::vector<std::string> pinned;      // "VC/pinned id"
  int32_t max_leaves;
};

void RandomRun(const Fixture& fx, uint32_t seed, int steps) {
  CAPTURE(seed);
  auto s = MakeImpl(fx.yaml);
  const auto initial = s->Capacity();
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  std::vector<std::string> nodes;
  for (const NodeStatus& n : s->Nodes()) {
    if (std::find(nodes.begin(), nodes.end(), n.name) == nodes.end()) nodes.push_back(n.name);
  }
  int counter = 0;
  struct Log : std::vector<std::string> {
    bool trace = std::getenv("HIVED_TRACE") != nullptr;
    void push_back(const std::string& x) {
      if (trace) std::fprintf(stderr, "%s\n", x.c_str());
      std::vector<std::string>::push_back(x);
    }
  } log;
  for (int step = 0; step < steps; ++step) {
    CAPTURE(step);
    int op = pick(100);
    std::vector<GroupStatus> groups = s->Groups();
    if (op < 50) {
      GroupRequest r;
      r.name = "g" + std::to_string(counter++);
      r.vc = fx.vcs[static_cast<size_t>(pick(static_cast<int>(fx.vcs.size())))];
      int pr = pick(10);
      r.priority = pr < 3 ? -1 : pick(4);
      r.lazy_preemption = pick(3) == 0;
      r.leaf_cell_type =
          fx.leaf_types[static_cast<size_t>(pick(static_cast<int>(fx.leaf_types.size())))];
      int kinds = 1 + pick(2);
      for (int k = 0; k < kinds; ++k) {
        r.members.push_back({1 + pick(3), 1 << pick(4)});
      }
      for (auto& m : r.members) m.leaf_cell_number = std::min(m.leaf_cell_number, fx.max_leaves);
      if (!fx.pinned.empty() && r.priority >= 0 && pick(8) == 0) {
        const std::string& p =
            fx.pinned[static_cast<size_t>(pick(static_cast<int>(fx.pinned.size())))];
        r.vc = p.substr(0, p.find('/'));
        r.pinned_cell_id = p.substr(p.find('/') + 1);
        r.leaf_cell_type.clear();
      }
      if (pick(6) == 0) {
        r.suggested_nodes = std::vector<std::string>();
        for (const std::string& n : nodes) {
          if (pick(4) != 0) r.suggested_nodes->push_back(n);
        }
      }
      Phase phase = pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting;
      auto res = s->Schedule(r, phase);
      std::string desc =
          r.name + " " + r.vc + " p" + std::to_string(r.priority) + " " + r.pinned_cell_id;
      for (auto& m : r.members)
        desc += " " + std::to_string(m.pod_number) + "x" + std::to_string(m.leaf_cell_number);
      desc += phase == Phase::kFiltering ? " F" : " P";
      if (res.ok()) {
        desc += " -> " + std::to_string(static_cast<int>(res->outcome)) + " " + res->reason;
        for (auto& pod : res->placement.pods) desc += " " + pod.node;
        for (auto& v : res->victims) desc += " v:" + v;
      }
      log.push_back(desc);
      if (!res.ok()) {
        CHECK(res.status().code() != absl::StatusCode::kInternal);
      } else if (res->outcome == Outcome::kPlaced && pick(5) != 0) {
        auto info = s->Allocate(r, res->placement);
        INFO(info.status().ToString());
        REQUIRE(info.ok());
        CHECK(!info->downgraded);
      }
    } else if (op < 80) {
      if (!groups.empty()) {
        const GroupStatus& g = groups[static_cast<size_t>(pick(static_cast<int>(groups.size())))];
        if (g.state == GroupState::kReserved) {
          // A kPlaced result left unallocated: bind it, or give it up.
          if (pick(2) == 0) {
            log.push_back("unreserve " + g.name);
            REQUIRE(s->Unreserve(g.name).ok());
          } else {
            log.push_back("allocate reserved " + g.name);
            auto info = s->Allocate(g.request, g.placement);
            INFO(info.status().ToString());
            REQUIRE(info.ok());
          }
        } else if (g.state == GroupState::kPreempting) {
          if (pick(2) == 0) {
            log.push_back("cancel " + g.name);
            REQUIRE(s->CancelPreemption(g.name).ok());
          } else {
            log.push_back("recheck " + g.name);
            // Re-check; allocate once the victims are gone.
            auto res = s->Schedule(g.request, Phase::kPreempting);
            REQUIRE(res.ok());
            if (res->outcome == Outcome::kPlaced) {
              auto info = s->Allocate(g.request, res->placement);
              INFO(info.status().ToString());
              REQUIRE(info.ok());
            }
          }
        } else {
          log.push_back("release " + g.name);
          REQUIRE(s->Release(g.name).ok());
        }
      }
    } else if (op < 90) {
      const std::string& n = nodes[static_cast<size_t>(pick(static_cast<int>(nodes.size())))];
      bool h = pick(3) != 0;
      log.push_back("health " + n + (h ? " ok" : " bad"));
      REQUIRE(s->SetNodeHealthy(n, h).ok());
    } else {
      // Indexed node choice == the independent full sort of tests/unit/scheduler_oracle
      // (public views only, no code shared with src/).
      std::vector<int32_t> needs;
      for (int k = 0, n = 1 + pick(4); k < n; ++k) needs.push_back(1 << pick(3));
      std::sort(needs.begin(), needs.end());
      const oracle::Snapshot snap = oracle::TakeSnapshot(*s);
      auto reference = [&](const std::string& vc, const std::string& chain, Priority q) {
        const bool pass1 = q == kOpportunisticPriority;
        oracle::Choice c = oracle::ChooseNodes(
            oracle::BuildView(*s, snap, vc, chain, q, pass1, std::nullopt), needs, vc.empty());
        return c.failure == oracle::Failure::kNone ? c.pod_node : std::vector<int32_t>();
      };
      for (const ChainLevelCapacity& c : s->Capacity()) {
        if (c.level != 1) continue;
        for (const std::string& vc : fx.vcs) {
          for (Priority q : {kOpportunisticPriority, Priority{2}}) {
            auto a = s->FindNodesForTesting(vc, c.chain, needs, q);
            CAPTURE(vc, c.chain, q);
            CHECK(a == ReferenceNodes(s->ViewNodesForTesting(vc, c.chain, q), needs));
            CHECK(a == reference(vc, c.chain, q));
          }
        }
        auto a = s->FindNodesForTesting("", c.chain, needs, kOpportunisticPriority);
        CAPTURE(c.chain);
        CHECK(a ==
              ReferenceNodes(s->ViewNodesForTesting("", c.chain, kOpportunisticPriority), needs));
        CHECK(a == reference("", c.chain, kOpportunisticPriority));
      }
    }
    absl::Status st = s->CheckInvariants();
    if (!st.ok()) {
      for (size_t i = log.size() > 25 ? log.size() - 25 : 0; i < log.size(); ++i)
        UNSCOPED_INFO(log[i]);
    }
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  // Release everything and heal every node (in either order): back to the initial state.
  if (seed % 2 == 0) {
    for (const std::string& n : nodes) REQUIRE(s->SetNodeHealthy(n, true).ok());
  }
  for (const GroupStatus& g : s->Groups()) {
    if (g.state == GroupState::kPreempting) REQUIRE(s->CancelPreemption(g.name).ok());
    if (g.state == GroupState::kReserved) REQUIRE(s->Unreserve(g.name).ok());
  }
  for (const GroupStatus& g : s->Groups()) REQUIRE(s->Release(g.name).ok());
  for (const std::string& n : nodes) REQUIRE(s->SetNodeHealthy(n, true).ok());
  REQUIRE(s->CheckInvariants().ok());
  auto final_cap = s->Capacity();
  REQUIRE(final_cap.size() == initial.size());
  for (size_t i = 0; i < initial.size(); ++i) {
    CAPTURE(initial[i].chain, initial[i].level);
    CHECK(final_cap[i].free == initial[i].free);
    CHECK(final_cap[i].obtainable == initial[i].obtainable);
    CHECK(final_cap[i].vc_unbound == initial[i].vc_unbound);
  }
}

const uint32_t kSeeds =
    std::getenv("HIVED_SEEDS") ? static_cast<uint32_t>(std::atoi(std::getenv("HIVED_SEEDS"))) : 6;

TEST_CASE("Scheduler internals: random steps keep every invariant (design config)",
          "[scheduler][unit]") {
  Fixture fx{testdata::kDesignYaml,
             {"VC1", "VC2"},
             {"", "DGX2-V100", "DGX1-P100", "CT1"},
             {"VC1/VC1-YQW-CT1", "VC1/VC1-YQW-DGX2", "VC1/VC1-YQW-IB-DGX2"},
             8};
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) RandomRun(fx, seed, 400);
}

TEST_CASE("Scheduler internals: random steps keep every invariant (four racks)",
          "[scheduler][unit]") {
  Fixture fx{testdata::kFourRacksYaml, {"VC1", "VC2", "VC3"}, {""}, {}, 8};
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) RandomRun(fx, seed, 400);
}

TEST_CASE("Scheduler internals: random steps keep every invariant (two racks)",
          "[scheduler][unit]") {
  Fixture fx{testdata::kTwoRacksYaml, {"alpha", "beta", "gamma"}, {""}, {}, 4};
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) RandomRun(fx, seed, 400);
}

}  // namespace
}  // namespace hived
