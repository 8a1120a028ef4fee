#include "sim/engine/replay.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace hived::sim::replay_internal {

void Replay::RunningAdd(JobIndex j) {
  Live(j).running_pos = static_cast<int32_t>(running_.size());
  running_.push_back(j);
}

void Replay::RunningRemove(JobIndex j) {
  const int32_t pos = Live(j).running_pos;
  const JobIndex last = running_.back();
  running_[static_cast<size_t>(pos)] = last;
  Live(last).running_pos = pos;
  running_.pop_back();
  Live(j).running_pos = -1;
}

void Replay::ServeOrder(std::vector<int32_t>* batch) const {
  std::sort(batch->begin(), batch->end());
  if (!backend_->ServesLeastUsedFirst()) return;
  // Least used first: running GPUs / guarantee ascending (a VC without a guarantee that runs
  // anything comes last), ties in VC order. Cross-multiplied: exact, no floats; GPU counts
  // are below 2^31 (a config has at most 2^20 cells), so the products fit.
  auto less = [this](int32_t a, int32_t b) {
    const size_t x = static_cast<size_t>(a);
    const size_t y = static_cast<size_t>(b);
    return vc_used_[x] * vc_guarantee_[y] < vc_used_[y] * vc_guarantee_[x];
  };
  std::stable_sort(batch->begin(), batch->end(), less);
}

void Replay::ChangeQueued(const SimJob& job, int64_t sign) {
  const size_t v = static_cast<size_t>(job.vc);
  queued_gpus_ += sign * job.gpus;
  auto& per_vc = job.priority < 0 ? queued_opp_gpus_vc_ : queued_gpus_vc_;
  per_vc[v] += sign * job.gpus;
  queued_total_ += sign;
  if (job.priority < 0) {
    waiting_opp_[v] += sign;
    waiting_opp_total_ += sign;
  }
  waiting_[v] += sign;
  if (sign > 0 && waiting_[v] == 1) {
    waiting_vc_pos_[v] = static_cast<int32_t>(waiting_vcs_.size());
    waiting_vcs_.push_back(job.vc);
  } else if (sign < 0 && waiting_[v] == 0) {
    const int32_t pos = waiting_vc_pos_[v];
    const int32_t last = waiting_vcs_.back();
    waiting_vcs_[static_cast<size_t>(pos)] = last;
    waiting_vc_pos_[static_cast<size_t>(last)] = pos;
    waiting_vcs_.pop_back();
    waiting_vc_pos_[v] = -1;
  }
}

void Replay::MarkDirty(int32_t vc) {
  if (dirty_[static_cast<size_t>(vc)]) return;
  dirty_[static_cast<size_t>(vc)] = true;
  dirty_list_.push_back(vc);
}

void Replay::OnRelease(int32_t vc) {
  MarkDirty(vc);
  const bool all = backend_->ReleaseHelpsAllVcs() ||
                   (options_.opportunistic_overflow && backend_->SharesIdleCells());
  const bool opp = backend_->SharesIdleCells() && waiting_opp_total_ > 0;
  if (!all && !opp) return;
  for (int32_t v : waiting_vcs_) {
    if (all || waiting_opp_[static_cast<size_t>(v)] > 0) MarkDirty(v);
  }
}

void Replay::Enqueue(JobIndex j) {
  LiveJob& live = Live(j);
  const SimJob& job = live.job;
  live.rec.state = JobState::kQueued;
  queues_[static_cast<size_t>(job.vc)]->Push(
      {static_cast<uint64_t>(j), job.priority, live.shape, j});
  ChangeQueued(job, +1);
  MarkDirty(job.vc);
}

void Replay::Start(JobIndex j, bool opportunistic) {
  LiveJob& live = Live(j);
  const SimJob& job = live.job;
  JobRecord& rec = live.rec;
  rec.state = JobState::kRunning;
  if (rec.first_start < 0) rec.first_start = now_;
  rec.last_start = now_;
  rec.opportunistic = opportunistic;
  ++rec.epoch;
  rec.nodes = backend_->JobNodes(j);
  ChangeQueued(job, -1);
  RunningAdd(j);
  ChangeVcUsed(job.vc, job.gpus);
  Event finish;
  finish.time = SaturatingAdd(now_, rec.remaining);
  finish.kind = EventKind::kFinish;
  finish.job = j;
  finish.epoch = rec.epoch;
  events_.Push(finish);
}

