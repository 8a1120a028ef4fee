#include "sim/engine/event_loop.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/engine/event_queue.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

// A model that records what the loop asks of it: arrivals from a list (in order), heap
// events pushed up front or in reaction to an arrival, stale events by a marker.
template <TiePolicy kPolicy>
struct ToyModel {
  static constexpr TiePolicy kTies = kPolicy;

  std::vector<std::pair<Time, JobIndex>> arrivals;  // sorted by time
  size_t next = 0;
  EventQueue* queue = nullptr;
  // On an arrival of this job: push a heap event at the same time (a departure at once).
  JobIndex echo_job = -1;
  std::vector<std::string> log;
  std::vector<Time> advanced;
  absl::Status handle_error;
  absl::Status invariant_error;
  int64_t handled = 0;

  bool HasArrival() const { return next < arrivals.size(); }
  Time ArrivalTime() const { return arrivals[next].first; }
  absl::StatusOr<Event> TakeArrival() {
    Event e;
    e.time = arrivals[next].first;
    e.kind = EventKind::kSubmit;
    e.job = arrivals[next].second;
    ++next;
    return e;
  }
  // A finish with epoch 7 is stale.
  bool Stale(const Event& top) const { return top.kind == EventKind::kFinish && top.epoch == 7; }
  void Advance(Time t) {
    advanced.push_back(t);
    log.push_back(absl::StrCat("advance ", t));
  }
  absl::Status Handle(const Event& e) {
    if (!handle_error.ok()) return handle_error;
    ++handled;
    if (Stale(e)) {
      log.push_back(absl::StrCat("stale ", e.job, "@", e.time));
      return absl::OkStatus();
    }
    const bool arrival = e.kind == EventKind::kSubmit;
    log.push_back(absl::StrCat(arrival ? "arrive " : "heap ", e.job, "@", e.time));
    if (arrival && e.job == echo_job) queue->Push({e.time, EventKind::kFinish, e.job + 100});
    return absl::OkStatus();
  }
  absl::Status EndOfTime() {
    log.push_back("end of time");
    return absl::OkStatus();
  }
  absl::Status CheckInvariants() const { return invariant_error; }
  double Progress() const {
    return arrivals.empty() ? 1.0
                            : static_cast<double>(next) / static_cast<double>(arrivals.size());
  }
};

Event HeapEvent(Time t, JobIndex job, int32_t epoch = 0) {
  Event e;
  e.time = t;
  e.kind = EventKind::kFinish;
  e.job = job;
  e.epoch = epoch;
  return e;
}

TEST_CASE("EventLoop: arrivals first at equal times then heap events then the end of time",
          "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kArrivalsFirst> m;
  m.queue = &q;
  m.arrivals = {{5, 0}, {5, 1}, {9, 2}};
  q.Push(HeapEvent(5, 10));
  q.Push(HeapEvent(2, 11));
  EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, {});
  REQUIRE(loop.NextTime() == Time{2});
  absl::StatusOr<EventLoopResult> r = loop.Run();
  REQUIRE(r.ok());
  CHECK(r->events == 5);
  CHECK_FALSE(r->stopped);
  CHECK(m.log == std::vector<std::string>{"advance 2", "heap 11@2", "end of time", "advance 5",
                                          "arrive 0@5", "arrive 1@5", "heap 10@5", "end of time",
                                          "advance 9", "arrive 2@9", "end of time"});
  CHECK_FALSE(loop.NextTime().has_value());
}

TEST_CASE(
    "EventLoop: heap first at equal times puts an event pushed at t before the next "
    "arrival at t",
    "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kHeapFirst> m;
  m.queue = &q;
  m.arrivals = {{5, 0}, {5, 1}, {5, 2}};
  m.echo_job = 0;
  q.Push(HeapEvent(5, 10));
  EventLoop<ToyModel<TiePolicy::kHeapFirst>> loop(&m, &q, {});
  REQUIRE(loop.Run().ok());
  CHECK(m.log == std::vector<std::string>{"advance 5", "heap 10@5", "arrive 0@5", "heap 100@5",
                                          "arrive 1@5", "arrive 2@5", "end of time"});
}

