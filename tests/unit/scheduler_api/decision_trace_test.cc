// The decision trace (issue 9, "Must not change"): a deterministic record of every decision
// the scheduler makes on fixed call sequences, written to the file named by the environment
// variable HIVED_DECISION_TRACE. `scripts/decision-check.sh` runs it on the build before
// and after a change and compares the files byte for byte.
//
// Hidden (tag [.decisions]): it judges nothing by itself; it only records.
//  - The three reference workloads of bench/scheduler_bench.cc (w1 1-GPU guaranteed, w2 a
//    seeded mix with gangs, w3 1-GPU opportunistic) on tests/testdata/bench-configs: every
//    Schedule result (outcome, placement, victims, reason).
//  - Seeded random call sequences on HiveD's configs and the test configs: schedule in both
//    phases (lazy preemption, suggested nodes, pinned cells, leaf types), allocate, release,
//    cancel, node health, and a restart replaying the running placements; every result
//    and, at checkpoints, the full views (groups, physical and virtual cells, usage,
//    capacity, nodes).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"

namespace {

using hived::GroupRequest;
using hived::Phase;
using hived::Scheduler;

std::string PlacementText(const hived::Placement& p) {
  std::string out = absl::StrCat("chain=", p.chain);
  for (const auto& pod : p.pods) {
    absl::StrAppend(&out, " [", pod.leaf_cell_number, "@", pod.node, ":",
                    absl::StrJoin(pod.leaf_cell_indices, ","), " ",
                    absl::StrJoin(pod.preassigned_cell_types, ","), "]");
  }
  return out;
}

std::string ResultText(const absl::StatusOr<hived::ScheduleResult>& r) {
  if (!r.ok()) return absl::StrCat("error ", r.status().ToString());
  return absl::StrCat("outcome=", static_cast<int>(r->outcome), " ", PlacementText(r->placement),
                      " victims=", absl::StrJoin(r->victims, ","), " reason=", r->reason);
}

void PhysicalText(const hived::PhysicalCellStatus& c, std::string* out) {
  absl::StrAppend(out, "  p ", c.address, " ", c.cell_type, " s=", static_cast<int>(c.state),
                  " h=", static_cast<int>(c.health), " pr=", c.priority, " vc=", c.vc,
                  " v=", c.virtual_cell, " pin=", c.pinned_cell_id, "\n");
  for (const auto& k : c.children) PhysicalText(k, out);
}

void VirtualText(const hived::VirtualCellStatus& c, std::string* out) {
  absl::StrAppend(out, "  v ", c.address, " ", c.cell_type, " s=", static_cast<int>(c.state),
                  " h=", static_cast<int>(c.health), " pr=", c.priority, " p=", c.physical_cell,
                  " pin=", c.pinned_cell_id, "\n");
  for (const auto& k : c.children) VirtualText(k, out);
}

std::string StateText(const Scheduler& s) {
  std::string out;
  for (const auto& g : s.Groups()) {
    absl::StrAppend(&out, "  g ", g.name, " vc=", g.vc, " st=", static_cast<int>(g.state),
                    " pr=", g.priority, " ", PlacementText(g.placement), " by=", g.preemptor,
                    " why=", g.downgrade_reason, "\n");
  }
  for (const auto& c : s.PhysicalCluster()) PhysicalText(c, &out);
  for (const auto& vc : s.spec().virtual_clusters) {
    auto cells = s.VirtualCluster(vc.name);
    if (!cells.ok()) continue;
    for (const auto& c : *cells) VirtualText(c, &out);
  }
  for (const auto& u : s.VcUsages()) {
    absl::StrAppend(&out, "  u ", u.vc, " ", u.leaf_cell_type, " ", u.reserved_leaf_cells, " ",
                    u.guaranteed_used_leaf_cells, " ", u.opportunistic_used_leaf_cells, "\n");
  }
  for (const auto& c : s.Capacity()) {
    absl::StrAppend(&out, "  c ", c.chain, " ", c.level, " ", c.total, " ", c.free, " ",
                    c.obtainable, " ", c.bad_free, " ", c.vc_reserved, " ", c.vc_unbound, "\n");
  }
  for (const auto& n : s.Nodes()) {
    absl::StrAppend(&out, "  n ", n.name, " ", n.free_leaf_cells, "/", n.total_leaf_cells, " ",
                    n.healthy, "\n");
  }
  return out;
}

// The reference workloads, exactly as bench/scheduler_bench.cc runs them.
void TraceWorkload(const hived::ClusterSpec& spec, int w, std::string* out) {
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  std::vector<std::string> vcs;
  for (const auto& vc : spec.virtual_clusters) vcs.push_back(vc.name);
  std::vector<bool> full(vcs.size(), false);
  size_t open = vcs.size();
  std::mt19937_64 rng(42);
  GroupRequest req;
  req.priority = w == 3 ? hived::kOpportunisticPriority : 1;
  std::vector<std::string> placed;
  const int64_t max_jobs = 8000;
  for (int64_t job = 0; open > 0 && job < max_jobs * 4; ++job) {
    if (static_cast<int64_t>(placed.size()) >= max_jobs) break;
    const size_t v = static_cast<size_t>(job) % vcs.size();
    if (full[v]) continue;
    req.name = absl::StrCat("j", job);
    req.vc = vcs[v];
    req.members = {{1, 1}};
    if (w == 2) {
      const int r = std::uniform_int_distribution<int>(0, 99)(rng);
      if (r < 40) {
        req.members = {{1, 1}};
      } else if (r < 55) {
        req.members = {{1, 2}};
      } else if (r < 70) {
        req.members = {{1, 4}};
      } else if (r < 85) {
        req.members = {{1, 8}};
      } else if (r < 95) {
        req.members = {{2, 8}};
      } else {
        req.members = {{4, 8}};
      }
    }
    auto r = (*s)->Schedule(req, Phase::kPreempting);
    absl::StrAppend(out, "w", w, " ", req.name, " ", ResultText(r), "\n");
    REQUIRE(r.ok());
    bool ok = r->outcome == hived::Outcome::kPlaced && (*s)->Allocate(req, r->placement).ok();
    if (ok) {
      placed.push_back(req.name);
    } else {
      full[v] = true;
      --open;
    }
  }
  absl::StrAppend(out, StateText(**s));
  for (const std::string& name : placed) REQUIRE((*s)->Release(name).ok());
  absl::StrAppend(out, StateText(**s));
}

// Seeded random calls; every result and periodic full state. With `check_filtering`, every
// Filtering-phase call is also checked to leave the full observable state unchanged.
class RandomTrace {
 public:
  RandomTrace(const hived::ClusterSpec& spec, uint64_t seed, std::string* out,
              bool check_filtering = false)
      : spec_(spec), rng_(seed), out_(out), check_filtering_(check_filtering) {
    auto s = Scheduler::Create(spec);
    REQUIRE(s.ok());
    s_ = std::move(*s);
    for (const auto& n : s_->Nodes()) {
      nodes_.push_back(n.name);
      if (std::find(types_.begin(), types_.end(), n.leaf_cell_type) == types_.end()) {
        types_.push_back(n.leaf_cell_type);
      }
    }
  }

