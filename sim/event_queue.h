// sim/event_queue.h: the simulator's discrete events, ordered by (time, sequence).
//
// Events with equal times come out in the order they were pushed (the sequence number is
// assigned by `Push`), so a replay is deterministic. A binary heap: Push and Pop cost
// O(log n).
//
// Example:
//   EventQueue q;
//   q.Push({.time = 10, .kind = EventKind::kSubmit, .job = 3});
//   while (!q.empty()) Handle(q.Pop());
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_EVENT_QUEUE_H_
#define HIVED_SIM_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "sim/job.h"

namespace hived::sim {

// kWake: a waiting job may now reclaim its guarantee (yarn-cs's preemption delay).
enum class EventKind : uint8_t { kSubmit, kFinish, kNodeDown, kNodeUp, kWake };

struct Event {
  Time time = 0;
  EventKind kind = EventKind::kSubmit;
  JobIndex job = -1;      // kSubmit, kFinish, kWake
  int32_t node = -1;      // kNodeDown, kNodeUp
  int32_t epoch = 0;      // kFinish: the run it ends; stale when the job was preempted since
  uint64_t sequence = 0;  // set by Push
};

class EventQueue {
 public:
  // Adds an event; its sequence number is the number of events pushed before it.
  void Push(Event event);
  // REQUIRES: !empty(). Removes and returns the earliest event (ties: lowest sequence).
  Event Pop();
  const Event& Top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_EVENT_QUEUE_H_
