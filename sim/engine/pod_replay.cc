#include "sim/engine/pod_replay.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/event_queue.h"

namespace hived::sim {
namespace {

// The order of the pod replay's departures at one time: by pod index, then generation (a
// departure's generation tells a stale one apart and keeps keys distinct). Arrivals are the
// event loop's feed, after the departures of their time (`kTies`), by pod index.
uint64_t DepartureKey(int32_t pod, uint32_t generation) {
  return static_cast<uint64_t>(pod) << 32 | generation;
}

class PodReplay {
 public:
  PodReplay(const OpenbPodList& list, ClusterBackend* backend, const PodReplayOptions& options,
            PodSink* sink)
      : list_(list),
        backend_(backend),
        sink_(sink),
        step_(options.sample_seconds),
        sharing_(options.sharing),
        params_(options.sharing_params) {
    const int64_t gpus = backend_->total_gpus();
    tenants_.resize(static_cast<size_t>(gpus));
    jobs_.reserve(list_.pods.size());
    for (size_t i = 0; i < list_.pods.size(); ++i) {
      // A pod is a one-member job of VC 0; the backend knows its request by `index`.
      SimJob job;
      job.index = static_cast<JobIndex>(i);
      job.gpus = list_.pods[i].num_gpu;
      job.members = {GangMember{1, job.gpus}};
      jobs_.push_back(job);
    }
    state_.resize(list_.pods.size());
    placement_.resize(list_.pods.size());
    runs_.resize(list_.pods.size());
    gpus_at_degree_.assign(2, 0);
    gpus_at_degree_[0] = gpus;
    result_.gpu_seconds_by_degree.assign(2, 0.0);
  }

  absl::StatusOr<PodReplayResult> Run() {
    PodReplayResult& r = result_;
    r.pods = static_cast<int64_t>(list_.pods.size());
    r.end_time = list_.stats.trace_end;
    r.start_time = r.end_time;
    arrivals_.reserve(list_.pods.size());
    for (size_t i = 0; i < list_.pods.size(); ++i) {
      const OpenbPod& p = list_.pods[i];
      r.start_time = std::min(r.start_time, *p.creation_time);
      arrivals_.push_back({*p.creation_time, static_cast<int32_t>(i)});
      if (p.phase == OpenbPhase::kPending) ++r.pending_in_trace;
      if (p.phase == OpenbPhase::kRunning && p.deletion_time == r.end_time) ++r.censored;
    }
    // By (creation time, pod index): distinct pods, so no tie is left to the sort.
    std::sort(arrivals_.begin(), arrivals_.end(), [](const Arrival& a, const Arrival& b) {
      return a.time != b.time ? a.time < b.time : a.pod < b.pod;
    });
    last_time_ = r.start_time;
    next_sample_ = r.start_time;
    EventLoop<PodReplay> loop(this, &events_, {});
    if (absl::StatusOr<EventLoopResult> ran = loop.Run(); !ran.ok()) return ran.status();
    Advance(r.end_time);
    for (int32_t w : waiting_) {
      if (absl::Status s = NeverPlaced(w); !s.ok()) return s;
    }
    if (backend_->used_gpus() != 0) {
      return absl::InternalError("replay: GPU milli still allocated after the last departure");
    }
    if (absl::Status s = backend_->CheckInvariants(); !s.ok()) return s;
    if (r.placed + r.never_placed != r.pods) {
      return absl::InternalError("replay: placed + never placed != pods");
    }
    const double span = static_cast<double>(r.end_time - r.start_time);
    r.mean_allocation_ratio = span > 0 ? area_ / span : backend_->allocation_ratio();
    return r;
  }

 private:
  // A placed pod's progress.
  struct PodState {
    double work_left = 0;  // seconds at speed 1
    double speed = 0;
    int64_t since = 0;  // time `work_left` was last brought up to date
    uint32_t generation = 0;
    bool fixed_end = false;  // Pending pods leave at their deletion time, whatever the speed
  };