absl::Status Replay::Interrupt(JobIndex j, Interruption why) {
  LiveJob& live = Live(j);
  const SimJob& job = live.job;
  JobRecord& rec = live.rec;
  if (rec.state != JobState::kRunning) {
    return absl::InternalError(absl::StrCat("job ", j, " interrupted while not running"));
  }
  if (absl::Status s = backend_->Release(job); !s.ok()) return s;
  RunningRemove(j);
  ChangeVcUsed(job.vc, -job.gpus);
  const Time ran = now_ - rec.last_start;
  if (!options_.resume) {
    const double lost = static_cast<double>(job.gpus) * InWindow(rec.last_start, now_);
    (why == Interruption::kPreemption ? r_.window_lost_gpu_seconds
                                      : r_.window_failure_lost_gpu_seconds) += lost;
  }
  if (options_.resume) {
    // Resume from progress: only the remainder is left to run.
    rec.remaining = std::max<Time>(1, rec.remaining - ran);
  } else {
    // Restart from zero: `remaining` stays the full duration; the run so far is lost.
    const int64_t lost = static_cast<int64_t>(job.gpus) * ran;
    if (lost != 0) {
      JobRarities& rare = rec.rare.mutable_get();
      (why == Interruption::kPreemption ? rare.gpu_seconds_lost : rare.failure_gpu_seconds_lost) +=
          lost;
    }
  }
  if (why == Interruption::kPreemption) {
    ++rec.preemptions;
  } else {
    ++rec.failures;
  }
  ++rec.epoch;  // the pending finish event is now stale
  return absl::OkStatus();
}

TryResult Replay::TryStart(JobIndex j) {
  if (!error_.ok()) return TryResult::kWaiting;
  LiveJob& live = Live(j);
  const SimJob& job = live.job;
  JobRecord& record = live.rec;
  const Time delay = backend_->ReclaimAfter();
  TryOptions try_options;
  try_options.allow_overflow = options_.opportunistic_overflow;
  try_options.may_reclaim = delay >= 0 && now_ - record.submit >= delay;
  if (delay >= 0 && !try_options.may_reclaim && !record.wake_pushed) {
    // Try it again when the delay is over, whatever else happens by then.
    record.wake_pushed = true;
    Event wake;
    wake.time = SaturatingAdd(record.submit, delay);
    wake.kind = EventKind::kWake;
    wake.job = j;
    events_.Push(wake);
  }
  absl::StatusOr<StartAttempt> a = backend_->TryStart(job, try_options);
  if (!a.ok()) {
    error_ = a.status();
    return TryResult::kWaiting;
  }
  switch (a->kind) {
    case StartAttempt::Kind::kStarted:
      Start(j, a->opportunistic);
      return TryResult::kStarted;
    case StartAttempt::Kind::kPreempting: {
      for (JobIndex v : a->victims) {
        if (absl::Status s = Interrupt(v, Interruption::kPreemption); !s.ok()) {
          error_ = s;
          return TryResult::kWaiting;
        }
        deferred_.push_back(v);
      }
      if (absl::Status s = backend_->FinishPreemption(job); !s.ok()) {
        error_ = s;
        return TryResult::kWaiting;
      }
      Start(j, a->opportunistic);
      return TryResult::kStarted;
    }
    case StartAttempt::Kind::kWaiting:
      return TryResult::kWaiting;
    case StartAttempt::Kind::kInfeasible: {
      record.state = JobState::kRejected;
      record.rare.mutable_get().reason =
          a->reason.empty() ? "the scheduler says it can never be placed" : a->reason;
      ChangeQueued(job, -1);
      if (absl::Status s = Finish(j); !s.ok()) error_ = s;
      return TryResult::kRemoved;
    }
  }
  return TryResult::kWaiting;
}

absl::Status Replay::SchedulePasses() {
  std::vector<int32_t>& batch = batch_;
  while (!dirty_list_.empty()) {
    batch.swap(dirty_list_);
    dirty_list_.clear();
    ServeOrder(&batch);
    for (int32_t vc : batch) dirty_[static_cast<size_t>(vc)] = false;
    for (int32_t vc : batch) {
      // A pass over an empty queue does nothing (a VC is marked on its own releases whether
      // or not it has waiting jobs): skip it.
      if (waiting_[static_cast<size_t>(vc)] == 0) continue;
      queues_[static_cast<size_t>(vc)]->Pass([this](JobIndex j) { return TryStart(j); });
      if (!error_.ok()) return error_;
      // Victims go back to their queues after the pass, at their original places.
      for (JobIndex v : deferred_) {
        Enqueue(v);
        OnRelease(Job(v).vc);
      }
      deferred_.clear();
    }
    batch.clear();
  }
  return absl::OkStatus();
}

