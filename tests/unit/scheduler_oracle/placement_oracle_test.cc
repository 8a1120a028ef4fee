// Random operations on the public Scheduler API, every decision judged by the independent
// placement oracle (placement_oracle.h): node choice (health, suggestion, packing,
// opportunistic preference), opportunistic leaf choice, infeasibility, victims.
#include "unit/scheduler_oracle/placement_oracle.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"

namespace hived {
namespace {

struct Counters {
  int64_t judged = 0;            // decisions the oracle predicted
  int64_t opportunistic = 0;     // of which opportunistic placements checked leaf by leaf
  int64_t guaranteed_pass2 = 0;  // guaranteed placements that needed pass 2
  int64_t waits = 0;             // predicted waits confirmed
  int64_t bad_node_waits = 0;    // of which because of a bad or non-suggested node
};

std::string Describe(const GroupRequest& r) {
  std::string s = r.name + " vc=" + r.vc + " prio=" + std::to_string(r.priority);
  for (const GroupMember& m : r.members)
    s += " " + std::to_string(m.pod_number) + "x" + std::to_string(m.leaf_cell_number);
  if (r.suggested_nodes) {
    s += " suggested=[";
    for (const std::string& n : *r.suggested_nodes) s += n + " ";
    s += "]";
  }
  return s;
}

// Which group uses each physical leaf ("node/index").
std::map<std::string, std::string> LeafUsers(const Scheduler& s) {
  std::map<std::string, std::string> out;
  for (const GroupStatus& g : s.Groups()) {
    for (const PodPlacement& p : g.placement.pods) {
      for (int32_t i : p.leaf_cell_indices) out[p.node + "/" + std::to_string(i)] = g.name;
    }
  }
  return out;
}

class OracleRun {
 public:
  OracleRun(const ClusterSpec& spec, uint64_t seed) : rng_(seed) {
    auto s = Scheduler::Create(spec);
    REQUIRE(s.ok());
    s_ = std::move(*s);
    for (const NodeStatus& n : s_->Nodes()) nodes_.push_back(n.name);
    for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
      if (!vc.virtual_cells.empty()) vcs_.push_back(vc.name);
    }
    chain_ = spec.physical_cells.front().cell_type;
    for (const PhysicalCellSpec& c : spec.physical_cells) REQUIRE(c.cell_type == chain_);
    for (const NodeStatus& n : s_->Nodes()) max_node_ = std::max(max_node_, n.total_leaf_cells);
  }

  void Run(int64_t steps) {
    for (int64_t step = 0; step < steps; ++step) {
      CAPTURE(step);
      const int op = Pick(100);
      if (op < 50) {
        ScheduleNew();
      } else if (op < 85) {
        ReleaseOrResolve();
      } else {
        const std::string& n = nodes_[static_cast<size_t>(Pick(static_cast<int>(nodes_.size())))];
        REQUIRE(s_->SetNodeHealthy(n, Pick(3) != 0).ok());
      }
      const absl::Status st = s_->CheckInvariants();
      INFO(st.ToString());
      REQUIRE(st.ok());
    }
  }

  const Counters& counters() const { return counters_; }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  GroupRequest RandomRequest() {
    GroupRequest r;
    r.name = "g" + std::to_string(next_++);
    r.vc = vcs_[static_cast<size_t>(Pick(static_cast<int>(vcs_.size())))];
    r.priority = Pick(10) < 3 ? kOpportunisticPriority : Pick(4);
    const int kinds = 1 + Pick(2);
    for (int k = 0; k < kinds; ++k) {
      int32_t leaves = 1 << Pick(5);
      if (Pick(12) != 0) leaves = std::min(leaves, max_node_);  // sometimes too big
      r.members.push_back({1 + Pick(2), leaves});
    }
    if (Pick(5) == 0) {
      r.suggested_nodes = std::vector<std::string>();
      for (const std::string& n : nodes_) {
        if (Pick(3) != 0) r.suggested_nodes->push_back(n);
      }
    }
    return r;
  }

  bool AnyPreemption() const {
    for (const GroupStatus& g : s_->Groups()) {
      if (g.state == GroupState::kPreempting || g.state == GroupState::kBeingPreempted) return true;
    }
    return false;
  }