TEST_CASE("EventLoop: a stale top is dropped before the clock moves to its time", "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kArrivalsFirst> m;
  m.queue = &q;
  m.arrivals = {{8, 0}};
  q.Push(HeapEvent(3, 10, /*epoch=*/7));  // alone at 3: the clock never stops there
  q.Push(HeapEvent(8, 11));
  q.Push(HeapEvent(8, 12, /*epoch=*/7));  // among the events of 8: the model's no-op
  EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, {});
  REQUIRE(loop.NextTime() == Time{3});
  absl::StatusOr<EventLoopResult> r = loop.Run();
  REQUIRE(r.ok());
  CHECK(m.advanced == std::vector<Time>{8});
  CHECK(r->events == 3);
  CHECK(m.log == std::vector<std::string>{"advance 8", "arrive 0@8", "heap 11@8", "stale 12@8",
                                          "end of time"});
}

TEST_CASE("EventLoop: the horizon stops before the first time past it", "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kArrivalsFirst> m;
  m.queue = &q;
  m.arrivals = {{1, 0}, {10, 1}, {11, 2}};
  EventLoopOptions options;
  options.horizon = 10;
  EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, options);
  absl::StatusOr<EventLoopResult> r = loop.Run();
  REQUIRE(r.ok());
  CHECK(r->stopped);
  CHECK(r->events == 2);
  CHECK(m.advanced == std::vector<Time>{1, 10});
  CHECK(loop.NextTime() == Time{11});

  SECTION("without events past it the loop is not stopped") {
    EventQueue q2;
    ToyModel<TiePolicy::kArrivalsFirst> m2;
    m2.queue = &q2;
    m2.arrivals = {{1, 0}, {10, 1}};
    EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop2(&m2, &q2, options);
    absl::StatusOr<EventLoopResult> r2 = loop2.Run();
    REQUIRE(r2.ok());
    CHECK_FALSE(r2->stopped);
  }
}

TEST_CASE("EventLoop: errors of the model and of its invariant check stop the loop",
          "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kArrivalsFirst> m;
  m.queue = &q;
  m.arrivals = {{4, 0}, {6, 1}};
  SECTION("a handler's error is returned as it is") {
    m.handle_error = absl::InvalidArgumentError("bad job");
    EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, {});
    absl::StatusOr<EventLoopResult> r = loop.Run();
    REQUIRE_FALSE(r.ok());
    CHECK(r.status() == absl::InvalidArgumentError("bad job"));
  }
  SECTION("a failed invariant check names the time") {
    m.invariant_error = absl::InternalError("broken");
    EventLoopOptions options;
    options.check_invariants_every = 1;
    EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, options);
    absl::StatusOr<EventLoopResult> r = loop.Run();
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInternal);
    CHECK(std::string(r.status().message()) == "invariant check failed at t=4: broken");
    CHECK(m.handled == 1);
  }
}

TEST_CASE("EventLoop: progress reports the model's fraction every so many times", "[sim][unit]") {
  EventQueue q;
  ToyModel<TiePolicy::kArrivalsFirst> m;
  m.queue = &q;
  m.arrivals = {{1, 0}, {2, 1}, {3, 2}, {4, 3}};
  std::vector<double> seen;
  EventLoopOptions options;
  options.progress_every = 2;
  options.progress = [&seen](double f) { seen.push_back(f); };
  EventLoop<ToyModel<TiePolicy::kArrivalsFirst>> loop(&m, &q, options);
  REQUIRE(loop.Run().ok());
  CHECK(seen == std::vector<double>{0.5, 1.0});
}

}  // namespace
}  // namespace hived::sim