absl::Status Replay::Handle(const Event& e) {
  switch (e.kind) {
    case EventKind::kSubmit: {
      ++submitted_;
      // A reason before the job ran: the resolver found it can never run.
      if (!Rec(e.job).reason().empty()) {
        Rec(e.job).state = JobState::kRejected;
        return Finish(e.job);
      }
      Enqueue(e.job);
      return absl::OkStatus();
    }
    case EventKind::kFinish: {
      LiveJob* live = FindLive(e.job);  // null: completed or rejected since
      if (live == nullptr) return absl::OkStatus();
      JobRecord& rec = live->rec;
      if (rec.state != JobState::kRunning || rec.epoch != e.epoch) return absl::OkStatus();
      if (absl::Status s = backend_->Release(live->job); !s.ok()) return s;
      RunningRemove(e.job);
      const int32_t vc = live->job.vc;
      ChangeVcUsed(vc, -live->job.gpus);
      rec.state = JobState::kCompleted;
      rec.end = now_;
      rec.remaining = 0;
      OnRelease(vc);
      return Finish(e.job);
    }
    case EventKind::kNodeDown: {
      ++r_.node_down_events;
      if (absl::Status s = backend_->SetNodeHealthy(e.node, false); !s.ok()) return s;
      std::vector<JobIndex> killed;
      for (JobIndex j : running_) {
        const auto& nodes = Rec(j).nodes;
        if (std::binary_search(nodes.begin(), nodes.end(), e.node)) killed.push_back(j);
      }
      std::sort(killed.begin(), killed.end());
      for (JobIndex j : killed) {
        if (absl::Status s = Interrupt(j, Interruption::kFailure); !s.ok()) return s;
        Enqueue(j);
        OnRelease(Job(j).vc);
      }
      if (options_.mttr_hours > 0 && options_.mtbf_hours > 0) {
        Event up;
        up.time = SaturatingAdd(now_, sampler_.Next(options_.mttr_hours * 3600.0));
        up.kind = EventKind::kNodeUp;
        up.node = e.node;
        up.epoch = 1;  // drawn by the failure model
        events_.Push(up);
      }
      return absl::OkStatus();
    }
    case EventKind::kWake: {
      const LiveJob* live = FindLive(e.job);
      if (live != nullptr && live->rec.state == JobState::kQueued) MarkDirty(live->job.vc);
      return absl::OkStatus();
    }
    case EventKind::kNodeUp: {
      if (absl::Status s = backend_->SetNodeHealthy(e.node, true); !s.ok()) return s;
      for (int32_t v : waiting_vcs_) MarkDirty(v);
      if (e.epoch == 1 && options_.mtbf_hours > 0) {
        const Time next = SaturatingAdd(now_, sampler_.Next(options_.mtbf_hours * 3600.0));
        if (next <= last_submit_) {
          Event down;
          down.time = next;
          down.kind = EventKind::kNodeDown;
          down.node = e.node;
          down.epoch = 1;
          events_.Push(down);
        }
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Event> Replay::TakeArrival() {
  Event e;
  e.time = Rec(next_).submit;
  e.kind = EventKind::kSubmit;
  e.job = next_;
  if (absl::StatusOr<bool> more = Pull(); !more.ok()) return more.status();
  return e;
}

bool Replay::Stale(const Event& top) const {
  if (top.kind != EventKind::kWake) return false;
  const LiveJob* live = FindLive(top.job);
  return live == nullptr || live->rec.state != JobState::kQueued;
}

absl::StatusOr<EngineResult> Replay::Run(JobFeed* feed, const TraceFacts& facts,
                                         const std::vector<NodeEvent>& node_events, JobSink* sink) {
  feed_ = feed;
  sink_ = sink;
  const size_t n = static_cast<size_t>(facts.jobs);
  expected_jobs_ = facts.jobs;
  slot_ = JobSlots();
  resolver_ = std::make_unique<JobResolver>(info_);
  r_.total_gpus = backend_->total_gpus();
  r_.cluster_gpus = info_.TotalGpus();
  const size_t vcs = static_cast<size_t>(info_.vc_count());
  vc_used_.assign(vcs, 0);
  vc_since_.assign(vcs, 0);
  vc_lent_mark_.assign(vcs, 0);
  r_.vc_usage.assign(vcs, {});
  unreserved_ = r_.cluster_gpus;
  vc_guarantee_ = info_.VcGuarantees(facts.named_pinned_cells);  // pinned cells jobs name count
  for (size_t v = 0; v < vcs; ++v) {
    unreserved_ -= vc_guarantee_[v];
    idle_guarantee_total_ += vc_guarantee_[v];
  }
  unreserved_ = std::max<int64_t>(0, unreserved_);
  r_.vc_guaranteed_gpus = vc_guarantee_;
  for (size_t v = 0; v < vcs; ++v) queues_.push_back(MakeQueuePolicy(options_.queue, this));
  waiting_.assign(vcs, 0);
  waiting_opp_.assign(vcs, 0);
  waiting_vc_pos_.assign(vcs, -1);
  queued_gpus_vc_.assign(vcs, 0);
  queued_opp_gpus_vc_.assign(vcs, 0);
  dirty_.assign(vcs, false);

  // Node names -> ids, for node events.
  absl::flat_hash_map<std::string, int32_t> node_ids;
  const std::vector<std::string>& nodes = backend_->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) node_ids.emplace(nodes[i], static_cast<int32_t>(i));

  events_.Reserve(node_events.size() + nodes.size() + 16);
  for (const NodeEvent& ne : node_events) {
    // A physical node name also stands for its copies in the private clusters.
    auto it = node_ids.find(ne.node);
    std::optional<std::vector<int32_t>> ids =
        it != node_ids.end() ? std::vector<int32_t>{it->second} : backend_->NodesNamed(ne.node);
    if (!ids) {
      return absl::InvalidArgumentError(
          absl::StrCat(ne.where.empty() ? absl::StrCat("node event ", ne.line) : ne.where,
                       ": unknown node '", ne.node, "' (not in the config)"));
    }
    for (int32_t id : *ids) {
      Event e;
      e.time = ne.time;
      e.kind = ne.up ? EventKind::kNodeUp : EventKind::kNodeDown;
      e.node = id;
      events_.Push(e);
    }
  }
  const Time first_submit = n > 0 ? facts.first_submit : 0;
  last_submit_ = n > 0 ? facts.last_submit : 0;
  if (options_.mtbf_hours > 0 && options_.mttr_hours > 0) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      Event down;
      down.time = SaturatingAdd(first_submit, sampler_.Next(options_.mtbf_hours * 3600.0));
      if (down.time > last_submit_) continue;
      down.kind = EventKind::kNodeDown;
      down.node = static_cast<int32_t>(i);
      down.epoch = 1;
      events_.Push(down);
    }
  }
  if (absl::StatusOr<bool> more = Pull(); !more.ok()) return more.status();
  EventLoopOptions loop_options;
  loop_options.horizon = options_.horizon;
  loop_options.check_invariants_every = options_.check_invariants_every;
  loop_options.progress = options_.progress;
  EventLoop<Replay> loop(this, &events_, std::move(loop_options));
  r_.start = loop.NextTime().value_or(0);
  last_time_ = r_.start;
  next_sample_ = r_.start;
  // The work's span: submissions, each job's end if it ran at once, node events.
  const Time longest = facts.longest;
  Time span_end = SaturatingAdd(last_submit_, longest);
  if (!node_events.empty()) span_end = std::max(span_end, node_events.back().time);
  sample_interval_ = options_.timeline_interval > 0
                         ? options_.timeline_interval
                         : std::max<Time>(60, (span_end - r_.start) / 2000);
  window_start_ = options_.window_start >= 0 ? options_.window_start : first_submit;
  window_end_ = options_.window_end >= 0 ? options_.window_end
                                         : SaturatingAdd(last_submit_, std::max<Time>(1, longest));
  for (Time& since : vc_since_) since = r_.start;

  absl::StatusOr<EventLoopResult> ran = loop.Run();
  if (!ran.ok()) return ran.status();
  r_.events = ran->events;
  // Stopped by the horizon: the run covers up to it; otherwise up to the last event.
  const bool stopped = ran->stopped;
  r_.end = stopped ? std::max(last_time_, options_.horizon) : last_time_;
  Advance(r_.end);
  r_.timeline.push_back(Sample(r_.end));
  for (int32_t v = 0; v < static_cast<int32_t>(vcs); ++v) ChangeVcUsed(v, 0);
  // A horizon cuts the window: what follows it was not simulated.
  if (stopped) window_end_ = std::min(window_end_, r_.end);
  r_.window_start = window_start_;
  r_.window_end = std::max(window_start_, window_end_);
  if (options_.check_invariants_every > 0) {
    if (absl::Status s = backend_->CheckInvariants(); !s.ok()) {
      return absl::InternalError(absl::StrCat("invariant check failed at the end: ", s.message()));
    }
  }
  // The jobs left (queued, running, not yet submitted) go to the sink with the run's final
  // window and end; the rest of the feed is read for the jobs a horizon left unsubmitted.
  ended_ = true;
  window_start_ = r_.window_start;
  window_end_ = r_.window_end;
  while (next_ >= 0) {
    const JobIndex j = next_;
    if (absl::StatusOr<bool> more = Pull(); !more.ok()) return more.status();
    if (absl::Status s = Finish(j); !s.ok()) return s;
  }
  std::vector<JobIndex> left;  // still queued or running (a horizon stopped the run)
  slot_.ForEach([&left](int64_t j, int32_t) { left.push_back(static_cast<JobIndex>(j)); });
  for (JobIndex j : left) {
    if (absl::Status s = Finish(j); !s.ok()) return s;
  }
  r_.schedule_calls = backend_->schedule_calls();
  if (options_.progress) options_.progress(1.0);
  return std::move(r_);
}

}  // namespace hived::sim::replay_internal