  // The event loop's hooks (sim/engine/event_loop.h): the pods are the arrivals, in
  // (creation time, pod index) order, after the departures of their time; a stale departure
  // (its pod's speed changed since it was pushed) is dropped before the clock moves, and
  // skipped when it comes among the events of a time; each event is handled at once (a
  // waiting pod is retried by the departure that may make room for it), so there is nothing
  // to do after a time.
  friend class EventLoop<PodReplay>;
  static constexpr TiePolicy kTies = TiePolicy::kHeapFirst;
  bool HasArrival() const { return next_arrival_ < arrivals_.size(); }
  int64_t ArrivalTime() const { return arrivals_[next_arrival_].time; }
  absl::StatusOr<Event> TakeArrival() {
    const Arrival& a = arrivals_[next_arrival_++];
    Event e;
    e.time = a.time;
    e.kind = EventKind::kSubmit;
    e.job = a.pod;
    return e;
  }
  bool Stale(const Event& top) const {
    return top.kind == EventKind::kFinish &&
           static_cast<uint32_t>(top.epoch) != state_[static_cast<size_t>(top.job)].generation;
  }
  absl::Status Handle(const Event& e) {
    if (Stale(e)) return absl::OkStatus();
    return e.kind == EventKind::kSubmit ? Arrive(e.job, e.time) : Depart(e.job, e.time);
  }
  absl::Status EndOfTime() { return absl::OkStatus(); }
  // Every pod arrived is placed (running or gone), never placed, or waiting.
  absl::Status CheckInvariants() const {
    const int64_t accounted = result_.placed + result_.never_placed +
                              static_cast<int64_t>(waiting_.size()) +
                              static_cast<int64_t>(arrivals_.size() - next_arrival_);
    if (accounted != result_.pods) {
      return absl::InternalError(
          absl::StrCat("pod replay: ", accounted, " pods accounted for, not ", result_.pods));
    }
    return absl::OkStatus();
  }
  double Progress() const {
    return arrivals_.empty()
               ? 1.0
               : static_cast<double>(next_arrival_) / static_cast<double>(arrivals_.size());
  }

  void PushDeparture(int64_t t, int32_t pod, uint32_t generation) {
    Event e;
    e.time = t;
    e.kind = EventKind::kFinish;
    e.job = pod;
    e.epoch = static_cast<int32_t>(generation);
    e.sequence = DepartureKey(pod, generation);
    events_.PushOrdered(e);
  }

  absl::Status NeverPlaced(int32_t i) {
    ++result_.never_placed;
    if (list_.pods[static_cast<size_t>(i)].phase != OpenbPhase::kPending) {
      ++result_.never_placed_by_end;
    }
    return Hand(i, 0);
  }

  // Hands pod `i`'s final run to the sink.
  absl::Status Hand(int32_t i, int64_t wait) {
    return sink_->Add(
        {i, jobs_[static_cast<size_t>(i)].gpus, wait, &runs_[static_cast<size_t>(i)]});
  }

  // Moves one GPU from `from` pods to `to` pods in the degree counts.
  void ChangeDegree(size_t from, size_t to) {
    const size_t top = std::max(from, to);
    if (top >= gpus_at_degree_.size()) {
      gpus_at_degree_.resize(top + 1, 0);
      result_.gpu_seconds_by_degree.resize(top + 1, 0.0);
    }
    --gpus_at_degree_[from];
    ++gpus_at_degree_[to];
  }

  // Recomputes the speeds of the pods on GPU `g` at `t` and reschedules the departures of
  // those whose speed changed (and of `placed`, just arrived). O(pods on the GPU).
  void Reschedule(size_t g, int64_t t, int32_t placed) {
    const std::vector<int32_t>& on = tenants_[g];
    tenant_buf_.clear();
    for (int32_t p : on) {
      const OpenbPod& pod = list_.pods[static_cast<size_t>(p)];
      tenant_buf_.push_back(
          {static_cast<double>(pod.gpu_milli) / kMilliPerGpu, pod.qos == OpenbQos::kBE});
    }
    SharingRates(sharing_, params_, tenant_buf_, &speed_buf_);
    for (size_t k = 0; k < on.size(); ++k) {
      const int32_t p = on[k];
      PodState& st = state_[static_cast<size_t>(p)];
      PodRun& run = runs_[static_cast<size_t>(p)];
      run.max_degree = std::max(run.max_degree, static_cast<int32_t>(on.size()));
      if (st.fixed_end || (st.speed == speed_buf_[k] && p != placed)) continue;
      st.work_left = std::max(0.0, st.work_left - st.speed * static_cast<double>(t - st.since));
      st.since = t;
      st.speed = speed_buf_[k];
      ++st.generation;
      // Rounded up to a whole second; a hair of slack so an exact quotient stays exact.
      const int64_t left = static_cast<int64_t>(std::ceil(st.work_left / st.speed - 1e-6));
      PushDeparture(t + std::max<int64_t>(left, 0), p, st.generation);
    }
  }

