// sim/engine/event_queue.h: the simulator's discrete events, ordered by (time, sequence).
//
// Events with equal times come out in the order they were pushed (the sequence number is
// assigned by `Push` and `PushArrival`), so a replay is deterministic.
//
// Two lanes, one order: arrivals known up front (a trace's submissions, pushed in
// non-decreasing time) wait in a plain array read by a cursor, O(1) per event and 4 bytes
// each (a trace's arrivals are pushed in one run, jobs 0, 1, 2, ... with consecutive
// sequence numbers: a run stores its first job, sequence and time once, each arrival only
// its time's offset from the run's, in 32 bits: a later arrival starts a new run);
// everything else (finishes, node events, wake-ups) in a binary heap, O(log n) per
// event, whose size is about the number of running jobs rather than of the whole trace.
// `Top` and `Pop` take the earlier of the two heads by (time, sequence), so the order is
// exactly that of a single heap holding every event. An arrival earlier than the last one
// pushed goes to the heap instead (correct for any order, fast for a sorted trace).
//
// Example:
//   EventQueue q;
//   q.PushArrival(10, 3);
//   q.Push({.time = 5, .kind = EventKind::kFinish, .job = 1});
//   Event first = q.Pop();  // the finish at 5
// The simulator's one loop over events is sim/engine/event_loop.h's.
//
// Invariants: the lane's arrivals from cursor_ on are sorted by (time, sequence); heap_ is a heap
// under `Later`; every sequence number is distinct; runs_ is sorted by `start`, runs_[0].start == 0
// when the lane holds arrivals, and arrival i of run r (start <= i < the next run's start) is
// job r.job + (i - r.start) with sequence r.sequence + (i - r.start) at time
// r.time + offsets_[i]; runs_[run_cursor_] is the run holding offsets_[cursor_] while the lane
// is not drained.
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
  // distinct keys at equal times, or Push and PushArrival only (the pod replay's departures,
  // sim/engine/pod_replay.h, are ordered by pod and generation this way).
  void PushOrdered(Event event);
  // Adds a kSubmit event for `job` at `time`, like Push, into the arrival lane.
  void PushArrival(Time time, JobIndex job);
  // REQUIRES: !empty(). The earliest event (ties: lowest sequence).
  Event Top() const;
  // REQUIRES: !empty(). Removes and returns the earliest event (ties: lowest sequence).
  Event Pop();
  bool empty() const { return heap_.empty() && cursor_ == offsets_.size(); }
  size_t size() const { return heap_.size() + (offsets_.size() - cursor_); }
  // Capacity for `arrivals` arrival-lane events and `others` heap events.
  void Reserve(size_t arrivals, size_t others);

 private:
  // Arrivals pushed one after another, for consecutive jobs, less than 2^32 s after the
  // first: the first one's position in offsets_, job, sequence and time.
  struct Run {
    size_t start;
    JobIndex job;
    uint64_t sequence;
    Time time;
  };
  // Whether the next event is the arrival lane's head. REQUIRES: !empty().
  bool ArrivalFirst() const;
  // The lane's head's sequence, job and time. REQUIRES: cursor_ < offsets_.size().
  uint64_t HeadSequence() const {
    const Run& r = runs_[run_cursor_];
    return r.sequence + (cursor_ - r.start);
  }
  JobIndex HeadJob() const {
    const Run& r = runs_[run_cursor_];
    return r.job + static_cast<JobIndex>(cursor_ - r.start);
  }
  Time HeadTime() const { return runs_[run_cursor_].time + offsets_[cursor_]; }

  std::vector<uint32_t> offsets_;  // the arrivals' times, each from its run's
  std::vector<Run> runs_;
  size_t cursor_ = 0;      // offsets_[cursor_] is the lane's head
  Time last_arrival_ = 0;  // the last time pushed into the lane
  size_t run_cursor_ = 0;  // the run of the head
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_EVENT_QUEUE_H_
