// The engine against a hand-checkable backend: each VC is a pool of GPUs, a job fits when
// the VC's free GPUs cover it. No topology, no preemption: start times follow from the
// queue policy alone.
#include "sim/engine/engine.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/metrics.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

ClusterSpec PoolSpec() {
  // Two VCs of 8 GPUs (one 8-GPU node each) on two nodes.
  ClusterSpec spec;
  spec.cell_types = {{"NODE", "G", 8, true}};
  spec.physical_cells = {{"NODE", "n0", "", {}}, {"NODE", "n1", "", {}}};
  spec.virtual_clusters = {{"A", {{"NODE", 1}}, {}}, {"B", {{"NODE", 1}}, {}}};
  return spec;
}

class PoolBackend : public ClusterBackend {
 public:
  explicit PoolBackend(const SpecInfo& info) : info_(info), used_(2, 0) {}
  std::string_view policy_name() const override { return "pool"; }
  const std::vector<std::string>& nodes() const override { return nodes_; }
  absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions&) override {
    StartAttempt a;
    ++calls_;
    const size_t v = static_cast<size_t>(job.vc);
    if (used_[v] + job.gpus <= info_.VcReservedGpus(job.vc)) {
      used_[v] += job.gpus;
      a.kind = StartAttempt::Kind::kStarted;
    }
    return a;
  }
  absl::Status FinishPreemption(const SimJob&) override { return absl::OkStatus(); }
  absl::Status Release(const SimJob& job) override {
    used_[static_cast<size_t>(job.vc)] -= job.gpus;
    return absl::OkStatus();
  }
  absl::Status SetNodeHealthy(int32_t, bool) override { return absl::OkStatus(); }
  NodeList JobNodes(JobIndex) const override { return {}; }
  bool ReleaseHelpsAllVcs() const override { return false; }
  bool SharesIdleCells() const override { return false; }
  absl::Status CheckInvariants() const override { return absl::OkStatus(); }
  int64_t total_gpus() const override { return 16; }
  int64_t used_gpus() const override { return used_[0] + used_[1]; }
  int64_t fragmented_free_gpus() const override { return 0; }
  int64_t schedule_calls() const override { return calls_; }

 private:
  const SpecInfo& info_;
  std::vector<int64_t> used_;
  std::vector<std::string> nodes_ = {"n0", "n1"};
  int64_t calls_ = 0;
};