  // Accounts the time from the last event to `t` (up to the trace end) and samples the
  // timeline on the way.
  void Advance(int64_t t) {
    const int64_t until = std::min(t, result_.end_time);
    while (step_ > 0 && next_sample_ <= until) {
      result_.timeline.push_back({next_sample_, backend_->allocation_ratio(),
                                  backend_->fragmentation_ratio(), running_,
                                  static_cast<int64_t>(waiting_.size())});
      next_sample_ += step_;
    }
    if (until > last_time_) {
      const double dt = static_cast<double>(until - last_time_);
      area_ += backend_->allocation_ratio() * dt;
      for (size_t k = 1; k < gpus_at_degree_.size(); ++k) {
        result_.gpu_seconds_by_degree[k] += static_cast<double>(gpus_at_degree_[k]) * dt;
      }
      last_time_ = until;
    }
  }

  // The last moment a waiting pod may still be placed: a Pending pod's deletion, else the
  // trace end.
  int64_t Deadline(int32_t i) const {
    const OpenbPod& p = list_.pods[static_cast<size_t>(i)];
    return p.phase == OpenbPhase::kPending ? *p.deletion_time : result_.end_time;
  }

  absl::Status Arrive(int32_t i, int64_t t) {
    if (t >= Deadline(i)) return NeverPlaced(i);
    absl::StatusOr<bool> placed = Place(i, t, -1);
    if (!placed.ok()) return placed.status();
    if (*placed) {
      ++result_.placed_at_arrival;
    } else {
      waiting_.push_back(i);
    }
    return absl::OkStatus();
  }

  absl::Status Depart(int32_t i, int64_t t) {
    const JobGpus& at = placement_[static_cast<size_t>(i)];
    PodRun& run = runs_[static_cast<size_t>(i)];
    run.end = t;
    if (run.work > 0)
      run.slowdown = static_cast<double>(t - run.start) / static_cast<double>(run.work);
    ForEachGpu(at, [&](size_t g) {
      std::vector<int32_t>& on = tenants_[g];
      on.erase(std::find(on.begin(), on.end(), i));
      ChangeDegree(on.size() + 1, on.size());
      Reschedule(g, t, -1);
    });
    if (absl::Status s = backend_->Release(jobs_[static_cast<size_t>(i)]); !s.ok()) return s;
    NotePeak();
    --running_;
    if (absl::Status s = Hand(i, run.start - *list_.pods[static_cast<size_t>(i)].creation_time);
        !s.ok()) {
      return s;
    }
    // Only `at.node` gained room: a waiting pod can fit nowhere else.
    const int32_t node = at.node;
    size_t keep = 0;
    for (size_t k = 0; k < waiting_.size(); ++k) {
      const int32_t w = waiting_[k];
      if (t >= Deadline(w)) {
        if (absl::Status s = NeverPlaced(w); !s.ok()) return s;
        continue;
      }
      absl::StatusOr<bool> placed = Place(w, t, node);
      if (!placed.ok()) return placed.status();
      if (*placed) continue;
      waiting_[keep++] = w;
    }
    waiting_.resize(keep);
    return absl::OkStatus();
  }

  template <typename F>
  static void ForEachGpu(const JobGpus& at, F f) {
    for (uint64_t bits = at.mask; bits != 0; bits &= bits - 1) {
      f(static_cast<size_t>(at.first_gpu) + static_cast<size_t>(__builtin_ctzll(bits)));
    }
  }

