// Issue 12 item 4: one Scheduler shared by threads. Writer threads schedule (both phases),
// allocate (a Preempting-phase kPlaced result is reserved: its Allocate must succeed),
// unreserve, preempt, cancel, release and flip node health; reader threads call every view
// and CheckInvariants meanwhile. Built with -fsanitize=thread in CI (the `tsan` preset), so
// a data race in the façade's locking is a failure; without TSan it still checks that every
// view taken concurrently is well formed and that the state stays consistent.
//
// Catch2's assertion macros are not thread-safe: threads record problems in a Log, and the
// test thread checks it after joining.
//
// Knobs: HIVED_STRESS_OPS (operations per writer thread, default 3000).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "support/testdata.h"

namespace hived {
namespace {

// Problems found by the threads, checked on the test thread.
class Log {
 public:
  void Add(std::string problem) {
    std::lock_guard<std::mutex> guard(mu_);
    if (problems_.size() < 20) problems_.push_back(std::move(problem));
    ++count_;
  }
  std::vector<std::string> problems() const {
    std::lock_guard<std::mutex> guard(mu_);
    return problems_;
  }
  int64_t count() const {
    std::lock_guard<std::mutex> guard(mu_);
    return count_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> problems_;  // the first few
  int64_t count_ = 0;
};

struct Counters {
  std::atomic<int64_t> placed{0};
  std::atomic<int64_t> allocated{0};
  std::atomic<int64_t> allocate_refused{0};  // cells taken by another thread in between
  std::atomic<int64_t> preempting{0};
  std::atomic<int64_t> unreserved{0};
  std::atomic<int64_t> released{0};
  std::atomic<int64_t> views{0};
  std::atomic<int64_t> invariant_checks{0};
};

// One writer: its own group names, so its bookkeeping is private; it may release any
// thread's group when that group is its victim.
class Writer {
 public:
  Writer(Scheduler* scheduler, int id, uint64_t seed, Log* log, Counters* counters)
      : scheduler_(scheduler), id_(id), rng_(seed), log_(log), counters_(counters) {
    for (const NodeStatus& n : scheduler_->Nodes()) nodes_.push_back(n.name);
  }

  void Run(int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) Step();
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  void Step() {
    const int dice = Pick(100);
    if (dice < 45) {
      ScheduleNew();
    } else if (dice < 60) {
      RecheckPreempting();
    } else if (dice < 90) {
      ReleaseOwn();
    } else if (dice < 93 && id_ == 0) {
      const std::string& node = nodes_[static_cast<size_t>(Pick(static_cast<int>(nodes_.size())))];
      Expect(scheduler_->SetNodeHealthy(node, Pick(3) != 0), "SetNodeHealthy");
    } else {
      const GroupStatus g = scheduler_->GetGroup(Name(Pick(static_cast<int>(next_) + 1)));
      counters_->views.fetch_add(1);
      if (g.state != GroupState::kAbsent && g.name.rfind(absl::StrCat("w", id_, "-"), 0) != 0) {
        log_->Add(absl::StrCat("GetGroup returned ", g.name, " for another name"));
      }
    }
  }

  std::string Name(int64_t n) const { return absl::StrCat("w", id_, "-", n); }

  void ScheduleNew() {
    static const char* const kVcs[] = {"v1", "v2", "v3", "v4"};
    static const Priority kPriorities[] = {kOpportunisticPriority, 0, 1, 5};
    static const int32_t kSizes[] = {1, 2, 4, 8};
    GroupRequest req;
    req.name = Name(next_++);
    req.vc = kVcs[Pick(4)];
    req.priority = kPriorities[Pick(4)];
    req.lazy_preemption = Pick(4) == 0;
    req.members = {{1 + Pick(2), kSizes[Pick(4)]}};
    const Phase phase = Pick(5) == 0 ? Phase::kFiltering : Phase::kPreempting;
    absl::StatusOr<ScheduleResult> result = scheduler_->Schedule(req, phase);
    if (!Expect(result.status(), "Schedule")) return;
    if (result->outcome == Outcome::kPlaced) {
      counters_->placed.fetch_add(1);
      if (phase == Phase::kPreempting && Pick(6) == 0) {
        // A failed bind: the reservation is given back.
        if (Expect(scheduler_->Unreserve(req.name), "Unreserve")) {
          counters_->unreserved.fetch_add(1);
        }
        return;
      }
      Allocate(req, result->placement, /*reserved=*/phase == Phase::kPreempting);
    } else if (result->outcome == Outcome::kPreempting && phase == Phase::kPreempting) {
      counters_->preempting.fetch_add(1);
      preempting_[req.name] = req;
      for (const std::string& victim : result->victims) ReleaseAny(victim);
    }
  }