Trace MakeTrace(const std::string& csv) {
  absl::StatusOr<Trace> t = HivedTraceSource({}).Parse(csv, "test.csv");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

// Start time per job id.
std::map<std::string, Time> Starts(const EngineResult& r, const Trace& t) {
  std::map<std::string, Time> out;
  for (size_t j = 0; j < r.records.size(); ++j) out[t.jobs[j].id.str()] = r.records[j].first_start;
  return out;
}

EngineResult Replay(const Trace& trace, QueueKind queue, Time horizon = -1) {
  const ClusterSpec spec = PoolSpec();
  SpecInfo info(spec);
  PoolBackend backend(info);
  EngineOptions options;
  options.queue = queue;
  options.horizon = horizon;
  Engine engine(info, &backend, options);
  absl::StatusOr<EngineResult> r = engine.Run(trace, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *std::move(r);
}

const char kHeader[] = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";

TEST_CASE("Engine: fifo blocks behind a waiting head, backfill lets a smaller job through",
          "[sim][unit]") {
  const Trace trace = MakeTrace(std::string(kHeader) +
                                "j1,0,A,0,1,6,,100\n"
                                "j2,1,A,0,1,4,,10\n"
                                "j3,2,A,0,1,2,,10\n");
  SECTION("fifo") {
    auto s = Starts(Replay(trace, QueueKind::kFifo), trace);
    CHECK(s["j1"] == 0);
    CHECK(s["j2"] == 100);
    CHECK(s["j3"] == 100);
  }
  SECTION("backfill") {
    auto s = Starts(Replay(trace, QueueKind::kBackfill), trace);
    CHECK(s["j1"] == 0);
    CHECK(s["j3"] == 2);
    CHECK(s["j2"] == 100);
  }
}

TEST_CASE("Engine: strict serves arrival order across priorities, fifo serves priorities first",
          "[sim][unit]") {
  const Trace trace = MakeTrace(std::string(kHeader) +
                                "j1,0,A,0,1,8,,100\n"
                                "o1,1,A,-1,1,4,,10\n"
                                "g2,2,A,0,1,8,,100\n");
  SECTION("strict") {
    auto s = Starts(Replay(trace, QueueKind::kStrict), trace);
    CHECK(s["j1"] == 0);
    CHECK(s["o1"] == 100);
    CHECK(s["g2"] == 110);
  }
  SECTION("fifo") {
    auto s = Starts(Replay(trace, QueueKind::kFifo), trace);
    CHECK(s["g2"] == 100);
    CHECK(s["o1"] == 200);
  }
}

TEST_CASE("Engine: VCs queue independently, a job of one VC never waits for another's",
          "[sim][unit]") {
  const Trace trace = MakeTrace(std::string(kHeader) +
                                "a1,0,A,0,1,8,,100\n"
                                "a2,0,A,0,1,8,,100\n"
                                "b1,5,B,0,1,8,,10\n");
  auto s = Starts(Replay(trace, QueueKind::kStrict), trace);
  CHECK(s["a2"] == 100);
  CHECK(s["b1"] == 5);
}

TEST_CASE("Engine: accounts for every job, also when stopped early", "[sim][unit]") {
  const Trace trace = MakeTrace(std::string(kHeader) +
                                "a1,0,A,0,1,8,,100\n"
                                "a2,0,A,0,1,8,,100\n"
                                "a3,0,A,0,1,8,,100\n"
                                "x1,0,NOPE,0,1,1,,100\n"
                                "big,1,B,0,2,8,,5\n"
                                "b1,2,B,0,1,2,,20\n");
  const ClusterSpec spec = PoolSpec();
  SpecInfo info(spec);
  const EngineResult r = Replay(trace, QueueKind::kFifo, /*horizon=*/150);
  const Summary s = Summarize(r, info, {});
  CHECK(s.accounting_ok);
  CHECK(s.all.submitted == 6);
  CHECK(s.all.completed == 2);  // a1 (0-100), b1 (2-22)
  CHECK(s.all.running == 1);    // a2 (100-200)
  CHECK(s.all.queued == 1);     // a3
  CHECK(s.all.rejected == 2);   // unknown VC; 16 GPUs > B's 8
  CHECK(s.end == 150);
  REQUIRE(s.vcs.size() == 2);
  CHECK(s.vcs[0].submitted == 3);
  CHECK(s.vcs[1].submitted == 2);  // x1 counts only under "all"
  REQUIRE(s.rejection_reasons.size() == 2);
  CHECK(s.rejection_reasons[0].first == "VC 'NOPE' is not in the config");
  CHECK(s.rejection_reasons[1].first == "needs 16 GPUs but VC B reserves only 8 in virtual cells");
  // Utilisation: A 8 GPUs over [0,150], B 2 GPUs over [2,22] -> (1200 + 40) / (16 * 150).
  CHECK(s.utilisation == Approx(1240.0 / 2400.0));
}

TEST_CASE("RareString: empty costs no allocation, copies are deep, empty text clears",
          "[sim][unit]") {
  RareString a;
  CHECK(a.empty());
  CHECK(a.view().empty());
  a = std::string("too big");
  CHECK_FALSE(a.empty());
  CHECK(a == "too big");
  RareString b = a;  // a deep copy: changing one leaves the other
  a = std::string("other");
  CHECK(b == "too big");
  CHECK(a == "other");
  b = a;
  CHECK(b == "other");
  const RareString& same = b;
  b = same;  // self-assignment keeps the text
  CHECK(b == "other");
  RareString c = std::move(a);
  CHECK(c == "other");
  c = std::string();
  CHECK(c.empty());
  static_assert(sizeof(RareString) == sizeof(void*));
  static_assert(sizeof(GangMember) == 8);
}

TEST_CASE("Rare: absent reads as T(), the first write allocates, copies are deep", "[sim][unit]") {
  Rare<JobRarities> a;
  CHECK(a.get().reason.empty());
  CHECK(a.get().gpu_seconds_lost == 0);
  a.mutable_get().gpu_seconds_lost += 40;
  Rare<JobRarities> b = a;
  b.mutable_get().gpu_seconds_lost += 2;
  CHECK(a.get().gpu_seconds_lost == 40);
  CHECK(b.get().gpu_seconds_lost == 42);
  a = b;
  CHECK(a.get().gpu_seconds_lost == 42);
  const Rare<JobRarities>& same = a;
  a = same;
  CHECK(a.get().gpu_seconds_lost == 42);
  Rare<JobRarities> c = std::move(a);
  CHECK(c.get().gpu_seconds_lost == 42);
  JobRecord rec;
  CHECK(rec.reason().empty());
  rec.rare.mutable_get().reason = "never fits";
  CHECK(rec.reason() == "never fits");
  CHECK(rec.failure_gpu_seconds_lost() == 0);
  static_assert(sizeof(RunNodes) == 8);
  static_assert(sizeof(JobRecord) == 72);
}

TEST_CASE("RunNodes holds what a NodeList holds, through random assigns, copies and moves",
          "[sim][unit]") {
  // Model: a NodeList per slot; each step assigns, copies or moves between slots and checks
  // every slot against its model (size, elements, comparisons, empty).
  std::mt19937 rng(7);
  constexpr int kSlots = 6;
  std::vector<RunNodes> slots(kSlots);
  std::vector<NodeList> model(kSlots);
  for (int step = 0; step < 5000; ++step) {
    const size_t i = rng() % kSlots;
    const size_t k = rng() % kSlots;
    switch (rng() % 4) {
      case 0: {  // assign a sorted list of 0..5 nodes, big ids included
        NodeList nodes;
        const size_t n = rng() % 6;
        for (size_t m = 0; m < n; ++m) {
          nodes.push_back(
              static_cast<int32_t>(rng() % 3 == 0 ? INT32_MAX - rng() % 4 : rng() % 50));
        }
        std::sort(nodes.begin(), nodes.end());
        slots[i] = nodes;
        model[i] = nodes;
        break;
      }
      case 1:
        slots[i] = slots[k];
        model[i] = model[k];
        break;
      case 2:
        if (i != k) {
          slots[i] = std::move(slots[k]);
          model[i] = model[k];
          model[k].clear();
          CHECK(slots[k].empty());
        }
        break;
      default: {
        RunNodes copy(slots[i]);
        RunNodes moved(std::move(copy));
        CHECK(moved == slots[i]);
        CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
        break;
      }
    }
    for (size_t s = 0; s < kSlots; ++s) {
      REQUIRE(slots[s].size() == model[s].size());
      CHECK(slots[s].empty() == model[s].empty());
      CHECK(slots[s] == model[s]);
      CHECK(std::vector<int32_t>(slots[s].begin(), slots[s].end()) ==
            std::vector<int32_t>(model[s].begin(), model[s].end()));
      for (size_t m = 0; m < model[s].size(); ++m) CHECK(slots[s][m] == model[s][m]);
    }
  }
}

}  // namespace
}  // namespace hived::sim