  void Run(int steps) {
    for (int step = 0; step < steps; ++step) {
      const int op = Pick(100);
      if (op < 50) {
        ScheduleRandom();
      } else if (op < 68) {
        ReleaseRandom();
      } else if (op < 74) {
        CancelRandom();
      } else if (op < 86) {
        CompletePreempting();
      } else if (op < 94) {
        const std::string& node =
            nodes_[static_cast<size_t>(Pick(static_cast<int>(nodes_.size())))];
        const bool healthy = Pick(2) == 0;
        absl::Status st = s_->SetNodeHealthy(node, healthy);
        absl::StrAppend(out_, "health ", node, " ", healthy, " ", st.ToString(), "\n");
      } else if (op < 97) {
        Restart();
      } else {
        absl::StrAppend(out_, "state\n", StateText(*s_));
      }
      REQUIRE(s_->CheckInvariants().ok());
    }
    absl::StrAppend(out_, "final\n", StateText(*s_));
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  GroupRequest RandomRequest() {
    GroupRequest r;
    r.name = absl::StrCat("g", next_++);
    const auto& vcs = spec_.virtual_clusters;
    const auto& vc = vcs[static_cast<size_t>(Pick(static_cast<int>(vcs.size())))];
    r.vc = vc.name;
    const int kind = Pick(10);
    r.priority = kind < 3 ? hived::kOpportunisticPriority : Pick(4);
    if (Pick(4) == 0)
      r.leaf_cell_type = types_[static_cast<size_t>(Pick(static_cast<int>(types_.size())))];
    if (r.priority >= 0 && !vc.pinned_cells.empty() && Pick(4) == 0) {
      r.pinned_cell_id =
          vc.pinned_cells[static_cast<size_t>(Pick(static_cast<int>(vc.pinned_cells.size())))]
              .pinned_cell_id;
      r.leaf_cell_type.clear();
    }
    r.lazy_preemption = Pick(3) == 0;
    const int shapes = 1 + Pick(2);
    for (int k = 0; k < shapes; ++k) {
      static constexpr int32_t kSizes[] = {1, 1, 1, 2, 2, 4, 8};
      r.members.push_back({1 + Pick(Pick(5) == 0 ? 4 : 2), kSizes[Pick(7)]});
    }
    if (Pick(6) == 0) {
      std::vector<std::string> sugg;
      for (const std::string& n : nodes_) {
        if (Pick(3) != 0) sugg.push_back(n);
      }
      r.suggested_nodes = std::move(sugg);
    }
    return r;
  }

  // Schedule, checking that the Filtering phase changes nothing observable: groups,
  // physical and virtual cells, usage, capacity, nodes, and the invariants.
  absl::StatusOr<hived::ScheduleResult> Schedule(const GroupRequest& r, Phase phase) {
    if (!check_filtering_ || phase != Phase::kFiltering) return s_->Schedule(r, phase);
    const std::string before = StateText(*s_);
    auto res = s_->Schedule(r, phase);
    REQUIRE(s_->CheckInvariants().ok());
    const std::string after = StateText(*s_);
    if (before != after) {
      INFO("Filtering " << r.name << " -> " << ResultText(res) << " changed the state");
      CHECK(before == after);
    }
    if (res.ok()) {
      ++filtering_checked_;
      if (res->code == hived::ReasonCode::kLazyDowngrade) ++filtering_lazy_;
      if (res->outcome == hived::Outcome::kPreempting) ++filtering_preempting_;
    }
    return res;
  }

 public:
  int64_t filtering_checked() const { return filtering_checked_; }
  int64_t filtering_lazy() const { return filtering_lazy_; }
  int64_t filtering_preempting() const { return filtering_preempting_; }

 private:
  void ScheduleRandom() {
    GroupRequest r = RandomRequest();
    const Phase phase = Pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting;
    auto res = Schedule(r, phase);
    absl::StrAppend(out_, "schedule ", r.name, " ", r.vc, " p", r.priority, " ",
                    static_cast<int>(phase), " ", ResultText(res), "\n");
    if (!res.ok()) return;
    if (phase == Phase::kPreempting && res->outcome == hived::Outcome::kPreempting) {
      requests_.emplace_back(r);
    }
    if (res->outcome == hived::Outcome::kPlaced && phase == Phase::kPreempting) {
      auto info = s_->Allocate(r, res->placement);
      absl::StrAppend(out_, "  allocate ", info.ok() ? info->reason : info.status().ToString(),
                      "\n");
      if (info.ok()) requests_.emplace_back(r);
    }
  }

  void ReleaseRandom() {
    auto groups = s_->Groups();
    if (groups.empty()) return;
    const auto& g = groups[static_cast<size_t>(Pick(static_cast<int>(groups.size())))];
    absl::StrAppend(out_, "release ", g.name, " ", s_->Release(g.name).ToString(), "\n");
  }

  void CancelRandom() {
    for (const auto& g : s_->Groups()) {
      if (g.state == hived::GroupState::kPreempting) {
        absl::StrAppend(out_, "cancel ", g.name, " ", s_->CancelPreemption(g.name).ToString(),
                        "\n");
        return;
      }
    }
  }

  const GroupRequest* FindRequest(const std::string& name) const {
    for (const auto& r : requests_) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }

  void CompletePreempting() {
    for (const auto& g : s_->Groups()) {
      if (g.state != hived::GroupState::kPreempting) continue;
      const GroupRequest* r = FindRequest(g.name);
      if (r == nullptr) continue;
      auto res = Schedule(*r, Pick(3) == 0 ? Phase::kFiltering : Phase::kPreempting);
      absl::StrAppend(out_, "recheck ", g.name, " ", ResultText(res), "\n");
      if (res.ok() && res->outcome == hived::Outcome::kPlaced) {
        auto info = s_->Allocate(*r, res->placement);
        absl::StrAppend(out_, "  allocate ", info.ok() ? info->reason : info.status().ToString(),
                        "\n");
      }
      return;
    }
  }

  // A new scheduler rebuilt from the running groups' placements (work-preserving restart).
  void Restart() {
    auto fresh = Scheduler::Create(spec_);
    REQUIRE(fresh.ok());
    for (const auto& n : s_->Nodes()) {
      if (!n.healthy) REQUIRE((*fresh)->SetNodeHealthy(n.name, false).ok());
    }
    absl::StrAppend(out_, "restart\n");
    for (const auto& g : s_->Groups()) {
      if (g.state == hived::GroupState::kPreempting) continue;
      const GroupRequest* r = FindRequest(g.name);
      if (r == nullptr) continue;
      auto info = (*fresh)->Recover(*r, g.placement);
      absl::StrAppend(
          out_, "  recover ", g.name, " ",
          info.ok() ? absl::StrCat(info->downgraded, " ", info->reason) : info.status().ToString(),
          "\n");
    }
    s_ = std::move(*fresh);
    absl::StrAppend(out_, StateText(*s_));
  }

  const hived::ClusterSpec& spec_;
  std::mt19937_64 rng_;
  std::string* out_;
  std::unique_ptr<Scheduler> s_;
  std::vector<std::string> nodes_;
  std::vector<std::string> types_;
  std::vector<GroupRequest> requests_;
  int64_t next_ = 0;
  bool check_filtering_ = false;
  int64_t filtering_checked_ = 0;
  int64_t filtering_lazy_ = 0;
  int64_t filtering_preempting_ = 0;
};

}  // namespace

// Issue 9 step 3: `Phase::kFiltering` provably changes nothing. Random call sequences on
// HiveD's configs (lazy preemption, suggestions, bad nodes, preempting groups re-checked);
// every Filtering call is bracketed by full snapshots of the observable state.
TEST_CASE("Scheduler: the Filtering phase leaves the whole observable state unchanged",
          "[scheduler_api][property]") {
  const std::string shared = std::string(HIVED_SOURCE_DIR) + "/tests/testdata";  // vendored
  int64_t checked = 0, lazy = 0, preempting = 0;
  for (const char* name : {"design.yaml", "feature-1.yaml", "feature-5.yaml", "feature-33.yaml"}) {
    const std::string config = shared + "/hived-configs/" + name;
    auto spec = hived::LoadClusterSpecFile(config);
    REQUIRE(spec.ok());
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(name, seed);
      std::string out;
      RandomTrace trace(*spec, seed, &out, /*check_filtering=*/true);
      trace.Run(400);
      checked += trace.filtering_checked();
      lazy += trace.filtering_lazy();
      preempting += trace.filtering_preempting();
    }
  }
  // The sequences must reach the interesting cases, or the test proves little.
  CHECK(checked > 500);
  CHECK(preempting > 20);
  CHECK(lazy > 0);
}

