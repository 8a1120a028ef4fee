#include "sim/engine/event_queue.h"

#include <algorithm>
#include <cstdint>

namespace hived::sim {
namespace {

// std heap functions build a max-heap; "greater" puts the earliest event on top.
bool Later(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time > b.time;
  return a.sequence > b.sequence;
}

}  // namespace

void EventQueue::Push(Event event) {
  event.sequence = next_sequence_++;
  heap_.push_back(event);
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

void EventQueue::PushOrdered(Event event) {
  heap_.push_back(event);
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

void EventQueue::PushArrival(Time time, JobIndex job) {
  if (cursor_ < offsets_.size() && time < last_arrival_) {
    Event e;
    e.time = time;
    e.kind = EventKind::kSubmit;
    e.job = job;
    Push(e);
    return;
  }
  if (cursor_ == offsets_.size()) {
    // The lane is drained: reuse its storage.
    offsets_.clear();
    runs_.clear();
    cursor_ = 0;
    run_cursor_ = 0;
  }
  const uint64_t sequence = next_sequence_++;
  bool continues = false;
  if (!runs_.empty()) {
    const Run& last = runs_.back();
    const size_t offset = offsets_.size() - last.start;
    continues = last.sequence + offset == sequence &&
                static_cast<int64_t>(last.job) + static_cast<int64_t>(offset) == job &&
                time - last.time <= static_cast<Time>(UINT32_MAX);
  }
  if (!continues) runs_.push_back({offsets_.size(), job, sequence, time});
  offsets_.push_back(static_cast<uint32_t>(time - runs_.back().time));
  last_arrival_ = time;
}

void EventQueue::Reserve(size_t arrivals, size_t others) {
  offsets_.reserve(arrivals);
  heap_.reserve(others);
}

bool EventQueue::ArrivalFirst() const {
  if (cursor_ == offsets_.size()) return false;
  if (heap_.empty()) return true;
  const Time a = HeadTime();
  const Event& h = heap_.front();
  return a != h.time ? a < h.time : HeadSequence() < h.sequence;
}

Event EventQueue::Top() const {
  if (!ArrivalFirst()) return heap_.front();
  Event e;
  e.time = HeadTime();
  e.kind = EventKind::kSubmit;
  e.job = HeadJob();
  e.sequence = HeadSequence();
  return e;
}

Event EventQueue::Pop() {
  if (ArrivalFirst()) {
    const Event e = Top();
    ++cursor_;
    if (run_cursor_ + 1 < runs_.size() && runs_[run_cursor_ + 1].start == cursor_) ++run_cursor_;
    return e;
  }
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace hived::sim