  void ScheduleNew() {
    const GroupRequest r = RandomRequest();
    INFO(Describe(r));
    const bool judge = !AnyPreemption();
    const Phase phase = Pick(5) == 0 ? Phase::kFiltering : Phase::kPreempting;
    // Everything the oracle needs is read before the call.
    const std::map<std::string, std::string> users = LeafUsers(*s_);
    const std::vector<PhysicalCellStatus> physical = s_->PhysicalCluster();
    std::optional<oracle::Choice> expect;
    std::vector<oracle::Node> view;
    bool infeasible = false;
    const std::vector<int32_t> needs = oracle::SortedNeeds(r.members);
    if (judge) Predict(r, needs, &expect, &view, &infeasible);
    auto res = s_->Schedule(r, phase);
    INFO(res.status().ToString());
    if (needs.back() > max_node_) {
      // A pod larger than every node is a malformed request, not a wait.
      CHECK(res.status().code() == absl::StatusCode::kInvalidArgument);
      return;
    }
    REQUIRE(res.ok());
    INFO("outcome " << static_cast<int>(res->outcome) << " reason: " << res->reason);
    if (judge) Judge(r, needs, *res, expect, view, infeasible, users, physical);
    if (phase == Phase::kPreempting && res->outcome == Outcome::kPlaced) {
      auto info = s_->Allocate(r, res->placement);
      INFO(info.status().ToString());
      REQUIRE(info.ok());
      CHECK(!info->downgraded);
    }
  }

  // The oracle's node choice for `r` (guaranteed: pass 1, then pass 2 when the VC has
  // leaves used below the request's priority).
  void Predict(const GroupRequest& r, const std::vector<int32_t>& needs,
               std::optional<oracle::Choice>* expect, std::vector<oracle::Node>* view,
               bool* infeasible) {
    const bool opportunistic = r.priority == kOpportunisticPriority;
    const std::string vc = opportunistic ? "" : r.vc;
    auto nodes = oracle::BuildView(*s_, vc, chain_, r.priority, /*pass1=*/true, r.suggested_nodes);
    int32_t max_total = 0, all = 0, asked = 0;
    bool below = false;
    for (const oracle::Node& n : nodes) {
      max_total = std::max(max_total, n.total);
      all += n.total;
    }
    for (int32_t need : needs) asked += need;
    *infeasible = needs.back() > max_total || asked > all;
    oracle::Choice c = oracle::ChooseNodes(nodes, needs, opportunistic);
    if (!opportunistic && c.failure != oracle::Failure::kNone) {
      auto pass2 =
          oracle::BuildView(*s_, vc, chain_, r.priority, /*pass1=*/false, r.suggested_nodes);
      for (size_t i = 0; i < nodes.size(); ++i) below = below || pass2[i].usable > nodes[i].usable;
      // "Leaves used below the request's priority" anywhere in the VC's view.
      if (below) {
        nodes = pass2;
        c = oracle::ChooseNodes(nodes, needs, false);
        if (c.failure == oracle::Failure::kNone) ++counters_.guaranteed_pass2;
      }
    }
    *expect = c;
    *view = nodes;
  }

  void Judge(const GroupRequest& r, const std::vector<int32_t>& needs, const ScheduleResult& res,
             const std::optional<oracle::Choice>& expect, const std::vector<oracle::Node>& view,
             bool infeasible, const std::map<std::string, std::string>& users,
             const std::vector<PhysicalCellStatus>& physical) {
    if (!expect) return;
    ++counters_.judged;
    const bool opportunistic = r.priority == kOpportunisticPriority;
    if (infeasible) {
      CHECK(res.outcome == Outcome::kInfeasible);
      return;
    }
    CHECK(res.outcome != Outcome::kInfeasible);
    if (expect->failure != oracle::Failure::kNone) {
      CHECK(res.outcome == Outcome::kWaiting);
      ++counters_.waits;
      if (expect->failure == oracle::Failure::kNoCapacity) {
        CHECK(res.reason.find("insufficient capacity") != std::string::npos);
      } else {
        ++counters_.bad_node_waits;
        const oracle::Node& n = view[static_cast<size_t>(expect->blocking_node)];
        const char* what =
            expect->failure == oracle::Failure::kBadNode ? "bad node " : "non-suggested node ";
        CHECK(res.reason.find(std::string("have to use at least one ") + what +
                              (n.physical_node.empty() ? n.name : n.physical_node)) !=
              std::string::npos);
      }
      return;
    }
    if (!opportunistic && res.outcome == Outcome::kWaiting) {
      // The virtual placement exists; only its binding may fail (rule 6).
      CHECK(res.reason.find("mapping the virtual placement") != std::string::npos);
      return;
    }
    REQUIRE((res.outcome == Outcome::kPlaced || res.outcome == Outcome::kPreempting));
    REQUIRE(res.placement.pods.size() == needs.size());
    CHECK(res.placement.chain == chain_);
    std::set<std::string> chosen;
    std::map<std::string, std::set<int32_t>> taken;
    for (size_t k = 0; k < needs.size(); ++k) {
      const PodPlacement& pod = res.placement.pods[k];
      const oracle::Node& n = view[static_cast<size_t>(expect->pod_node[k])];
      CAPTURE(k, n.name);
      CHECK(pod.leaf_cell_number == needs[k]);
      CHECK(static_cast<int32_t>(pod.leaf_cell_indices.size()) == needs[k]);
      if (!n.physical_node.empty()) {
        CHECK(pod.node == n.physical_node);
      } else {
        // An unbound virtual node binds to a healthy, suggested physical cell (rule 6).
        CHECK(oracle::NodeHealth(*s_).at(pod.node));
        CHECK(oracle::Suggested(r.suggested_nodes, pod.node));
      }
      if (opportunistic) {
        const PhysicalCellStatus* cell = oracle::FindNode(physical, pod.node);
        REQUIRE(cell != nullptr);
        CHECK(pod.leaf_cell_indices == oracle::ChooseFreeLeaves(*cell, needs[k], &taken[pod.node]));
      }
      for (int32_t i : pod.leaf_cell_indices) chosen.insert(pod.node + "/" + std::to_string(i));
    }
    if (opportunistic) ++counters_.opportunistic;
    // Victims: exactly the groups on the chosen leaves; opportunistic ones of any VC or
    // lower-priority ones of the same VC.
    std::set<std::string> expected_victims;
    for (const std::string& leaf : chosen) {
      auto it = users.find(leaf);
      if (it != users.end()) expected_victims.insert(it->second);
    }
    CHECK(std::set<std::string>(res.victims.begin(), res.victims.end()) == expected_victims);
    CHECK(std::is_sorted(res.victims.begin(), res.victims.end()));
    CHECK((res.outcome == Outcome::kPreempting) == !res.victims.empty());
    for (const std::string& v : res.victims) {
      const GroupStatus g = s_->GetGroup(v);
      CAPTURE(v);
      CHECK(!opportunistic);
      CHECK((g.priority == kOpportunisticPriority || (g.vc == r.vc && g.priority < r.priority)));
    }
  }