  // `reserved`: the placement is a kPlaced reservation, which no other thread can take.
  void Allocate(const GroupRequest& req, const Placement& placement, bool reserved) {
    absl::StatusOr<AllocateInfo> info = scheduler_->Allocate(req, placement);
    if (info.ok()) {
      counters_->allocated.fetch_add(1);
      running_.push_back(req.name);
    } else if (info.status().code() == absl::StatusCode::kFailedPrecondition && !reserved) {
      // A Filtering result (another thread acted in between), or a Preempting group's
      // reservation cancelled by another thread's preemptor.
      counters_->allocate_refused.fetch_add(1);
    } else {
      log_->Add(absl::StrCat("Allocate ", req.name, ": ", info.status().ToString()));
    }
  }

  // Schedules a Preempting group again; allocates it once its victims are gone, or cancels.
  void RecheckPreempting() {
    if (preempting_.empty()) return;
    auto it = preempting_.begin();
    std::advance(it, Pick(static_cast<int>(preempting_.size())));
    const GroupRequest req = it->second;
    preempting_.erase(it);
    if (Pick(4) == 0) {
      const absl::Status s =
          Pick(2) == 0 ? scheduler_->CancelPreemption(req.name) : scheduler_->Unreserve(req.name);
      // Another group's reservation may have cancelled it already.
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound &&
          s.code() != absl::StatusCode::kFailedPrecondition) {
        log_->Add(absl::StrCat("CancelPreemption ", req.name, ": ", s.ToString()));
      }
      return;
    }
    absl::StatusOr<ScheduleResult> result = scheduler_->Schedule(req, Phase::kPreempting);
    if (!Expect(result.status(), "Schedule (re-check)")) return;
    if (result->outcome == Outcome::kPlaced) {
      Allocate(req, result->placement, /*reserved=*/false);
    } else if (result->outcome == Outcome::kPreempting) {
      preempting_[req.name] = req;
      for (const std::string& victim : result->victims) ReleaseAny(victim);
    }
  }

  void ReleaseOwn() {
    if (running_.empty()) return;
    const size_t i = static_cast<size_t>(Pick(static_cast<int>(running_.size())));
    const std::string name = running_[i];
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    ReleaseAny(name);
  }

  // Releases a group; another thread may have released it first (kNotFound).
  void ReleaseAny(const std::string& name) {
    const absl::Status s = scheduler_->Release(name);
    if (s.ok()) {
      counters_->released.fetch_add(1);
    } else if (s.code() != absl::StatusCode::kNotFound &&
               s.code() != absl::StatusCode::kFailedPrecondition) {
      log_->Add(absl::StrCat("Release ", name, ": ", s.ToString()));
    }
  }

  bool Expect(const absl::Status& s, const char* what) {
    if (!s.ok()) log_->Add(absl::StrCat(what, ": ", s.ToString()));
    return s.ok();
  }

