#include "sim/event_queue.h"

#include <algorithm>

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

void EventQueue::PushArrival(Time time, JobIndex job) {
  if (cursor_ < arrivals_.size() && time < arrivals_.back().time) {
    Event e;
    e.time = time;
    e.kind = EventKind::kSubmit;
    e.job = job;
    Push(e);
    return;
  }
  if (cursor_ == arrivals_.size()) {
    // The lane is drained: reuse its storage.
    arrivals_.clear();
    cursor_ = 0;
  }
  arrivals_.push_back({time, next_sequence_++, job});
}

void EventQueue::Reserve(size_t arrivals, size_t others) {
  arrivals_.reserve(arrivals);
  heap_.reserve(others);
}

bool EventQueue::ArrivalFirst() const {
  if (cursor_ == arrivals_.size()) return false;
  if (heap_.empty()) return true;
  const Arrival& a = arrivals_[cursor_];
  const Event& h = heap_.front();
  return a.time != h.time ? a.time < h.time : a.sequence < h.sequence;
}

Event EventQueue::Top() const {
  if (!ArrivalFirst()) return heap_.front();
  const Arrival& a = arrivals_[cursor_];
  Event e;
  e.time = a.time;
  e.kind = EventKind::kSubmit;
  e.job = a.job;
  e.sequence = a.sequence;
  return e;
}

Event EventQueue::Pop() {
  if (ArrivalFirst()) {
    const Event e = Top();
    ++cursor_;
    return e;
  }
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace hived::sim