  // Releases a running group, or moves a preemption on (victims released, then allocate),
  // or cancels it.
  void ReleaseOrResolve() {
    const std::vector<GroupStatus> groups = s_->Groups();
    if (groups.empty()) return;
    const GroupStatus& g = groups[static_cast<size_t>(Pick(static_cast<int>(groups.size())))];
    if (g.state != GroupState::kPreempting) {
      REQUIRE(s_->Release(g.name).ok());
      return;
    }
    if (Pick(3) == 0) {
      REQUIRE(s_->CancelPreemption(g.name).ok());
      return;
    }
    for (const GroupStatus& v : groups) {
      if (v.state == GroupState::kBeingPreempted && v.preemptor == g.name)
        REQUIRE(s_->Release(v.name).ok());
    }
    GroupRequest r;
    r.name = g.name;
    r.vc = g.vc;
    r.priority = g.priority;
    for (const PodPlacement& pod : g.placement.pods) r.members.push_back({1, pod.leaf_cell_number});
    auto res = s_->Schedule(r, Phase::kPreempting);
    REQUIRE(res.ok());
    if (res->outcome == Outcome::kPlaced) {
      CHECK(res->placement.pods.size() == g.placement.pods.size());
      REQUIRE(s_->Allocate(r, res->placement).ok());
    }
  }

  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> s_;
  std::vector<std::string> nodes_;
  std::vector<std::string> vcs_;
  std::string chain_;
  int32_t max_node_ = 0;
  int next_ = 0;
  Counters counters_;
};

void RunOracle(const std::string& config) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  const uint64_t seed =
      GENERATE(range(testing::PropertyFirstSeed(1), testing::PropertySeedEnd(1, 8)));
  CAPTURE(config, seed);
  OracleRun run(*spec, seed);
  const int64_t steps = testing::PropertySteps(600);
  run.Run(steps);
  // The walk must reach what it judges.
  const Counters& c = run.counters();
  CHECK(c.judged > steps / 5);
  CHECK(c.opportunistic > 0);
  CHECK(c.waits > 0);
  CHECK(c.bad_node_waits > 0);
}

const std::string kSource = HIVED_SOURCE_DIR;

TEST_CASE("Placement oracle: random steps on two racks of 4-GPU nodes", "[scheduler][oracle]") {
  RunOracle(kSource + "/tests/scenarios/configs/two-racks.yaml");
}

TEST_CASE("Placement oracle: random steps on 8-GPU nodes of quads", "[scheduler][oracle]") {
  RunOracle(kSource + "/tests/scenarios/configs/quads.yaml");
}

TEST_CASE("Placement oracle: random steps on two racks of four 8-GPU nodes, socket VCs",
          "[scheduler][oracle]") {
  RunOracle(kSource + "/tests/testdata/sched-two-racks-4vc.yaml");
}

}  // namespace
}  // namespace hived