  Scheduler* scheduler_;
  int id_;
  std::mt19937_64 rng_;
  Log* log_;
  Counters* counters_;
  std::vector<std::string> nodes_;
  int64_t next_ = 0;
  std::vector<std::string> running_;
  std::map<std::string, GroupRequest> preempting_;
};

// Takes every view in turn until `stop`, checking that each is well formed on its own.
void ReadViews(const Scheduler& scheduler, int id, const std::atomic<bool>& stop, Log* log,
               Counters* counters) {
  const std::vector<std::string> vcs = {"v1", "v2", "v3", "v4"};
  for (int64_t round = 0; !stop.load(); ++round) {
    switch ((round + id) % 7) {
      case 0: {
        const std::vector<GroupStatus> groups = scheduler.Groups();
        for (size_t i = 0; i < groups.size(); ++i) {
          if (groups[i].state == GroupState::kAbsent) log->Add("Groups lists an absent group");
          if (i > 0 && !(groups[i - 1].name < groups[i].name)) log->Add("Groups not sorted");
        }
        break;
      }
      case 1: {
        const absl::Status s = scheduler.CheckInvariants();
        counters->invariant_checks.fetch_add(1);
        if (!s.ok()) log->Add(absl::StrCat("CheckInvariants: ", s.ToString()));
        break;
      }
      case 2:
        for (const NodeStatus& n : scheduler.Nodes()) {
          if (n.free_leaf_cells < 0 || n.free_leaf_cells > n.total_leaf_cells) {
            log->Add(absl::StrCat("node ", n.name, " free ", n.free_leaf_cells));
          }
        }
        break;
      case 3:
        if (scheduler.PhysicalCluster().size() != 2) log->Add("PhysicalCluster lost a rack");
        break;
      case 4: {
        const auto view = scheduler.VirtualCluster(vcs[static_cast<size_t>(round / 7) % 4]);
        if (!view.ok()) log->Add(absl::StrCat("VirtualCluster: ", view.status().ToString()));
        break;
      }
      case 5:
        for (const VcUsage& u : scheduler.VcUsages()) {
          if (u.guaranteed_used_leaf_cells > u.reserved_leaf_cells) {
            log->Add(absl::StrCat("VC ", u.vc, " uses more than it reserves"));
          }
        }
        break;
      default:
        for (const ChainLevelCapacity& c : scheduler.Capacity()) {
          if (c.free < 0 || c.free > c.total) log->Add("Capacity: free out of range");
        }
        break;
    }
    counters->views.fetch_add(1);
  }
}

TEST_CASE("Scheduler: writers and readers on one scheduler in threads keep it consistent",
          "[scheduler][stress]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(*spec);
  REQUIRE(created.ok());
  Scheduler& scheduler = **created;
  const int64_t ops = testing::EnvKnob("HIVED_STRESS_OPS", 3000, 1);

  Log log;
  Counters counters;
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] { ReadViews(scheduler, r, stop, &log, &counters); });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] {
      Writer(&scheduler, w, 1000 + static_cast<uint64_t>(w), &log, &counters).Run(ops);
    });
  }
  for (std::thread& t : writers) t.join();
  stop.store(true);
  for (std::thread& t : readers) t.join();

  for (const std::string& problem : log.problems()) FAIL_CHECK(problem);
  CHECK(log.count() == 0);
  REQUIRE(scheduler.CheckInvariants().ok());
  // The threads must have done what the test claims to exercise.
  CAPTURE(counters.placed.load(), counters.allocated.load(), counters.allocate_refused.load(),
          counters.preempting.load(), counters.unreserved.load(), counters.released.load(),
          counters.views.load());
  CHECK(counters.allocated.load() > ops / 10);
  CHECK(counters.preempting.load() > 0);
  CHECK(counters.unreserved.load() > 0);
  CHECK(counters.released.load() > ops / 10);
  CHECK(counters.invariant_checks.load() > 0);

  // Everything released, every node is free again (health restored first).
  for (const NodeStatus& n : scheduler.Nodes())
    REQUIRE(scheduler.SetNodeHealthy(n.name, true).ok());
  for (const GroupStatus& g : scheduler.Groups()) {
    if (g.state == GroupState::kPreempting || g.state == GroupState::kReserved) {
      REQUIRE(scheduler.Unreserve(g.name).ok());
    } else {
      REQUIRE(scheduler.Release(g.name).ok());
    }
  }
  CHECK(scheduler.Groups().empty());
  for (const NodeStatus& n : scheduler.Nodes()) CHECK(n.free_leaf_cells == n.total_leaf_cells);
  REQUIRE(scheduler.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived
