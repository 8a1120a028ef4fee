#include "sim/engine/event_queue.h"

#include <cstdint>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/queue_policy.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

TEST_CASE("EventQueue: pops by time, then by push order", "[sim][unit]") {
  EventQueue q;
  const std::vector<std::pair<Time, JobIndex>> pushed = {{5, 0}, {1, 1}, {5, 2},
                                                         {3, 3}, {1, 4}, {5, 5}};
  for (const auto& [t, j] : pushed) q.Push({t, EventKind::kSubmit, j});
  std::vector<JobIndex> order;
  while (!q.empty()) order.push_back(q.Pop().job);
  CHECK(order == std::vector<JobIndex>{1, 4, 3, 0, 2, 5});
}

TEST_CASE("EventQueue: equal times keep push order across thousands of events", "[sim][unit]") {
  EventQueue q;
  for (int i = 0; i < 5000; ++i) q.Push({(i * 7919) % 13, EventKind::kFinish, i});
  Time last_time = -1;
  JobIndex last_job = -1;
  while (!q.empty()) {
    Event e = q.Pop();
    REQUIRE(e.time >= last_time);
    if (e.time == last_time) REQUIRE(e.job > last_job);
    last_time = e.time;
    last_job = e.job;
  }
}

// Queue policies against a scripted "scheduler": `fits` says which jobs can start.
std::vector<JobIndex> RunPass(QueuePolicy* q, const std::vector<bool>& fits) {
  std::vector<JobIndex> started;
  q->Pass([&](JobIndex j) {
    if (!fits[static_cast<size_t>(j)]) return TryResult::kWaiting;
    started.push_back(j);
    return TryResult::kStarted;
  });
  return started;
}

TEST_CASE("QueuePolicy: strict, fifo and backfill differ exactly as documented", "[sim][unit]") {
  // Jobs 0..3 in arrival order: 0 guaranteed (does not fit), 1 opportunistic (fits),
  // 2 guaranteed, other shape (fits), 3 guaranteed, same shape as 0 (fits).
  const std::vector<QueuedJob> jobs = {{0, 0, 0, 0}, {1, -1, 1, 1}, {2, 0, 2, 2}, {3, 0, 0, 3}};
  const std::vector<bool> fits = {false, true, true, true};
  SECTION("strict: the waiting head blocks the whole VC") {
    StrictQueuePolicy q;
    for (const QueuedJob& j : jobs) q.Push(j);
    CHECK(RunPass(&q, fits).empty());
    CHECK(q.size() == 4);
  }
  SECTION("fifo: the head blocks only its priority") {
    FifoQueuePolicy q;
    for (const QueuedJob& j : jobs) q.Push(j);
    CHECK(RunPass(&q, fits) == std::vector<JobIndex>{1});
    CHECK(q.size() == 3);
  }
  SECTION("backfill: later jobs of other shapes start; the blocked shape stays blocked") {
    BackfillQueuePolicy q;
    for (const QueuedJob& j : jobs) q.Push(j);
    // Job 3 has job 0's shape, so it is not tried once job 0 waited.
    CHECK(RunPass(&q, fits) == std::vector<JobIndex>{2, 1});
    CHECK(q.size() == 2);
  }
}

TEST_CASE("QueuePolicy: a requeued job returns to its original place", "[sim][unit]") {
  FifoQueuePolicy q;
  q.Push({5, 0, 0, 5});
  q.Push({9, 0, 0, 9});
  q.Push({2, 0, 0, 2});  // requeued after preemption: arrived before both
  std::vector<JobIndex> order = RunPass(&q, std::vector<bool>(10, true));
  CHECK(order == std::vector<JobIndex>{2, 5, 9});
}

TEST_CASE("ParseNodeEvents: reads time,node,state and locates errors", "[sim][unit]") {
  auto ok = ParseNodeEvents("time,node,state\n30,n1,up\n10,n1,down\n", "ev.csv");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[0].time == 10);
  CHECK_FALSE((*ok)[0].up);
  CHECK((*ok)[1].up);
  auto bad = ParseNodeEvents("time,node,state\n10,n1,sideways\n", "ev.csv");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("ev.csv:2:7: state 'sideways'") !=
        std::string::npos);
}

}  // namespace
}  // namespace hived::sim
