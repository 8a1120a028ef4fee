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

Event EventQueue::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace hived::sim
