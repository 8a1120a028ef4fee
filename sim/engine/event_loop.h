// sim/engine/event_loop.h: the simulator's one event loop. Both replays run through it: the
// job replay (`replay_internal::Replay`, sim/engine/replay.h) and the pod replay
// (sim/engine/pod_replay.h). What differs between them is the model's: its hooks below.
//
// The loop owns the merge of the model's arrival feed with the event heap (`EventQueue`),
// the clock's steps (one per distinct event time), the grouping of the events of one time,
// the horizon, the progress callback and the periodic invariant check. Each step:
//   1. the next event is the feed's head or the heap's top, by time; at equal times
//      `Model::kTies` says which goes first (an event pushed while handling one of time t,
//      at t, is handled in this same step, placed by that rule against the feed's head);
//   2. a heap top the model calls `Stale` is dropped before the clock can move to its time;
//   3. t = the next event's time; past the horizon the loop stops with events left;
//   4. `Advance(t)`, once: the model measures up to t;
//   5. every event of time t (or earlier: none for a valid model) is handled in that order
//      (`Handle`; a stale heap event that reaches it is the model's no-op);
//   6. `EndOfTime()`, when the model has one (the job replay's queue passes).
//
// Hooks of a `Model` (the loop is a template over it: no virtual call per event):
//   static constexpr TiePolicy kTies;
//   bool HasArrival() const;                  // the feed has a next arrival
//   Time ArrivalTime() const;                 // REQUIRES: HasArrival()
//   absl::StatusOr<Event> TakeArrival();      // REQUIRES: HasArrival(); consumes it
//   bool Stale(const Event& top) const;       // dropped before the clock moves
//   void Advance(Time t);
//   absl::Status Handle(const Event& e);
//   absl::Status EndOfTime();                 // after the events of one time
//   absl::Status CheckInvariants() const;     // every `check_invariants_every` events
//   double Progress() const;                  // the fraction done, for `progress`
// The hooks may be private with `friend class EventLoop<Model>;`.
//
// Why a template and not an interface: the loop calls four hooks or more per event and the
// two models are known at compile time, so each replay's loop compiles as its own loop did
// before (measured: the job and the pod replay as fast as their own loops were; an interface
// was not tried). Why the feed outside the heap: arrivals are already in order
// (a sorted trace, a sorted index array), so the heap holds only what the replay creates
// (about the running jobs or pods), and a streamed trace is read as the clock reaches it.
//
// Example:
//   EventLoop<PodModel> loop(&model, &queue, {});
//   absl::StatusOr<EventLoopResult> r = loop.Run();
//
// Invariants: events are handled in non-decreasing time; `Advance` sees non-decreasing
// times, each at most once; no event is handled before the `Advance` of its time.
//
// Thread safety: not thread-safe; one loop per thread.
#ifndef HIVED_SIM_ENGINE_EVENT_LOOP_H_
#define HIVED_SIM_ENGINE_EVENT_LOOP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/engine/event_queue.h"

namespace hived::sim {

// At equal times: the feed's arrivals before the heap's events (the job replay: jobs
// submitted together see the same cluster), or after them (the pod replay: departures
// before arrivals).
enum class TiePolicy { kArrivalsFirst, kHeapFirst };

struct EventLoopOptions {
  Time horizon = -1;                              // stop before the first time past it; -1 = never
  int64_t check_invariants_every = 0;             // handled events; 0 = never
  int64_t progress_every = 4096;                  // steps (distinct times) between `progress` calls
  std::function<void(double fraction)> progress;  // may be empty
};

struct EventLoopResult {
  int64_t events = 0;    // handled (not counting stale tops dropped)
  bool stopped = false;  // the horizon stopped the loop with events left
};

template <typename Model>
class EventLoop {
 public:
  // `model` and `queue` must outlive the loop; the model pushes into `queue`.
  EventLoop(Model* model, EventQueue* queue, EventLoopOptions options)
      : model_(model), queue_(queue), options_(std::move(options)) {}

  // The next event's time (stale tops included), or nullopt when there is none.
  std::optional<Time> NextTime() const {
    if (ArrivalNext()) return model_->ArrivalTime();
    if (queue_->empty()) return std::nullopt;
    return queue_->Top().time;
  }

  // Runs until no event is left or the horizon. Errors: the model's, and kInternal when an
  // invariant check fails (naming the time).
  absl::StatusOr<EventLoopResult> Run() {
    EventLoopResult result;
    int64_t since_check = 0;
    int64_t since_progress = 0;
    while (More()) {
      const bool arrival = ArrivalNext();
      if (!arrival && model_->Stale(queue_->Top())) {
        queue_->Pop();
        continue;
      }
      const Time t = arrival ? model_->ArrivalTime() : queue_->Top().time;
      if (options_.horizon >= 0 && t > options_.horizon) {
        result.stopped = true;
        break;
      }
      model_->Advance(t);
      while (true) {
        Event e;
        if (ArrivalNext()) {
          if (model_->ArrivalTime() > t) break;
          absl::StatusOr<Event> a = model_->TakeArrival();
          if (!a.ok()) return a.status();
          e = *a;
        } else if (!queue_->empty() && queue_->Top().time <= t) {
          e = queue_->Pop();
        } else {
          break;
        }
        if (absl::Status s = model_->Handle(e); !s.ok()) return s;
        ++result.events;
        if (options_.check_invariants_every > 0 &&
            ++since_check >= options_.check_invariants_every) {
          since_check = 0;
          if (absl::Status s = model_->CheckInvariants(); !s.ok()) {
            return absl::InternalError(
                absl::StrCat("invariant check failed at t=", t, ": ", s.message()));
          }
        }
      }
      if (absl::Status s = model_->EndOfTime(); !s.ok()) return s;
      if (options_.progress && ++since_progress >= options_.progress_every) {
        since_progress = 0;
        options_.progress(model_->Progress());
      }
    }
    return result;
  }

 private:
  bool More() const { return model_->HasArrival() || !queue_->empty(); }
  // Whether the next event is the feed's head.
  bool ArrivalNext() const {
    if (!model_->HasArrival()) return false;
    if (queue_->empty()) return true;
    const Time a = model_->ArrivalTime();
    const Time h = queue_->Top().time;
    if constexpr (Model::kTies == TiePolicy::kArrivalsFirst) {
      return a <= h;
    } else {
      return a < h;
    }
  }

  Model* model_;
  EventQueue* queue_;
  EventLoopOptions options_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_EVENT_LOOP_H_
