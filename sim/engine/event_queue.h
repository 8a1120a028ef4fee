// sim/engine/event_queue.h: the simulator's discrete events, ordered by (time, sequence).
//
// Events with equal times come out in the order they were pushed (the sequence number is
// assigned by `Push`), so a replay is deterministic. A binary heap, O(log n) per event: it
// holds only the events a replay creates (finishes, node events, wake-ups, departures), about
// the running jobs or pods; the arrivals, already in order, are the event loop's feed
// (sim/engine/event_loop.h, the simulator's one loop over events), not in the queue.
//
// Example:
//   EventQueue q;
//   q.Push({.time = 10, .kind = EventKind::kNodeDown, .node = 3});
//   q.Push({.time = 5, .kind = EventKind::kFinish, .job = 1});
//   Event first = q.Pop();  // the finish at 5
//
// Invariants: heap_ is a heap under `Later`; the sequence numbers of the events `Push`
// assigned are distinct.
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_EVENT_QUEUE_H_
#define HIVED_SIM_ENGINE_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "sim/trace/job.h"

namespace hived::sim {

// kWake: a waiting job may now reclaim its guarantee (a preemption monitor's delay).
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
  // Adds an event ordered by the caller's key: `event.sequence` is kept, not assigned, and
  // breaks ties of equal times (lowest first). A queue takes either PushOrdered only, with
  // distinct keys at equal times, or Push only (the pod replay's departures,
  // sim/engine/pod_replay.h, are ordered by pod and generation this way).
  void PushOrdered(Event event);
  // REQUIRES: !empty(). The earliest event (ties: lowest sequence).
  const Event& Top() const { return heap_.front(); }
  // REQUIRES: !empty(). Removes and returns the earliest event (ties: lowest sequence).
  Event Pop();
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // Capacity for `events` events.
  void Reserve(size_t events) { heap_.reserve(events); }

 private:
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_EVENT_QUEUE_H_