  // Places pod `i` at `t` (on `only_node` when >= 0); false when the backend lets it wait.
  absl::StatusOr<bool> Place(int32_t i, int64_t t, int32_t only_node) {
    TryOptions options;
    options.only_node = only_node;
    absl::StatusOr<StartAttempt> attempt =
        backend_->TryStart(jobs_[static_cast<size_t>(i)], options);
    if (!attempt.ok()) return attempt.status();
    if (attempt->kind == StartAttempt::Kind::kWaiting) return false;
    if (attempt->kind != StartAttempt::Kind::kStarted) {
      return absl::InternalError(absl::StrCat(
          "pod replay: the backend (", std::string(backend_->policy_name()), ") answered pod ", i,
          " neither started nor waiting; a pod does not preempt and is never infeasible"));
    }
    JobGpus& at = placement_[static_cast<size_t>(i)];
    at = backend_->RunGpus(i);
    if (at.node < 0) {
      // A backend that does not model single GPUs: the pod's node, no GPU shared.
      const NodeList on = backend_->JobNodes(i);
      at = JobGpus{on.empty() ? -1 : on.front(), 0, 0};
    }
    NotePeak();
    const OpenbPod& p = list_.pods[static_cast<size_t>(i)];
    ++running_;
    ++result_.placed;
    PodRun& run = runs_[static_cast<size_t>(i)];
    run.placed = true;
    run.node = at.node;
    run.start = t;
    PodState& st = state_[static_cast<size_t>(i)];
    st.since = t;
    st.speed = 1.0;
    if (p.phase == OpenbPhase::kPending) {
      ++result_.pending_placed;
      st.fixed_end = true;
      PushDeparture(std::max(*p.deletion_time, t), i, st.generation);
    } else {
      run.work = *p.deletion_time - p.scheduled_time.value_or(*p.creation_time);
      st.work_left = static_cast<double>(run.work);
      if (jobs_[static_cast<size_t>(i)].gpus == 0) PushDeparture(t + run.work, i, st.generation);
    }
    ForEachGpu(at, [&](size_t g) {
      std::vector<int32_t>& on = tenants_[g];
      on.push_back(i);
      ChangeDegree(on.size() - 1, on.size());
      Reschedule(g, t, i);
    });
    return true;
  }

  void NotePeak() {
    result_.peak_allocation_ratio =
        std::max(result_.peak_allocation_ratio, backend_->allocation_ratio());
  }

  const OpenbPodList& list_;
  ClusterBackend* backend_;
  PodSink* sink_;
  int64_t step_;
  SharingMode sharing_;
  SharingParams params_;
  std::vector<std::vector<int32_t>> tenants_;  // per GPU: the pods on it
  std::vector<PodState> state_;                // per pod
  std::vector<SimJob> jobs_;                   // per pod: the pod as a one-member job
  std::vector<JobGpus> placement_;             // per pod
  std::vector<PodRun> runs_;                   // per pod, in list order
  std::vector<int64_t> gpus_at_degree_;        // GPUs by number of pods on them
  std::vector<GpuTenant> tenant_buf_;
  std::vector<double> speed_buf_;
  struct Arrival {
    int64_t time;
    int32_t pod;
  };
  std::vector<Arrival> arrivals_;  // every pod, by (creation time, pod index)
  size_t next_arrival_ = 0;        // arrivals_[next_arrival_] is the feed's head
  EventQueue events_;              // departures only
  std::vector<int32_t> waiting_;   // arrival order
  int64_t running_ = 0;
  int64_t last_time_ = 0;
  int64_t next_sample_ = 0;
  double area_ = 0;
  PodReplayResult result_;
};

}  // namespace

absl::StatusOr<PodReplayResult> ReplayPods(const OpenbPodList& list, ClusterBackend* backend,
                                           const PodReplayOptions& options, PodSink* sink) {
  if (!list.stats.has_times) {
    return absl::InvalidArgumentError(
        absl::StrCat(list.file,
                     ": this pod list has no creation or deletion times (the 5-column layout); "
                     "it can be used by `fill`, not replayed"));
  }
  return PodReplay(list, backend, options, sink).Run();
}

}  // namespace hived::sim