TEST_CASE("Decision trace: every decision on fixed call sequences, for before/after comparison",
          "[scheduler_api][.decisions]") {
  const char* path = std::getenv("HIVED_DECISION_TRACE");
  REQUIRE(path != nullptr);
  std::ofstream file(path);
  REQUIRE(file.good());
  const std::string shared = std::string(HIVED_SOURCE_DIR) + "/tests/testdata";  // vendored
  const std::string bench = shared + "/bench-configs/gen-1000-nodes.yaml";
  REQUIRE(std::filesystem::exists(bench));
  auto ref = hived::LoadClusterSpecFile(bench);
  REQUIRE(ref.ok());
  for (int w = 1; w <= 3; ++w) {
    std::string out;
    TraceWorkload(*ref, w, &out);
    file << out;
  }
  std::vector<std::string> configs;
  for (const auto& e : std::filesystem::directory_iterator(shared + "/hived-configs")) {
    configs.push_back(e.path().string());
  }
  for (const char* local :
       {"tests/testdata/sched-hetero-2types.yaml", "tests/testdata/sched-two-racks-4vc.yaml",
        "tests/scenarios/configs/hetero.yaml", "tests/scenarios/configs/pinned.yaml",
        "tests/scenarios/configs/rack-reserved.yaml", "tests/scenarios/configs/two-racks.yaml"}) {
    configs.push_back(std::string(HIVED_SOURCE_DIR) + "/" + local);
  }
  std::sort(configs.begin(), configs.end());
  for (const std::string& config : configs) {
    auto spec = hived::LoadClusterSpecFile(config);
    if (!spec.ok()) {
      file << "config " << config << " " << spec.status().ToString() << "\n";
      continue;
    }
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      std::string out = absl::StrCat("config ", std::filesystem::path(config).filename().string(),
                                     " seed ", seed, "\n");
      RandomTrace(*spec, seed, &out).Run(600);
      file << out;
    }
  }
  REQUIRE(file.good());
}
